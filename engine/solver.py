"""Exact game values, and the ``perfect`` strategy built on them.

Scores are from the point of view of the player to move and depend only on the
position: a game that ends in a win with ``n`` marks on the board is worth
``size + 1 - n`` to the winner and the negation to the loser, a draw is worth 0. This is
the tutorials' "10 - depth" rule counted from the empty board, so a quicker win scores
more and a later loss scores less, and a transposition table can keep scores across
searches.

The exact search is alpha-beta (negamax) with a transposition table of bounds keyed on
the symmetry-reduced position, win-in-one and forced-block pruning, and score bounds
from the number of empty cells. Every 3x3 position is precomputed once, on first use.
Boards of up to 16 cells are always solved exactly. On bigger boards ``solve`` and
``move_values`` work under a node limit (UnsolvableError when it runs out), and
``Perfect`` uses ``deepen``: iterative deepening under a time budget with a heuristic
evaluation at the horizon, which reports a move as proven only when the search
established its value exactly.

Everything is cached at module level per board shape, with caps on memory, so that a
worker process serving many moves gets faster as it goes.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import add

from engine.board import Board, Geometry, geometry
from engine.errors import EngineError, IllegalMoveError

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
    "deepen",
    "move_values",
    "result_of",
    "solve",
    "solve_counted",
]

WIN = "win"
DRAW = "draw"
LOSS = "loss"

SCORE_UNIT = 100_000
"""``SearchResult.score`` is an exact score times this; heuristic estimates stay inside it."""

EXACT_MAX_CELLS = 16
"""Boards with at most this many cells are always solved exactly, without a limit."""

CHOOSE_EMPTY_CELLS = 14
"""On bigger boards ``Perfect`` tries an exact choice once this few cells are empty."""

DEFAULT_MAX_NODES = 2_000_000
"""Node limit of ``solve``/``move_values``/``best_moves`` on boards above EXACT_MAX_CELLS."""

_INF = 1 << 30  # beyond every score
_UNLIMITED = 1 << 62  # a node count no process reaches
_TT_LIMIT = 500_000  # entries per generation of a shape's table (about 100 bytes each)
_WINS_LIMIT = 300_000
_CHOICE_LIMIT = 200_000
_CHECK_EVERY = 2048  # nodes between looks at the clock
_CLIP = SCORE_UNIT - 1  # heuristic estimates stay within +-_CLIP


class UnsolvableError(EngineError):
    """The position is too big to solve exactly within the node limit."""


class _Abort(Exception):
    """Unwinds a search whose node or time limit ran out."""


@dataclass(frozen=True, slots=True)
class MoveValue:
    """The exact value of playing ``cell`` for the player to move.

    ``plies`` counts the move itself: a winning move that completes a line has plies 1.
    A draw always lasts until the board is full.
    """

    cell: int
    result: str
    plies: int


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What ``Perfect.search`` chose and how sure it is.

    ``score`` is for the player to move, in ``SCORE_UNIT``s: an exact score times
    SCORE_UNIT when ``proven``. Otherwise it is the search's estimate: a heuristic value
    strictly between -SCORE_UNIT and SCORE_UNIT, or (rarely) a win or loss the search
    saw but could not prove within its depth. ``depth`` is how many plies were searched
    (all remaining plies for an exact solve). ``result`` and ``plies`` describe the
    chosen move as in MoveValue when proven, and are None otherwise.
    """

    cell: int
    score: int
    proven: bool
    depth: int
    nodes: int
    result: str | None = None
    plies: int | None = None


def result_of(score: int) -> str:
    """WIN, DRAW or LOSS for an exact score (either scale)."""
    return WIN if score > 0 else LOSS if score < 0 else DRAW


def _move_value(cell: int, score: int, ply: int, size: int) -> MoveValue:
    """A move's MoveValue from its exact score for the mover, played at ``ply`` marks."""
    if score == 0:
        return MoveValue(cell, DRAW, size - ply)
    return MoveValue(cell, result_of(score), size + 1 - abs(score) - ply)


