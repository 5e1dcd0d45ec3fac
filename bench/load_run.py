"""One run of the load bench: the emulator, the bot processes, the games, the open loop
of clicks, and every figure it prints (``bench.load``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import Answers, percentile
from bench.load_figures import GC, LAG, by_second, rss_kib, seconds_within
from bench.load_players import Game, LostTable, Stages
from bench.pg import (
    database_size,
    fresh_database,
    server_pid,
)
from bench.setups import Cpu, Setup, launch_bots, server_of, servers_needed
from bot.launcher import full_collections_held_back
from discord_emulator import Emulator


@contextlib.asynccontextmanager
async def slow_exit_noted(notes: list[str]) -> Any:
    """Note, instead of raising, a bot that had to be killed after its SIGTERM grace (a
    backlog of rate-limited requests can hold it): the run's figures still stand."""
    try:
        yield
    except AssertionError as error:
        first = str(error).splitlines()[0]
        if not first.startswith("the bot did not exit"):
            raise
        notes.append(first.rstrip(":"))


async def quiet(emu: Emulator, since: float, *, still: float = 2.0, within: float = 60) -> float:
    """Wait until the bot has sent no REST request outside an interaction answer for
    ``still`` seconds (at most ``within``): its backlog of pings and redraws, paced by the
    rate limits, drains after the clicks. Returns when the last one came, after ``since``."""
    last_count, last_at = emu.rate_limits.global_requests, time.perf_counter()
    while time.perf_counter() - last_at < still and time.perf_counter() - since < within:
        await asyncio.sleep(0.1)
        if emu.rate_limits.global_requests != last_count:
            last_count, last_at = emu.rate_limits.global_requests, time.perf_counter()
    return max(0.0, last_at - since)


async def watch_lag(lags: list[float], stop: asyncio.Event) -> None:
    """This process's (emulator + load generator) event-loop lag: a 10 ms timer's lateness."""
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        due = loop.time() + 0.01
        await asyncio.sleep(0.01)
        lags.append(loop.time() - due)


