"""The post-game review (``engine.analysis.Review``): which values it settles, and how.

1. Facts that need no search, on every board: a finished position's result; the empty
   board's value (``engine.values.opening_value``); a player to move who can complete a
   line at once wins; one who cannot, facing two such cells of the opponent, loses; a
   position where neither side can complete a line any more (``engine.breaker``) is
   drawn. The missed wins in one and missed blocks (``Slip``) come from the same look,
   so they are found on every board, whatever the budget.
2. On boards of up to EXACT_MAX_CELLS cells every other value is solved exactly, with no
   budget (milliseconds: 3x3 from its table, 4x4 with the breaker's help).
3. On the book's 5x5 boards (``engine.book``), the proofs: ``python -m engine prove``
   checked every position ``impossible`` reaches, as X and as O, against every reply
   (README: proven in full), so while a side has played ``book_move``'s move at each of
   its turns, it is not lost, and each of those moves kept the value. The review
   replays ``book_move`` on each side's moves until one differs (a few milliseconds a
   move, charged to the budget).
4. What follows from those facts: a move never makes the value better for its own
   player, so each unknown value is narrowed by its neighbours (``narrow``), and one
   left with a single possibility is known. This runs again after every search.
5. On bigger boards a fresh solver searches win/draw/loss only (a null window, much
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
from collections.abc import Callable, Sequence, Set

from engine.analysis import (
    DRAWN,
    LOST_GAME,
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
from engine.book import book_move, cold, uses_book
from engine.breaker import breaker_for
from engine.exact import _Abort, _Solver
from engine.results import DRAW, WIN, _move_value
from engine.solver import EXACT_MAX_CELLS, solve
from engine.values import opening_value

__all__ = ["BETTER_MOVES", "STEP_NODES", "last_change", "narrow", "review"]

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
    kept: set[int] = set()
    not_lost: dict[int, set[Mark]] = {}
    if not search.exact and uses_book(boards[0]):
        for mark in Mark:
            book_moves = search.book_prefix(boards, moves, mark)
            kept.update(i for i in range(book_moves) if mover_of(i) is mark)
            for index in range(book_moves + 1):
                not_lost.setdefault(index, set()).add(mark)
    search.settle(boards, values, lambda: narrow(values, kept, not_lost))
    possible = narrow(values, kept, not_lost)
    decider = last_change(values, possible)
    kind: str | None = None
    better: tuple[int, ...] = ()
    if decider is not None:
        before = values[decider]
        kind = change_of(mover_of(decider), before, values[decider + 1]) or LOST_GAME
        better = search.better(boards[decider], before)
    shape = (tuple(moves), width, height, k, tuple(values))
    return Review(*shape, decider, kind, better, tuple(slips))


def last_change(values: Sequence[str], possible: Sequence[set[str]] | None = None) -> int | None:
    """The deciding move: the last index i where values[i] != values[i + 1], looked for
    only among the values known to the end (see ``Review``); None if they hold none.
    With ``possible`` (each value's possibilities, ``narrow``), also the move just
    before them when none of its own possible values is the one after it: it changed
    the value for sure, though which value it had stays open (LOST_GAME)."""
    start = len(values)
    while start > 0 and values[start - 1] != UNKNOWN:
        start -= 1
    for index in range(len(values) - 2, start - 1, -1):
        if values[index] != values[index + 1]:
            return index
    if possible is not None and 0 < start < len(values):
        before = possible[start - 1]
        if before and values[start] not in before:
            return start - 1
    return None


_ALL = frozenset((X_WINS, DRAWN, O_WINS))


def _rank(mark: Mark, value: str) -> int:
    """How good ``value`` is for ``mark``: 2 a win, 1 a draw, 0 a loss."""
    return 1 if value == DRAWN else 2 if value == _name(mark) else 0


def narrow(
    values: list[str], kept: Set[int] = frozenset(), not_lost: dict[int, set[Mark]] | None = None
) -> list[set[str]]:
    """Fill in the UNKNOWN ``values`` that the known ones force (in place), and return
    what each value may still be.

    A move never makes the value better for its own player; the moves in ``kept`` kept
    it; at ``not_lost[i]``'s positions those players are not lost. Each value's
    possibilities are narrowed by its neighbours' until nothing changes (the values
    form a chain, so this finds every value the facts force).

    >>> values = [DRAWN, UNKNOWN, DRAWN, DRAWN]  # X's first move kept the draw at best
    >>> _ = narrow(values); values
    ['draw', 'unknown', 'draw', 'draw']
    >>> sorted(narrow(values, not_lost={1: {Mark.X}})[1]), values  # and X was not lost after it
    (['draw'], ['draw', 'draw', 'draw', 'draw'])
    >>> values = [X_WINS, UNKNOWN, UNKNOWN, X_WINS]  # O's move kept X's win: X's did too
    >>> _ = narrow(values, kept={1}); values
    ['X wins', 'X wins', 'X wins', 'X wins']
    """
    not_lost = not_lost or {}
    can = [{value} if value != UNKNOWN else set(_ALL) for value in values]
    for index, marks in not_lost.items():
        for mark in marks:
            can[index] -= {_name(mark.other)}
    changed = True
    while changed:
        changed = False
        for index in range(len(values) - 1):
            mover = mover_of(index)
            before, after = can[index], can[index + 1]
            if index in kept:
                fits_after = after & before
                fits_before = before & after
            else:
                best = max(_rank(mover, v) for v in before) if before else -1
                worst = min(_rank(mover, v) for v in after) if after else 3
                fits_after = {v for v in after if _rank(mover, v) <= best}
                fits_before = {v for v in before if _rank(mover, v) >= worst}
            if fits_after != after or fits_before != before:
                can[index], can[index + 1] = fits_before, fits_after
                changed = True
    if not all(can):  # facts that contradict each other: none do, but claim nothing then
        return [{value} if value != UNKNOWN else set(_ALL) for value in values]
    for index, possible in enumerate(can):
        if values[index] == UNKNOWN and len(possible) == 1:
            values[index] = next(iter(possible))
    return can


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
        score: int | None
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

    def book_prefix(self, boards: list[Board], moves: Sequence[int], mark: Mark) -> int:
        """The index of ``mark``'s first move that is not ``book_move``'s (len(moves) if
        none), replaying it while the budget lasts (its nodes are charged)."""
        solver = cold((boards[0].width, boards[0].height, boards[0].k))
        for index, cell in enumerate(moves):
            if mover_of(index) is not mark:
                continue
            if self.left <= 0:
                return index
            start = solver.count()
            chosen = book_move(boards[index])
            self.left -= solver.count() - start
            if chosen != cell:
                return index
        return len(moves)

    def settle(self, boards: list[Board], values: list[str], infer: Callable[[], object]) -> None:
        """Fill in the UNKNOWN ``values`` it can (steps 2, 4 and 5 of the module);
        ``infer`` narrows them after each search."""
        order = range(len(boards) - 1, -1, -1)
        if self.exact:
            for index in order:
                if values[index] == UNKNOWN:
                    values[index] = self.value(boards[index], 0) or UNKNOWN
            return
        infer()
        for index in order:
            if values[index] == UNKNOWN:
                values[index] = self.value(boards[index], STEP_NODES) or UNKNOWN
                infer()
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
            infer()

    def better(self, board: Board, before: str) -> tuple[int, ...]:
        """Up to BETTER_MOVES moves on ``board`` that keep its value ``before`` for the
        mover (with ``before`` UNKNOWN: that hold at least a draw), best first (quicker
        wins first, then cell order); only moves whose value the budget settles."""
        targets = {WIN} if before == _name(board.turn) else {DRAW}
        if before == UNKNOWN:
            targets = {WIN, DRAW}
        if self.exact:
            kept = [v.cell for v in analyse(board) if v.result in targets]
            return tuple(kept[:BETTER_MOVES])
        me, _, empty = _sides(board)
        wins_now = _cells(_win_cells(board.geometry, me, empty))
        if WIN in targets and wins_now:
            return tuple(wins_now[:BETTER_MOVES])
        cells = board.legal_moves()
        wins: list[int] = []
        draws: list[int] = []
        for position, cell in enumerate(cells):
            value = self.value(board.play(cell), self.left // (len(cells) - position))
            if value == _name(board.turn) and WIN in targets:
                wins.append(cell)
            elif value == DRAWN and DRAW in targets:
                draws.append(cell)
                if len(draws) == BETTER_MOVES and not wins and targets == {DRAW}:
                    break
        plies = {cell: self._plies(board, cell, len(wins) - i) for i, cell in enumerate(wins)}
        wins.sort(key=lambda cell: (plies[cell], cell))
        return tuple((wins + draws)[:BETTER_MOVES])

    def _plies(self, board: Board, cell: int, sharing: int) -> int:
        """Plies to the win after the winning ``cell`` (more than any if out of budget),
        with a ``sharing``-th of what is left."""
        score = self._search(board.play(cell), self.left // sharing, exact=True)
        if score is None:
            return board.size
        return _move_value(cell, -score, board.ply, board.size).plies
