"""Iterative deepening under a time budget: ``Perfect``'s search past the exact solver's
reach on boards over 16 cells.

Each iteration is a principal-variation search with its own table of bounds, win/block
pruning, the open-lines evaluation (10**(n-1) for n marks in a line the other side has
not entered) at the horizon, and, while pruning, only the cells near the marks already
played. It counts its nodes against the shape's exact solver (``engine.exact``), whose
node and time limits stop it.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable
from operator import add

from engine.board import Board, Geometry
from engine.exact import _INF, _Abort, _bits_of, _check_playable, _sides, _Solver, _solver
from engine.results import SCORE_UNIT, WIN, SearchResult, _move_value

__all__ = ["deepen"]

_CLIP = SCORE_UNIT - 1  # heuristic estimates stay within +-_CLIP


def _near(d_row: int, d_col: int) -> bool:
    """Whether the pruned search tries a cell at this offset from a mark.

    The eight neighbours and the cells two steps away in a straight line: a move that
    makes a threat (k - 1 marks in a line whose last cell is empty) is always among them.
    """
    reach = max(abs(d_row), abs(d_col))
    straight = d_row == 0 or d_col == 0 or abs(d_row) == abs(d_col)
    return reach == 1 or (reach == 2 and straight)


@functools.cache
def _neighbours(geo: Geometry) -> tuple[int, ...]:
    """For each cell, the cells the pruned search tries near a mark there (``_near``)."""
    return tuple(
        sum(
            1 << (r * geo.width + c)
            for r in range(geo.height)
            for c in range(geo.width)
            if _near(r - cell // geo.width, c - cell % geo.width)
        )
        for cell in range(geo.size)
    )


def make_limited(
    solver: _Solver, prune: bool
) -> tuple[Callable[..., int], Callable[[], tuple[bool, bool]]]:
    """A fresh depth-limited search with its own table of (depth, low, high, move).

    With ``prune`` it only tries cells near the marks already on the board.
    """
    geo = solver.geo
    size = geo.size
    full = geo.full_mask
    masks = geo.line_masks
    order, syms, inv, dx, do = solver.order, solver.syms, solver.inv, solver.dx, solver.do
    wins_get = solver.wins.get
    win_cells = solver.win_cells_of
    spend = solver.spend
    neighbours = _neighbours(geo)
    near = solver.near
    near_get = near.get
    weights = [0] + [10**i for i in range(geo.k)]
    steps = [weights[n + 1] - weights[n] for n in range(geo.k)]
    masks_through = tuple(tuple(masks[i] for i in geo.lines_through[c]) for c in range(size))
    table: dict[int, tuple[int, int, int, int]] = {}
    table_get = table.get
    history = [0] * size
    horizon = False
    pruned = False
    pending = 0
    allowance = 1

    def evaluate(me: int, opp: int) -> int:
        """Open lines: 10**(n-1) for n marks in a line the other side has not entered."""
        score = 0
        for mask in masks:
            a = me & mask
            b = opp & mask
            if a:
                if not b:
                    score += weights[a.bit_count()]
            elif b:
                score -= weights[b.bit_count()]
        return score

    def gain(me: int, opp: int, cell: int) -> int:
        """How much ``evaluate(me, opp)`` grows when me takes cell (not a winning move)."""
        change = 0
        for mask in masks_through[cell]:
            b = opp & mask
            if b:
                if not me & mask:
                    change += weights[b.bit_count()]
            else:
                change += steps[(me & mask).bit_count()]
        return change

    def near_of(empty: int) -> int:
        """Empty cells near a mark (see ``_near``); all empty cells if there are none."""
        around = 0
        for cell in _bits_of(full ^ empty):
            around |= neighbours[cell]
        around &= empty
        near[empty] = around or empty
        return around or empty

    def limited(
        me: int,
        opp: int,
        keys: tuple[int, ...],
        ply: int,
        depth: int,
        alpha: int,
        beta: int,
        guess: int | None,
    ) -> int:
        """Fail-soft principal-variation search; forced blocks do not use up depth.

        ``guess`` is ``evaluate(me, opp)`` when the caller already knows it.
        """
        nonlocal pending, allowance, horizon, pruned
        pending += 1
        if pending >= allowance:
            allowance = spend(pending)
            pending = 0
        empty = full ^ (me | opp)
        mine = wins_get(me)
        if mine is None:
            mine = win_cells(me)
        if mine & empty:
            return SCORE_UNIT * (size - ply)
        if not empty:
            return 0
        theirs = wins_get(opp)
        if theirs is None:
            theirs = win_cells(opp)
        theirs &= empty
        delta = do if ply & 1 else dx
        if theirs:
            if theirs & (theirs - 1):
                return SCORE_UNIT * (ply + 1 - size)
            child = tuple(map(add, keys, delta[theirs.bit_length() - 1]))
            return -limited(opp, me | theirs, child, ply + 1, depth, -beta, -alpha, None)
        if depth <= 0:
            horizon = True
            if guess is None:
                guess = evaluate(me, opp)
            return -_CLIP if guess < -_CLIP else _CLIP if guess > _CLIP else guess
        key = min(keys)
        entry = table_get(key)
        first = -1
        if entry is not None:
            known_depth, known_low, known_high, canon_move = entry
            first = inv[keys.index(key)][canon_move]
            if known_depth >= depth:
                if known_low >= beta:
                    return known_low
                if known_high <= alpha:
                    return known_high
                if known_low > alpha:
                    alpha = known_low
                if known_high < beta:
                    beta = known_high
                if alpha >= beta:
                    return alpha
        if prune:
            around = near_get(empty)
            if around is None:
                around = near_of(empty)
            if around != empty:
                pruned = True
            moves = [c for c in order if around >> c & 1]
        else:
            moves = [c for c in order if empty >> c & 1]
        moves.sort(key=history.__getitem__, reverse=True)
        if first >= 0:
            moves.remove(first)
            moves.insert(0, first)
        start_alpha = alpha
        best = -_INF
        best_move = moves[0]
        full_window = True
        base = evaluate(me, opp) if depth == 1 else 0
        next_guess = None
        for cell in moves:
            child = tuple(map(add, keys, delta[cell]))
            after = me | 1 << cell
            if depth == 1:
                next_guess = -base - gain(me, opp, cell)
            if full_window:
                value = -limited(opp, after, child, ply + 1, depth - 1, -beta, -alpha, next_guess)
            else:
                value = -limited(
                    opp, after, child, ply + 1, depth - 1, -alpha - 1, -alpha, next_guess
                )
                if alpha < value < beta:
                    value = -limited(
                        opp, after, child, ply + 1, depth - 1, -beta, -value, next_guess
                    )
            if value > best:
                best = value
                best_move = cell
                if value > alpha:
                    alpha = value
                    full_window = False
                    if alpha >= beta:
                        history[cell] += depth * depth
                        break
        canon_move = syms[keys.index(key)][best_move]
        if best <= start_alpha:
            table[key] = (depth, -_INF, best, canon_move)
        elif best >= beta:
            table[key] = (depth, best, _INF, canon_move)
        else:
            table[key] = (depth, best, best, canon_move)
        return best

    def flags() -> tuple[bool, bool]:
        """Whether the horizon was hit and whether moves were pruned since the last
        call; resets both."""
        nonlocal horizon, pruned, pending
        solver.tally(pending)
        pending = 0
        found = horizon, pruned
        horizon = pruned = False
        return found

    return limited, flags


def deepen(
    board: Board,
    seconds: float = 1.0,
    rng: random.Random | None = None,
    *,
    max_nodes: int | None = None,
    max_depth: int | None = None,
) -> SearchResult:
    """Iterative deepening to a time budget (and optional node/depth limits).

    Each iteration is a principal-variation search with a table of bounds, win/block
    pruning, an open-lines evaluation at the horizon, and only the cells near marks
    already played (see ``_near``); forced blocks do not count against the depth. The
    answer comes from the last iteration that finished. It is proven when that
    iteration neither reached the horizon nor pruned a move, or when it found a win or
    loss within its depth that a full-width search of the same depth confirms; then
    every optimal move is a candidate, otherwise the best move and its mirror images
    are. ``rng`` picks among candidates (the lowest cell without one). The depth reached
    depends on the machine's speed unless ``max_nodes`` or ``max_depth`` binds first, so
    games replay exactly only then.
    """
    _check_playable(board)
    solver = _solver(board)
    solver.trim()
    size, ply = board.size, board.ply
    me, opp = _sides(board)
    keys = solver.keys_of(board.x_bits, board.o_bits)
    empty = board.geometry.full_mask ^ (me | opp)
    first_node = solver.count()
    winning = solver.wins_for(me) & empty
    if winning:
        cells = sorted(_bits_of(winning))
        cell = rng.choice(cells) if rng is not None else cells[0]
        return SearchResult(cell, (size - ply) * SCORE_UNIT, True, 1, 0, WIN, 1)
    groups = solver.representatives(keys, empty)
    remaining = size - ply
    top = remaining if max_depth is None else max(1, min(max_depth, remaining))
    solver.limit(max_nodes, time.perf_counter() + seconds)

    def iterate(
        search: Callable[..., int], depth: int, ties: bool
    ) -> tuple[int, list[tuple[int, tuple[int, list[int]]]]]:
        """The root's value at ``depth`` and its move classes, best first.

        With ``ties`` every move class that equals the best gets an exact value;
        otherwise only the best does (null windows show the others are no better).
        """

        def value_of(cell: int, alpha: int, beta: int) -> int:
            child = solver.child_keys(keys, cell, ply)
            return -search(opp, me | 1 << cell, child, ply + 1, depth - 1, -beta, -alpha, None)

        best = -_INF
        scored: list[tuple[int, tuple[int, list[int]]]] = []
        for cell, orbit in groups:
            if best == -_INF:
                value = value_of(cell, -_INF, _INF)
            else:
                low = best - 1 if ties else best
                value = value_of(cell, low, low + 1)
                if value > low and ties:
                    value = value_of(cell, best, best + 1)
                if value > best:
                    value = value_of(cell, best, _INF)
            best = max(best, value)
            scored.append((value, (cell, orbit)))
        scored.sort(key=lambda pair: -pair[0])
        return best, [(value, group) for value, group in scored]

    def mate_within(score: int, depth: int) -> bool:
        return abs(score) >= SCORE_UNIT and size + 1 - abs(score) // SCORE_UNIT - ply <= depth

    def all_best(best: int, scored: list[tuple[int, tuple[int, list[int]]]]) -> list[int]:
        return sorted(c for v, (_, orbit) in scored if v == best for c in orbit)

    limited, flags = make_limited(solver, prune=True)
    done_depth, done_score, done_cells, proven = 0, 0, groups[0][1], False
    try:
        for depth in range(1, top + 1):
            if depth == remaining:
                # The whole game fits: search it in full width, which proves the result.
                limited, flags = make_limited(solver, prune=False)
            flags()
            best, scored = iterate(limited, depth, ties=False)
            groups = [group for _, group in scored]
            done_depth, done_score, done_cells = depth, best, scored[0][1][1]
            horizon, pruned = flags()
            if not pruned and (not horizon or mate_within(best, depth)):
                best, scored = iterate(limited, depth, ties=True)
                done_score, done_cells, proven = best, all_best(best, scored), True
                break
            if mate_within(best, depth):
                # The pruned search may have missed a defence: check without pruning.
                wide, _ = make_limited(solver, prune=False)
                best, scored = iterate(wide, depth, ties=True)
                groups = [group for _, group in scored]
                done_score, done_cells = best, scored[0][1][1]
                if mate_within(best, depth):
                    done_cells, proven = all_best(best, scored), True
                    break
    except _Abort:
        pass
    cell = rng.choice(done_cells) if rng is not None else done_cells[0]
    nodes = solver.count() - first_node
    if not proven:
        return SearchResult(cell, done_score, False, done_depth, nodes)
    value = _move_value(cell, done_score // SCORE_UNIT, ply, size)
    depth = remaining if abs(done_score) < SCORE_UNIT else done_depth
    return SearchResult(cell, done_score, True, depth, nodes, value.result, value.plies)