def _bits_of(bits: int) -> Iterator[int]:
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


# -- the per-shape exact solver ---------------------------------------------------------


class _Solver:
    """Tables, caches and searches for one board shape.

    A position is passed around as (me, opp): the bits of the player to move and of the
    other player, plus ``keys``, the position's code (X bits | O bits << size) under each
    symmetry, updated incrementally; the smallest key names the symmetry class.
    """

    def __init__(self, geo: Geometry) -> None:
        size = geo.size
        full = geo.full_mask
        masks = geo.line_masks
        syms = geo.symmetries
        self.geo = geo
        self.size = size
        self.syms = syms
        self.inv = tuple(tuple(perm.index(i) for i in range(size)) for perm in syms)
        self.dx = tuple(tuple(1 << perm[c] for perm in syms) for c in range(size))
        self.do = tuple(tuple(1 << (perm[c] + size) for perm in syms) for c in range(size))
        centre_row, centre_col = (geo.height - 1) / 2, (geo.width - 1) / 2

        def rank(c: int) -> tuple[int, float]:
            row, col = divmod(c, geo.width)
            return (-len(geo.lines_through[c]), abs(row - centre_row) + abs(col - centre_col))

        order = tuple(sorted(range(size), key=rank))
        neighbours = tuple(
            sum(
                1 << (r * geo.width + c)
                for r in range(geo.height)
                for c in range(geo.width)
                if _near(r - cell // geo.width, c - cell % geo.width)
            )
            for cell in range(size)
        )
        order_from = tuple((c, *(o for o in order if o != c)) for c in range(size))
        self.order = order
        self.tt: dict[int, tuple[int, int, int]] = {}
        self.old_tt: dict[int, tuple[int, int, int]] = {}
        self.wins: dict[int, int] = {}
        self.choices: dict[int, tuple[tuple[int, ...], int]] = {}
        weights = [0] + [10**i for i in range(geo.k)]
        steps = [weights[n + 1] - weights[n] for n in range(geo.k)]
        masks_through = tuple(tuple(masks[i] for i in geo.lines_through[c]) for c in range(size))
        tt = self.tt
        old_tt = self.old_tt
        old_get = old_tt.get
        wins = self.wins
        tt_get = tt.get
        wins_get = wins.get
        dx, do, inv = self.dx, self.do, self.inv
        nodes = 0
        stop = _UNLIMITED
        node_limit = _UNLIMITED
        deadline = math.inf

        def win_cells(bits: int) -> int:
            """Cells (empty or not) that would complete a line for a player holding bits."""
            found = 0
            for mask in masks:
                rest = mask & ~bits
                if rest and not rest & (rest - 1):
                    found |= rest
            wins[bits] = found
            return found

        shut: dict[int, bool] = {}
        shut_get = shut.get
        self.shut = shut

        def shuts(bits: int) -> bool:
            """Whether ``bits`` hold a cell of every line (the other side cannot win)."""
            found = all(mask & bits for mask in masks)
            shut[bits] = found
            return found

        def age() -> None:
            """Make the table the old generation (read, never written) and start afresh."""
            old_tt.clear()
            old_tt.update(tt)
            tt.clear()

        def check() -> None:
            """Every few thousand nodes: enforce the limits and the table's cap."""
            nonlocal stop
            if nodes >= node_limit or time.perf_counter() > deadline:
                raise _Abort
            if len(tt) > _TT_LIMIT:
                age()  # only caches: the search stays correct, just slower
            if len(wins) > _WINS_LIMIT:
                wins.clear()
            if len(shut) > _WINS_LIMIT:
                shut.clear()
            stop = min(nodes + _CHECK_EVERY, node_limit)

        def limit(max_nodes: int | None, until: float) -> None:
            """Limit the searches that follow to max_nodes more nodes and a deadline."""
            nonlocal stop, node_limit, deadline
            node_limit = _UNLIMITED if max_nodes is None else nodes + max_nodes
            deadline = until
            stop = min(nodes + _CHECK_EVERY, node_limit)

        def count() -> int:
            return nodes

        def search(
            me: int, opp: int, keys: tuple[int, ...], ply: int, alpha: int, beta: int
        ) -> int:
            """Fail-soft negamax value of a position that is not over."""
            nonlocal nodes
            nodes += 1
            if nodes >= stop:
                check()
            empty = full ^ (me | opp)
            mine = wins_get(me)
            if mine is None:
                mine = win_cells(me)
            if mine & empty:
                return size - ply
            if not empty:
                return 0
            theirs = wins_get(opp)
            if theirs is None:
                theirs = win_cells(opp)
            theirs &= empty
            delta = do if ply & 1 else dx
            if theirs:
                if theirs & (theirs - 1):
                    return ply + 1 - size
                cell = theirs.bit_length() - 1
                child = tuple(map(add, keys, delta[cell]))
                return -search(opp, me | theirs, child, ply + 1, -beta, -alpha)
            # No win next move for either side: the best is a win three plies on, the
            # worst a loss four plies on.
            # A side whose every line holds a mark of the other can no longer win.
            shut = shut_get(opp)
            if shut is None:
                shut = shuts(opp)
            high = 0 if shut else size - 2 - ply
            if high < 0:
                high = 0
            if beta > high:
                beta = high
                if alpha >= beta:
                    return high
            shut = shut_get(me)
            if shut is None:
                shut = shuts(me)
            low = 0 if shut else ply + 3 - size
            if low > 0:
                low = 0
            if alpha < low:
                alpha = low
                if alpha >= beta:
                    return low
            key = min(keys)
            entry = tt_get(key)
            if entry is None:
                entry = old_get(key)
            moves = order
            if entry is None:
                known_low, known_high = -_INF, _INF
            else:
                known_low, known_high, canon_move = entry
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
                moves = order_from[inv[keys.index(key)][canon_move]]
            start_alpha = alpha
            best = -_INF
            best_move = 0
            for cell in moves:
                bit = 1 << cell
                if not empty & bit:
                    continue
                child = tuple(map(add, keys, delta[cell]))
                value = -search(opp, me | bit, child, ply + 1, -beta, -alpha)
                if value > best:
                    best = value
                    best_move = cell
                    if value > alpha:
                        alpha = value
                        if alpha >= beta:
                            break
            canon_move = syms[keys.index(key)][best_move]
            if best <= start_alpha:
                tt[key] = (known_low, best, canon_move)
            elif best >= beta:
                tt[key] = (best, known_high, canon_move)
            else:
                tt[key] = (best, best, canon_move)
            return best

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

        near: dict[int, int] = {}
        near_get = near.get
        self.near = near

        def near_of(empty: int) -> int:
            """Empty cells near a mark (see ``_near``); all empty cells if there are none."""
            around = 0
            for cell in _bits_of(full ^ empty):
                around |= neighbours[cell]
            around &= empty
            near[empty] = around or empty
            return around or empty

        def make_limited(
            prune: bool,
        ) -> tuple[Callable[..., int], Callable[[], tuple[bool, bool]]]:
            """A fresh depth-limited search with its own table of (depth, low, high, move).

            With ``prune`` it only tries cells near the marks already on the board.
            """
            table: dict[int, tuple[int, int, int, int]] = {}
            table_get = table.get
            history = [0] * size
            horizon = False
            pruned = False

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
                nonlocal nodes, horizon, pruned
                nodes += 1
                if nodes >= stop:
                    check()
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
                        value = -limited(
                            opp, after, child, ply + 1, depth - 1, -beta, -alpha, next_guess
                        )
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
                nonlocal horizon, pruned
                found = horizon, pruned
                horizon = pruned = False
                return found

            return limited, flags

        self.search = search
        self.age = age
        self.win_cells_of = win_cells
        self.limit = limit
        self.count = count
        self.make_limited = make_limited

    # -- helpers on whole positions -------------------------------------------------------

    def keys_of(self, x: int, o: int) -> tuple[int, ...]:
        keys = (0,) * len(self.syms)
        for cell in _bits_of(x):
            keys = tuple(map(add, keys, self.dx[cell]))
        for cell in _bits_of(o):
            keys = tuple(map(add, keys, self.do[cell]))
        return keys

    def child_keys(self, keys: tuple[int, ...], cell: int, ply: int) -> tuple[int, ...]:
        return tuple(map(add, keys, (self.do if ply & 1 else self.dx)[cell]))

    def wins_for(self, bits: int) -> int:
        found = self.wins.get(bits)
        return self.win_cells_of(bits) if found is None else found

    def representatives(self, keys: tuple[int, ...], empty: int) -> list[tuple[int, list[int]]]:
        """Empty cells grouped into classes the position's own symmetries make equivalent."""
        stabiliser = [perm for perm, key in zip(self.syms, keys, strict=True) if key == keys[0]]
        seen = 0
        groups = []
        for cell in self.order:
            if not empty >> cell & 1 or seen >> cell & 1:
                continue
            orbit = sorted({perm[cell] for perm in stabiliser})
            for member in orbit:
                seen |= 1 << member
            groups.append((cell, orbit))
        return groups

    def trim(self) -> None:
        """Drop caches that grew past their caps (between searches only)."""
        if len(self.tt) > _TT_LIMIT:
            self.age()
        if len(self.wins) > _WINS_LIMIT:
            self.wins.clear()
        if len(self.choices) > _CHOICE_LIMIT:
            self.choices.clear()
        if len(self.shut) > _WINS_LIMIT:
            self.shut.clear()
        if len(self.near) > _WINS_LIMIT:
            self.near.clear()

    def value(
        self, me: int, opp: int, keys: tuple[int, ...], ply: int, alpha: int, beta: int
    ) -> int:
        """The search's fail-soft value; positions where the last mover won are handled."""
        if _has_line(self.geo, opp):
            return ply - 1 - self.size
        return self.search(me, opp, keys, ply, alpha, beta)

    def exact(self, me: int, opp: int, keys: tuple[int, ...], ply: int) -> int:
        """The exact score: first win/draw/loss with a narrow window, then the distance."""
        value = self.value(me, opp, keys, ply, -1, 1)
        if value > 0:
            value = self.value(me, opp, keys, ply, 0, _INF)
        elif value < 0:
            value = self.value(me, opp, keys, ply, -_INF, 0)
        return value

    def optimal(
        self, me: int, opp: int, keys: tuple[int, ...], ply: int
    ) -> tuple[int, list[tuple[int, list[int]]]]:
        """The exact score and the classes of optimal moves of a position that is not over."""
        empty = self.geo.full_mask ^ (me | opp)
        winning = self.wins_for(me) & empty
        groups = self.representatives(keys, empty)
        if winning:
            return self.size - ply, [(c, orbit) for c, orbit in groups if winning >> c & 1]
        best = -_INF
        chosen: list[tuple[int, list[int]]] = []
        for cell, orbit in groups:
            child = self.child_keys(keys, cell, ply)
            after = me | 1 << cell
            if best == -_INF:
                value = -self.exact(opp, after, child, ply + 1)
            else:
                value = -self.search(opp, after, child, ply + 1, -best - 1, -best + 1)
                if value > best:
                    value = -self.search(opp, after, child, ply + 1, -_INF, -best)
            if value > best:
                best, chosen = value, []
            if value == best:
                chosen.append((cell, orbit))
        return best, chosen

    def mistakes(self, me: int, opp: int, keys: tuple[int, ...], ply: int, score: int) -> int:
        """How many replies of the player to move worsen their result, exact ``score``."""
        if score < 0:
            return 0  # a lost side cannot do worse
        empty = self.geo.full_mask ^ (me | opp)
        winning = self.wins_for(me)
        errors = 0
        for cell, orbit in self.representatives(keys, empty):
            if winning >> cell & 1:
                continue
            child = self.child_keys(keys, cell, ply)
            after = me | 1 << cell
            if score == 0:
                # Mistake if the other side now wins: its value is at least 1.
                bad = self.search(opp, after, child, ply + 1, 0, 1) >= 1
            else:
                # Mistake if the other side now draws or wins.
                bad = self.search(opp, after, child, ply + 1, -1, 0) >= 0
            if bad:
                errors += len(orbit)
        return errors

    def choose(self, x: int, o: int) -> tuple[tuple[int, ...], int]:
        """The optimal cells that leave the opponent most room to err, and the exact score.

        Cached per symmetry class. If the limits run out while counting the opponent's
        chances to err, all optimal cells are returned (and not cached); if they run out
        before, _Abort propagates.
        """
        keys = self.keys_of(x, o)
        key = min(keys)
        sym = keys.index(key)
        cached = self.choices.get(key)
        if cached is not None:
            cells, score = cached
            back = self.inv[sym]
            return tuple(sorted(back[c] for c in cells)), score
        ply = (x | o).bit_count()
        me, opp = (x, o) if ply & 1 == 0 else (o, x)
        score, groups = self.optimal(me, opp, keys, ply)
        if len(groups) > 1 and score <= 0:
            counted = []
            try:
                for cell, _ in groups:
                    child = self.child_keys(keys, cell, ply)
                    counted.append(self.mistakes(opp, me | 1 << cell, child, ply + 1, -score))
            except _Abort:
                return tuple(sorted(c for _, orbit in groups for c in orbit)), score
            most = max(counted)
            groups = [g for g, n in zip(groups, counted, strict=True) if n == most]
        cells = tuple(sorted(c for _, orbit in groups for c in orbit))
        forward = self.syms[sym]
        self.choices[key] = (tuple(forward[c] for c in cells), score)
        return cells, score


def _near(d_row: int, d_col: int) -> bool:
    """Whether the pruned search tries a cell at this offset from a mark.

    The eight neighbours and the cells two steps away in a straight line: a move that
    makes a threat (k - 1 marks in a line whose last cell is empty) is always among them.
    """
    reach = max(abs(d_row), abs(d_col))
    straight = d_row == 0 or d_col == 0 or abs(d_row) == abs(d_col)
    return reach == 1 or (reach == 2 and straight)


def _has_line(geo: Geometry, bits: int) -> bool:
    return any(bits & mask == mask for mask in geo.line_masks)


_SOLVERS: dict[tuple[int, int, int], _Solver] = {}


def _solver(board: Board) -> _Solver:
    shape = (board.width, board.height, board.k)
    solver = _SOLVERS.get(shape)
    if solver is None:
        solver = _SOLVERS[shape] = _Solver(geometry(*shape))
    return solver


# -- the precomputed 3x3 table ------------------------------------------------------------

_Table = tuple[dict[int, int], dict[int, tuple[int, ...]]]
_TABLE3: _Table | None = None


def _table3() -> _Table:
    """Exact scores of all 5,478 positions of 3x3 and the moves ``perfect`` picks from.

    Keys are X bits | O bits << 9; built on first use (a few tens of milliseconds).
    """
    global _TABLE3
    if _TABLE3 is None:
        _TABLE3 = _build_table3()
    return _TABLE3


def _build_table3() -> _Table:
    masks = geometry(3, 3, 3).line_masks
    scores: dict[int, int] = {}
    picks: dict[int, tuple[int, ...]] = {}

    def visit(x: int, o: int, ply: int) -> int:
        key = x | o << 9
        known = scores.get(key)
        if known is not None:
            return known
        last = x if ply & 1 else o
        if any(last & mask == mask for mask in masks):
            scores[key] = ply - 10
            return ply - 10
        if ply == 9:
            scores[key] = 0
            return 0
        empty = [c for c in range(9) if not (x | o) >> c & 1]
        children = [x | 1 << c | (o << 9) if ply & 1 == 0 else x | (o | 1 << c) << 9 for c in empty]
        values = [-visit(child & 511, child >> 9, ply + 1) for child in children]
        best = max(values)
        chosen = [
            (c, child) for c, child, v in zip(empty, children, values, strict=True) if v == best
        ]
        if len(chosen) > 1 and best <= 0:
            counts = []
            for _, child in chosen:
                errors = 0
                for reply in range(9):
                    bit = 1 << reply
                    if (child | child >> 9) & bit:
                        continue
                    after = child | bit << 9 if ply & 1 == 0 else child | bit
                    value = scores[after]
                    errors += value > 0 if best == 0 else value >= 0
                counts.append(errors)
            most = max(counts)
            chosen = [pair for pair, n in zip(chosen, counts, strict=True) if n == most]
        picks[key] = tuple(c for c, _ in chosen)
        scores[key] = best
        return best

    visit(0, 0, 0)
    return scores, picks


# -- public API -------------------------------------------------------------------------


def _sides(board: Board) -> tuple[int, int]:
    """(bits of the player to move, bits of the other player)."""
    if board.ply & 1:
        return board.o_bits, board.x_bits
    return board.x_bits, board.o_bits


def _is_table(board: Board) -> bool:
    return board.width == 3 and board.height == 3


def _node_limit(board: Board, max_nodes: int | None) -> int | None:
    if max_nodes is not None:
        return max_nodes
    return None if board.size <= EXACT_MAX_CELLS else DEFAULT_MAX_NODES


def _check_playable(board: Board) -> None:
    if board.is_over:
        raise IllegalMoveError("the game is over")


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
    solver = _solver(board)
    solver.trim()
    me, opp = _sides(board)
    keys = solver.keys_of(board.x_bits, board.o_bits)
    first_node = solver.count()
    solver.limit(_node_limit(board, max_nodes), math.inf)
    try:
        return solver.exact(me, opp, keys, board.ply), solver.count() - first_node
    except _Abort:
        raise UnsolvableError(f"{board.text} is too big to solve exactly") from None


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
    solver = _solver(board)
    solver.trim()
    me, opp = _sides(board)
    keys = solver.keys_of(board.x_bits, board.o_bits)
    empty = board.geometry.full_mask ^ (me | opp)
    winning = solver.wins_for(me) & empty
    solver.limit(_node_limit(board, max_nodes), math.inf)
    values: dict[int, MoveValue] = {}
    try:
        for cell, orbit in solver.representatives(keys, empty):
            if winning >> cell & 1:
                score = size - ply
            else:
                child = solver.child_keys(keys, cell, ply)
                score = -solver.exact(opp, me | 1 << cell, child, ply + 1)
            for member in orbit:
                values[member] = _move_value(member, score, ply, size)
    except _Abort:
        raise UnsolvableError(f"{board.text} is too big to solve exactly") from None
    return [values[cell] for cell in sorted(values)]


def best_moves(board: Board, *, max_nodes: int | None = None) -> list[int]:
    """All cells with the best exact value, in cell order; raises as ``move_values``."""
    _check_playable(board)
    if _is_table(board):
        values = move_values(board)
        top = max(_rank(v) for v in values)
        return [v.cell for v in values if _rank(v) == top]
    solver = _solver(board)
    solver.trim()
    me, opp = _sides(board)
    keys = solver.keys_of(board.x_bits, board.o_bits)
    solver.limit(_node_limit(board, max_nodes), math.inf)
    try:
        _, groups = solver.optimal(me, opp, keys, board.ply)
    except _Abort:
        raise UnsolvableError(f"{board.text} is too big to solve exactly") from None
    return sorted(c for _, orbit in groups for c in orbit)


def _rank(value: MoveValue) -> int:
    """A MoveValue as a number that grows with how good it is for the mover."""
    if value.result == WIN:
        return 1000 - value.plies
    if value.result == LOSS:
        return -1000 + value.plies
    return 0


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
    ) -> tuple[int, list[tuple[int, list[int]]]]:
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

    limited, flags = solver.make_limited(prune=True)
    done_depth, done_score, done_cells, proven = 0, 0, groups[0][1], False
    try:
        for depth in range(1, top + 1):
            if depth == remaining:
                # The whole game fits: search it in full width, which proves the result.
                limited, flags = solver.make_limited(prune=False)
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
                wide, _ = solver.make_limited(prune=False)
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
