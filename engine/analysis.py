"""Move values for a position, and the review of a finished (or unfinished) game.

Both rest on the exact solver: on boards of up to ``EXACT_MAX_CELLS`` cells they are
always exact; on bigger boards ``analyse`` raises UnsolvableError when the position is
out of reach, and ``engine.reviewing.review`` settles what it can within a node budget
and says which moves it could not reach. The review's verdict (``Review``) is defined
here.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.board import Board, Mark
from engine.solver import LOSS, WIN, MoveValue, move_values

__all__ = [
    "DRAWN",
    "LOST_GAME",
    "MISSED_WIN",
    "MISTAKE",
    "O_WINS",
    "REVIEW_MAX_NODES",
    "SLIP_BLOCK",
    "SLIP_WIN",
    "THREW_WIN",
    "UNKNOWN",
    "X_WINS",
    "Review",
    "Slip",
    "analyse",
    "change_of",
    "mover_of",
    "strength",
]

X_WINS = "X wins"
O_WINS = "O wins"
DRAWN = "draw"
UNKNOWN = "unknown"

REVIEW_MAX_NODES = 150_000
"""Default node budget of ``review`` on boards above EXACT_MAX_CELLS: at most about 0.9 s
of CPU here, 0.4 s on average (``python -m bench.engine --reviews-only``); a count of
nodes, not a clock, so a game is settled the same way on any machine."""

MISSED_WIN = "missed win"
"""A move that turned its player's forced win into a draw."""
THREW_WIN = "threw win"
"""A move that turned its player's forced win into a forced loss."""
MISTAKE = "mistake"
"""A move that turned a drawn game into a forced loss for its player."""
LOST_GAME = "lost game"
"""A move after which its player had a forced loss, where the review knows only that
it was a win or a draw before (see ``Review``)."""

SLIP_WIN = "win in one"
"""A slip: the mover could complete a line at once and did not."""
SLIP_BLOCK = "block"
"""A slip: the opponent could complete a line on their next move, the mover had no win
of their own, and did not take that one cell."""


def strength(value: MoveValue) -> int:
    """A number that grows with how good a move is for its player: quicker wins first,
    then draws, then slower losses."""
    if value.result == WIN:
        return 1000 - value.plies
    if value.result == LOSS:
        return value.plies - 1000
    return 0


def analyse(board: Board, *, max_nodes: int | None = None) -> list[MoveValue]:
    """Each legal move's exact value, best first (ties in cell order).

    Raises IllegalMoveError on a finished board, and UnsolvableError on a board above
    EXACT_MAX_CELLS cells that ``max_nodes`` (default DEFAULT_MAX_NODES) cannot solve.

    >>> [(v.cell, v.result, v.plies) for v in analyse(Board.from_text("XX./OO./..."))][:2]
    [(2, 'win', 1), (5, 'draw', 5)]
    """
    values = move_values(board, max_nodes=max_nodes)
    return sorted(values, key=lambda v: (-strength(v), v.cell))


def mover_of(index: int) -> Mark:
    """Who plays move ``index`` (0-based): X on even indices."""
    return Mark.X if index % 2 == 0 else Mark.O


def change_of(mover: Mark, before: str, after: str) -> str | None:
    """What a move by ``mover`` did to the game's value: MISSED_WIN, THREW_WIN, MISTAKE, or
    None if it kept it (or either value is UNKNOWN)."""
    if UNKNOWN in (before, after) or before == after:
        return None
    if before == f"{mover.value} wins":
        return MISSED_WIN if after == DRAWN else THREW_WIN
    return MISTAKE


@dataclass(frozen=True)
class Slip:
    """A certain fact found without a search: a missed win in one (SLIP_WIN, ``cells``
    the winning cells, at most three) or a missed block (SLIP_BLOCK, ``cells`` the one
    cell that stopped the opponent's line) at ``moves[move]``."""

    move: int
    kind: str
    cells: tuple[int, ...]


