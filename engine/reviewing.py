"""The post-game review (``engine.analysis.Review``): which values it settles, and how.

1. Facts that need no search, on every board: a finished position's result; the empty
   board's value (``engine.values.opening_value``); a player to move who can complete a
   line at once wins; one who cannot, facing two such cells of the opponent, loses; a
   position where neither side can complete a line any more (``engine.breaker``) is
   drawn. The missed wins in one and missed blocks (``Slip``) come from the same look,
   so they are found on every board, whatever the budget.
2. On boards of up to EXACT_MAX_CELLS cells every other value is solved exactly, with no
   budget (milliseconds: 3x3 from its table, 4x4 with the breaker's help).
3. On bigger boards a fresh solver searches win/draw/loss only (a null window, much
   cheaper than distances), ``max_nodes`` in all. It starts with an empty table, so its
   node counts depend on the game alone: the same game is settled the same way on any
   machine, whatever the process searched before. First every unknown position, from the
   last to the first, gets STEP_NODES (the cheap ones settle: near the end, or drawn by
   the breaker); then the latest unknown one, which bounds the known values at the end
   (a deciding move can only be named inside them), gets all but a fifth of what is
   left, and the one before it, and so on, until a change shows up there or a search
   runs out. The fifth kept back names the better moves at the deciding move.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from engine.analysis import (
    DRAWN,
    O_WINS,
    REVIEW_MAX_NODES,
    SLIP_BLOCK,
    SLIP_WIN,
    UNKNOWN,
    X_WINS,
    Review,
    Slip,
    analyse,
    change_of,
    mover_of,
)
from engine.board import Board, Geometry, Mark, geometry
from engine.breaker import breaker_for
from engine.exact import _Abort, _Solver
from engine.results import DRAW, WIN, _move_value
from engine.solver import EXACT_MAX_CELLS, solve
from engine.values import opening_value

__all__ = ["BETTER_MOVES", "STEP_NODES", "review"]

STEP_NODES = 4_000
"""Nodes each unknown position gets in the first sweep on boards above EXACT_MAX_CELLS."""

BETTER_MOVES = 3
"""The most better moves a review names."""


def review(
    moves: Sequence[int],
    width: int = 3,
    height: int = 3,
    k: int = 3,
    *,
    max_nodes: int | None = None,
) -> Review:
    """Replay 0-based ``moves`` and find the move that decided the game (``Review``).

    Raises as ``Board.play`` does for a bad move. ``max_nodes`` (default
    REVIEW_MAX_NODES) bounds the searches on boards above EXACT_MAX_CELLS cells, which
    bounds the time; smaller boards are always exact.

    >>> review([4, 1, 0, 8, 6, 2, 3]).summary()
    'Move 2 (O at cell 2) decided the game: the draw became a loss; cell 1 or cell 3 or \
cell 7 would have held the draw.'
    """
    boards = [Board(width, height, k)]
    for cell in moves:
        boards.append(boards[-1].play(cell))
    values = [_free_value(board) for board in boards]
    if values[0] == UNKNOWN:
        values[0] = _opening(width, height, k)
    slips = [
        slip for index, cell in enumerate(moves) if (slip := _slip(boards[index], cell, index))
    ]
    search = _Search(boards[0], REVIEW_MAX_NODES if max_nodes is None else max_nodes)
    search.settle(boards, values)
    decider = last_change(values)
    kind, better = None, ()
    if decider is not None:
        kind = change_of(mover_of(decider), values[decider], values[decider + 1])
        better = search.better(boards[decider], values[decider])
    shape = (tuple(moves), width, height, k, tuple(values))
    return Review(*shape, decider, kind, better, tuple(slips))


def last_change(values: Sequence[str]) -> int | None:
    """The deciding move: the last index i where values[i] != values[i + 1], looked for
    only among the values known to the end (see ``Review``); None if they hold none."""
    start = len(values)
    while start > 0 and values[start - 1] != UNKNOWN:
        start -= 1
    for index in range(len(values) - 2, start - 1, -1):
        if values[index] != values[index + 1]:
            return index
    return None


def _name(mark: Mark) -> str:
    return X_WINS if mark is Mark.X else O_WINS


def _win_cells(geo: Geometry, bits: int, empty: int) -> int:
    """The empty cells that complete a line for the player holding ``bits``."""
    found = 0
    for mask in geo.line_masks:
        rest = mask & ~bits
        if rest and not rest & (rest - 1) and rest & empty:
            found |= rest
    return found


def _cells(bits: int) -> list[int]:
    return [cell for cell in range(bits.bit_length()) if bits >> cell & 1]


def _sides(board: Board) -> tuple[int, int, int]:
    """(the mover's bits, the other's, the empty cells)."""
    me, opp = (board.x_bits, board.o_bits) if board.turn is Mark.X else (board.o_bits, board.x_bits)
    return me, opp, board.geometry.full_mask ^ (me | opp)


def _free_value(board: Board) -> str:
    """The position's value where it needs no search (step 1), else UNKNOWN."""
    outcome = board.outcome()
    if outcome is not None:
        return DRAWN if outcome.winner is None else _name(outcome.winner)
    geo = board.geometry
    me, opp, empty = _sides(board)
    if _win_cells(geo, me, empty):
        return _name(board.turn)
    if _win_cells(geo, opp, empty).bit_count() >= 2:
        return _name(board.turn.other)
    breaker = breaker_for(geo)
    if breaker.cannot_win(me, opp) and breaker.cannot_win(opp, me):
        return DRAWN
    return UNKNOWN


