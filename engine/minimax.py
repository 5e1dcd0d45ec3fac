"""Depth-limited minimax (alpha-beta or plain) over bitboards, as a search and a strategy."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from engine.board import Board
from engine.lines import (
    EVALUATIONS,
    WIN_SCORE,
    UnknownStrategyError,
    _line_score,
    _mover_bits,
    _pick,
    _require_moves,
    _Tables,
    _tables_of,
)

__all__ = ["Minimax", "MinimaxResult", "NodeCapError", "minimax_search"]


class NodeCapError(Exception):
    """A search needed more positions than its ``max_nodes``."""


@dataclass(frozen=True, slots=True)
class MinimaxResult:
    """What one search found: the root value for the mover, every move achieving it (in
    index order) and the number of positions visited, the root included.
    """

    score: int
    best_cells: tuple[int, ...]
    nodes: int


class _Search:
    """One minimax search over bitboards; scores are from the root mover's view."""

    __slots__ = ("cap", "cell_masks", "full", "limit", "line_masks", "nodes", "order", "weights")

    def __init__(self, t: _Tables, weights: tuple[int, ...], limit: int, cap: float) -> None:
        self.cell_masks = t.cell_masks
        self.line_masks = t.line_masks
        self.full = t.full
        self.order = t.order
        self.weights = weights
        self.limit = limit
        self.cap = cap
        self.nodes = 0

    def leaf(self, root: int, other: int) -> int:
        return _line_score(root, other, self.line_masks, self.weights)

    def plain(self, mover: int, waiting: int, root_moves: bool, ply: int) -> int:
        """Plain minimax of the position where ``mover`` is to play (full tree)."""
        self.nodes += 1
        if self.nodes > self.cap:
            raise NodeCapError
        taken = mover | waiting
        if taken == self.full:
            return 0
        if ply >= self.limit:
            return self.leaf(mover, waiting) if root_moves else self.leaf(waiting, mover)
        best = None
        for cell in self.order:
            bit = 1 << cell
            if taken & bit:
                continue
            after = mover | bit
            if any(after & mask == mask for mask in self.cell_masks[cell]):
                self.nodes += 1
                value = WIN_SCORE - (ply + 1)
                if not root_moves:
                    value = -value
            else:
                value = self.plain(waiting, after, not root_moves, ply + 1)
            if best is None or (value > best if root_moves else value < best):
                best = value
        assert best is not None
        return best

    def alphabeta(
        self, mover: int, waiting: int, root_moves: bool, ply: int, alpha: int, beta: int
    ) -> int:
        """Fail-hard alpha-beta value of the position, clamped to [alpha, beta]."""
        self.nodes += 1
        if self.nodes > self.cap:
            raise NodeCapError
        taken = mover | waiting
        if taken == self.full:
            return 0
        if ply >= self.limit:
            return self.leaf(mover, waiting) if root_moves else self.leaf(waiting, mover)
        # A win on the spot is the best any move can do: take it without looking further
        # (the C# tutorial's early exit on a winning child). A line free of the other's
        # marks with one cell left to fill is such a win (one pass over the lines).
        for mask in self.line_masks:
            if not mask & waiting and (mask & ~mover).bit_count() == 1:
                self.nodes += 1
                value = WIN_SCORE - (ply + 1)
                value = value if root_moves else -value
                return max(alpha, min(beta, value))
        empty_cells = [c for c in self.order if not taken >> c & 1]
        if root_moves:
            for cell in empty_cells:
                value = self.alphabeta(waiting, mover | 1 << cell, False, ply + 1, alpha, beta)
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        return beta
            return alpha
        for cell in empty_cells:
            value = self.alphabeta(waiting, mover | 1 << cell, True, ply + 1, alpha, beta)
            if value < beta:
                beta = value
                if alpha >= beta:
                    return alpha
        return beta


