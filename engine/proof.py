"""Building the book and proving ``impossible`` on the BOOK_SHAPES boards.

Both walk the positions ``impossible`` reaches from the empty board, as X and as O:
where it is to move it plays its one move, where the opponent is to move every reply is
followed. Positions are merged by transposition and by symmetry (the level's move does
not depend on the board's orientation).

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
from engine.book import (
    BOOK_NODES,
    INSTANT_NODES,
    book_move,
    cold,
    exact_choice,
    safe_choice,
)
from engine.exact import _Abort, _Solver, _solver
from engine.solver import solve

__all__ = ["ProofReport", "build_book", "prove", "walk"]

Shape = tuple[int, int, int]


def _node_key(board: Board) -> tuple[int, Board]:
    """The position's canonical key and the board, turned to match it, that the walk
    continues from."""
    solver = _solver(board)
    keys = solver.keys_of(board.x_bits, board.o_bits)
    key = min(keys)
    perm = solver.syms[keys.index(key)]
    return key, board.transformed(perm)


def _replies(board: Board) -> Iterator[int]:
    """Every legal reply, one per class of the position's own symmetries."""
    moves = board.legal_moves()
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
    ended: Callable[[Board], None] | None = None,
    start: Board | None = None,
    dead: Callable[[Board], None] | None = None,
) -> Iterator[tuple[Board, int | None]]:
    """Every distinct position ``bot`` is to move in, with the move ``move`` makes there
    (None: it has none, the walk stops there). Depth first; ``max_ply`` stops it.
    ``ended`` sees every finished game the walk reaches; ``start`` replaces the empty
    board as the walk's root.

    With ``dead``, the walk stops at (and shows ``dead``) every position where every line
    holds marks of both players: whatever anyone plays from there, the game is a draw,
    so no move there can be wrong. (Not where ``engine.breaker`` proves that neither side
    can win: that holds only while both defend, and the walk is there to check the
    level's defence.)"""
    masks = geometry(*shape).line_masks
    seen: set[int] = set()
    stack = [Board(*shape) if start is None else start]
    while stack:
        board = stack.pop()
        if board.is_over:
            if ended is not None:
                ended(board)
            continue
        if max_ply is not None and board.ply > max_ply:
            continue
        key, board = _node_key(board)
        if key in seen:
            continue
        seen.add(key)
        x, o = board.x_bits, board.o_bits
        if dead is not None and all(mask & x and mask & o for mask in masks):
            dead(board)
            continue
        if board.turn is bot:
            cell = move(board)
            yield board, cell
            if cell is not None:
                stack.append(board.play(cell))
        else:
            stack.extend(board.play(c) for c in _replies(board))


def _fresh(board: Board) -> _Solver:
    return _Solver(geometry(board.width, board.height, board.k))


def build_book(
    shape: Shape,
    *,
    max_ply: int | None = None,
    log: Callable[[str], None] | None = None,
    known: dict[int, int] | None = None,
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
        cell = book_move(board, cap=INSTANT_NODES, book=entries)
        if cell is not None:
            return cell
        began = time.process_time()
        cell = safe_choice(cold(shape), board.x_bits, board.o_bits, None)
        assert cell is not None
        entries[key] = cell
        if log is not None:
            spent = time.process_time() - began
            log(f"  {board.text}  ->  {board.cell_number(cell)}  ({spent:.2f} s)")
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
    dead: int = 0
    """Positions where neither side can complete a line any more (not walked further)."""
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        plies = " ".join(f"{p}:{n}" for p, n in sorted(self.by_ply.items()))
        verdict = "PROVEN" if not self.failures and not self.searched else "NOT PROVEN"
        return (
            f"{_name(self.shape)} as {self.bot.value}: {verdict}; {self.positions:,} positions "
            f"where it moves ({self.wins:,} won; {self.dead:,} dead draws reached, not "
            f"walked), {self.searched:,} left to a search, "
            f"{len(self.failures)} wrong moves, {self.seconds:.1f} s CPU; by ply: {plies}"
        )


def prove(
    shape: Shape,
    bot: Mark,
    *,
    max_ply: int | None = None,
    limit: int | None = None,
    max_nodes: int | None = None,
    progress: Callable[[ProofReport], None] | None = None,
    start: Board | None = None,
) -> ProofReport:
    """Walk the positions the level reaches as ``bot`` (to ``max_ply`` marks, at most
    ``limit`` of them) and check each of its moves with the exact solver.

    Where the level can win, its move must keep the win by the shortest forced line.
    Elsewhere its move must leave the opponent no forced win; the walk also checks that
    no game it reaches ends in the opponent's win. ``max_nodes`` caps each check's
    search (one that runs out is a failure); ``progress`` sees the report every 10,000
    positions. ``start`` walks from that position instead of the empty board."""
    report = ProofReport(shape, bot)
    began = time.process_time()

    def check(board: Board) -> int | None:
        cell = book_move(board, cap=INSTANT_NODES)
        report.positions += 1
        report.by_ply[board.ply] = report.by_ply.get(board.ply, 0) + 1
        if progress is not None and report.positions % 10_000 == 0:
            progress(report)
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
                score = board.size - board.ply if after.is_over else -solve(after)
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
        except _Abort:
            report.failures.append(f"{board.text}: the check ran out of nodes")
        finally:
            solver.limit(None, math.inf)
        return cell

    def ended(board: Board) -> None:
        if board.winner is not None and board.winner is not bot:
            report.failures.append(f"{board.text}: the opponent won")

    def dead(board: Board) -> None:
        report.dead += 1

    positions = walk(shape, bot, check, max_ply=max_ply, ended=ended, start=start, dead=dead)
    for count, _ in enumerate(positions, start=1):
        if limit is not None and count >= limit:
            break
    report.seconds = time.process_time() - began
    return report
