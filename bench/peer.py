"""CPU per click: our bot side by side with discord.py's own tic-tac-toe example.

    python -m bench.peer                       # 200 games, 10,000 timed clicks, 3 runs each
    python -m bench.peer --quick               # 20 games, 300 clicks, 1 run each (smoke test)
    python -m bench.peer --bot-path /tmp/base  # our bot from another checkout (its PYTHONPATH)
    python -m bench.peer --quick --profile /tmp/ours.prof  # and where a click's CPU goes
    python -m bench.peer --utarwyn             # utarwyn/discord-tictactoe in the turns too
    python -m bench.peer --group-dm            # ours again, every game in a group DM

Run from the repository's root. The peer is ``bench/peer_bot.py``: discord.py's
``examples/views/tic_tac_toe.py`` behind a slash command, in memory. Our bot is
``python -m bot`` with a fresh SQLite database and its own defaults (``--bot-env`` adds
settings; the tests' 1 s sweep interval is left out). The players are in
``bench/peer_tables.py``, the figures in ``bench/peer_report.py`` and the profile's
breakdown in ``bench/peer_profile.py``; it is a scenario of ``bench/harness.py``, which
starts the bots (``bot/launcher.py``) and runs the two in turns.

Each run starts an emulator in this process, one bot process, and ``--games`` games between
members, each in its own channel with its own two members, 20 to a server (below the default
limit of 25 live games a server: every fair-play setting of our bot stays at its default).
Ours: ``/tictactoe opponent:B size:3x3 first:me``, then B clicks Accept; peer:
``/tictactoe-peer`` by A. Then the same closed loop for both bots: one coroutine per game
clicks a cell (X, O, X... as the bots expect), waits for that click's answer, and clicks
again, until ``--clicks`` cell clicks in all. Cells are drawn uniformly among the empty ones
by a fixed-seed rng per channel, so both bots get the same games, channel by channel (where
the last click falls differs by a few). When a game ends, its coroutine starts a new one in
the same channel before its next click: for ours, the last game's O clicks Rematch (the pair
cooldown lets a finished game's first Rematch through) and the other player Accepts, sides
swapped; for the peer, its command again. That start is inside the measured window (its
wall time and CPU) but not counted as a click. The ``starts`` column counts them; a start
costs our bot two interactions and the peer one.

Measured: the bot's main process CPU (user + system, from /proc/<pid>/stat, 10 ms ticks)
from just before the first timed click to just after the last timed answer, divided by the
clicks: CPU µs per click. Our bot's AI worker processes (idle in member games) are not
counted. For context only: wall time, clicks/s, a click's latency p50/p99 (sent, to the
bot's answer applied by the emulator), ``+1s ms``, the bot's CPU in the second after the
last answer (work put off past the answers, plus upkeep; not in the per-click figure), and
``emu+drv s``, this process's CPU in the window: the emulator and driver share the cores
with the bot. The emulator's answer deadline is 30 s, not 3, so that a stall of a shared
machine shows as latency instead of ending the run; any unanswered or refused interaction,
or a board that disagrees with the driver's copy, stops the run with an error.

``--utarwyn`` adds a third bot, utarwyn/discord-tictactoe, the most used open-source one
(npm ``discord-tictactoe``, discord.js 14; ``bench/utarwyn_bot.py`` installs it from the
lock file and starts ``bench/utarwyn/run.js``): ``/tictactoe opponent:B`` and B's Accept
start each game, whose first mover it draws; it announces on stdout each collector it sets
and each game's end, and the driver waits for those before a click or a new game. Its
CPU is node's whole process, from /proc like the others'.

``--group-dm`` adds our bot once more, each game in a group DM of its two players (the
first has the app installed to their account): the bot is a member of nothing there and
reaches the board through interactions alone. Its ratio to ours in server channels is
printed too.

Runs alternate ours, peer, ours, peer... (``--runs`` of each), as the machine is shared and
noisy. The ratio ours/peer is the median CPU per click of ours over that of the peer: at most
1.00 means our bot costs no more CPU per click than the in-memory example does; 1.30 would
mean 30 % more. The ratios per pair (run 1 over run 2, 3 over 4...) show how much of the
difference is noise.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import discord

from bench import harness, utarwyn_bot
from bench.harness import BotExited, RunError, all_of, guarded, tolerated
from bench.peer_bot import PEER_COMMAND
from bench.peer_profile import print_breakdown
from bench.peer_report import HEADER, Result, describe_checkout, row, summarise
from bench.peer_tables import (
    ACK_DEADLINE,
    GROUP_DM,
    OURS,
    PEER,
    UTARWYN,
    Answers,
    Boards,
    Table,
)
from bench.procs import cpu_seconds, thread_cpu_seconds
from bot.launcher import BotProcess, bot_env, full_collections_held_back
from discord_emulator import Emulator

REPO = Path(__file__).resolve().parents[1]
SETUP_TIMEOUT = 300.0
TABLES_PER_SERVER = 20
"""Games per server: below the default limit of 25 live games a server (bot/models.py),
so the bench runs with every fair-play limit at its default."""


def bench_env(emu: Emulator, workdir: Path, kind: str, options: Options) -> dict[str, str]:
    """The bot's environment: the emulator's endpoints, global commands (the games span
    several servers) and every fair-play setting at its default."""
    env = bot_env(emu, workdir / "bench.db")
    env.pop("SWEEP_INTERVAL_SECONDS", None)  # the tools' 1 s: use the bot's own default
    env.pop("SHUTDOWN_GRACE_SECONDS", None)
    if kind in (OURS, GROUP_DM):
        # This repository after the bot's: bench.peer_profile, for a profiled run.
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([str(options.bot_path), str(REPO)]))
        env.update(options.bot_env)
    else:
        env["PYTHONPATH"] = str(REPO)
        env["PEER_ANNOUNCE_BOARDS"] = "1"  # see bench/peer_bot.py's ANNOUNCE_BOARDS
    return env


@dataclass
class Options:
    games: int
    clicks: int
    runs: int
    seed: int
    bot_path: Path
    bot_env: dict[str, str]
    time_limit: float
    profile: Path | None = None
    utarwyn: bool = False
    group_dm: bool = False


@dataclass
class Peer:
    """The scenario: our bot, then discord.py's example (the baseline of the ratio)."""

    options: Options

    def kinds(self) -> tuple[str, ...]:
        extra = (UTARWYN,) if self.options.utarwyn else ()
        return (OURS, PEER, *extra, *((GROUP_DM,) if self.options.group_dm else ()))

    async def run_once(self, kind: str, number: int) -> Result:
        result = await run_once(kind, self.options)
        print(row(number, result), flush=True)
        return result


