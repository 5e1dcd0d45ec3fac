"""What bench/load.py runs the bot as: its engine, its processes and their shards.

One process and one shard is the bot as most hosts run it (no SHARD_* settings). With
``shards`` of two or more the servers are spread evenly over them, and the processes
split the shards into equal ranges; one process running every shard (SHARD_IDS=0-1)
gets the very same servers as two processes running one each, so the two compare
like for like.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import harness
from bench.procs import children_cpu_seconds, cpu_seconds, tree_cpu_seconds
from bot.launcher import BotProcess
from bot.tunables import SERVER_GAMES
from discord_emulator import Emulator

__all__ = ["COMPARED", "Cpu", "Setup", "compare", "launch_bots", "server_of", "servers_needed"]

PER_SERVER = SERVER_GAMES.default


@dataclass(frozen=True)
class Setup:
    """The bot's engine ("sqlite" or "postgresql"), its processes and its shards."""

    database: str = "sqlite"
    processes: int = 1
    shards: int = 1

    def shards_of(self, process: int) -> tuple[int, list[int]] | None:
        """The ``shards`` of process ``process``: its range of the
        shards; None with a single shard (no SHARD_* settings at all)."""
        if self.shards == 1:
            return None
        per = self.shards // self.processes
        return self.shards, list(range(process * per, (process + 1) * per))

    @property
    def label(self) -> str:
        return f"{self.database}, {self.processes} process{'es' if self.processes > 1 else ''}"

    def describe(self) -> str:
        """Which shards each process runs, as its settings say."""
        if self.shards == 1:
            return "1 bot process, no SHARD_* settings (one shard)"
        ranges = []
        for process in range(self.processes):
            _, ids = self.shards_of(process) or (0, [0])
            shown = str(ids[0]) if len(ids) == 1 else f"{ids[0]}-{ids[-1]}"
            ranges.append(f"SHARD_IDS={shown}")
        count = f"{self.processes} bot process{'es' if self.processes > 1 else ''}"
        return f"{count}, SHARD_COUNT={self.shards} and {', '.join(ranges)}"


# bench/load.py --compare-setups: the same servers on two shards, one process or two.
COMPARED = (Setup("sqlite", 1, 2), Setup("postgresql", 1, 2), Setup("postgresql", 2, 2))


def servers_needed(games: int, shards: int) -> int:
    """Servers for ``games`` games under the per-server limit, as many on each shard."""
    return shards * math.ceil(games / (PER_SERVER * shards))


def server_of(game: int, games: int, servers: int) -> int:
    """The server of game number ``game``: each server takes a run of consecutive games,
    so each gets every kind (a game's kind and level follow its number modulo 10 and 4;
    in turns, a server would get one level only and the odd ones every 5x5 game)."""
    return game * servers // games


@contextlib.asynccontextmanager
async def launch_bots(
    emu: Emulator, workdir: Path, setup: Setup, env: Mapping[str, str]
) -> AsyncIterator[list[BotProcess]]:
    """Start ``setup``'s bot processes one after the other (shard 0's first: it syncs the
    commands, globally), each with its own log; stop them all on exit."""
    shards = [setup.shards_of(process) for process in range(setup.processes)]
    async with harness.bots(emu, workdir, env, shards, workdir / "load.db") as started:
        yield started


@dataclass
class Cpu:
    """CPU seconds so far of each bot process and of its AI workers, of this process
    (emulator + load generator), and of the PostgreSQL server if it runs here."""

    bots: list[float]
    workers: list[float]
    own: float
    database: float | None

    @classmethod
    def now(cls, pids: Sequence[int], server: int | None) -> Cpu:
        return cls(
            [cpu_seconds(pid) for pid in pids],
            [children_cpu_seconds(pid) for pid in pids],
            time.process_time(),
            None if server is None else tree_cpu_seconds(server),
        )

    def __sub__(self, other: Cpu) -> Cpu:
        database = None
        if self.database is not None and other.database is not None:
            database = self.database - other.database
        return Cpu(
            [a - b for a, b in zip(self.bots, other.bots, strict=True)],
            [a - b for a, b in zip(self.workers, other.workers, strict=True)],
            self.own - other.own,
            database,
        )


def compare(results: dict[Setup, list[dict[str, float]]]) -> None:
    """Each setup's median of each headline figure, and each median as a ratio of the
    first setup's (the baseline, run in turns with the others in this invocation)."""
    harness.compare({setup.label: runs for setup, runs in results.items()})
