"""Command line of the book and the proofs: ``python -m engine book|prove``.

``engine.cli`` adds the board's shape options and hands these commands over.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from engine.board import Mark
from engine.errors import InvalidMoveError

__all__ = ["add_book_options", "add_prove_options", "run_book", "run_prove"]


def add_book_options(book: argparse.ArgumentParser) -> None:
    book.add_argument("--max-ply", type=int, default=None, help="boards over 16 cells: depth")
    _add_jobs_option(book)
    book.add_argument("--out", default=None, help="folder to write to (the engine's data)")
    book.add_argument(
        "--resume", action="store_true", help="start from the shipped book (same result)"
    )


def add_prove_options(prove: argparse.ArgumentParser) -> None:
    prove.add_argument("--side", choices=("X", "O", "both"), default="both")
    prove.add_argument("--max-ply", type=int, default=None, help="stop at this many marks")
    _add_jobs_option(prove)
    prove.add_argument(
        "--extend-book",
        action="store_true",
        help="where the book lacks a move, add the one a build would, check it, and save",
    )
    prove.add_argument("--out", default=None, help="with --extend-book: folder to write to")
    stop = prove.add_mutually_exclusive_group()
    stop.add_argument("--limit", type=int, default=None, help="stop after this many positions")
    stop.add_argument(
        "--checkpoint",
        metavar="FOLDER",
        default=None,
        help="save the walk there after every layer, and go on from what is saved there",
    )


def _shape(args: argparse.Namespace) -> tuple[int, int, int]:
    from engine.book import BOOK_SHAPES

    width, height = args.size
    shape = (width, height, min(width, height) if args.k is None else args.k)
    if shape not in BOOK_SHAPES:
        names = ", ".join(f"{w}x{h} --k {k}" for w, h, k in sorted(BOOK_SHAPES))
        raise InvalidMoveError(f"impossible has a book only on {names}")
    return shape


def run_book(args: argparse.Namespace, stdout: TextIO) -> int:
    from engine.proof import build_book

    shape = _shape(args)

    def log(text: str) -> None:
        stdout.write(text + "\n")
        stdout.flush()

    known = None
    if args.resume:
        from engine.book import load_book

        known = load_book(shape)
    entries = build_book(shape, max_ply=args.max_ply, log=log, known=known, jobs=args.jobs)
    log(f"{len(entries):,} entries, {_save_book(shape, entries, args.out)}")
    return 0


def run_prove(args: argparse.Namespace, stdout: TextIO) -> int:
    from pathlib import Path

    from engine.proof import ProofReport, prove

    shape = _shape(args)
    if args.extend_book and shape[0] * shape[1] <= 16:
        raise InvalidMoveError("--extend-book is for the 5x5 boards (python -m engine book)")
    sides = (Mark.X, Mark.O) if args.side == "both" else (Mark(args.side),)
    wrong = 0
    shown = 0

    def progress(report: ProofReport) -> None:
        nonlocal shown
        if report.positions >= shown + 100_000:
            shown = report.positions
            stdout.write(f"  ... {report.positions:,} positions, {len(report.failures)} wrong\n")
            stdout.flush()

    for bot in sides:
        shown = 0
        report = prove(
            shape,
            bot,
            max_ply=args.max_ply,
            limit=args.limit,
            progress=progress,
            jobs=args.jobs,
            checkpoint=None if args.checkpoint is None else Path(args.checkpoint),
            extend=args.extend_book,
        )
        depth = "" if args.max_ply is None else f" (to {args.max_ply} marks)"
        stdout.write(report.line() + depth + "\n")
        for failure in report.failures[:20]:
            stdout.write(f"  {failure}\n")
        stdout.flush()
        wrong += len(report.failures)
        if report.entries and not report.failures:
            stdout.write(_grow_book(shape, report.entries, args.out) + "\n")
    return 1 if wrong else 0


def _grow_book(shape: tuple[int, int, int], entries: dict[int, int], out: str | None) -> str:
    """Add a proof's new entries to the shipped book; what was written where."""
    from engine.book import load_book

    book = {**load_book(shape), **entries}
    return f"{len(entries):,} entries added, {len(book):,} in all, " + _save_book(shape, book, out)


def _save_book(shape: tuple[int, int, int], entries: dict[int, int], out: str | None) -> str:
    """Write the book file into ``out`` (default: the engine's data); its size and path."""
    from pathlib import Path

    from engine.book import book_file, write_book

    data = write_book(entries)
    target = Path(out or Path(__file__).parent / "data") / book_file(shape)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return f"{len(data):,} bytes: {target}"


def _jobs(text: str) -> int:
    if not text.isdecimal() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"jobs must be a whole number from 1, not {text!r}")
    return int(text)


def _add_jobs_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        help="worker processes that share the walk (default 1)",
    )
