"""``impossible`` without a search on 4x4 k=4, 5x5 k=4 and 5x5 k=5: book and proven choices.

On these boards (``BOOK_SHAPES``) the strongest level plays ``book_move``, which takes
the first of these steps that applies:

1. a winning cell (the shortest win there is);
2. the shipped book (``engine/data/book-*.bin``), computed offline by ``python -m
   engine book`` from the exact solver (or grown by ``python -m engine prove
   --extend-book``, which records the same moves): the move for every position the
   level reaches whose choice costs more than the caps below;
3. the exact choice (``engine.solver``'s optimal moves, and among drawing or losing ones
   those that leave the opponent most replies that worsen its result, then those that
   build most of the mover's lines) within ``INSTANT_NODES`` nodes;
4. on the 5x5 boards, where the exact choice does not fit, ``safe_choice`` within
   ``INSTANT_NODES`` more: the shortest win if there is one, else the first move, in
   ``steering`` order (moves that close the most of the opponent's lines first), that
   a null-window search proves does not lose. It is much cheaper than the exact choice:
   it needs one proof that a move holds, not the value of every move.

The searches owe their speed to ``engine.breaker``: a side whose open lines can be
paired off (5x5 k=5 from the empty board on) or whose Erdős-Selfridge sum is under 1/2
cannot win, which ends most middle-game proofs at once. On the 5x5 boards steps 3 and 4
search from an empty transposition table (``cold``), so whether they fit their caps
depends on the position alone, never on what the process searched before.

Every step decides from the position alone, the same in every orientation of the
board, so ``python -m engine prove`` can walk the positions the level reaches, merged
by symmetry, and check them once; what it sees is exactly what a player meets.
``book_move`` returns None when no step applies within its caps: then the caller
searches (``engine.solver.Perfect``).

The book is read on first use only (a few milliseconds), so importing the engine and the
3x3 path never pay for it.
"""

from __future__ import annotations

import math
import struct
import zlib
from importlib import resources

from engine.board import Board, geometry
from engine.exact import _Abort, _Solver, _solver

__all__ = [
    "BOOK_NODES",
    "BOOK_SHAPES",
    "INSTANT_NODES",
    "Choice",
    "book_file",
    "book_move",
    "canonical",
    "cold",
    "exact_choice",
    "load_book",
    "pressure",
    "read_book",
    "safe_choice",
    "searched_choice",
    "steering",
    "uses_book",
    "write_book",
]

Shape = tuple[int, int, int]

BOOK_SHAPES: frozenset[Shape] = frozenset({(4, 4, 4), (5, 5, 4), (5, 5, 5)})
"""Boards where ``impossible`` plays from the book (width, height, k)."""

BOOK_NODES = 2_500
"""On 4x4, a position whose exact choice costs more nodes than this (from a cold start)
goes into the book; cheaper ones are searched when they come (INSTANT_NODES, a few ms)."""

INSTANT_NODES = 2_500
"""Node cap of each search behind ``book_move`` (a few milliseconds; nodes cost 5-20 us):
past it the level searches instead. On 4x4 the book leaves only positions of at most
BOOK_NODES; on 5x5 the book holds the positions where neither the exact nor the safe
choice fits."""

_MAGIC = b"TTTB1"
_ENTRY = struct.Struct("<QB")

Choice = tuple[int, int]
"""(cell, exact score for the mover) of an exact choice."""

_books: dict[Shape, dict[int, int]] = {}


def book_file(shape: Shape) -> str:
    width, height, k = shape
    return f"book-{width}x{height}k{k}.bin"


def write_book(entries: dict[int, int]) -> bytes:
    """The file form of a book: canonical position key -> canonical cell."""
    body = b"".join(_ENTRY.pack(key, cell) for key, cell in sorted(entries.items()))
    return _MAGIC + zlib.compress(body, 9)


def read_book(data: bytes) -> dict[int, int]:
    """A book from its file form (``write_book``)."""
    if not data.startswith(_MAGIC):
        raise ValueError("not a book file")
    body = zlib.decompress(data[len(_MAGIC) :])
    return {key: cell for key, cell in _ENTRY.iter_unpack(body)}


def load_book(shape: Shape) -> dict[int, int]:
    """The shipped book of ``shape`` (empty if none is shipped), read once."""
    book = _books.get(shape)
    if book is None:
        book = {}
        source = resources.files("engine") / "data" / book_file(shape)
        if source.is_file():
            book = read_book(source.read_bytes())
        _books[shape] = book
    return book


def canonical(board: Board) -> tuple[_Solver, int, int]:
    """(the shape's solver, the position's canonical key, the symmetry that maps the
    board onto it). The key is X bits | O bits << size, the smallest over symmetries."""
    solver = _solver(board)
    keys = solver.keys_of(board.x_bits, board.o_bits)
    key = min(keys)
    return solver, key, keys.index(key)


def _sides(x: int, o: int) -> tuple[int, int, int]:
    ply = (x | o).bit_count()
    return (x, o, ply) if ply % 2 == 0 else (o, x, ply)


