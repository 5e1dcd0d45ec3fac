"""Building the book and proving ``impossible`` on the BOOK_SHAPES boards.

Both walk the positions ``impossible`` reaches from the empty board, as X and as O:
where it is to move it plays its one move, where the opponent is to move every reply is
followed. Positions are merged by transposition and, where the level's move does not
depend on the board's orientation (all but the pairing of 5x5 k=5), by symmetry.

``build_book`` chooses the level's move where the exact choice is dear (more than
``BOOK_NODES`` nodes from a cold start) and records it; ``prove`` replays the level
itself (``engine.book.book_move``, exactly as it plays) and checks every move against
the exact solver: it must keep a win with the shortest forced line, and never turn a
draw into a loss. ``python -m engine book`` and ``python -m engine prove`` run them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from engine.board import Board, Mark, geometry
from engine.book import BOOK_NODES, CAP_NODES, book_move, exact_choice, pairing_holds
from engine.solver import _Solver, solve

__all__ = ["ProofReport", "build_book", "prove", "sound_choice", "walk"]

Shape = tuple[int, int, int]


def _symmetric(shape: Shape) -> bool:
    """Whether the level's move is the same in every orientation (not the pairing)."""
    return shape != (5, 5, 5)


def _node_key(board: Board, symmetric: bool) -> tuple[int, Board]:
    """The position's key and the board the walk continues from."""
    if not symmetric:
        return board.x_bits | board.o_bits << board.size, board
    solver = _cold_solvers.setdefault(board.k, _Solver(board.geometry))
    keys = solver.keys_of(board.x_bits, board.o_bits)
    key = min(keys)
    perm = solver.syms[keys.index(key)]
    return key, board.transformed(perm)


_cold_solvers: dict[int, _Solver] = {}


def _replies(board: Board, symmetric: bool) -> Iterator[int]:
    """Every legal reply, one per class of the position's own symmetries if allowed."""
    moves = board.legal_moves()
    if not symmetric:
        yield from moves
        return
    stabiliser = [p for p in board.geometry.symmetries if board.transformed(p) == board]
    done = 0
    for cell in moves:
        if done >> cell & 1:
            continue
        for perm in stabiliser:
            done |= 1 << perm[cell]
        yield cell


def walk(
    shape: Shape,
    bot: Mark,
    move: Callable[[Board], int | None],
    *,
    max_ply: int | None = None,
) -> Iterator[tuple[Board, int | None]]:
    """Every distinct position ``bot`` is to move in, with the move ``move`` makes there
    (None: it has none, the walk stops there). Depth first; ``max_ply`` stops it."""
    symmetric = _symmetric(shape)
    seen: set[int] = set()
    stack = [Board(*shape)]
    while stack:
        board = stack.pop()
        if board.is_over or (max_ply is not None and board.ply > max_ply):
            continue
        key, board = _node_key(board, symmetric)
        if key in seen:
            continue
        seen.add(key)
        if board.turn is bot:
            cell = move(board)
            yield board, cell
            if cell is not None:
                stack.append(board.play(cell))
        else:
            stack.extend(board.play(c) for c in _replies(board, symmetric))


def _fresh(board: Board) -> _Solver:
    return _Solver(geometry(board.width, board.height, board.k))


def sound_choice(board: Board) -> int:
    """A proven move for positions too dear for ``exact_choice``: the exact choice if the
    mover has a forced win (shortest line), else the first cell in the solver's order
    that keeps the draw (or the exact choice if none does)."""
    solver = _fresh(board)
    x, o = board.x_bits, board.o_bits
    me, opp = (x, o) if board.ply % 2 == 0 else (o, x)
    keys = solver.keys_of(x, o)
    ply = board.ply
    solver.limit(None, math.inf)
    if solver.value(me, opp, keys, ply, 0, 1) < 1:
        for cell in solver.order:
            if (me | opp) >> cell & 1:
                continue
            child = solver.child_keys(keys, cell, ply)
            if solver.value(opp, me | 1 << cell, child, ply + 1, 0, 1) <= 0:
                return cell
    choice = exact_choice(solver, x, o, None)
    assert choice is not None
    return choice[0]


