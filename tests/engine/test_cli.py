"""The command line, run as a real subprocess: ``python -m engine ...``."""

from __future__ import annotations

import io
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.board import Board
from engine.cli import main, parse_player, parse_size
from engine.levels import LevelStrategy
from engine.strategies import Minimax, UnknownStrategyError

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        check=False,
    )


def _positions(count: int, seed: int, shape: tuple[int, int, int] = (3, 3, 3)) -> list[Board]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        board = Board(*shape)
        for _ in range(rng.randrange(board.size - 1)):
            after = board.play(rng.choice(board.legal_moves()))
            if after.is_over:
                break
            board = after
        out.append(board)
    return out


# -- move ------------------------------------------------------------------------------


def test_move_answers_each_line() -> None:
    boards = _positions(200, 1)
    result = run("move", "--strategy", "perfect", stdin="".join(b.text + "\n" for b in boards))
    assert result.returncode == 0, result.stderr
    answers = result.stdout.split()
    assert len(answers) == len(boards)
    for board, answer in zip(boards, answers, strict=True):
        assert board.parse_cell(answer) in board.legal_moves()


def test_move_takes_the_win_and_is_repeatable() -> None:
    stdin = "XX./OO./...\n..O/.X./X..\nXX./OO./...\n"
    first = run("move", "--level", "hard", "--seed", "3", stdin=stdin)
    second = run("move", "--level", "hard", "--seed", "3", stdin=stdin)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    lines = first.stdout.splitlines()
    assert lines[0] == "3" and lines[2] == "3"


def test_move_k_and_bigger_boards() -> None:
    # With k=3 on 4x4, X wins at once on cell 3; with the default k=4 it cannot.
    text = "XX../OO../..../....\n"
    assert run("move", "--strategy", "rules", "--k", "3", stdin=text).stdout.split() == ["3"]
    result = run("move", "--level", "medium", stdin="..../..../..../....\n.....\n")
    assert result.returncode == 1  # the second line is not a board
    assert "line 2" in result.stderr
    assert len(result.stdout.split()) == 1


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("X.O/.X", "line 2"),
        ("O../.../...", "line 2"),
        ("XXX/OO./...", "line 2"),
        ("", "line 2"),
        ("hello", "line 2"),
    ],
)
def test_move_rejects_a_bad_line(bad: str, message: str) -> None:
    result = run("move", "--strategy", "table", stdin=f".../.../...\n{bad}\n.../.X./...\n")
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.split() == ["5"]  # the first line was answered


def test_move_answers_a_line_before_the_next_is_written() -> None:
    """A program can drive ``move`` one position at a time: each answer is flushed as
    soon as its line is read, with stdin still open."""
    process = subprocess.Popen(
        [sys.executable, "-m", "engine", "move", "--level", "impossible", "--k", "4"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        board = Board(4, 4, 4)
        for _ in range(3):
            process.stdin.write(board.text + "\n")
            process.stdin.flush()
            cell = board.parse_cell(process.stdout.readline())
            board = board.play(cell)
            board = board.play(board.legal_moves()[0])
    finally:
        process.stdin.close()
        assert process.wait(timeout=60) == 0


def test_move_is_fast_in_process() -> None:
    boards = _positions(3000, 2)
    stdin = io.StringIO("".join(b.text + "\n" for b in boards))
    stdout = io.StringIO()
    start = time.perf_counter()
    assert main(["move", "--strategy", "perfect"], stdin=stdin, stdout=stdout) == 0
    elapsed = time.perf_counter() - start
    assert len(stdout.getvalue().split()) == 3000
    assert elapsed < 3.0  # thousands a second


# -- analyse ---------------------------------------------------------------------------


def test_analyse_lists_every_move() -> None:
    result = run("analyse", "XX./OO./...")
    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if " in " in line]
    assert rows[0] == ["3", "win", "in", "1", "ply"]
    assert ["6", "draw", "in", "5", "plies"] in rows
    assert {row[0] for row in rows} == {"3", "6", "7", "8", "9"}
    assert all(row[1] == "loss" for row in rows if row[0] in "789")


def test_analyse_rejects_bad_positions() -> None:
    for text in ("XXX/OO./...", "XO", "OO./.../..."):
        result = run("analyse", text)
        assert result.returncode == 1
        assert result.stderr and "Traceback" not in result.stderr


# -- selfplay --------------------------------------------------------------------------


def test_selfplay_table() -> None:
    result = run("selfplay", "--x", "impossible", "--o", "random", "--games", "30", "--seed", "4")
    assert result.returncode == 0, result.stderr
    counts = {}
    for line in result.stdout.splitlines():
        for label in ("X wins", "draws", "O wins"):
            if line.startswith(label):
                counts[label] = int(line[len(label) :].split()[0])
    assert counts["O wins"] == 0
    assert sum(counts.values()) == 30
    again = run("selfplay", "--x", "impossible", "--o", "random", "--games", "30", "--seed", "4")
    assert again.stdout == result.stdout


def test_selfplay_with_strategy_specs_and_shapes() -> None:
    result = run(
        "selfplay",
        "--x",
        "minimax:depth=2,eval=weighted",
        "--o",
        "rules",
        "--games",
        "4",
        "--size",
        "4x4",
        "--k",
        "3",
    )
    assert result.returncode == 0, result.stderr
    assert "4x4, k=3" in result.stdout
    assert "minimax(depth=2,eval=weighted)" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["selfplay", "--x", "nope"],
        ["selfplay", "--o", "minimax:depth=zero"],
        ["selfplay", "--size", "9x9"],
        ["selfplay", "--size", "3x3", "--k", "4"],
        ["move", "--level", "legendary"],
        ["prove", "--size", "4x4", "--k", "4", "--jobs", "0"],
        ["book", "--size", "5x5", "--jobs", "two"],
    ],
)
def test_bad_usage_exits_2(args: list[str]) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "error" in result.stderr


