"""The walk behind ``engine.proof``: every position ``impossible`` reaches, a layer at a time.

Where the level is to move it plays its one move (whatever ``decide`` says), where the
opponent is to move every reply is followed. Positions are merged by transposition and
by symmetry (the level's move does not depend on the board's orientation).

Every distinct position with the same number of marks is decided before the next layer
is made. A position is only ever reached with its own number of marks, so merging within
a layer merges them all; only two layers are held at once; and a layer splits into
independent parts, decided in ``jobs`` worker processes. A walk can be saved between
layers (``Saved``) and go on from there, for walks of hours.
"""

from __future__ import annotations

import functools
import json
import math
import os
import time
import zlib
from array import array
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from engine.board import Board, Mark
from engine.exact import _solver

__all__ = ["Decide", "ProofReport", "Saved", "board_of", "explore", "shape_name"]

Shape = tuple[int, int, int]

_PART = 2_000
"""Positions per part of a layer handed to a worker (fewer when the layer is small)."""


@dataclass
class ProofReport:
    """What a walk visited and found, for one side (``explore``, ``prove``)."""

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
    entries: dict[int, int] = field(default_factory=dict)
    """Book entries recorded on the way (``build_book``; ``prove`` with ``extend``)."""
    seconds: float = 0.0
    """CPU seconds, summed over the processes that did the work."""
    wall: float = 0.0
    """Elapsed seconds."""

    def add(self, part: ProofReport) -> None:
        """Count in a part of the walk done elsewhere."""
        self.positions += part.positions
        for ply, count in part.by_ply.items():
            self.by_ply[ply] = self.by_ply.get(ply, 0) + count
        self.wins += part.wins
        self.searched += part.searched
        self.failures.extend(part.failures)
        self.entries.update(part.entries)

    def line(self) -> str:
        plies = " ".join(f"{p}:{n}" for p, n in sorted(self.by_ply.items()))
        verdict = "PROVEN" if not self.failures and not self.searched else "NOT PROVEN"
        return (
            f"{shape_name(self.shape)} as {self.bot.value}: {verdict}; "
            f"{self.positions:,} positions where it moves ({self.wins:,} won; "
            f"{self.dead:,} dead draws reached, not "
            f"walked), {self.searched:,} left to a search, "
            f"{len(self.failures)} wrong moves, {self.seconds:.1f} s CPU "
            f"({self.wall:.1f} s wall); by ply: {plies}"
        )


Decide = Callable[[Board, ProofReport], "int | None"]
"""The level's move in a position (None: none, the walk stops there); it may note what
it found in the report."""


def _node_key(board: Board) -> tuple[int, Board]:
    """The position's canonical key and the board, turned to match it."""
    solver = _solver(board)
    keys = solver.keys_of(board.x_bits, board.o_bits)
    key = min(keys)
    perm = solver.syms[keys.index(key)]
    return key, board.transformed(perm)


def board_of(shape: Shape, key: int) -> Board:
    size = shape[0] * shape[1]
    return Board.from_bits(key & ((1 << size) - 1), key >> size, *shape)


def _is_dead(masks: tuple[int, ...], x: int, o: int) -> bool:
    """Every line holds marks of both players: whatever anyone plays, the game is drawn,
    so no move can be wrong. (Not where ``engine.breaker`` proves that neither side can
    win: that holds only while both defend, and the walk is there to check the level's
    defence.)"""
    return all(mask & x and mask & o for mask in masks)


@dataclass
class _Next:
    """What a part of a layer leads to: the next layer's positions and the dead ones, by
    canonical key; ``seen`` holds the opponent's positions already followed."""

    live: set[int] = field(default_factory=set)
    dead: set[int] = field(default_factory=set)
    seen: set[int] = field(default_factory=set)


def _enter(board: Board, bot: Mark, max_ply: int | None, report: ProofReport, out: _Next) -> None:
    """Where the walk starts: ``board`` goes into the first layer, or its replies do."""
    if board.is_over:
        if board.winner is not None and board.winner is not bot:
            report.failures.append(f"{board.text}: the opponent won")
        return
    if max_ply is not None and board.ply > max_ply:
        return
    key, board = _node_key(board)
    if board.turn is bot:
        masks = board.geometry.line_masks
        (out.dead if _is_dead(masks, board.x_bits, board.o_bits) else out.live).add(key)
    else:
        _follow(board, bot, max_ply, report, out)


def _follow(board: Board, bot: Mark, max_ply: int | None, report: ProofReport, out: _Next) -> None:
    """Every reply from ``board`` (the opponent to move, the game not over), one per
    symmetry class, into ``out``. Works on the solver's keys, which follow each symmetry
    as a mark is added, instead of turning boards."""
    if max_ply is not None and board.ply > max_ply:
        return
    solver = _solver(board)
    geo = board.geometry
    masks, size, ply = geo.line_masks, geo.size, board.ply
    x, o = board.x_bits, board.o_bits
    keys = solver.keys_of(x, o)
    key = min(keys)
    if key in out.seen:
        return
    out.seen.add(key)
    if _is_dead(masks, x, o):
        out.dead.add(key)
        return
    mover = o if ply & 1 else x
    for cell, _ in solver.representatives(keys, geo.full_mask ^ (x | o)):
        bits = mover | 1 << cell
        if geo.completes_line(bits, cell) is not None:
            report.failures.append(f"{board.play(cell).text}: the opponent won")
            continue
        if ply + 1 == size or (max_ply is not None and ply + 1 > max_ply):
            continue  # a full board is a draw
        child = min(solver.child_keys(keys, cell, ply))
        cx, co = child & geo.full_mask, child >> size
        (out.dead if _is_dead(masks, cx, co) else out.live).add(child)