def build_book(
    shape: Shape, *, max_ply: int | None = None, log: Callable[[str], None] | None = None
) -> dict[int, int]:
    """Book entries (canonical key -> canonical cell) for ``shape``.

    Up to 16 cells every position the level reaches is visited and its exact choice
    timed from a cold start; those over BOOK_NODES nodes are recorded. Bigger boards are
    walked to ``max_ply`` marks, and every position there gets ``sound_choice``.
    """
    entries: dict[int, int] = {}
    exact = shape[0] * shape[1] <= 16

    def choose(board: Board) -> int | None:
        solver = _fresh(board)
        me = board.x_bits if board.turn is Mark.X else board.o_bits
        empty = board.geometry.full_mask ^ (board.x_bits | board.o_bits)
        if solver.wins_for(me) & empty:
            return book_move(board)
        key = board.x_bits | board.o_bits << board.size
        if exact:
            choice = exact_choice(solver, board.x_bits, board.o_bits, None)
            assert choice is not None
            if solver.count() > BOOK_NODES:
                entries[key] = choice[0]
            return choice[0]
        cell = sound_choice(board)
        entries[key] = cell
        if log is not None:
            log(f"  {board.text}  ->  {board.cell_number(cell)}")
        return cell

    for bot in (Mark.X, Mark.O):
        start = time.process_time()
        count = sum(1 for _ in walk(shape, bot, choose, max_ply=max_ply))
        if log is not None:
            log(
                f"{_name(shape)} as {bot.value}: {count:,} positions, "
                f"{len(entries):,} entries so far, {time.process_time() - start:.1f} s CPU"
            )
    return entries


def _name(shape: Shape) -> str:
    return f"{shape[0]}x{shape[1]} k={shape[2]}"


@dataclass
class ProofReport:
    """What ``prove`` walked and found, per side."""

    shape: Shape
    bot: Mark
    positions: int = 0
    by_ply: dict[int, int] = field(default_factory=dict)
    wins: int = 0
    searched: int = 0
    """Positions where the level has no book or cheap answer and searches instead."""
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        plies = " ".join(f"{p}:{n}" for p, n in sorted(self.by_ply.items()))
        verdict = "PROVEN" if not self.failures and not self.searched else "NOT PROVEN"
        return (
            f"{_name(self.shape)} as {self.bot.value}: {verdict}; {self.positions:,} positions "
            f"where it moves ({self.wins:,} won), {self.searched:,} left to a search, "
            f"{len(self.failures)} wrong moves, {self.seconds:.1f} s CPU; by ply: {plies}"
        )


def prove(
    shape: Shape,
    bot: Mark,
    *,
    max_ply: int | None = None,
    limit: int | None = None,
    max_nodes: int = 1 << 60,
) -> ProofReport:
    """Walk the positions the level reaches as ``bot`` (to ``max_ply`` marks, at most
    ``limit`` of them) and check each of its moves exactly (``max_nodes`` caps each
    check's search: a check that runs out counts as a failure)."""
    report = ProofReport(shape, bot)
    start = time.process_time()
    five = shape == (5, 5, 5)

    def check(board: Board) -> int | None:
        cell = book_move(board, cap=CAP_NODES)
        report.positions += 1
        report.by_ply[board.ply] = report.by_ply.get(board.ply, 0) + 1
        if cell is None:
            report.searched += 1
            return None
        try:
            before = solve(board, max_nodes=max_nodes)
            after = board.play(cell)
            score = -solve(after, max_nodes=max_nodes) if not after.is_over else before
        except Exception as error:  # UnsolvableError: the check itself ran out
            report.failures.append(f"{board.text}: check ran out ({error})")
            return cell
        if after.is_over and after.winner is not None:
            score = board.size - board.ply
        if before > 0:
            report.wins += 1
        if score != before:
            report.failures.append(
                f"{board.text}: {board.cell_number(cell)} scores {score}, best {before}"
            )
        if five and before <= 0:
            me = after.x_bits if bot is Mark.X else after.o_bits
            them = after.o_bits if bot is Mark.X else after.x_bits
            if not pairing_holds(me, them):
                report.failures.append(f"{board.text}: the pairing is broken")
        return cell

    for count, _ in enumerate(walk(shape, bot, check, max_ply=max_ply), start=1):
        if limit is not None and count >= limit:
            break
    report.seconds = time.process_time() - start
    return report
