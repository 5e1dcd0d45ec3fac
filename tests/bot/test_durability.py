"""Crash safety: a process playing games is SIGKILLed at random moments, again and again.

After every kill the file must pass ``PRAGMA integrity_check``, hold every move the
service had reported done, and contain no half-applied game; after ``GameService.start()``
no game may still wait for the bot. A game's end (result and ratings) must be in the file
once ``Store.end_game`` has returned, whatever happens to the process next. The database
is read with plain ``sqlite3`` here, independently of the code under test.

What these tests cannot show is survival of a power cut or OS crash (the moves since the
last checkpoint may be lost then, an ended game must not be): that is the fsync that
``end_game`` asks for with ``synchronous = FULL``, which only pulling the plug would test.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bot.app import GameService
from bot.config import ServiceConfig
from bot.games.queries import Store
from bot.tunables import Values
from engine import Board

WORKER = Path(__file__).with_name("durability_worker.py")
REPO = Path(__file__).resolve().parents[2]


def run_and_kill(db: Path, seed: int, executor: str, rng: random.Random) -> list[str]:
    """Start the worker, let it play for a random moment, SIGKILL its whole process group."""
    process = subprocess.Popen(
        [sys.executable, str(WORKER), str(db), str(seed), executor],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        start_new_session=True,  # its own process group: the pool dies with it
    )
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            if not raw.endswith(b"\n"):
                break  # cut off mid-line by the kill: not reported
            line = raw.decode().rstrip("\n")
            if line == "READY":
                ready.set()
            else:
                lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not ready.wait(timeout=30):
            process.kill()
            raise AssertionError(f"worker did not start: {process.stderr.read().decode()}")  # type: ignore[union-attr]
        time.sleep(rng.uniform(0.02, 0.5))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        reader.join(timeout=10)
        assert process.stderr is not None
        process.stderr.close()
    assert process.returncode == -signal.SIGKILL, "the worker died on its own"
    return lines


def check_file(db: Path, reported: dict[int, tuple[str, str]]) -> int:
    """Check the file after a crash; returns how many games wait for the bot."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute(
            "SELECT id, x_id, o_id, bot_level, width, height, k, moves, move_no, status, result"
            " FROM games"
        ).fetchall()
    finally:
        conn.close()
    games = {row[0]: row for row in rows}
    waiting = 0
    for game_id, x_id, o_id, level, width, height, k, moves, move_no, status, result in rows:
        cells = [int(c) for c in moves.split(",")] if moves else []
        assert len(cells) == move_no, game_id
        board = Board.from_moves(cells, width, height, k)  # no illegal or half-applied move
        to_move = x_id if board.turn.value == "X" else o_id
        if status == "finished":
            assert board.is_over == (result in ("win", "draw")), game_id
        elif level is not None:
            assert not board.is_over
            # The human never moved twice in a row: unless the bot owes the move, it's theirs.
            if status == "bot_to_move":
                assert to_move is None, game_id
                waiting += 1
            else:
                assert status == "active" and to_move is not None, game_id
    for game_id, (status, moves) in reported.items():
        assert game_id in games, f"reported game {game_id} is missing"
        stored_moves, stored_status = games[game_id][7], games[game_id][9]
        assert stored_moves.startswith(moves), (game_id, moves, stored_moves)
        if status != "active":
            assert (stored_status, stored_moves) == (status, moves), game_id
    return waiting


def crash_repeatedly(db: Path, runs: int, executors: list[str]) -> dict[int, tuple[str, str]]:
    """Kill the worker ``runs`` times, checking the file after each; the reported moves."""
    rng = random.Random(20240501)
    reported: dict[int, tuple[str, str]] = {}
    total_lines = waiting_seen = 0
    for run in range(runs):
        lines = run_and_kill(db, run + 1, executors[run % len(executors)], rng)
        total_lines += len(lines)
        for line in lines:
            _tag, game_id, status, *moves = line.split(" ")
            reported[int(game_id)] = (status, moves[0] if moves else "")
        waiting_seen += check_file(db, reported) > 0
    assert total_lines > runs, "the worker hardly played"
    print(f"{runs} kills, {total_lines} reported moves, {waiting_seen} left a bot move owed")
    return reported


async def crash_and_restart(tmp_path: Path, runs: int, executors: list[str]) -> None:
    db = tmp_path / "durable.db"
    reported = await asyncio.to_thread(crash_repeatedly, db, runs, executors)
    # A fresh start completes every bot move that a crash left owed.
    store = await Store.open(db)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        service = GameService(
            store, ServiceConfig(Values(turn_timeout=10**9)), executor=pool, rng=random.Random(1)
        )
        await service.start()
        assert await store.games_bot_to_move() == []
        await service.close()
    await store.close()
    assert check_file(db, reported) == 0


async def test_sigkill_never_loses_a_reported_move(tmp_path: Path) -> None:
    await crash_and_restart(tmp_path, runs=12, executors=["thread", "thread", "process"])


@pytest.mark.slow
async def test_sigkill_many_times_with_the_process_pool(tmp_path: Path) -> None:
    await crash_and_restart(tmp_path, runs=60, executors=["process", "thread"])


def end_a_game_and_die(db: Path, seed: int) -> str:
    """Run the worker's ``end`` mode: it ends one game, reports it, SIGKILLs itself."""
    done = subprocess.run(
        [sys.executable, str(WORKER), str(db), str(seed), "end"],
        capture_output=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    (line,) = done.stdout.decode().splitlines()
    return line


def test_a_game_end_is_in_the_file_once_end_game_returns(tmp_path: Path) -> None:
    """The process dies the moment ``end_game`` returns, with no close() and no exit
    handlers: the game's result and both members' new ratings are in the file."""
    db = tmp_path / "ended.db"
    for seed in range(1, 6):
        _tag, game_id, x, x_rating, o, o_rating = end_a_game_and_die(db, seed).split(" ")
        conn = sqlite3.connect(db)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            game = conn.execute(
                "SELECT status, result, winner_id, rated FROM games WHERE id = ?", (int(game_id),)
            ).fetchone()
            players = dict(
                conn.execute(
                    "SELECT user_id, rating FROM players WHERE user_id IN (?, ?)", (int(x), int(o))
                ).fetchall()
            )
        finally:
            conn.close()
        assert game == ("finished", "win", int(x), 1)
        assert players == {int(x): float(x_rating), int(o): float(o_rating)}