def minimax_search(
    board: Board,
    depth: int | None = None,
    evaluation: str = "open_lines",
    pruning: bool = True,
    max_nodes: int | None = None,
) -> MinimaxResult:
    """Search ``depth`` plies ahead (None: to the end) and value every move for the mover.

    Leaves at the depth limit are scored by ``evaluation`` (``"open_lines"`` or
    ``"weighted"``); a win ``p`` plies from the root scores ``WIN_SCORE - p`` and a loss
    the negative, so faster wins and slower losses are preferred. With ``pruning`` the
    search uses alpha-beta plus an early exit when a side can win on the spot; the root
    still values each move exactly enough to find every equally good one, so both modes
    return the same score and ``best_cells``. Plain mode visits every node of the game
    tree: 549,946 from the empty 3x3 board at full depth. With ``max_nodes`` it raises
    NodeCapError as soon as it has visited more positions than that (a cost cap that,
    unlike a clock, gives the same answer on a busy machine).
    """
    moves = _require_moves(board)
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise ValueError(f"depth must be a whole number of plies from 1, or None; not {depth!r}")
    if evaluation not in EVALUATIONS:
        raise UnknownStrategyError(
            f"unknown evaluation {evaluation!r}; choose from {', '.join(EVALUATIONS)}"
        )
    t = _tables_of(board)
    weights = EVALUATIONS[evaluation][0](t.k)
    cap = math.inf if max_nodes is None else max_nodes
    search = _Search(t, weights, t.size if depth is None else depth, cap)
    search.nodes = 1  # the root
    me, opp = _mover_bits(board)
    ordered = [c for c in t.order if c in moves]
    values: dict[int, int] = {}
    best = -WIN_SCORE - 1
    for cell in ordered:
        after = me | 1 << cell
        if any(after & mask == mask for mask in t.cell_masks[cell]):
            search.nodes += 1
            value = WIN_SCORE - 1
        elif pruning:
            # Window (best - 1, +inf): a move at least as good as the best so far comes
            # back exact, a worse one comes back as at most best - 1.
            value = search.alphabeta(opp, after, False, 1, best - 1, WIN_SCORE)
        else:
            value = search.plain(opp, after, False, 1)
        values[cell] = value
        best = max(best, value)
    best_cells = tuple(sorted(c for c, v in values.items() if v == best))
    return MinimaxResult(score=best, best_cells=best_cells, nodes=search.nodes)


class Minimax:
    """Depth-limited minimax as a strategy: a random choice among the best moves.

    ``depth`` counts plies (None searches to the end); ``evaluation`` scores the leaves
    at the limit; ``pruning=False`` runs the plain tutorial minimax. ``last_nodes`` and
    ``last_score`` describe the most recent search.
    """

    def __init__(
        self, depth: int | None = None, evaluation: str = "open_lines", pruning: bool = True
    ) -> None:
        if depth is not None and (
            isinstance(depth, bool) or not isinstance(depth, int) or depth < 1
        ):
            raise UnknownStrategyError(
                f"depth must be a whole number of plies from 1, or None; not {depth!r}"
            )
        if evaluation not in EVALUATIONS:
            raise UnknownStrategyError(
                f"unknown evaluation {evaluation!r}; choose from {', '.join(EVALUATIONS)}"
            )
        self.depth = depth
        self.evaluation = evaluation
        self.pruning = bool(pruning)
        self.last_nodes = 0
        self.last_score = 0

    @property
    def name(self) -> str:
        depth = "full" if self.depth is None else str(self.depth)
        plain = "" if self.pruning else ",plain"
        return f"minimax(depth={depth},eval={self.evaluation}{plain})"

    def __repr__(self) -> str:
        return (
            f"Minimax(depth={self.depth!r}, evaluation={self.evaluation!r}, "
            f"pruning={self.pruning!r})"
        )

    def __call__(self, board: Board, rng: random.Random) -> int:
        result = minimax_search(board, self.depth, self.evaluation, self.pruning)
        self.last_nodes = result.nodes
        self.last_score = result.score
        return _pick(list(result.best_cells), rng)
