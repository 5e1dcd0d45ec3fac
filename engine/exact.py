"""The per-shape exact search behind ``engine.solver``.

The exact search is alpha-beta (negamax) with a transposition table of bounds keyed on
the symmetry-reduced position, win-in-one and forced-block pruning, and score bounds:
from the number of empty cells, and 0 wherever ``engine.breaker`` proves that a side can
no longer complete a line (a pairing of its open lines, or the Erdős-Selfridge sum).
Scores follow ``engine.results``. Everything is cached per board shape, with caps on
memory, so that a worker process serving many moves gets faster as it goes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from operator import add

from engine.board import Board, Geometry, geometry
from engine.breaker import breaker_for
from engine.errors import IllegalMoveError
from engine.geometry import key_tables

__all__: list[str] = []

_INF = 1 << 30  # beyond every score
_UNLIMITED = 1 << 62  # a node count no process reaches
_TT_LIMIT = 500_000  # entries per generation of a shape's table (about 100 bytes each)
_WINS_LIMIT = 300_000
_CHOICE_LIMIT = 200_000
_CHECK_EVERY = 2048  # nodes between looks at the clock


class _Abort(Exception):
    """Unwinds a search whose node or time limit ran out."""


def _bits_of(bits: int) -> Iterator[int]:
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


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
        self.key_tables = key_tables(geo)
        self.dx = tuple(tuple(1 << perm[c] for perm in syms) for c in range(size))
        self.do = tuple(tuple(1 << (perm[c] + size) for perm in syms) for c in range(size))
        centre_row, centre_col = (geo.height - 1) / 2, (geo.width - 1) / 2

        def rank(c: int) -> tuple[int, float]:
            row, col = divmod(c, geo.width)
            return (-len(geo.lines_through[c]), abs(row - centre_row) + abs(col - centre_col))

        order = tuple(sorted(range(size), key=rank))
        order_from = tuple((c, *(o for o in order if o != c)) for c in range(size))
        self.order = order
        self.tt: dict[int, tuple[int, int, int]] = {}
        self.old_tt: dict[int, tuple[int, int, int]] = {}
        self.wins: dict[int, int] = {}
        self.choices: dict[int, tuple[tuple[int, ...], int]] = {}
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

        cannot_win = breaker_for(geo).cannot_win

        def shuts(maker: int, breaker: int) -> bool:
            """Whether the maker provably never completes a line (``engine.breaker``)."""
            found = cannot_win(maker, breaker)
            shut[maker | breaker << size] = found
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

        def spend(used: int) -> int:
            """Count ``used`` nodes of a search kept elsewhere (``engine.deepen``), enforce
            the limits, and return how many more it may use before it calls again."""
            nonlocal nodes
            nodes += used
            if nodes >= stop:
                check()
            return stop - nodes

        def tally(used: int) -> None:
            """Count ``used`` nodes without a look at the limits."""
            nonlocal nodes
            nodes += used

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
            shut = shut_get(me | opp << size)
            if shut is None:
                shut = shuts(me, opp)
            high = 0 if shut else size - 2 - ply
            if high < 0:
                high = 0
            if beta > high:
                beta = high
                if alpha >= beta:
                    return high
            shut = shut_get(opp | me << size)
            if shut is None:
                shut = shuts(opp, me)
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

        self.search = search
        self.age = age
        self.win_cells_of = win_cells
        self.shuts = shuts
        self.limit = limit
        self.count = count
        self.spend = spend
        self.tally = tally
        self.near: dict[int, int] = {}

    # -- helpers on whole positions -------------------------------------------------------

    def keys_of(self, x: int, o: int) -> tuple[int, ...]:
        """The position's key under each symmetry, eight cells at a time."""
        keys = (0,) * len(self.syms)
        shift = 0
        for xs, os in self.key_tables:
            keys = tuple(map(add, keys, xs[x >> shift & 255]))
            keys = tuple(map(add, keys, os[o >> shift & 255]))
            shift += 8
        return keys

    def child_keys(self, keys: tuple[int, ...], cell: int, ply: int) -> tuple[int, ...]:
        return tuple(map(add, keys, (self.do if ply & 1 else self.dx)[cell]))

    def wins_for(self, bits: int) -> int:
        found = self.wins.get(bits)
        return self.win_cells_of(bits) if found is None else found

    def cannot_win(self, maker: int, breaker: int) -> bool:
        """Whether ``engine.breaker`` proves that ``maker`` never completes a line (cached)."""
        found = self.shut.get(maker | breaker << self.size)
        return self.shuts(maker, breaker) if found is None else found

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

    def forget(self) -> None:
        """Empty the transposition table (the other caches never change a node count)."""
        self.tt.clear()
        self.old_tt.clear()

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
        if score == 0 and self.cannot_win(opp, me):
            return 0  # no reply lets the other side win: an extra breaker mark never helps
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


def _has_line(geo: Geometry, bits: int) -> bool:
    return any(bits & mask == mask for mask in geo.line_masks)


_SOLVERS: dict[tuple[int, int, int], _Solver] = {}


def _solver(board: Board) -> _Solver:
    shape = (board.width, board.height, board.k)
    solver = _SOLVERS.get(shape)
    if solver is None:
        solver = _SOLVERS[shape] = _Solver(geometry(*shape))
    return solver


def _sides(board: Board) -> tuple[int, int]:
    """(bits of the player to move, bits of the other player)."""
    if board.ply & 1:
        return board.o_bits, board.x_bits
    return board.x_bits, board.o_bits


def _check_playable(board: Board) -> None:
    if board.is_over:
        raise IllegalMoveError("the game is over")