# -- play ------------------------------------------------------------------------------


def test_scripted_play_session() -> None:
    # Against the preference table: it answers 5 with 1, 3 with 7, 9 with 2; 6 wins.
    script = "5\nabc\n5\n99\n\n3\n9\n6\n"
    result = run("play", "--strategy", "table", "--first", "me", stdin=script)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "'abc' is not a cell number" in out
    assert "cell 5 is taken" in out
    assert "cell 99 is out of range" in out
    assert "The bot plays 1." in out and "The bot plays 7." in out
    assert out.rstrip().endswith("You win!")
    assert "Traceback" not in result.stderr


def test_play_eof_and_quit_exit_cleanly() -> None:
    for script in ("5\n", "q\n", ""):
        result = run("play", "--level", "easy", "--seed", "1", stdin=script)
        assert result.returncode == 0
        assert "Bye." in result.stdout
        assert result.stderr == ""


def test_play_bot_first_on_a_bigger_board() -> None:
    result = run(
        "play", "--level", "hard", "--first", "bot", "--size", "4x4", "--seed", "2", stdin="q\n"
    )
    assert result.returncode == 0, result.stderr
    assert "You are O" in result.stdout
    assert result.stdout.count("The bot plays") == 1


def test_play_a_whole_game_in_process() -> None:
    # Feed every cell number in turn; taken ones are refused, the rest get played.
    stdin = io.StringIO("".join(f"{n}\n" for n in range(1, 10)) * 2)
    stdout = io.StringIO()
    assert main(["play", "--level", "impossible", "--seed", "5"], stdin=stdin, stdout=stdout) == 0
    text = stdout.getvalue()
    assert "A draw." in text or "The bot wins." in text


# -- helpers ---------------------------------------------------------------------------


def test_parse_player_and_size() -> None:
    assert isinstance(parse_player("medium"), LevelStrategy)
    player = parse_player("minimax:depth=3,eval=weighted,pruning=false")
    assert isinstance(player, Minimax)
    assert (player.depth, player.evaluation, player.pruning) == (3, "weighted", False)
    assert isinstance(parse_player("minimax:depth=none"), Minimax)
    with pytest.raises(UnknownStrategyError):
        parse_player("minimax:depth")
    with pytest.raises(ValueError):
        parse_player("grandmaster")
    assert parse_size("4x3") == (4, 3)


def test_prove_prints_its_verdict_and_figures() -> None:
    result = run("prove", "--size", "5x5", "--k", "5", "--side", "X", "--max-ply", "4")
    assert result.returncode == 0, result.stderr
    assert "5x5 k=5 as X: PROVEN; 108 positions" in result.stdout
    assert "by ply: 0:1 2:5 4:102 (to 4 marks)" in result.stdout