async def run_once(kind: str, options: Options, profile: Path | None = None) -> Result:
    """One run of one bot: a fresh emulator, bot process and database; ``profile``: our
    bot under cProfile, writing there."""
    boards = Boards() if kind in (PEER, UTARWYN) else None
    args: tuple[str, ...]
    if kind == PEER:
        command, module, args = PEER_COMMAND, "bench.peer_bot", ()
    elif kind == UTARWYN:
        command, module, args = "tictactoe", "bench.utarwyn_bot", ()
    elif profile is not None:
        command, module, args = "tictactoe", "bench.peer_profile", (str(profile),)
    else:
        command, module, args = "tictactoe", "bot", ()
    with tempfile.TemporaryDirectory(prefix=f"ttt-peer-{kind}-") as tmp:
        workdir = Path(tmp)
        async with Emulator(ack_deadline=ACK_DEADLINE, wait_timeout=harness.READY_TIMEOUT) as emu:
            if kind == GROUP_DM:
                emu.install_types = {0, 1}  # the app may be installed to users' accounts
            servers = -(-options.games // TABLES_PER_SERVER)
            guilds = [emu.add_guild(f"Bench {n}") for n in range(servers)]
            tables = [
                Table(emu, guilds[i // TABLES_PER_SERVER], i, options.seed, kind)
                for i in range(options.games)
            ]
            env = bench_env(emu, workdir, kind, options)
            answers = Answers(emu, boards)
            launch = harness.bot(
                emu,
                workdir,
                env,
                *args,
                module=module,
                command=command,
                log_name=f"{kind}.log",
                pipe_stdout=boards is not None,
            )
            bot: BotProcess | None = None
            answers.install()
            try:
                async with launch as bot:
                    reader = None
                    if boards is not None:
                        assert bot.process.stdout is not None
                        reader = asyncio.create_task(boards.read(bot.process.stdout))
                    try:
                        result = await measure(emu, bot, tables, answers, kind, options)
                    finally:
                        if reader is not None:
                            reader.cancel()
            except Exception:
                if bot is not None:
                    print(f"-- the last lines of the {kind} bot's log:", bot.log_tail(30), sep="\n")
                raise
            finally:
                answers.uninstall()
            result.errors = len(harness.errors_in(bot.log()))
            result.exit_code = bot.returncode
    return result


async def measure(
    emu: Emulator,
    bot: BotProcess,
    tables: list[Table],
    answers: Answers,
    kind: str,
    options: Options,
) -> Result:
    """Set the games up, then time the closed loop of clicks."""

    async def set_up() -> None:
        for chunk in range(0, len(tables), 50):
            await all_of(t.start(answers) for t in tables[chunk : chunk + 50])

    await guarded(emu, [bot], set_up(), SETUP_TIMEOUT, "setting the games up")
    for table in tables:
        table.starts = 0
    await asyncio.sleep(1.0)  # let the bot finish what the set-up left it
    latencies: list[float] = []
    claimed = 0

    async def play(table: Table) -> None:
        nonlocal claimed
        while claimed < options.clicks:
            claimed += 1
            if table.over:
                await table.start(answers)
            latencies.append(await table.click(answers))

    pid = bot.pid
    emu.rate_limits.reset_counts()  # the timed window's REST only
    first_request = len(emu.requests)
    with full_collections_held_back():
        driver_cpu = time.process_time()
        began, cpu, (main_cpu, _) = time.perf_counter(), cpu_seconds(pid), thread_cpu_seconds(pid)
        await guarded(
            emu,
            [bot],
            all_of(play(table) for table in tables),
            options.time_limit,
            f"{options.clicks} clicks",
        )
        cpu, wall = cpu_seconds(pid) - cpu, time.perf_counter() - began
        main_cpu = thread_cpu_seconds(pid)[0] - main_cpu
        driver_cpu = time.process_time() - driver_cpu
    after = cpu_seconds(pid)
    wire = emu.rate_limits.snapshot()
    deleted_twice = sum(r.status == 404 and tolerated(r) for r in emu.requests[first_request:])
    await asyncio.sleep(1.0)
    tail = cpu_seconds(pid) - after
    return Result(
        kind=kind,
        clicks=len(latencies),
        starts=sum(t.starts for t in tables),
        wall=wall,
        cpu=cpu,
        tail=tail,
        driver_cpu=driver_cpu,
        latencies=latencies,
        outside=wire["global_requests"],
        limited=sum(wire["sent_429"].values()),
        deleted_twice=deleted_twice,
        main_cpu=main_cpu,
    )


def drive(options: Options) -> None:
    print(
        "CPU per cell click, bot's main process only (our bot's AI workers not counted)\n"
        f"{options.games} games between members, {options.clicks} timed cell clicks a run,"
        f" seed {options.seed}\nnew games started during a run: in its CPU, not counted as"
        " clicks\n"
        f"ours: python -m bot from {describe_checkout(options.bot_path)}\n"
        f"peer: python -m bench.peer_bot (discord.py {discord.__version__}'s"
        " examples/views/tic_tac_toe.py)\n"
    )
    if options.utarwyn:
        print(f"utarwyn: {utarwyn_bot.describe()}\n")
        utarwyn_bot.install()
    print(HEADER, flush=True)
    scenario = Peer(options)
    by_kind = harness.play(scenario, options.runs)
    results = [
        r for turn in zip(*(by_kind[k] for k in scenario.kinds()), strict=True) for r in turn
    ]
    summarise(results)
    if options.profile is not None:
        profiled = asyncio.run(run_once(OURS, options, options.profile))
        print(f"\nprofiled run: {row(2 * options.runs + 1, profiled)}")
        main = statistics.median(r.main_us_per_click for r in results if r.kind == OURS)
        print_breakdown(str(options.profile), profiled.clicks, main)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 games, 300 clicks, 1 run each")
    parser.add_argument("--games", type=int, help="concurrent games (default 200)")
    parser.add_argument("--clicks", type=int, help="timed cell clicks per run (default 10000)")
    parser.add_argument("--runs", type=int, help="runs of each bot, alternating (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="the games' rng seed (default 1)")
    parser.add_argument(
        "--bot-path",
        type=Path,
        default=REPO,
        metavar="PATH",
        help="the checkout our bot runs from (its PYTHONPATH; default this repository)",
    )
    parser.add_argument(
        "--bot-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for our bot, e.g. AI_WORKERS=2 (repeatable)",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="the most one run's timed clicks may take (default 600)",
    )
    parser.add_argument(
        "--utarwyn",
        action="store_true",
        help="a third bot in the turns: utarwyn/discord-tictactoe (npm discord-tictactoe,"
        " discord.js 14; bench/utarwyn, installed by npm ci on first use)",
    )
    parser.add_argument(
        "--group-dm",
        action="store_true",
        help="our bot once more in the turns, each game in a group DM of its players, where"
        " the bot is a member of nothing and answers through interactions alone",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="after the runs, one more of ours under cProfile (written to FILE), and where"
        " its main thread spends a click, part by part",
    )
    args = parser.parse_args()
    bot_path = args.bot_path.resolve()
    if not (bot_path / "bot" / "__main__.py").is_file():
        parser.error(f"--bot-path: no bot/__main__.py in {bot_path}")
    try:
        bot_env = dict(item.split("=", 1) for item in args.bot_env)
    except ValueError:
        parser.error("--bot-env takes NAME=VALUE")
    options = Options(
        games=args.games or (20 if args.quick else 200),
        clicks=args.clicks or (300 if args.quick else 10_000),
        runs=args.runs or (1 if args.quick else 3),
        seed=args.seed,
        bot_path=bot_path,
        bot_env=bot_env,
        time_limit=args.time_limit,
        profile=args.profile.resolve() if args.profile else None,
        utarwyn=args.utarwyn,
        group_dm=args.group_dm,
    )
    if min(options.games, options.clicks, options.runs) < 1:
        parser.error("--games, --clicks and --runs must be at least 1")
    try:
        drive(options)
    except (KeyboardInterrupt, asyncio.CancelledError):
        sys.exit("interrupted")
    except RunError as error:
        sys.exit(f"run failed: {error}")
    except BotExited as error:  # it did not stop within its grace
        sys.exit(f"run failed: {str(error).splitlines()[0]}")


if __name__ == "__main__":
    main()
