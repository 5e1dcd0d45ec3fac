"""Load benchmark: the real bot (a subprocess) under many concurrent games, through the emulator.

    python -m bench.load             # 500 games, at least 10,000 clicks
    python -m bench.load --quick     # 60 games, 1,500 clicks
    python -m bench.load --repeat 3  # three runs and their medians (the machine is noisy)
    python -m bench.load --database postgresql                # a throwaway PostgreSQL 16
    python -m bench.load --database postgresql --processes 2  # two bot processes
    python -m bench.load --quick --compare-setups --repeat 3  # three set-ups, in turns
    python -m bench.load --slow-games 1000 --scale 0.25       # slow member games' pings

Run from the repository's root. A scenario of ``bench/harness.py`` (which starts the bot
processes and runs the set-ups in turns); one run is ``bench/load_run.py``, its players
``bench/load_players.py`` and its figures ``bench/load_figures.py``.

The bot runs on SQLite (a new file per run) or PostgreSQL (``--database postgresql``: a
new database per run on a throwaway pgserver, or on the server of ``--database-url``);
the first lines name the engine and its version. ``--processes 2`` runs two bot
processes sharing the database (SHARD_COUNT=2, SHARD_IDS=0 and 1), with the servers, and
so the clicks, spread evenly over both shards; ``--shards 2`` alone gives one process
the same servers on the same two shards (SHARD_IDS=0-1), to compare like for like.
``--compare-setups`` runs SQLite with one process, PostgreSQL with one and PostgreSQL with
two, all on two shards, in turns, and prints each one's medians and their ratios to
SQLite's. Memory and CPU are summed over the bot processes, then given per process.

Games: 3x3 against the bot at every level, 3x3 between members, and some 5x5 against the
bot (``hard``, plus a few ``impossible`` whose replies search for up to 1.5 s). The load
is open-loop: clicks are sent at a fixed rate (``--rate``, 350/s), each to the game that
has waited longest for its next click among those whose player is on move; a finished
game is replaced by a new one outside that schedule. A slow bot therefore shows as
growing latency, not as fewer clicks asked of it. The emulator and this load generator
share one process (and the machine's two cores with the bot), so the figures include
the emulator's own time.

Prints clicks per second, the time from click to the bot's answer (p50/p99/max, 3x3 and
5x5 apart; a 5x5 click is answered with the player's move, and the board edit with the
bot's reply is timed separately, unless the reply came with the click; "5x5 reply" is the
time to the bot's reply either way). A click's time runs from the moment this process makes
the click to the moment the emulator has applied the bot's answer, as Discord's would;
the moment this process's coroutine then wakes up to see it is printed apart (it is this
process's own loop lag). Also printed: the bot's memory per live game (RSS with the games live
minus RSS idle, per game), and the database size per finished game. To tell the bot's
time from the harness's, it also prints where a 3x3 click's time went (emulator gateway
queue, bot, emulator callback handling, player wake-up), this process's own event-loop
lag, the bot's garbage-collection pauses, and the CPU of the bot's AI worker processes
apart from the bot's own.

The emulator rate-limits as Discord does (its defaults: the global 50 requests/s, the
per-channel buckets, the invalid-request ban), so it also prints what the clicks cost on
the wire: the bot's REST requests outside interaction answers (the global budget), per
member move and by route, how long after the last click its backlog drained, the 429s it
received by scope, and the invalid requests counted toward a Cloudflare ban.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass

from bench import harness, slow_games
from bench.harness import summarise
from bench.load_run import run
from bench.pg import (
    add_database_arguments,
    check_database_arguments,
    describe,
    postgres_server,
)
from bench.setups import COMPARED, Setup, compare, servers_needed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 games, 1,500 clicks")
    parser.add_argument("--games", type=int)
    parser.add_argument("--clicks", type=int)
    parser.add_argument(
        "--rate", type=float, default=350.0, help="clicks per second sent (open loop)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--no-5x5", dest="big", action="store_false", help="3x3 games only (no searches)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs, then each run's figures")
    parser.add_argument(
        "--bot-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for the bot, e.g. AI_WORKERS=2 (repeatable)",
    )
    add_database_arguments(parser)
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="bot processes, each on its range of the shards (more than one needs PostgreSQL)",
    )
    parser.add_argument(
        "--shards", type=int, help="shards over all processes (default: one per process)"
    )
    parser.add_argument(
        "--compare-setups",
        action="store_true",
        help="SQLite with one process, PostgreSQL with one and with two, all on two shards,"
        " in turns for --repeat rounds (not --database, --processes, --shards)",
    )
    parser.add_argument(
        "--slow-games",
        type=int,
        metavar="N",
        help="instead: N live member games whose players take --move-seconds a move"
        " (bench/slow_games.py: one ping per slow turn, none left, the requests needed)",
    )
    parser.add_argument("--move-seconds", type=float, default=40.0)
    parser.add_argument("--scale", type=float, help="with --slow-games: every time times this")
    args = parser.parse_args()
    if args.slow_games is not None:
        slow_games.main_of(args.slow_games, args.move_seconds, args.scale)
        return
    check_database_arguments(parser, args, both=args.compare_setups)
    games = args.games or (60 if args.quick else 500)
    clicks = args.clicks or (1_500 if args.quick else 10_000)
    bot_env = dict(item.split("=", 1) for item in args.bot_env)
    setups = COMPARED if args.compare_setups else (setup_of(parser, args),)
    repeat = max(1, args.repeat)
    with contextlib.ExitStack() as stack:
        server = None
        if any(setup.database == "postgresql" for setup in setups):
            server = stack.enter_context(postgres_server(args.database_url))
        print(f"load benchmark: {games} games, {clicks:,} clicks at {args.rate:.0f}/s")
        for engine in dict.fromkeys(setup.database for setup in setups):
            print(f"  {engine}: {asyncio.run(describe(engine, server))}")
        for setup in setups:
            servers = servers_needed(games, setup.shards)
            print(f"  {setup.label}: {setup.describe()}; {servers} servers")
        print(
            f"  ({os.cpu_count()} cores here, shared by the bot processes, their AI workers,"
            " PostgreSQL and the emulator + load generator: a second bot process adds no CPU)"
        )
        load = Load(setups, repeat, games, clicks, args.rate, args.seed, args.big, bot_env, server)
        results = harness.play(load, repeat, rotate=True)
    if len(setups) > 1:
        compare(results)
    elif repeat > 1:
        summarise(results[setups[0]])


@dataclass
class Load:
    """The scenario: the set-ups in turns, the first the baseline of the ratios."""

    setups: Sequence[Setup]
    repeat: int
    games: int
    clicks: int
    rate: float
    seed: int
    big: bool
    bot_env: dict[str, str]
    server: str | None

    def kinds(self) -> Sequence[Setup]:
        return self.setups

    async def run_once(self, setup: Setup, number: int) -> dict[str, float]:
        if self.repeat > 1 or len(self.setups) > 1:
            round_ = (number - 1) // len(self.setups) + 1
            print(f"\n-- run {round_} of {self.repeat}: {setup.label}")
        return await run(
            self.games,
            self.clicks,
            self.rate,
            self.seed,
            self.big,
            self.bot_env,
            setup,
            self.server,
        )


def setup_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Setup:
    """The one setup the arguments ask for (exits with the reason if it cannot run)."""
    if args.processes < 1:
        parser.error("--processes must be at least 1")
    if args.processes > 1 and args.database != "postgresql":
        parser.error(
            "--processes 2 and more need --database postgresql: several bot processes share"
            " one database, and a SQLite file can only be shared by processes on one machine,"
            " whose writes then take turns on its one write lock by retrying (busy_timeout)"
        )
    shards = args.shards or args.processes
    if shards % args.processes:
        parser.error("--shards must be a multiple of --processes (each gets an equal range)")
    return Setup(args.database, args.processes, shards)


if __name__ == "__main__":
    main()