def _opening(width: int, height: int, k: int) -> str:
    """The empty board's value, where the engine knows it without a search."""
    try:
        return X_WINS if opening_value(width, height, k) == WIN else DRAWN
    except NotImplementedError:
        return UNKNOWN


def _slip(board: Board, cell: int, index: int) -> Slip | None:
    """The missed win in one or missed block of ``cell`` played on ``board``, if any."""
    geo = board.geometry
    me, opp, empty = _sides(board)
    mine = _win_cells(geo, me, empty)
    if mine:
        if mine >> cell & 1:
            return None
        return Slip(index, SLIP_WIN, tuple(_cells(mine)[:BETTER_MOVES]))
    theirs = _win_cells(geo, opp, empty)
    if theirs.bit_count() == 1 and not theirs >> cell & 1:
        return Slip(index, SLIP_BLOCK, (theirs.bit_length() - 1,))
    return None


class _Search:
    """The searches of one review and what is left of its budget (see the module)."""

    def __init__(self, first: Board, max_nodes: int) -> None:
        self.exact = first.size <= EXACT_MAX_CELLS
        self.budget = max_nodes
        self.left = max_nodes
        shape = (first.width, first.height, first.k)
        self.solver = None if self.exact else _Solver(geometry(*shape))

    def value(self, board: Board, cap: int) -> str | None:
        """The position's value, or None if ``cap`` nodes (and the budget) do not settle it."""
        if board.is_over:
            return _free_value(board)
        if self.exact:
            score = solve(board)
        else:
            score = self._search(board, cap)
            if score is None:
                return None
        if score == 0:
            return DRAWN
        return _name(board.turn if score > 0 else board.turn.other)

    def _search(self, board: Board, cap: int, *, exact: bool = False) -> int | None:
        """The capped search's score for the mover: its sign (a null window) or, with
        ``exact``, the score itself; None if it ran out."""
        cap = min(cap, self.left)
        if cap <= 0:
            return None
        solver = self.solver
        assert solver is not None, "boards above EXACT_MAX_CELLS only"
        me, opp, _ = _sides(board)
        keys = solver.keys_of(board.x_bits, board.o_bits)
        solver.limit(cap, math.inf)
        start = solver.count()
        try:
            if exact:
                return solver.exact(me, opp, keys, board.ply)
            return solver.value(me, opp, keys, board.ply, -1, 1)
        except _Abort:
            return None
        finally:
            self.left -= solver.count() - start
            solver.limit(None, math.inf)

    def settle(self, boards: list[Board], values: list[str]) -> None:
        """Fill in the UNKNOWN ``values`` it can (steps 2 and 3 of the module)."""
        order = range(len(boards) - 1, -1, -1)
        if self.exact:
            for index in order:
                if values[index] == UNKNOWN:
                    values[index] = self.value(boards[index], 0) or UNKNOWN
            return
        for index in order:
            if values[index] == UNKNOWN:
                values[index] = self.value(boards[index], STEP_NODES) or UNKNOWN
        keep = self.budget // 5
        while last_change(values) is None:
            start = len(values)
            while start > 0 and values[start - 1] != UNKNOWN:
                start -= 1
            if start == 0:
                return
            found = self.value(boards[start - 1], self.left - keep)
            if found is None:
                return
            values[start - 1] = found

    def better(self, board: Board, before: str) -> tuple[int, ...]:
        """Up to BETTER_MOVES moves on ``board`` that keep its value ``before`` for the
        mover, best first (quicker wins first, then cell order); only moves whose value
        the budget settles."""
        target = WIN if before == _name(board.turn) else DRAW
        if self.exact:
            kept = [v.cell for v in analyse(board) if v.result == target]
            return tuple(kept[:BETTER_MOVES])
        me, _, empty = _sides(board)
        wins_now = _cells(_win_cells(board.geometry, me, empty))
        if target == WIN and wins_now:
            return tuple(wins_now[:BETTER_MOVES])
        cells = board.legal_moves()
        found: list[int] = []
        for position, cell in enumerate(cells):
            value = self.value(board.play(cell), self.left // (len(cells) - position))
            result = WIN if value == _name(board.turn) else DRAW if value == DRAWN else None
            if result == target:
                found.append(cell)
                if target == DRAW and len(found) == BETTER_MOVES:
                    break
        if target == DRAW:
            return tuple(found)
        plies = {cell: self._plies(board, cell, len(found) - i) for i, cell in enumerate(found)}
        return tuple(sorted(found, key=lambda cell: (plies[cell], cell))[:BETTER_MOVES])

    def _plies(self, board: Board, cell: int, sharing: int) -> int:
        """Plies to the win after the winning ``cell`` (more than any if out of budget),
        with a ``sharing``-th of what is left."""
        score = self._search(board.play(cell), self.left // sharing, exact=True)
        if score is None:
            return board.size
        return _move_value(cell, -score, board.ply, board.size).plies
