"""impossible's book, proven choices and proof on 4x4 k=4, 5x5 k=4 and 5x5 k=5.

The default run checks samples of the proof (the first plies of 4x4 k=4, the first
positions of 5x5 k=5's walk); ``-m slow`` runs ``python -m engine prove`` in full.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.board import Board, Mark
from engine.book import (
    BOOK_SHAPES,
    book_move,
    load_book,
    read_book,
    write_book,
)
from engine.levels import choose_move, instant_move
from engine.proof import ProofReport, prove
from engine.solver import move_values

ROOT = Path(__file__).resolve().parents[2]


def test_a_book_survives_its_file_form() -> None:
    entries = {12345: 3, 1 << 49: 24, 7: 0}
    assert read_book(write_book(entries)) == entries
    with pytest.raises(ValueError, match="not a book"):
        read_book(b"nonsense")


def test_the_shipped_books_hold_legal_moves() -> None:
    for shape in BOOK_SHAPES:
        size = shape[0] * shape[1]
        for key, cell in load_book(shape).items():
            x, o = key & ((1 << size) - 1), key >> size
            assert not (x & o) and not ((x | o) >> cell & 1)
            assert x.bit_count() - o.bit_count() in (0, 1)
    assert len(load_book((4, 4, 4))) > 0


@pytest.mark.parametrize("bot", [Mark.X, Mark.O])
def test_4x4_proof_in_full(bot: Mark) -> None:
    """Every position impossible reaches on 4x4 k=4 (seconds: engine.breaker's bounds
    make each check cheap)."""
    report = prove((4, 4, 4), bot)
    assert not report.failures and not report.searched
    assert report.positions > 10_000 and report.dead > 1_000 and max(report.by_ply) >= 14


@pytest.mark.parametrize(
    ("shape", "bot", "seed", "plies"),
    [
        ((5, 5, 5), Mark.X, 1, 13),
        ((5, 5, 5), Mark.O, 2, 13),
        ((5, 5, 4), Mark.X, 3, 11),
        ((5, 5, 4), Mark.O, 4, 11),
    ],
)
def test_5x5_proof_sample(shape: tuple[int, int, int], bot: Mark, seed: int, plies: int) -> None:
    """The whole walk from a middle-game position impossible reached against ``hard``,
    to every game's end (the walk from the empty board: -m slow)."""
    rng = random.Random(seed)
    board = Board(*shape)
    while board.ply < plies:
        level = "impossible" if board.turn is bot else "hard"
        board = board.play(choose_move(board, level, rng))
        assert not board.is_over
    report = prove(shape, bot, start=board)
    assert not report.failures and not report.searched
    assert report.positions > 1_000 and report.dead > 300 and report.wins > 20
    assert max(report.by_ply) >= shape[0] * shape[1] - 2


def test_a_walk_shared_by_worker_processes_finds_the_same() -> None:
    """``jobs`` splits each layer over processes; what the walk finds must not change."""
    alone = prove((5, 5, 5), Mark.X, max_ply=8)
    shared = prove((5, 5, 5), Mark.X, max_ply=8, jobs=2)
    assert shared.positions == alone.positions == 10_354
    assert shared.by_ply == alone.by_ply and shared.wins == alone.wins
    assert not shared.failures and not shared.searched
    limited = prove((5, 5, 5), Mark.X, limit=500, jobs=2)
    assert limited.positions == 500 and max(limited.by_ply) == 6


def test_a_walk_stopped_midway_goes_on_from_its_checkpoint(tmp_path: Path) -> None:
    class Stop(Exception):
        pass

    def stop_in_the_last_layer(report: ProofReport) -> None:
        if 8 in report.by_ply:
            raise Stop

    with pytest.raises(Stop):
        prove((5, 5, 5), Mark.X, max_ply=8, checkpoint=tmp_path, progress=stop_in_the_last_layer)
    saved = json.loads((tmp_path / "5x5k5-X-8.json").read_text())
    assert saved["positions"] == 1_232 and saved["layer"] == 9_122
    resumed = prove((5, 5, 5), Mark.X, max_ply=8, checkpoint=tmp_path)
    assert (resumed.positions, resumed.wins, resumed.by_ply[8]) == (10_354, 3_577, 9_122)
    assert not resumed.failures and resumed.seconds > saved["seconds"]
    again = prove((5, 5, 5), Mark.X, max_ply=8, checkpoint=tmp_path)  # already done
    assert again.positions == 10_354 and len(list(tmp_path.glob("*.keys"))) == 1
    with pytest.raises(ValueError, match="without --extend-book"):
        prove((5, 5, 5), Mark.X, max_ply=8, checkpoint=tmp_path, extend=True)


