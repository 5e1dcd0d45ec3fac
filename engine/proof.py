"""Building the book and proving ``impossible`` on the BOOK_SHAPES boards.

Both walk the positions ``impossible`` reaches from the empty board, as X and as O
(``engine.walk``). ``build_book`` chooses the level's move where the exact choice is
dear (more than ``BOOK_NODES`` nodes from a cold start) and records it; ``prove``
replays the level itself (``engine.book.book_move``, exactly as it plays) and checks
every move against the exact solver: it must keep a win with the shortest forced line,
and never turn a draw into a loss. ``python -m engine book`` and ``python -m engine
prove`` run them. A proof can also grow the book as it goes (``extend``) and be saved
between layers (``checkpoint``), for walks of hours.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from pathlib import Path

from engine.board import Board, Mark, geometry
from engine.book import (
    BOOK_NODES,
    INSTANT_NODES,
    book_move,
    cold,
    exact_choice,
    safe_choice,
)
from engine.exact import _Abort, _Solver, _solver
from engine.solver import UnsolvableError, solve
from engine.walk import ProofReport, Saved, board_of, explore, shape_name

__all__ = ["ProofReport", "build_book", "prove"]

Shape = tuple[int, int, int]


def _fresh(board: Board) -> _Solver:
    return _Solver(geometry(board.width, board.height, board.k))


def _book_choice(known: dict[int, int], board: Board, report: ProofReport) -> int | None:
    """The level's move for ``build_book``, recording it where it is dear (see there)."""
    me = board.x_bits if board.turn is Mark.X else board.o_bits
    empty = board.geometry.full_mask ^ (board.x_bits | board.o_bits)
    if board.size > 16 or _solver(board).wins_for(me) & empty:
        cell = book_move(board, cap=INSTANT_NODES, book=known)
        return _book_entry(board, report) if cell is None else cell
    solver = _fresh(board)
    choice = exact_choice(solver, board.x_bits, board.o_bits, None)
    assert choice is not None
    if solver.count() > BOOK_NODES:
        report.entries[board.x_bits | board.o_bits << board.size] = choice[0]
    return choice[0]


def _book_entry(board: Board, report: ProofReport) -> int:
    """The book's move where no capped search answers: the uncapped safe choice from a
    cold table, recorded under the position's key (the walk's boards are canonical)."""
    shape = (board.width, board.height, board.k)
    cell = safe_choice(cold(shape), board.x_bits, board.o_bits, None)
    assert cell is not None
    report.entries[board.x_bits | board.o_bits << board.size] = cell
    return cell


def build_book(
    shape: Shape,
    *,
    max_ply: int | None = None,
    log: Callable[[str], None] | None = None,
    known: dict[int, int] | None = None,
    jobs: int = 1,
) -> dict[int, int]:
    """Book entries (canonical key -> canonical cell) for ``shape``.

    Up to 16 cells every position the level reaches is visited and its exact choice
    timed from a cold start; those over BOOK_NODES nodes are recorded. Bigger boards are
    walked to ``max_ply`` marks; where neither capped search of ``book_move`` answers,
    the uncapped ``safe_choice`` from a cold table is recorded. ``known`` entries (a
    book built before, to fewer plies) are taken as they are: the build is deterministic,
    so resuming from them gives the same book as building afresh.
    """
    entries: dict[int, int] = dict(known or {})
    decide = functools.partial(_book_choice, dict(known or {}))
    for bot in (Mark.X, Mark.O):
        report = explore(shape, bot, decide, max_ply=max_ply, jobs=jobs)
        entries.update(report.entries)
        if log is not None:
            for key, cell in sorted(report.entries.items()):
                board = board_of(shape, key)
                log(f"  {board.text}  ->  {board.cell_number(cell)}")
            log(
                f"{shape_name(shape)} as {bot.value}: {report.positions:,} positions, "
                f"{len(entries):,} entries so far, {report.seconds:.1f} s CPU "
                f"({report.wall:.1f} s wall)"
            )
    return entries


def _checked_move(
    max_nodes: int | None,
    extend: bool,
    book: dict[int, int] | None,
    board: Board,
    report: ProofReport,
) -> int | None:
    """The level's move (``book_move`` as it plays, with ``book`` if given), checked with
    the exact solver. With ``extend``, where the level would search, the move a book
    build would record."""
    cell = book_move(board, cap=INSTANT_NODES, book=book)
    if cell is None and extend:
        cell = _book_entry(board, report)
    if cell is None:
        report.searched += 1
        return None
    after = board.play(cell)
    solver = _solver(board)
    solver.limit(max_nodes, math.inf)
    x, o = board.x_bits, board.o_bits
    me, opp = (x, o) if board.turn is Mark.X else (o, x)
    keys = solver.keys_of(x, o)
    try:
        if solver.value(me, opp, keys, board.ply, 0, 1) >= 1:
            # A win: the move must keep it, by the shortest forced line.
            report.wins += 1
            best = solve(board, max_nodes=max_nodes)
            score = board.size - board.ply if after.is_over else -solve(after, max_nodes=max_nodes)
            if score != best:
                report.failures.append(
                    f"{board.text}: {board.cell_number(cell)} scores {score}, best {best}"
                )
        elif not after.is_over:
            child = solver.child_keys(keys, cell, board.ply)
            if solver.value(opp, me | 1 << cell, child, board.ply + 1, 0, 1) >= 1:
                report.failures.append(
                    f"{board.text}: {board.cell_number(cell)} lets the opponent win"
                )
    except (_Abort, UnsolvableError):
        report.failures.append(f"{board.text}: the check ran out of nodes")
    finally:
        solver.limit(None, math.inf)
    return cell


def prove(
    shape: Shape,
    bot: Mark,
    *,
    max_ply: int | None = None,
    limit: int | None = None,
    max_nodes: int | None = None,
    progress: Callable[[ProofReport], None] | None = None,
    start: Board | None = None,
    jobs: int = 1,
    checkpoint: Path | None = None,
    extend: bool = False,
    book: dict[int, int] | None = None,
) -> ProofReport:
    """Walk the positions the level reaches as ``bot`` (``explore``) and check each of its
    moves with the exact solver. With ``checkpoint`` (a folder), the walk is saved there
    after every layer, and goes on from what it finds there. With ``extend``, positions
    the shipped book lacks get the entries ``build_book`` would give them (in
    ``report.entries``), and the level is checked with them: one walk both grows the
    book to the walk's depth and proves it (boards over 16 cells only). ``book``
    replaces the shipped book (a candidate, say).

    Where the level can win, its move must keep the win by the shortest forced line.
    Elsewhere its move must leave the opponent no forced win; the walk also checks that
    no game it reaches ends in the opponent's win. ``max_nodes`` caps each check's
    search (one that runs out is a failure)."""
    if extend and shape[0] * shape[1] <= 16:
        raise ValueError("books of boards up to 16 cells hold exact choices: python -m engine book")
    decide = functools.partial(_checked_move, max_nodes, extend, book)
    saved = None
    if checkpoint is not None:
        name = f"{shape[0]}x{shape[1]}k{shape[2]}-{bot.value}-{max_ply or 'all'}"
        saved = Saved(checkpoint, name, extend)
    report = explore(
        shape,
        bot,
        decide,
        max_ply=max_ply,
        limit=limit,
        start=start,
        jobs=jobs,
        progress=progress,
        resume=None if saved is None else saved.load(shape, bot),
        keep=None if saved is None else saved.store,
    )
    report.failures.sort()
    return report
