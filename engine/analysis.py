"""Move values for a position, and the review of a finished (or unfinished) game.

Both rest on the exact solver: on boards of up to ``EXACT_MAX_CELLS`` cells they are
always exact; on bigger boards ``analyse`` raises UnsolvableError when the position is
out of reach, and ``review`` works backwards from the last position within a node
budget and says when it could not go all the way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.board import Board, Mark
from engine.solver import (
    EXACT_MAX_CELLS,
    LOSS,
    WIN,
    MoveValue,
    UnsolvableError,
    move_values,
    solve_counted,
)

__all__ = [
    "DRAWN",
    "MISSED_WIN",
    "MISTAKE",
    "O_WINS",
    "REVIEW_MAX_NODES",
    "UNKNOWN",
    "X_WINS",
    "Review",
    "analyse",
    "review",
    "strength",
]

X_WINS = "X wins"
O_WINS = "O wins"
DRAWN = "draw"
UNKNOWN = "unknown"

MISTAKE = "mistake"
MISSED_WIN = "missed win"

REVIEW_MAX_NODES = 300_000
"""Default node budget of ``review`` on boards above EXACT_MAX_CELLS (about a second)."""


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


@dataclass(frozen=True)
class Review:
    """The exact verdict on a game, move by move.

    ``values[i]`` is the game's value (X_WINS, O_WINS or DRAWN under perfect play)
    before ``moves[i]``; the last entry, ``values[len(moves)]``, is the value after the
    last move (the result if the game is over), so there is one more value than moves.
    Entries the node budget did not reach are UNKNOWN, and then ``note`` says so.

    ``turning_point`` is the index in ``moves`` of the first move after which the value
    changed, or None when none did (or when the values are not all known). Only the
    player who moves can change the value, and only for the worse: ``kind`` is
    MISSED_WIN when a won position became a draw, and MISTAKE when a won or drawn
    position became lost.
    """

    moves: tuple[int, ...]
    width: int
    height: int
    k: int
    values: tuple[str, ...]
    turning_point: int | None
    kind: str | None
    note: str | None = None

    def summary(self) -> str:
        """One line for people; cells are numbered from 1."""
        if self.turning_point is None:
            if UNKNOWN in self.values:
                return f"No verdict: {self.note}."
            start = self.values[0]
            if start == DRAWN:
                return "No move changed the result: a draw with best play, and a draw it stayed."
            winner = start.split()[0]
            return f"No move changed the result: {winner} had a forced win and kept it."
        index = self.turning_point
        mover = Mark.X if index % 2 == 0 else Mark.O
        before = _for(mover, self.values[index])
        after = _for(mover, self.values[index + 1])
        where = f"Move {index + 1} ({mover.value} at cell {self.moves[index] + 1})"
        if self.kind == MISSED_WIN:
            return f"{where} missed a win: the win became a draw."
        return f"{where} threw the game: the {before} became a {after}."


def _for(mover: Mark, value: str) -> str:
    """A game value as the mover sees it: 'win', 'draw' or 'loss'."""
    if value == DRAWN:
        return "draw"
    return "win" if value == f"{mover.value} wins" else "loss"


def _value_name(board: Board, score: int) -> str:
    if score == 0:
        return DRAWN
    winner = board.turn if score > 0 else board.turn.other
    return X_WINS if winner is Mark.X else O_WINS


def review(
    moves: Sequence[int],
    width: int = 3,
    height: int = 3,
    k: int = 3,
    *,
    max_nodes: int | None = None,
) -> Review:
    """Replay 0-based ``moves`` and find the first move that changed the game's value.

    Raises as ``Board.play`` does for a bad move. On boards of up to EXACT_MAX_CELLS
    cells every value is exact; on bigger ones the positions are solved from the last
    back to the first while ``max_nodes`` (default REVIEW_MAX_NODES) lasts, which bounds
    the time, and the ones it does not reach are UNKNOWN.

    >>> review([4, 1, 0, 8, 6, 2, 3]).summary()
    'Move 2 (O at cell 2) threw the game: the draw became a loss.'
    """
    boards = [Board(width, height, k)]
    for cell in moves:
        boards.append(boards[-1].play(cell))
    exact = boards[0].size <= EXACT_MAX_CELLS
    budget = max_nodes if max_nodes is not None else None if exact else REVIEW_MAX_NODES
    values = [UNKNOWN] * len(boards)
    for index in range(len(boards) - 1, -1, -1):
        board = boards[index]
        if budget is not None and budget <= 0 and not board.is_over:
            break
        try:
            score, used = solve_counted(board, max_nodes=budget)
        except UnsolvableError:
            break
        values[index] = _value_name(board, score)
        if budget is not None:
            budget -= used
    shape = (tuple(moves), width, height, k)
    if UNKNOWN in values:
        solved = len(values) - values.count(UNKNOWN)
        note = (
            f"the {width}x{height} board is too big to review exactly in time; "
            f"only the last {solved} of {len(values)} positions were solved"
        )
        return Review(*shape, tuple(values), None, None, note)
    for index in range(len(moves)):
        before, after = values[index], values[index + 1]
        if before != after:
            mover = boards[index].turn
            won = before == f"{mover.value} wins"
            kind = MISSED_WIN if won and after == DRAWN else MISTAKE
            return Review(*shape, tuple(values), index, kind)
    return Review(*shape, tuple(values), None, None)