def test_a_proof_can_grow_the_book_as_a_build_would() -> None:
    """``extend``: where the book lacks a move, the walk records what ``python -m engine
    book`` recorded there (deep 5x5 k=4 entries, checked from an empty book)."""
    shape = (5, 5, 4)
    deep = [(k, c) for k, c in sorted(load_book(shape).items()) if k.bit_count() == 15][:3]
    assert len(deep) == 3
    for key, cell in deep:
        board = Board.from_bits(key & (1 << 25) - 1, key >> 25, *shape)
        grown = prove(shape, Mark.O, start=board, max_ply=15, book={}, extend=True)
        assert grown.entries == {key: cell} and not grown.failures and not grown.searched
        plain = prove(shape, Mark.O, start=board, max_ply=15, book={})
        assert plain.searched == 1 and not plain.entries and "NOT PROVEN" in plain.line()
    with pytest.raises(ValueError, match="exact choices"):
        prove((4, 4, 4), Mark.X, max_ply=2, extend=True)


def _games(shape: tuple[int, int, int], count: int, seed: int) -> list[tuple[Board, Mark]]:
    """Positions where impossible moves in games against random moves."""
    rng = random.Random(seed)
    out = []
    for game in range(count):
        bot = Mark.X if game % 2 == 0 else Mark.O
        board = Board(*shape)
        while not board.is_over:
            if board.turn is bot:
                out.append((board, bot))
                board = board.play(choose_move(board, "impossible", rng))
            else:
                board = board.play(rng.choice(board.legal_moves()))
        assert board.winner in (bot, None), board.text
    return out


@pytest.mark.parametrize("shape", sorted(BOOK_SHAPES - {(5, 5, 4)}))
def test_instant_moves_are_impossibles_moves(shape: tuple[int, int, int]) -> None:
    for board, _ in _games(shape, 6, 7):
        cell = instant_move(board, "impossible")
        assert cell is not None and cell == choose_move(board, "impossible", random.Random(0))


def test_late_5x5_k4_positions_are_exact_and_instant() -> None:
    """Past the opening, 5x5 k=4 positions are answered by a capped exact choice."""
    rng = random.Random(3)
    board = Board(5, 5, 4)
    while board.ply < 15:
        board = board.play(choose_move(board, "hard", rng))
        if board.is_over:
            board = Board(5, 5, 4)
    if board.is_over:
        pytest.skip("the game ended early")
    cell = instant_move(board, "impossible")
    assert cell is not None
    rank = {"loss": 0, "draw": 1, "win": 2}
    values = {v.cell: rank[v.result] for v in move_values(board)}
    assert values[cell] == max(values.values())


def test_instant_move_is_only_for_impossible_on_the_books_boards() -> None:
    assert instant_move(Board(5, 5, 4), "hard") is None
    assert instant_move(Board(5, 5, 3), "impossible") is None
    assert instant_move(Board(), "impossible") is None


def test_the_book_is_read_only_when_a_book_board_is_played() -> None:
    code = (
        "import random\n"
        "from engine import book\n"
        "from engine.board import Board\n"
        "from engine.levels import choose_move\n"
        "choose_move(Board(), 'impossible', random.Random(0))\n"
        "assert not book._books, book._books.keys()\n"
        "choose_move(Board(4, 4, 4), 'impossible', random.Random(0))\n"
        "assert (4, 4, 4) in book._books\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr


def test_book_moves_take_a_few_milliseconds() -> None:
    """Not a benchmark (bench/engine.py is): a guard against a lost book, which would
    turn the 4x4 opening into searches of about a second."""
    rng = random.Random(4)
    board = Board(4, 4, 4)
    start = time.process_time()
    while board.ply < 6:
        cell = book_move(board) if board.ply % 2 == 0 else rng.choice(board.legal_moves())
        assert cell is not None
        board = board.play(cell)
    assert time.process_time() - start < 0.5


@pytest.mark.slow
@pytest.mark.parametrize(
    ("size", "k", "extra"),
    [
        ("4x4", "4", []),
        ("5x5", "4", []),
        ("5x5", "5", ["--side", "X"]),
        ("5x5", "5", ["--side", "O"]),
    ],
)
def test_proofs(size: str, k: str, extra: list[str]) -> None:
    """The proofs: every position impossible reaches, as X and as O, in full on 4x4 k=4,
    5x5 k=4 (3.1 million positions, minutes) and 5x5 k=5 (21.5 and 71.7 million, about
    two hours on two cores)."""
    command = [sys.executable, "-m", "engine", "prove", "--size", size, "--k", k]
    result = subprocess.run(
        [*command, "--jobs", str(os.cpu_count() or 1), *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    sides = 1 if "--side" in extra else 2
    assert result.stdout.count("PROVEN") == sides and "NOT PROVEN" not in result.stdout