async def run(
    games: int,
    clicks: int,
    rate: float,
    seed: int,
    big: bool = True,
    bot_env: dict[str, str] | None = None,
    setup: Setup = Setup(),  # noqa: B008  # frozen
    server: str | None = None,
) -> dict[str, float]:
    """One run: prints its figures and returns the headline ones. ``server`` is the
    PostgreSQL server's URL (a new database on it for this run) if ``setup`` wants it."""
    rng = random.Random(seed)
    env = {
        "AI_WORKERS": "1",
        "LOG_LEVEL": "INFO",
        "LAG_REPORT_SECONDS": "1",
        "TURN_TIMEOUT_SECONDS": "3600",
    } | (bot_env or {})
    with tempfile.TemporaryDirectory(prefix="ttt-load-") as tmp:
        workdir = Path(tmp)
        async with contextlib.AsyncExitStack() as stack:
            url = None
            if setup.database == "postgresql":
                assert server is not None, "PostgreSQL needs a server"
                url = env["DATABASE_URL"] = await stack.enter_async_context(fresh_database(server))
            emulator = Emulator(wait_timeout=60, max_concurrency=setup.shards)
            emu = await stack.enter_async_context(emulator)
            # The bot's default limits hold: a server has at most 25 live games, so the
            # games are spread over as many servers as that takes, as many on each shard.
            guilds = [
                emu.add_guild(f"Load {n}", shard=(n % setup.shards, setup.shards))
                if setup.shards > 1
                else emu.add_guild(f"Load {n}")
                for n in range(servers_needed(games, setup.shards))
            ]
            stuck: list[str] = []
            async with slow_exit_noted(stuck), launch_bots(emu, workdir, setup, env) as bots:
                pids = [bot.process.pid for bot in bots]
                database_pid = None if url is None else await server_pid(url)
                size_before = 0 if url is None else await database_size(url)
                await asyncio.sleep(1.0)
                idle = [rss_kib(pid) for pid in pids]
                waits = Answers(emu)
                waits.install()
                stages = Stages(emu)
                stages.install()
                split: list[tuple[float, ...]] = []
                own_lags: list[float] = []
                stop_lag = asyncio.Event()
                tables = [
                    Game(
                        emu,
                        waits,
                        guilds[server_of(i, games, len(guilds))],
                        i,
                        random.Random(rng.random()),
                        big=big,
                    )
                    for i in range(games)
                ]
                began = time.perf_counter()
                for chunk in range(0, games, 50):
                    await asyncio.gather(*(t.start() for t in tables[chunk : chunk + 50]))
                set_up = time.perf_counter() - began
                busy = [rss_kib(pid) for pid in pids]
                stats: dict[str, list[float]] = {
                    "3x3": [],
                    "3x3 at": [],
                    "5x5": [],
                    "5x5 at": [],
                    "5x5 edit": [],
                    "5x5 reply": [],
                    "3x3 seen": [],
                    "failed": [],
                    "member moves": [],
                }
                done = 0

                reached: list[float] = []
                cpu_at: list[Cpu] = []
                wire_at: list[dict[str, Any]] = []
                banned_at: list[float] = []
                ready: asyncio.Queue[Game] = asyncio.Queue()
                for table in rng.sample(tables, len(tables)):
                    ready.put_nowait(table)
                in_flight: set[asyncio.Task[None]] = set()
                waited_for_a_game = 0

                async def one_click(table: Game) -> None:
                    nonlocal done
                    try:
                        await table.click(stats, stages, split)
                        done += 1
                        if done == clicks:  # CPU up to here, not the stragglers'
                            reached.append(time.perf_counter())
                            cpu_at.append(Cpu.now(pids, database_pid))
                            wire_at.append(emu.rate_limits.snapshot())
                        await table.replace_if_over()  # outside the click schedule
                    except LostTable:
                        return  # counted at the end: the bot failed to start its next game
                    except AssertionError:
                        if not emu.rate_limits.banned:
                            raise
                        # Cloudflare refuses the bot everything: new games fail too.
                    ready.put_nowait(table)

                async def schedule() -> None:
                    """Send ``clicks`` clicks at ``rate`` per second, whatever the answers do."""
                    nonlocal waited_for_a_game
                    loop = asyncio.get_running_loop()
                    due = loop.time()
                    for _ in range(clicks):
                        if emu.rate_limits.banned:  # nothing can be answered any more
                            banned_at.append(time.perf_counter() - began)
                            break
                        due += 1 / rate
                        if (delay := due - loop.time()) > 0:
                            await asyncio.sleep(delay)
                        if ready.empty():
                            waited_for_a_game += 1
                        task = asyncio.create_task(one_click(await ready.get()))
                        in_flight.add(task)
                        task.add_done_callback(in_flight.discard)
                    while in_flight:
                        await asyncio.gather(*in_flight)

                lag_from = [len(bot.log()) for bot in bots]
                began, cpu_from = time.perf_counter(), Cpu.now(pids, database_pid)
                lag_task = asyncio.create_task(watch_lag(own_lags, stop_lag))
                emu.rate_limits.reset_counts()  # the clicks' REST only, not the set-up's
                # Full collections of this process's growing heap (the emulator keeps every
                # request and frame) stalled its loop up to 1 s at a time (12 of them, 5.6 s
                # of its 26 s CPU in a full run): held back until the clicks are done.
                with full_collections_held_back():
                    await schedule()
                elapsed = (reached[0] if reached else time.perf_counter()) - began
                cpu = (cpu_at[0] if cpu_at else Cpu.now(pids, database_pid)) - cpu_from
                wire = wire_at[0] if wire_at else emu.rate_limits.snapshot()
                drained = await quiet(emu, began + elapsed)
                wire_after = emu.rate_limits.snapshot()  # the bot's backlog included
                stop_lag.set()
                await lag_task
                stages.uninstall()
                waits.uninstall()
                peak = [rss_kib(pid) for pid in pids]
                logs = [bot.log()[start:] for bot, start in zip(bots, lag_from, strict=True)]
                lags_of = [
                    [tuple(float(x) for x in found) for found in LAG.findall(log)] for log in logs
                ]
                lags = [lag for each in lags_of for lag in each]
                pauses = [
                    (int(n), float(t), float(m)) for log in logs for n, t, m in GC.findall(log)
                ]
                log = "\n".join(bot.log() for bot in bots)
            finished = sum(t.finished for t in tables)
            if url is None:
                size = sum(os.path.getsize(p) for p in map(str, workdir.glob("load.db*")))  # noqa: ASYNC240
            else:
                size = await database_size(url) - size_before
    for line in stuck:
        print(f"THE BOT DID NOT STOP: {line} (after SIGTERM; killed)")
    # Counted up to the moment the target was reached (no stragglers), or the ban.
    answered = clicks if reached else done
    if banned_at:
        print(
            f"CLOUDFLARE BAN after {banned_at[0]:.1f} s of clicks: the run stopped there;"
            " past it every request of the bot, click answers included, is refused"
        )
    print(
        f"games: {games} live ({sum(t.members for t in tables)} between members, "
        f"{sum(t.size == '5x5' for t in tables)} 5x5); set up in {set_up:.1f} s"
    )
    print(
        f"clicks: {answered} answered in {elapsed:.1f} s = {answered / elapsed:.0f} clicks/s"
        f" (sent at {rate:.0f}/s; {waited_for_a_game} waited for a game to be free);"
        f" failed: {len(stats['failed'])}"
    )
    lost = sum(t.lost for t in tables)
    print(f"new games that failed to start (no answer within 3 s: the table left the run): {lost}")
    for key in ("3x3", "5x5", "5x5 edit", "5x5 reply"):
        values = stats[key]
        if values:
            print(
                f"{key:>9} click -> answer: n={len(values)}"
                f" p50={percentile(values, 0.5) * 1e3:.1f} ms"
                f" p99={percentile(values, 0.99) * 1e3:.1f} ms max={max(values) * 1e3:.1f} ms"
            )
    if values := stats["3x3 seen"]:
        print(
            f"3x3 click -> seen by the player's coroutine: p50={percentile(values, 0.5) * 1e3:.1f}"
            f" ms p99={percentile(values, 0.99) * 1e3:.1f} ms max={max(values) * 1e3:.1f} ms"
        )
    if stats["3x3"]:
        print(by_second(stats["3x3 at"], stats["3x3"], limit=0.025))
    over = sum(v > 3 for key in ("3x3", "5x5") for v in stats[key])
    print(f"clicks answered after 3 s: {over}")
    moves = len(stats["member moves"])
    outside = wire["global_requests"]
    per_move = outside / moves if moves else float("nan")
    routes = ", ".join(
        f"{route} {n}"
        for route, n in sorted(wire["by_route"].items(), key=lambda item: -item[1])
        if not route.startswith("POST /interactions/") and "/webhooks/" not in route
    )
    print(
        f"REST outside interaction answers (the global 50/s budget): {outside} in the clicks"
        f" ({outside / elapsed:.1f}/s) = {per_move:.2f} per member move ({moves} member"
        f" moves); by route: {routes or 'none'}; {wire_after['global_requests']} in all, the"
        f" last {drained:.1f} s after the last click"
    )
    limited = wire_after["sent_429"]
    print(
        f"429s received by the bot: {sum(limited.values())} ({dict(limited) or 'none'});"
        f" invalid requests: {wire_after['invalid_requests']}"
        f" ({wire_after['invalid_in_window']} in the last 10 min);"
        f" Cloudflare bans: {wire_after['bans']}"
    )
    if lags:
        print(
            f"bot event-loop lag (10 ms timer, {len(lags)} one-second reports):"
            f" worst max {max(m for m, _, _ in lags):.1f} ms,"
            f" worst p99 {max(p for _, p, _ in lags):.1f} ms,"
            f" median p50 {statistics.median(q for _, _, q in lags):.1f} ms"
        )
        for process, own in enumerate(lags_of):
            each = " ".join(f"{m:.0f}" for m, _, _ in own)
            name = "bot" if len(lags_of) == 1 else f"bot {process}"
            print(f"{name} event-loop lag, max of each second (ms, in order): {each}")
    if pauses:
        print(
            f"bot garbage collection: {sum(n for n, _, _ in pauses)} runs,"
            f" {sum(t for _, t, _ in pauses) / 1e3:.2f} s in all,"
            f" longest pause {max(m for _, _, m in pauses):.1f} ms"
        )
    if split:
        names = ("emulator->socket", "bot", "emulator callback", "player wake-up")
        parts = [
            f"{name} p50={percentile([s[i] for s in split], 0.5) * 1e3:.1f}"
            f"/p99={percentile([s[i] for s in split], 0.99) * 1e3:.1f}"
            for i, name in enumerate(names)
        ]
        print(f"3x3 click stages (ms): {', '.join(parts)}")
    if own_lags:
        print(
            f"emulator + load generator event-loop lag (10 ms timer): max {max(own_lags) * 1e3:.1f}"
            f" ms, p99 {percentile(own_lags, 0.99) * 1e3:.1f} ms,"
            f" p50 {percentile(own_lags, 0.5) * 1e3:.1f} ms"
        )
    bot_cpu, ai_cpu = sum(cpu.bots), sum(cpu.workers)
    server_cpu = (
        ""
        if cpu.database is None
        else (f", PostgreSQL server {cpu.database:.1f} s ({cpu.database / elapsed:.0%})")
    )
    bots_named = "bot" if len(pids) == 1 else f"{len(pids)} bot processes"
    print(
        f"CPU during the clicks: {bots_named} {bot_cpu:.1f} s ({bot_cpu / elapsed:.0%} of a core),"
        f" {'its' if len(pids) == 1 else 'their'} AI workers {ai_cpu:.1f} s"
        f" ({ai_cpu / elapsed:.0%}), emulator + load generator {cpu.own:.1f} s"
        f" ({cpu.own / elapsed:.0%}){server_cpu} of {os.cpu_count()} cores"
    )
    if len(pids) > 1:
        each = ", ".join(
            f"bot {n} {own:.1f} s ({own / elapsed:.0%}) + AI {ai:.1f} s"
            for n, (own, ai) in enumerate(zip(cpu.bots, cpu.workers, strict=True))
        )
        print(f"CPU per bot process: {each}")
    rss = "bot RSS" if len(pids) == 1 else f"bot RSS (sum of {len(pids)} processes)"
    print(
        f"{rss}: idle {sum(idle) / 1024:.1f} MiB, with {games} games {sum(busy) / 1024:.1f} MiB "
        f"({(sum(busy) - sum(idle)) / games:.1f} KiB per game), after the run"
        f" {sum(peak) / 1024:.1f} MiB"
    )
    if len(pids) > 1:
        each = ", ".join(f"bot {n} {kib / 1024:.1f} MiB" for n, kib in enumerate(peak))
        print(f"bot RSS per process after the run: {each}")
    grown = "" if url is None else " grown (pg_database_size after the run - after start-up)"
    print(
        f"database: {size / 1024:.0f} KiB{grown} for {finished} finished games "
        f"(+{games} live) = {size / max(1, finished + games) / 1024:.2f} KiB per game"
    )
    errors = [line for line in log.splitlines() if " ERROR " in line]
    print(f"bot log: {len(errors)} ERROR lines")
    small = stats["3x3"]
    return {
        "clicks/s": answered / elapsed,
        "3x3 p50 ms": percentile(small, 0.5) * 1e3,
        "3x3 p99 ms": percentile(small, 0.99) * 1e3,
        "3x3 max ms": max(small, default=float("nan")) * 1e3,
        "s p99<=25ms %": seconds_within(stats["3x3 at"], small, 0.025),
        "over 3 s": over,
        "failed": len(stats["failed"]),
        "5x5 reply p50 s": percentile(stats["5x5 reply"], 0.5),
        "5x5 reply p99 s": percentile(stats["5x5 reply"], 0.99),
        "bot CPU s": bot_cpu,
        "bot RSS MiB": sum(peak) / 1024,
        "REST/member move": per_move,
        "429s": sum(limited.values()),
        "invalid requests": wire_after["invalid_requests"],
    } | ({} if cpu.database is None else {"PG server CPU s": cpu.database})
