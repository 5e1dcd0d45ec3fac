"""Exact game values, and the ``perfect`` strategy built on them.

Scores are from the point of view of the player to move and depend only on the
position: a game that ends in a win with ``n`` marks on the board is worth
``size + 1 - n`` to the winner and the negation to the loser, a draw is worth 0. This is
the tutorials' "10 - depth" rule counted from the empty board, so a quicker win scores
more and a later loss scores less, and a transposition table can keep scores across
searches.

The exact search (``engine.exact``) is alpha-beta (negamax) with a transposition table
of bounds keyed on the symmetry-reduced position, win-in-one and forced-block pruning,
and score bounds. Every 3x3 position is precomputed once, on first use (``engine.table3``).
Boards of up to 16 cells are always solved exactly. On bigger boards ``solve`` and
``move_values`` work under a node limit (UnsolvableError when it runs out), and
``Perfect`` uses ``deepen`` (``engine.deepen``): iterative deepening under a time
budget with a heuristic evaluation at the horizon, which reports a move as proven only
when the search established its value exactly.

Everything is cached at module level per board shape, with caps on memory, so that a
worker process serving many moves gets faster as it goes.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager

from engine.board import Board
from engine.deepen import deepen
from engine.exact import (
    _SOLVERS,
    _Abort,
    _check_playable,
    _sides,
    _Solver,
    _solver,
)
from engine.results import (
    DRAW,
    LOSS,
    SCORE_UNIT,
    WIN,
    MoveValue,
    SearchResult,
    UnsolvableError,
    _move_value,
    result_of,
)
from engine.table3 import _table3, forget

__all__ = [
    "CHOOSE_EMPTY_CELLS",
    "DEFAULT_MAX_NODES",
    "DRAW",
    "EXACT_MAX_CELLS",
    "LOSS",
    "SCORE_UNIT",
    "WIN",
    "MoveValue",
    "Perfect",
    "SearchResult",
    "UnsolvableError",
    "best_moves",
    "clear_caches",
    "deepen",
    "move_results",
    "move_values",
    "result_of",
    "solve",
    "solve_counted",
]

EXACT_MAX_CELLS = 16
"""Boards with at most this many cells are always solved exactly, without a limit."""

CHOOSE_EMPTY_CELLS = 14
"""On bigger boards ``Perfect`` tries an exact choice once this few cells are empty."""

DEFAULT_MAX_NODES = 2_000_000
"""Node limit of ``solve``/``move_values``/``best_moves`` on boards above EXACT_MAX_CELLS."""


def clear_caches() -> None:
    """Forget every solver table and cache, as in a fresh worker process."""
    _SOLVERS.clear()
    forget()


def _is_table(board: Board) -> bool:
    return board.width == 3 and board.height == 3


def _node_limit(board: Board, max_nodes: int | None) -> int | None:
    if max_nodes is not None:
        return max_nodes
    return None if board.size <= EXACT_MAX_CELLS else DEFAULT_MAX_NODES


def _searching(board: Board, max_nodes: int | None) -> tuple[_Solver, int, int, tuple[int, ...]]:
    """The shape's solver, its caches trimmed and the next searches limited to
    ``_node_limit`` nodes; and the position as it searches it: mover's and other bits,
    keys."""
    solver = _solver(board)
    solver.trim()
    me, opp = _sides(board)
    keys = solver.keys_of(board.x_bits, board.o_bits)
    solver.limit(_node_limit(board, max_nodes), math.inf)
    return solver, me, opp, keys


@contextmanager
def _unsolvable(board: Board) -> Iterator[None]:
    """Turn a search that ran out of nodes into UnsolvableError."""
    try:
        yield
    except _Abort:
        raise UnsolvableError(f"{board.text} is too big to solve exactly") from None


def solve(board: Board, *, max_nodes: int | None = None) -> int:
    """The exact score of the position for the player to move (see the module docstring).

    A finished board scores its result. Boards above EXACT_MAX_CELLS cells are searched
    with a node limit (``max_nodes``, default DEFAULT_MAX_NODES) and raise
    UnsolvableError when it runs out; smaller boards have no limit unless one is given.

    >>> solve(Board())
    0
    >>> solve(Board.from_text("XX./OO./..."))  # X completes the top row at once
    5
    """
    return solve_counted(board, max_nodes=max_nodes)[0]


def solve_counted(board: Board, *, max_nodes: int | None = None) -> tuple[int, int]:
    """``solve`` that also returns how many nodes it searched."""
    outcome = board.outcome()
    if outcome is not None:
        return (0 if outcome.winner is None else board.ply - 1 - board.size), 0
    if _is_table(board):
        return _table3()[0][board.x_bits | board.o_bits << 9], 1
    solver, me, opp, keys = _searching(board, max_nodes)
    first_node = solver.count()
    with _unsolvable(board):
        return solver.exact(me, opp, keys, board.ply), solver.count() - first_node


def move_values(board: Board, *, max_nodes: int | None = None) -> list[MoveValue]:
    """Every legal move's exact value, in cell order.

    Raises IllegalMoveError on a finished board and UnsolvableError as ``solve`` does
    (the node limit covers the whole call).
    """
    _check_playable(board)
    ply, size = board.ply, board.size
    if _is_table(board):
        scores = _table3()[0]
        out = []
        for cell in board.legal_moves():
            child = board.play(cell)
            score = -scores[child.x_bits | child.o_bits << 9]
            out.append(_move_value(cell, score, ply, size))
        return out
    solver, me, opp, keys = _searching(board, max_nodes)
    empty = board.geometry.full_mask ^ (me | opp)
    winning = solver.wins_for(me) & empty
    values: dict[int, MoveValue] = {}
    with _unsolvable(board):
        for cell, orbit in solver.representatives(keys, empty):
            if winning >> cell & 1:
                score = size - ply
            else:
                child_keys = solver.child_keys(keys, cell, ply)
                score = -solver.exact(opp, me | 1 << cell, child_keys, ply + 1)
            for member in orbit:
                values[member] = _move_value(member, score, ply, size)
    return [values[cell] for cell in sorted(values)]


def move_results(board: Board, *, max_nodes: int | None = None) -> dict[int, str]:
    """Every legal move's exact result (WIN, DRAW or LOSS), without its distance.

    Much cheaper than ``move_values`` on big boards: each move is searched with a narrow
    window, and not at all where ``engine.breaker`` proves that neither side can still
    complete a line. Raises as ``move_values`` does.
    """
    _check_playable(board)
    if _is_table(board):
        return {value.cell: value.result for value in move_values(board)}
    solver, me, opp, keys = _searching(board, max_nodes)
    with _unsolvable(board):
        ranks = _outcomes(solver, me, opp, keys, board.ply)
    names = (LOSS, DRAW, WIN)
    return {cell: names[ranks[cell]] for cell in sorted(ranks)}


def _outcomes(
    solver: _Solver, me: int, opp: int, keys: tuple[int, ...], ply: int
) -> dict[int, int]:
    """Each empty cell's result for the player to move: 0 a loss, 1 a draw, 2 a win.

    Only the result, not its distance: a window of (-1, 1) around each reply, and no
    search at all where ``engine.breaker`` proves neither side can win any more.
    """
    empty = solver.geo.full_mask ^ (me | opp)
    winning = solver.wins_for(me)
    they_can = not solver.cannot_win(opp, me)
    found: dict[int, int] = {}
    for cell, orbit in solver.representatives(keys, empty):
        after = me | 1 << cell
        if winning >> cell & 1:
            rank = 2
        elif not they_can and solver.cannot_win(after, opp):
            rank = 1
        else:
            child = solver.child_keys(keys, cell, ply)
            value = solver.search(opp, after, child, ply + 1, -1, 1)
            rank = 0 if value >= 1 else 2 if value <= -1 else 1
        for member in orbit:
            found[member] = rank
    return found


def best_moves(board: Board, *, max_nodes: int | None = None) -> list[int]:
    """All cells with the best exact value, in cell order; raises as ``move_values``."""
    _check_playable(board)
    if _is_table(board):
        values = move_values(board)
        top = max(_rank(v) for v in values)
        return [v.cell for v in values if _rank(v) == top]
    solver, me, opp, keys = _searching(board, max_nodes)
    with _unsolvable(board):
        _, groups = solver.optimal(me, opp, keys, board.ply)
    return sorted(c for _, orbit in groups for c in orbit)


def _rank(value: MoveValue) -> int:
    """A MoveValue as a number that grows with how good it is for the mover."""
    if value.result == WIN:
        return 1000 - value.plies
    if value.result == LOSS:
        return -1000 + value.plies
    return 0


class Perfect:
    """The ``perfect`` strategy: exact play, with the opponent's chances to err as tie-break.

    Up to EXACT_MAX_CELLS cells the move is optimal (fastest win, else draw, else slowest
    loss); among optimal moves it prefers those after which most of the opponent's
    replies worsen the opponent's result (win/draw/loss), then picks with ``rng``.

    Bigger boards get ``budget`` seconds. With at most CHOOSE_EMPTY_CELLS empty cells
    an exact choice as above is tried first, for up to half the budget; otherwise, or
    if it does not finish, ``deepen`` searches for the rest of the budget. A node limit
    (``max_nodes``) skips the exact attempt and bounds ``deepen``, so that games replay
    exactly whatever the machine's speed and the state of the caches.
    """

    name = "perfect"

    def __init__(self, budget: float = 2.0, *, max_nodes: int | None = None) -> None:
        self.budget = budget
        self.max_nodes = max_nodes

    def __call__(self, board: Board, rng: random.Random) -> int:
        return self.search(board, rng).cell

    def search(self, board: Board, rng: random.Random) -> SearchResult:
        """The chosen move and its value; IllegalMoveError on a finished board."""
        _check_playable(board)
        ply, size = board.ply, board.size
        if _is_table(board):
            scores, picks = _table3()
            key = board.x_bits | board.o_bits << 9
            cell = rng.choice(picks[key])
            return _exact_result(cell, scores[key], ply, size, 1)
        start = time.perf_counter()
        solver = _solver(board)
        if size > EXACT_MAX_CELLS:
            if self.max_nodes is not None or size - ply > CHOOSE_EMPTY_CELLS:
                return deepen(board, self.budget, rng, max_nodes=self.max_nodes)
            solver.limit(None, start + self.budget / 2)
        else:
            solver.limit(None, math.inf)
        solver.trim()
        first_node = solver.count()
        try:
            cells, score = solver.choose(board.x_bits, board.o_bits)
        except _Abort:
            left = self.budget - (time.perf_counter() - start)
            return deepen(board, max(left, 0.0), rng)
        nodes = solver.count() - first_node
        return _exact_result(rng.choice(cells), score, ply, size, nodes)

    def __repr__(self) -> str:
        return f"Perfect(budget={self.budget!r}, max_nodes={self.max_nodes!r})"


def _exact_result(cell: int, score: int, ply: int, size: int, nodes: int) -> SearchResult:
    value = _move_value(cell, score, ply, size)
    return SearchResult(
        cell, score * SCORE_UNIT, True, size - ply, nodes, value.result, value.plies
    )