def _decide_part(
    shape: Shape, bot: Mark, decide: Decide, max_ply: int | None, keys: list[int]
) -> tuple[ProofReport, set[int], set[int]]:
    """Decide one part of a layer (in a worker process, or in this one): the part's
    report, and the next layer's live and dead positions it leads to."""
    began = time.process_time()
    report = ProofReport(shape, bot)
    out = _Next()
    for key in keys:
        board = board_of(shape, key)
        report.positions += 1
        report.by_ply[board.ply] = report.by_ply.get(board.ply, 0) + 1
        cell = decide(board, report)
        if cell is None:
            continue
        after = board.play(cell)
        if not after.is_over:
            _follow(after, bot, max_ply, report, out)
    report.seconds = time.process_time() - began
    return report, out.live, out.dead


def explore(
    shape: Shape,
    bot: Mark,
    decide: Decide,
    *,
    max_ply: int | None = None,
    limit: int | None = None,
    start: Board | None = None,
    jobs: int = 1,
    progress: Callable[[ProofReport], None] | None = None,
    resume: tuple[ProofReport, set[int]] | None = None,
    keep: Callable[[ProofReport, set[int]], None] | None = None,
) -> ProofReport:
    """Walk every distinct position ``bot`` is to move in, from ``start`` (the empty board
    by default) to ``max_ply`` marks, and ``decide`` its move in each; at most ``limit``
    positions, the layers' lowest keys first. The walk stops at dead draws
    (``_is_dead``) and checks that the opponent never completes a line. With ``jobs``
    over 1, ``decide`` (a function of the module, or a ``functools.partial`` of one, so
    that it can be sent) runs in that many processes. ``progress`` sees the report after
    every part of a layer.

    ``keep`` sees the report and the next layer's keys after every layer; passing them
    back as ``resume`` goes on from there, as if the walk had never stopped."""
    began, own = time.perf_counter(), time.process_time()
    if resume is None:
        report = ProofReport(shape, bot)
        first = _Next()
        _enter(Board(*shape) if start is None else start, bot, max_ply, report, first)
        layer, report.dead = first.live, len(first.dead)
    else:
        report, layer = resume
    spent, waited, workers = report.seconds, report.wall, 0.0
    pool = ProcessPoolExecutor(jobs) if jobs > 1 else None

    def stamp() -> None:
        # In one process the parts' CPU is this process's own; else the workers' is added.
        mine = time.process_time() - own
        report.seconds = spent + mine + (0.0 if pool is None else workers)
        report.wall = waited + time.perf_counter() - began

    try:
        while layer:
            keys = sorted(layer)
            if limit is not None:
                keys = keys[: max(0, limit - report.positions)]
            if not keys:
                break
            size = max(1, min(_PART, math.ceil(len(keys) / (4 * jobs))))
            parts = [keys[i : i + size] for i in range(0, len(keys), size)]
            del keys
            run = functools.partial(_decide_part, shape, bot, decide, max_ply)
            results: Iterable[tuple[ProofReport, set[int], set[int]]] = (
                map(run, parts) if pool is None else pool.map(run, parts)
            )
            layer, dead = set(), set()
            for part, live, gone in results:
                workers += part.seconds
                report.add(part)
                layer |= live
                dead |= gone
                if progress is not None:
                    stamp()
                    progress(report)
            report.dead += len(dead)
            if keep is not None:
                stamp()
                keep(report, layer)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    stamp()
    return report


def shape_name(shape: Shape) -> str:
    return f"{shape[0]}x{shape[1]} k={shape[2]}"


@dataclass
class Saved:
    """A walk saved between layers: its report as JSON, naming the file that holds the
    next layer's keys (compressed 8-byte integers). The keys are written first and the
    report replaced whole after, so a walk stopped at any moment resumes from a layer."""

    folder: Path
    name: str
    extend: bool = False
    """Whether the walk grows the book: a walk saved one way is not resumed the other."""

    def store(self, report: ProofReport, layer: set[int]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        keys = f"{self.name}-{report.positions}.keys"
        (self.folder / keys).write_bytes(zlib.compress(array("Q", sorted(layer)).tobytes(), 1))
        fields = {
            name: getattr(report, name)
            for name in ("positions", "wins", "searched", "dead", "failures", "seconds", "wall")
        }
        fields["by_ply"] = {str(ply): count for ply, count in report.by_ply.items()}
        fields["entries"] = sorted(report.entries.items())
        fields["keys"], fields["layer"] = keys, len(layer)
        fields["extend"] = self.extend
        temporary = self.folder / f"{self.name}.json.part"
        temporary.write_text(json.dumps(fields))
        os.replace(temporary, self.folder / f"{self.name}.json")
        for old in self.folder.glob(f"{self.name}-*.keys"):
            if old.name != keys:
                old.unlink()

    def load(self, shape: Shape, bot: Mark) -> tuple[ProofReport, set[int]] | None:
        path = self.folder / f"{self.name}.json"
        if not path.exists():
            return None
        fields = json.loads(path.read_text())
        if fields.pop("extend", self.extend) != self.extend:
            raise ValueError(
                f"{path} was saved by a walk {'without' if self.extend else 'with'} "
                "--extend-book; run it the same way, or use another folder"
            )
        layer = set(array("Q", zlib.decompress((self.folder / fields.pop("keys")).read_bytes())))
        if len(layer) != fields.pop("layer"):
            raise ValueError(f"{path} does not match the keys saved beside it")
        by_ply = {int(ply): count for ply, count in fields.pop("by_ply").items()}
        entries = {key: cell for key, cell in fields.pop("entries")}
        return ProofReport(shape, bot, by_ply=by_ply, entries=entries, **fields), layer
