"""Load benchmark: the real bot (a subprocess) under many concurrent games, through the emulator.

    python bench/load.py            # 500 games, at least 10,000 clicks
    python bench/load.py --quick    # 60 games, 1,500 clicks
    python bench/load.py --repeat 3 # three runs and their medians (the machine is noisy)
    python bench/load.py --database postgresql                # a throwaway PostgreSQL 16
    python bench/load.py --database postgresql --processes 2  # two bot processes
    python bench/load.py --quick --compare-setups --repeat 3  # three set-ups, in turns
    python bench/load.py --slow-games 1000 --scale 0.25       # slow member games' pings

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
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import slow_games
from bench.pg import (
    add_database_arguments,
    check_database_arguments,
    database_size,
    describe,
    fresh_database,
    postgres_server,
    server_pid,
)
from bench.setups import COMPARED, Cpu, Setup, compare, launch_bots, server_of, servers_needed
from discord_emulator import Emulator, InteractionHandle
from tests.bot.e2e_helpers import answered_thinking, full_collections_held_back

LEVELS = ("easy", "medium", "hard", "impossible")
LAG = re.compile(r"Event loop lag: max ([0-9.]+) ms, p99 ([0-9.]+) ms, p50 ([0-9.]+) ms")
GC = re.compile(r"(\d+) GC runs, ([0-9.]+) ms in all, longest ([0-9.]+) ms")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Waits:
    """Event-driven waits on emulator state, one future per waiting coroutine.

    ``Emulator.wait_for`` wakes every waiting coroutine at every change, which with 500
    games waiting at once costs the load generator more than the clicks themselves.
    Re-checking every waiting click's predicate at every change still took about a sixth
    of this process's CPU, and this process shares two cores with the bot: so a click
    waits on its own handle, woken by that handle's answer or failure alone, and only the
    few waits on later edits (5x5 replies) are re-checked at each change.
    """

    def __init__(self, emu: Emulator) -> None:
        self.waiting: dict[int, tuple[Callable[[], bool], asyncio.Future[None]]] = {}
        self.by_handle: dict[int, list[asyncio.Future[None]]] = {}
        self._emu = emu
        self._undo: list[Callable[[], None]] = []

    def install(self) -> None:
        from discord_emulator import interactions

        emu, waiting, by_handle = self._emu, self.waiting, self.by_handle
        original = emu._changed

        def changed() -> None:
            original()
            for key, (check, future) in list(waiting.items()):
                if check() and not future.done():
                    future.set_result(None)
                    del waiting[key]

        def settled(handle: Any) -> None:
            for future in by_handle.pop(handle.id, ()):
                if not future.done():
                    future.set_result(None)

        handle_class = interactions.InteractionHandle
        real_ack, real_fail = handle_class._acknowledge, handle_class._fail

        def acknowledge(handle: Any, *args: Any, **kwargs: Any) -> None:
            real_ack(handle, *args, **kwargs)
            settled(handle)

        def fail(handle: Any) -> None:
            real_fail(handle)
            settled(handle)

        emu._changed = changed  # type: ignore[method-assign]  # handles look it up each time
        handle_class._acknowledge = acknowledge  # type: ignore[method-assign]
        handle_class._fail = fail  # type: ignore[method-assign]
        self._undo = [
            lambda: setattr(handle_class, "_fail", real_fail),
            lambda: setattr(handle_class, "_acknowledge", real_ack),
            lambda: delattr(emu, "_changed"),
        ]

    def uninstall(self) -> None:
        for undo in self._undo:
            undo()
        self._undo = []

    async def answered(self, handle: InteractionHandle) -> None:
        """Wait (at most two minutes) until the bot answered ``handle`` or it failed."""
        if not handle.pending:
            return
        future = asyncio.get_running_loop().create_future()
        self.by_handle.setdefault(handle.id, []).append(future)
        async with asyncio.timeout(120):
            await future

    async def until(self, check: Callable[[], bool]) -> None:
        """Wait (at most two minutes) until ``check()`` holds."""
        if check():
            return
        future = asyncio.get_running_loop().create_future()
        key = id(future)
        self.waiting[key] = (check, future)
        try:
            async with asyncio.timeout(120):
                await future
        finally:
            self.waiting.pop(key, None)


class Stages:
    """Per-click stage timestamps, taken by wrapping emulator internals from outside.

    ``written``: the INTERACTION_CREATE frame serialised by the gateway writer (it goes to
    the socket right after); ``called``: the bot's callback request reached the emulator's
    handler; ``acked``: the callback was validated and applied. With the click's start and
    the moment the player saw the answer, a click's time splits into emulator gateway queue,
    bot (plus both sides' sockets), emulator callback handling, and the player's wake-up.
    """

    def __init__(self) -> None:
        self.written: dict[int, float] = {}
        self.called: dict[int, float] = {}
        self.acked: dict[int, float] = {}
        self._undo: list[Callable[[], None]] = []

    def install(self) -> None:
        from discord_emulator import gateway, interactions, server

        written, called, acked = self.written, self.called, self.acked
        real_encode = gateway.encode_json

        def encode_json(item: Any) -> str:
            text = real_encode(item)
            if isinstance(item, dict) and item.get("t") == "INTERACTION_CREATE":
                written[int(item["d"]["id"])] = time.perf_counter()
            return text

        real_read = server._read_body

        async def read_body(request: Any) -> Any:
            path = request.path
            if path.endswith("/callback"):
                called[int(path.rsplit("/", 3)[1])] = time.perf_counter()
            return await real_read(request)

        handle_class = interactions.InteractionHandle
        real_ack = handle_class._acknowledge

        def acknowledge(handle: Any, *args: Any, **kwargs: Any) -> None:
            acked.setdefault(handle.id, time.perf_counter())
            real_ack(handle, *args, **kwargs)

        gateway.encode_json = encode_json  # type: ignore[assignment]
        server._read_body = read_body  # type: ignore[assignment]
        handle_class._acknowledge = acknowledge  # type: ignore[method-assign]
        self._undo = [
            lambda: setattr(gateway, "encode_json", real_encode),
            lambda: setattr(server, "_read_body", real_read),
            lambda: setattr(handle_class, "_acknowledge", real_ack),
        ]

    def uninstall(self) -> None:
        for undo in self._undo:
            undo()
        self._undo = []


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


def free_cells(message: Any) -> list[str]:
    """The custom_ids of a board's enabled cells, read straight from its action rows.

    ``Message.buttons()`` builds an object for every button of every message: it was a
    tenth of this process's CPU, which the bot then had to share two cores with.
    """
    return [
        button["custom_id"]
        for row in message.components
        if row.get("type") == 1
        for button in row.get("components", ())
        if not button.get("disabled") and button.get("custom_id", "").startswith("ttt:cell:")
    ]


class Game:
    def __init__(
        self,
        emu: Emulator,
        waits: Waits,
        guild: object,
        index: int,
        rng: random.Random,
        *,
        big: bool = True,
    ) -> None:
        self.emu = emu
        self.waits = waits
        self.channel = emu.add_text_channel(guild, f"g{index}")  # type: ignore[arg-type]
        self.rng = rng
        kind = index % 10
        self.size = "5x5" if kind == 9 and big else "3x3"
        self.level = "impossible" if kind == 9 and index % 50 == 9 else LEVELS[index % 4]
        if self.size == "5x5" and self.level != "impossible":
            self.level = "hard"
        self.members = kind in (3, 6, 8)
        self.players = [emu.add_user(f"p{index}a"), emu.add_user(f"p{index}b")]
        for user in self.players:
            emu.add_member(guild, user)  # type: ignore[arg-type]
        self.board: int | None = None
        self.finished = 0

    async def start(self) -> None:
        emu, alice, bob = self.emu, *self.players
        options: dict[str, object] = {"size": self.size, "first": "me"}
        if self.members:
            options["opponent"] = bob
        else:
            options["difficulty"] = self.level
        handle = await emu.run_command(alice, self.channel, "tictactoe", **options)
        await self.waits.answered(handle)
        response = await handle.response()
        assert response.message is not None and not response.ephemeral, response
        if self.members:
            accept = await emu.click(bob, response.message, label="Accept")
            await self.waits.answered(accept)
            await accept.response()
        self.board = response.message.id

    async def replace_if_over(self) -> None:
        """Start a new game in this channel if the current one is over: between members
        by the Rematch button (a new challenge to the same member within the cooldown is
        refused; the first rematch of a finished game is exempt), else a new /tictactoe."""
        message = self.emu.message(self.board) if self.board is not None else None
        assert message is not None
        if free_cells(message):
            return
        self.finished += 1
        if not self.members or not any(b.label == "Rematch" for b in message.buttons()):
            await self.start()
            return
        asker, other = self.players
        click = await self.emu.click(asker, message, label="Rematch")
        await self.waits.answered(click)
        challenge = (await click.response()).message
        assert challenge is not None and not challenge.ephemeral, challenge
        accept = await self.emu.click(other, challenge, label="Accept")
        await self.waits.answered(accept)
        await accept.response()
        self.board = challenge.id

    async def click(
        self, stats: dict[str, list[float]], stages: Stages, split: list[tuple[float, ...]]
    ) -> None:
        """One click by the player on move (a new game first if this one is over)."""
        emu = self.emu
        while True:
            message = emu.message(self.board) if self.board is not None else None
            assert message is not None
            free = free_cells(message)
            if not free:
                await self.replace_if_over()
                continue
            text = message.text
            user = next((u for u in self.players if f"<@{u.id}>, your move" in text), None)
            if user is not None:
                break
            await asyncio.sleep(0.01)  # the bot's reply is still on its way
        started = time.perf_counter()
        handle = await emu.click(user, message, custom_id=self.rng.choice(free))
        await self.waits.answered(handle)
        seen = time.perf_counter()
        response = await handle.response()
        written = stages.written.pop(handle.id, started)
        called = stages.called.pop(handle.id, written)
        acked = stages.acked.pop(handle.id, None)
        # The click's time ends when "Discord" (the emulator) has the bot's answer, not
        # when this process's coroutine gets round to noticing it (its own loop's lag).
        took = (seen if acked is None else acked) - started
        if response.failed:
            stats["failed"].append(seen - started)
        elif answered_thinking(handle):  # the move shown now, the bot's reply in an edit
            stats["5x5"].append(took)
            await self.waits.until(lambda: handle.original_edits >= 1 or handle.failed)
            stats["5x5 edit"].append(time.perf_counter() - started)
            stats["5x5 reply"].append(stats["5x5 edit"][-1])
        else:
            if self.size == "5x5":  # the reply came with the click
                stats["5x5 reply"].append(took)
            stats[self.size].append(took)
            stats[f"{self.size} at"].append(started)
            if self.members:
                stats["member moves"].append(took)
            if self.size == "3x3" and acked is not None:
                stats["3x3 seen"].append(seen - started)
                split.append((written - started, called - written, acked - called, seen - acked))


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
                await bots[0].wait_until(emu.wait_for_commands("tictactoe"))  # global commands
                pids = [bot.process.pid for bot in bots]
                database_pid = None if url is None else await server_pid(url)
                size_before = 0 if url is None else await database_size(url)
                await asyncio.sleep(1.0)
                idle = [rss_kib(pid) for pid in pids]
                waits = Waits(emu)
                waits.install()
                stages = Stages()
                stages.install()  # after waits: its acknowledge hook wraps theirs
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


def seconds_of(starts: list[float], took: list[float]) -> dict[int, list[float]]:
    """The values grouped by the whole second of the run they started in."""
    first = min(starts, default=0.0)
    seconds: dict[int, list[float]] = {}
    for start, value in zip(starts, took, strict=True):
        seconds.setdefault(int(start - first), []).append(value)
    return seconds


def full_second_p99s(seconds: dict[int, list[float]]) -> list[float]:
    """Each second's p99, for the seconds with at least 100 clicks (not the last partial)."""
    return sorted(percentile(values, 0.99) for values in seconds.values() if len(values) >= 100)


def by_second(starts: list[float], took: list[float], limit: float) -> str:
    """Whether slow clicks are spread over the run (the bot is too slow) or bunched in a
    few seconds (something stalled everything then: on this shared machine, often every
    process at once). Each whole second of the run gets its own p99."""
    seconds = seconds_of(starts, took)
    p99s = full_second_p99s(seconds) or [float("nan")]
    slow = sorted((sum(v > limit for v in values) for values in seconds.values()), reverse=True)
    in_order = " ".join(
        f"{percentile(seconds[second], 0.99) * 1e3:.0f}"
        for second in sorted(seconds)
        if len(seconds[second]) >= 100
    )
    return (
        f"3x3 p99 of each second (ms, in order): {in_order}\n"
        f"3x3 p99 of each second: median {statistics.median(p99s) * 1e3:.1f} ms,"
        f" {sum(p <= limit for p in p99s)} of {len(p99s)} seconds at most {limit * 1e3:.0f} ms;"
        f" clicks over {limit * 1e3:.0f} ms: {sum(slow)}, {sum(slow[:3])} of them in the"
        " worst 3 seconds"
    )


def seconds_within(starts: list[float], took: list[float], limit: float) -> float:
    """The share (%) of the run's full seconds whose 3x3 clicks had a p99 within limit."""
    p99s = full_second_p99s(seconds_of(starts, took))
    return 100 * sum(p <= limit for p in p99s) / len(p99s) if p99s else float("nan")


def summarise(results: list[dict[str, float]]) -> None:
    """Each run's headline figures and their median: the machine is shared and noisy."""
    print(f"\n{len(results)} runs (same seed, a fresh bot and database each):")
    for key in results[0]:
        values = [r[key] for r in results]
        runs = " ".join(f"{v:8.1f}" for v in values)
        print(f"{key:>16}: {runs}   median {statistics.median(values):8.1f}")


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
        asyncio.run(slow_games.run(args.slow_games, args.move_seconds, args.scale))
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
        results: dict[Setup, list[dict[str, float]]] = {setup: [] for setup in setups}
        for index in range(repeat):
            turn = setups[index % len(setups) :] + setups[: index % len(setups)]
            for setup in turn:
                if repeat > 1 or len(setups) > 1:
                    print(f"\n-- run {index + 1} of {repeat}: {setup.label}")
                figures = run(games, clicks, args.rate, args.seed, args.big, bot_env, setup, server)
                results[setup].append(asyncio.run(figures))
    if len(setups) > 1:
        compare(results)
    elif repeat > 1:
        summarise(results[setups[0]])


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
