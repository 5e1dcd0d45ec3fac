"""The benchmarks' helpers, and a small run of the engine comparison: a benchmark that no
longer runs is found here, not when someone needs its figures (bench/service.py's 100
games in flight in one server had been refused by the 25-per-server limit).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections import Counter
from typing import Any

import asyncpg
import pytest

from bench import slow_games
from bench.peer_tables import Boards
from bench.pg import database_size, describe, fresh_database, server_pid
from bench.procs import process_name
from bench.setups import PER_SERVER, Setup, server_of, servers_needed
from bot.games.queries import Store
from bot.launcher import HOME as REPO
from tests.pgtools import database_url


def test_processes_split_the_shards_and_one_process_can_run_them_all() -> None:
    assert Setup().shards_of(0) is None  # no SHARD_* settings, as most hosts run it
    assert Setup("postgresql", 1, 2).shards_of(0) == (2, [0, 1])
    two = Setup("postgresql", 2, 2)
    assert [two.shards_of(n) for n in (0, 1)] == [(2, [0]), (2, [1])]
    assert two.describe() == "2 bot processes, SHARD_COUNT=2 and SHARD_IDS=0, SHARD_IDS=1"
    assert Setup("postgresql", 2, 4).shards_of(1) == (4, [2, 3])


@pytest.mark.parametrize(("games", "shards"), [(60, 1), (60, 2), (500, 1), (500, 2), (7, 2)])
def test_servers_take_games_under_the_limit_and_every_kind(games: int, shards: int) -> None:
    servers = servers_needed(games, shards)
    assert servers % shards == 0  # as many servers on each shard
    per_server = Counter(server_of(game, games, servers) for game in range(games))
    assert set(per_server) == set(range(servers))
    assert max(per_server.values()) <= PER_SERVER
    fives = Counter(server_of(game, games, servers) % shards for game in range(9, games, 10))
    if games >= 20 * shards:  # bench/load.py's 5x5 games (numbers ending in 9): each shard
        assert len(fives) == shards


@pytest.mark.postgresql
async def test_each_run_gets_a_new_database_dropped_afterwards(pg_server: Any) -> None:
    server = database_url(pg_server, "postgres")
    assert (await describe("postgresql", server)).startswith("PostgreSQL 16.")
    async with fresh_database(server) as url:
        store = await Store.open(url)
        await store.close()
        assert await database_size(url) > 0
        pid = await server_pid(url)
        assert pid is not None and process_name(pid).startswith("postgres")
        name = url.split("?")[0].rsplit("/", 1)[1]
    conn = await asyncpg.connect(server)
    try:
        assert not await conn.fetchval("SELECT count(*) FROM pg_database WHERE datname = $1", name)
    finally:
        await conn.close()


def test_two_bot_processes_on_sqlite_are_refused_with_the_reason() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", "--processes", "2"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "need --database postgresql" in done.stderr and "one write lock" in done.stderr


@pytest.mark.postgresql
def test_the_engine_comparison_runs_and_prints_both(pg_server: Any) -> None:
    small = ["--rounds", "1", "--moves", "50"]
    server = ["--database-url", database_url(pg_server, "postgres")]
    done = subprocess.run(
        [sys.executable, "-m", "bench.service", "--compare-engines", *small, *server],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith("  sqlite: SQLite 3.") and "PostgreSQL 16." in lines[2]
    ratios = [line for line in lines if line.startswith("  postgresql / sqlite: moves/s ")]
    assert len(ratios) == 2  # one at a time, and 100 games in flight


async def test_the_slow_games_scenario_runs_and_pings_each_slow_turn_once() -> None:
    """Two games at 1/30 of the times: a 1 s grace, 3 s a move (the sweep's 1 s minimum)."""
    figures = await slow_games.run(2, 90.0, 1 / 30)
    assert figures["member moves"] == 10 and figures["failed interactions"] == 0
    assert figures["pings sent"] == figures["turns past the grace"] == 10
    assert figures["pings standing after the end"] == 0
    assert figures["429s"] == 0 and figures["requests counted by the global limit"] == 0


def test_the_churn_bench_runs_and_prints_its_ratios() -> None:
    """A short run of bench/churn.py (the figures are for 100,000 games: README)."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.churn", "--games", "200", "--every", "100"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("SQLite 3.")
    assert any(line.startswith("pruned: bytes per ended game, last / first: ") for line in lines)
    rows = [line.split() for line in lines if line.strip()[:1].isdigit()]
    assert [int(row[0]) for row in rows] == [150, 300], lines


def test_the_drawing_bench_runs_and_prints_its_ratios() -> None:
    """A short run of bench/drawing.py (a board's CPU per click over discord.py's)."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.drawing", "--rounds", "20"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    ratios = [line for line in done.stdout.splitlines() if " ratio " in line]
    assert [line.split(":")[0].strip() for line in ratios] == ["3x3", "5x5"], done.stdout


async def test_announcements_are_counted_per_message() -> None:
    """bench.peer's Boards: the peer announces a board once, utarwyn each collector it
    sets on a message; a wait for the n-th returns only once n have come."""
    boards = Boards()
    stream = asyncio.StreamReader()
    reader = asyncio.create_task(boards.read(stream))
    second = asyncio.create_task(boards.wait(7, 2))
    stream.feed_data(b"7\ncommands registered\n")
    await asyncio.sleep(0)
    await boards.wait(7)  # the first announcement is there
    assert not second.done()
    stream.feed_data(b"7\n")
    await asyncio.wait_for(second, 1.0)
    await boards.wait(8, 0)  # nothing asked for: returns at once
    stream.feed_eof()
    await reader


def test_the_chatter_bench_runs_and_the_bot_gets_no_message() -> None:
    """A short run of bench/chatter.py: members' messages cost the bot as it was, and
    nothing more than idling the bot as it is (CPU ticks are 10 ms: only the order)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.chatter",
            "--messages",
            "150",
            "--rounds",
            "1",
            "--settle",
            "0.2",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    ratios = done.stdout.split("ratios to before (medians):")[1].splitlines()
    assert [line.split()[0] for line in ratios if line.strip()][1:] == ["µs", "µs"], done.stdout


SHORT_PEER_RUN = ("--games", "2", "--clicks", "30", "--runs", "1")


def test_the_peer_bench_runs_with_games_in_group_dms() -> None:
    """A short run of bench/peer.py: ours, discord.py's example and ours in group DMs,
    every click answered and nothing sent outside the answers."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.peer", "--group-dm", *SHORT_PEER_RUN],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("  ")]
    assert [(row[1], row[2]) for row in rows] == [("ours", "30"), ("peer", "30"), ("ours-dm", "30")]
    assert "REST outside answers" not in done.stdout and "ERROR" not in done.stdout
    assert "ratio group DM / server channel" in done.stdout


def test_the_pool_fairness_bench_runs_and_never_refuses_the_other_server() -> None:
    """bench/pool_fairness.py as it is run: server B is never refused while A floods."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.pool_fairness"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "per-server shares: yes" in done.stdout
    assert "server B refused on 0 of 10 clicks" in done.stdout, done.stdout
