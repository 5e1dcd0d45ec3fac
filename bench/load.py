"""Load benchmark: the real bot (a subprocess) under many concurrent games, through the emulator.

    python bench/load.py            # 500 games, at least 10,000 clicks
    python bench/load.py --quick    # 60 games, 1,500 clicks

Games: 3x3 against the bot at every level, 3x3 between members, and some 5x5 against the
bot (``hard``, plus a few ``impossible`` whose replies search for 1.5 s). Each game is
played by its own coroutine, click after click, all at once. The emulator and this load
generator share one process (and the machine's two cores with the bot), so the figures
include the emulator's own time.

Prints clicks per second, the time from click to the bot's answer (p50/p99/max, 3x3 and
5x5 apart; a 5x5 click is answered by a deferral, its board edit timed separately), the
bot's memory per live game (RSS with the games live minus RSS idle, per game), and the
database size per finished game.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.bot.e2e_helpers import BotProcess
from tests.discord_emulator import CallbackType, Emulator

LEVELS = ("easy", "medium", "hard", "impossible")
LAG = re.compile(r"Event loop lag: max ([0-9.]+) ms, p99 ([0-9.]+) ms, p50 ([0-9.]+) ms")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Waits:
    """Event-driven waits on emulator state, one future per waiting click.

    ``Emulator.wait_for`` wakes every waiting coroutine at every change, which with 500
    games waiting at once costs the load generator more than the clicks themselves. Here
    one hook re-checks plain predicates and wakes only the coroutines whose state changed.
    """

    def __init__(self, emu: Emulator) -> None:
        self.waiting: dict[int, tuple[Callable[[], bool], asyncio.Future[None]]] = {}
        original = emu._changed

        def changed() -> None:
            original()
            for key, (check, future) in list(self.waiting.items()):
                if check() and not future.done():
                    future.set_result(None)
                    del self.waiting[key]

        emu._changed = changed  # type: ignore[method-assign]  # handles look it up each time

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


class Game:
    def __init__(
        self, emu: Emulator, waits: Waits, guild: object, index: int, rng: random.Random
    ) -> None:
        self.emu = emu
        self.waits = waits
        self.channel = emu.add_text_channel(guild, f"g{index}")  # type: ignore[arg-type]
        self.rng = rng
        kind = index % 10
        self.size = "5x5" if kind == 9 else "3x3"
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
        response = await handle.response()
        assert response.message is not None and not response.ephemeral, response
        if self.members:
            await (await emu.click(bob, response.message, label="Accept")).response()
        self.board = response.message.id

    async def click(self, stats: dict[str, list[float]]) -> bool:
        """One click (a new game first if this one is over); False if it needed no click."""
        emu = self.emu
        message = emu.message(self.board) if self.board is not None else None
        assert message is not None
        free = [
            b for b in message.buttons() if b.custom_id.startswith("ttt:cell:") and not b.disabled
        ]
        if not free:
            self.finished += 1
            await self.start()
            return False
        text = message.text
        user = next((u for u in self.players if f"<@{u.id}>, your move" in text), None)
        if user is None:
            await asyncio.sleep(0.01)
            return False
        started = time.perf_counter()
        handle = await emu.click(user, message, custom_id=self.rng.choice(free).custom_id)
        await self.waits.until(lambda: not handle.pending)
        response = await handle.response()
        took = time.perf_counter() - started
        if response.failed:
            stats["failed"].append(took)
        elif response.type == CallbackType.DEFERRED_UPDATE_MESSAGE:
            stats["5x5"].append(took)
            await self.waits.until(lambda: handle.original_edits >= 1 or handle.failed)
            stats["5x5 edit"].append(time.perf_counter() - started)
        else:
            stats[self.size].append(took)
        return True


async def run(games: int, clicks: int, rate: float, seed: int) -> None:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="ttt-load-") as tmp:
        workdir = Path(tmp)
        database = workdir / "load.db"
        async with Emulator(wait_timeout=60) as emu:
            guild = emu.add_guild("Load")
            async with BotProcess.launch(
                emu,
                workdir,
                dev_guild=guild,
                database=database,
                AI_WORKERS="1",
                LOG_LEVEL="INFO",
                LAG_REPORT_SECONDS="1",
                TURN_TIMEOUT_SECONDS="3600",
            ) as bot:
                pid = bot.process.pid
                await asyncio.sleep(1.0)
                idle = rss_kib(pid)
                waits = Waits(emu)
                tables = [
                    Game(emu, waits, guild, i, random.Random(rng.random())) for i in range(games)
                ]
                began = time.perf_counter()
                for chunk in range(0, games, 50):
                    await asyncio.gather(*(t.start() for t in tables[chunk : chunk + 50]))
                setup = time.perf_counter() - began
                busy = rss_kib(pid)
                stats: dict[str, list[float]] = {"3x3": [], "5x5": [], "5x5 edit": [], "failed": []}
                done = 0

                reached: list[float] = []
                think = games / rate  # mean seconds between one game's clicks

                async def player(table: Game) -> None:
                    nonlocal done
                    await asyncio.sleep(rng.uniform(0, think))
                    while done < clicks:
                        if await table.click(stats):
                            done += 1
                            if done == clicks:
                                reached.append(time.perf_counter())
                        await asyncio.sleep(think * rng.uniform(0.5, 1.5))

                lag_from = len(bot.log())
                began, bot_cpu, own_cpu = time.perf_counter(), cpu_seconds(pid), time.process_time()
                await asyncio.gather(*(player(t) for t in tables))
                elapsed = (reached[0] if reached else time.perf_counter()) - began
                bot_cpu = cpu_seconds(pid) - bot_cpu
                own_cpu = time.process_time() - own_cpu
                peak = rss_kib(pid)
                log = bot.log()
                lags = [tuple(float(x) for x in found) for found in LAG.findall(log[lag_from:])]
            finished = sum(t.finished for t in tables)
            size = sum(os.path.getsize(p) for p in map(str, workdir.glob("load.db*")))  # noqa: ASYNC240
    answered = clicks  # counted up to the moment the target was reached (no stragglers)
    print(
        f"games: {games} live ({sum(t.members for t in tables)} between members, "
        f"{sum(t.size == '5x5' for t in tables)} 5x5); set up in {setup:.1f} s"
    )
    print(
        f"clicks: {answered} answered in {elapsed:.1f} s = {answered / elapsed:.0f} clicks/s"
        f" (users aimed at {rate:.0f}/s); failed: {len(stats['failed'])}"
    )
    for key in ("3x3", "5x5", "5x5 edit"):
        values = stats[key]
        if values:
            print(
                f"{key:>9} click -> answer: n={len(values)}"
                f" p50={percentile(values, 0.5) * 1e3:.1f} ms"
                f" p99={percentile(values, 0.99) * 1e3:.1f} ms max={max(values) * 1e3:.1f} ms"
            )
    over = sum(v > 3 for key in ("3x3", "5x5") for v in stats[key])
    print(f"clicks answered after 3 s: {over}")
    if lags:
        print(
            f"bot event-loop lag (10 ms timer, {len(lags)} one-second reports):"
            f" worst max {max(m for m, _, _ in lags):.1f} ms,"
            f" worst p99 {max(p for _, p, _ in lags):.1f} ms,"
            f" median p50 {statistics.median(q for _, _, q in lags):.1f} ms"
        )
    print(
        f"CPU during the clicks: bot {bot_cpu:.1f} s ({bot_cpu / elapsed:.0%} of a core),"
        f" emulator + load generator {own_cpu:.1f} s ({own_cpu / elapsed:.0%})"
    )
    print(
        f"bot RSS: idle {idle / 1024:.1f} MiB, with {games} games {busy / 1024:.1f} MiB "
        f"({(busy - idle) / games:.1f} KiB per game), after the run {peak / 1024:.1f} MiB"
    )
    print(
        f"database: {size / 1024:.0f} KiB for {finished} finished games "
        f"(+{games} live) = {size / max(1, finished + games) / 1024:.2f} KiB per game"
    )
    errors = [line for line in log.splitlines() if " ERROR " in line]
    print(f"bot log: {len(errors)} ERROR lines")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 games, 1,500 clicks")
    parser.add_argument("--games", type=int)
    parser.add_argument("--clicks", type=int)
    parser.add_argument(
        "--rate", type=float, default=350.0, help="clicks per second the users try to make"
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    games = args.games or (60 if args.quick else 500)
    clicks = args.clicks or (1_500 if args.quick else 10_000)
    asyncio.run(run(games, clicks, args.rate, args.seed))


if __name__ == "__main__":
    main()