@dataclass(frozen=True)
class Review:
    """The exact verdict on a game, move by move.

    ``values[i]`` is the game's value (X_WINS, O_WINS or DRAWN under perfect play)
    before ``moves[i]``; the last entry, ``values[len(moves)]``, is the value after the
    last move (the result if the game is over), so there is one more value than moves.
    Entries the node budget did not reach are UNKNOWN. A move is *settled* when the
    values before and after it are both known.

    ``decider`` is the index in ``moves`` of the deciding move: the last move that
    changed the value, so that the value it left is the one the game ended with (the
    mistake after which the result was never in doubt again). Only the player who
    moves can change the value, and only for the worse: ``kind`` is MISSED_WIN, THREW_WIN
    or MISTAKE (``change_of``). It is named only when every value after it to the end
    is known: an unknown value after it could hide a later change (a value can go from
    a win to a draw and back, by two mistakes). So with part of the game out of reach,
    ``decider`` is the last change within the known values at the end, or the move just
    before them if every value it may have had differs from the one after it (then its
    own value is UNKNOWN and ``kind`` is LOST_GAME: it was a win or a draw, and it
    became a loss); else None, and the decision (if any) came before ``settled_from``,
    out of reach.

    ``better`` names the moves (at most three, best first: quicker wins first, then
    cell order) that would have kept the value the deciding move lost (for LOST_GAME:
    that held at least a draw); it may be empty when the budget could not settle them.
    ``slips`` are the missed wins in one and missed blocks, found on every board without
    a search.
    """

    moves: tuple[int, ...]
    width: int
    height: int
    k: int
    values: tuple[str, ...]
    decider: int | None
    kind: str | None
    better: tuple[int, ...] = ()
    slips: tuple[Slip, ...] = ()

    @property
    def settled_from(self) -> int:
        """The first index from which every value to the end is known (len(values) if
        the last one is not): the moves from this one on are all settled."""
        index = len(self.values)
        while index > 0 and self.values[index - 1] != UNKNOWN:
            index -= 1
        return index

    @property
    def complete(self) -> bool:
        """Whether every value is known."""
        return UNKNOWN not in self.values

    def settled(self, index: int) -> bool:
        """Whether the values before and after ``moves[index]`` are both known, or it is
        the deciding move (whose effect is known even where its value before is not)."""
        return index == self.decider or UNKNOWN not in self.values[index : index + 2]

    def change(self, index: int) -> str | None:
        """What ``moves[index]`` did to the value (``change_of``), None if it kept it or
        is not settled."""
        return change_of(mover_of(index), self.values[index], self.values[index + 1])

    def summary(self) -> str:
        """One line for people; cells are numbered from 1.

        >>> Review((5, 2, 3, 8, 4), 3, 3, 3, ("draw",) * 3 + ("O wins",) + ("X wins",) * 2,
        ...        3, THREW_WIN, (4,)).summary()
        'Move 4 (O at cell 9) decided the game: the win became a loss; cell 5 would have won.'
        """
        if self.decider is not None:
            index = self.decider
            mover = mover_of(index)
            where = f"Move {index + 1} ({mover.value} at cell {self.moves[index] + 1})"
            if self.kind == LOST_GAME:
                text = f"{where} decided the game: after it {mover.other.value} had a forced win"
                held = "held at least a draw"
            else:
                before = _for(mover, self.values[index])
                after = _for(mover, self.values[index + 1])
                text = f"{where} decided the game: the {before} became a {after}"
                held = "won" if before == "win" else "held the draw"
            if self.better:
                cells = " or ".join(f"cell {c + 1}" for c in self.better)
                text += f"; {cells} would have {held}"
            return text + "."
        start = self.settled_from
        if start >= len(self.moves):
            return "No verdict: no move could be settled within the review's budget."
        value = self.values[start]
        kept = "a draw" if value == DRAWN else f"{value.split()[0]} had a forced win"
        if start == 0:
            if value == DRAWN:
                return "No move changed the result: a draw with best play, and a draw it stayed."
            return f"No move changed the result: {kept} and kept it."
        return (
            f"No move from move {start + 1} on changed the result ({kept}); "
            f"moves 1 to {start} are beyond the review's budget."
        )


def _for(mover: Mark, value: str) -> str:
    """A game value as the mover sees it: 'win', 'draw' or 'loss'."""
    if value == DRAWN:
        return "draw"
    return "win" if value == f"{mover.value} wins" else "loss"