def exact_choice(solver: _Solver, x: int, o: int, cap: int | None) -> Choice | None:
    """Among the optimal cells, those that leave the opponent most replies that worsen
    its result, then those that press hardest (``pressure``), then the lowest; with the
    exact score. None if ``cap`` nodes do not suffice.

    The answer does not depend on the solver's caches, only whether it fits the cap.
    """
    me, opp, ply = _sides(x, o)
    keys = solver.keys_of(x, o)
    solver.trim()
    solver.limit(cap, math.inf)
    try:
        score, groups = solver.optimal(me, opp, keys, ply)
        if len(groups) > 1 and score <= 0:
            counted = []
            for cell, _ in groups:
                child = solver.child_keys(keys, cell, ply)
                counted.append(solver.mistakes(opp, me | 1 << cell, child, ply + 1, -score))
            most = max(counted)
            groups = [g for g, n in zip(groups, counted, strict=True) if n == most]
    except _Abort:
        return None
    finally:
        solver.limit(None, math.inf)
    cells = [c for _, orbit in groups for c in orbit]
    weights = {c: pressure(solver, me, opp, c) for c in cells}
    most = max(weights.values())
    return min(c for c in cells if weights[c] == most), score


def pressure(solver: _Solver, me: int, opp: int, cell: int) -> int:
    """How much a mark on ``cell`` builds: over the lines through it that the opponent
    has not blocked, (1 + the mover's marks there) squared.

    Early on no drawing move leaves the opponent a losing reply, so the count of such
    replies ties them all. Building lines among equally safe moves sets the traps a
    weaker player walks into later (see
    docs/decisions.md#impossible-builds-lines-among-equal-moves)."""
    masks = solver.geo.line_masks
    total = 0
    for index in solver.geo.lines_through[cell]:
        mask = masks[index]
        if not mask & opp:
            total += (1 + (mask & me).bit_count()) ** 2
    return total


def steering(solver: _Solver, me: int, opp: int) -> list[int]:
    """The empty cells, those that close the most (and fullest) of the opponent's open
    lines and keep the most of the mover's first; ties in the solver's order. The first
    move that holds there tends to leave a position that is quick to prove."""
    masks = solver.geo.line_masks
    through = solver.geo.lines_through
    taken = me | opp

    def weight(cell: int) -> int:
        score = 0
        for index in through[cell]:
            mask = masks[index]
            if not mask & me:
                score += 1 + 4 * (mask & opp).bit_count()
            if not mask & opp:
                score += 1 + 2 * (mask & me).bit_count()
        return score

    cells = [c for c in solver.order if not taken >> c & 1]
    return sorted(cells, key=lambda c: -weight(c))


def safe_choice(solver: _Solver, x: int, o: int, cap: int | None) -> int | None:
    """A proven move, cheaper than ``exact_choice``: the lowest of the shortest wins if the
    mover has a forced win; else the first cell in ``steering`` order after which the
    opponent has no forced win; else (the position is lost) the exact choice. None if
    ``cap`` nodes do not suffice."""
    me, opp, ply = _sides(x, o)
    keys = solver.keys_of(x, o)
    solver.trim()
    solver.limit(cap, math.inf)
    try:
        if solver.value(me, opp, keys, ply, 0, 1) < 1:
            for cell in steering(solver, me, opp):
                child = solver.child_keys(keys, cell, ply)
                if solver.value(opp, me | 1 << cell, child, ply + 1, 0, 1) <= 0:
                    return cell
        _, groups = solver.optimal(me, opp, keys, ply)
    except _Abort:
        return None
    finally:
        solver.limit(None, math.inf)
    return min(c for _, orbit in groups for c in orbit)


_cold_solvers: dict[Shape, _Solver] = {}


def _solver_of(shape: Shape) -> _Solver:
    return _solver(Board(*shape))


def cold(shape: Shape) -> _Solver:
    """The shape's solver for capped book searches, its transposition table emptied, so
    that a search's node count depends on the position alone."""
    solver = _cold_solvers.get(shape)
    if solver is None:
        solver = _cold_solvers[shape] = _Solver(geometry(*shape))
    solver.forget()
    return solver


def searched_choice(shape: Shape, key: int, cap: int | None) -> int | None:
    """Steps 3 and 4 of ``book_move`` on the canonical position ``key`` (on 5x5 from a
    cold table): its canonical cell, or None if none fits ``cap``."""
    size = shape[0] * shape[1]
    x, o = key & ((1 << size) - 1), key >> size
    if size <= 16:
        choice = exact_choice(_solver_of(shape), x, o, cap)
        return None if choice is None else choice[0]
    choice = exact_choice(cold(shape), x, o, cap)
    if choice is not None:
        return choice[0]
    return safe_choice(cold(shape), x, o, cap)


def book_move(
    board: Board, cap: int | None = INSTANT_NODES, book: dict[int, int] | None = None
) -> int | None:
    """``impossible``'s cell on a BOOK_SHAPES board (see the module docstring), or None
    when a search of at most ``cap`` nodes does not find it (None: no cap). ``book``
    replaces the shipped one. The board must not be over."""
    shape = (board.width, board.height, board.k)
    solver, key, sym = canonical(board)
    me, _, _ = _sides(board.x_bits, board.o_bits)
    empty = board.geometry.full_mask ^ (board.x_bits | board.o_bits)
    winning = solver.wins_for(me) & empty
    if winning:
        return (winning & -winning).bit_length() - 1
    back = solver.inv[sym]
    cell = (load_book(shape) if book is None else book).get(key)
    if cell is not None:
        return back[cell]
    cell = searched_choice(shape, key, cap)
    return None if cell is None else back[cell]


def uses_book(board: Board) -> bool:
    """Whether ``board``'s shape is one of BOOK_SHAPES."""
    return (board.width, board.height, board.k) in BOOK_SHAPES
