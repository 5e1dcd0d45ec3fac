"""How fast the game service plays moves on a real SQLite file.

Run as ``python bench/service.py``. Measures ``GameService.play`` (load, check, one
conditional write; plus the AI reply in the process pool for bot games) on 3x3 boards:
member games and bot games at every level, one game at a time and with 100 games in
flight at once. Every figure comes from the same run, so the ratios are the numbers to
compare between machines. Takes about a minute.

It ends with the price of durability: member games played one at a time with the
store's default (``synchronous = NORMAL``, and FULL for the transaction that ends a
game) against ``synchronous = FULL`` for every commit, in alternating rounds.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.models import First, Game
from bot.service import GameService, ServiceConfig
from bot.store import Store
from engine.levels import LEVELS

GUILD = 1


@dataclass
class Figures:
    """Latencies (seconds) of the play calls of one scenario, and its wall time."""

    latencies: list[float]
    wall: float

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.wall

    def pct(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def line(self, name: str) -> str:
        return (
            f"  {name:<28} {len(self.latencies):>6,} plays  {self.rate:>8,.0f} plays/s"
            f"  p50 {self.pct(0.5) * 1e3:7.2f} ms  p99 {self.pct(0.99) * 1e3:7.2f} ms"
        )


class Bench:
    def __init__(self, service: GameService) -> None:
        self.service = service
        self.channel = 0
        self.rng = random.Random(2024)

    def next_channel(self) -> int:
        self.channel += 1
        return self.channel

    async def member_game(self) -> Game:
        a, b = self.rng.getrandbits(40) + 1, self.rng.getrandbits(40) + 1
        challenge = await self.service.challenges.create(
            GUILD, self.next_channel(), a, b, first=First.ME
        )
        return await self.service.challenges.accept(challenge.id, b)

    def bot_game_maker(self, level: str) -> Callable[[], Awaitable[Game]]:
        async def make() -> Game:
            player = self.rng.getrandbits(40) + 1
            return await self.service.start_bot_game(
                GUILD, self.next_channel(), player, level=level, first=First.ME
            )

        return make

    async def play_through(self, game: Game, latencies: list[float]) -> None:
        while game.is_live:
            player = game.current_player_id
            assert player is not None
            cell = self.rng.choice([c for c in range(9) if c not in game.moves])
            start = time.perf_counter()
            game = await self.service.play(game.id, player, cell, game.move_no)
            latencies.append(time.perf_counter() - start)

    async def sequential(self, make: Callable[[], Awaitable[Game]], moves: int) -> Figures:
        latencies: list[float] = []
        while len(latencies) < moves:
            await self.play_through(await make(), latencies)
        return Figures(latencies, sum(latencies))

    async def in_flight(self, make: Callable[[], Awaitable[Game]], games: int) -> Figures:
        """``games`` games played at once, each move as soon as the last one returned."""
        created = [await make() for _ in range(games)]
        latencies: list[float] = []
        start = time.perf_counter()
        await asyncio.gather(*(self.play_through(game, latencies) for game in created))
        return Figures(latencies, time.perf_counter() - start)


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        store = await Store.open(Path(directory) / "bench.db")
        service = GameService(store, ServiceConfig(ai_workers=1))
        started = time.perf_counter()
        await service.start()
        print("game service benchmark: GameService.play on 3x3, real SQLite file (WAL)")
        print("  (in bot games each play includes the bot's reply, computed in the pool)")
        warm = time.perf_counter() - started
        print(f"  (process pool of 1 worker started and warmed up in {warm:.2f} s)\n")
        bench = Bench(service)
        await bench.sequential(bench.member_game, 300)  # warm-up: caches, page cache

        print("one game at a time")
        member = await bench.sequential(bench.member_game, 4000)
        print(member.line("member vs member"))
        bots: dict[str, Figures] = {}
        for level in LEVELS:
            bots[level] = await bench.sequential(bench.bot_game_maker(level), 600)
            print(bots[level].line(f"member vs bot ({level})"))

        print("\n100 games in flight at once")
        member_many = await bench.in_flight(bench.member_game, 100)
        print(member_many.line("member vs member"))
        bots_many: dict[str, Figures] = {}
        for level in LEVELS:
            bots_many[level] = await bench.in_flight(bench.bot_game_maker(level), 100)
            print(bots_many[level].line(f"member vs bot ({level})"))

        print("\nratios (same run)")
        target = "meets" if member.rate >= 1000 else "MISSES"
        print(f"  member plays/s, one at a time: {member.rate:,.0f} ({target} the 1,000/s target)")
        for level in LEVELS:
            print(
                f"  bot ({level}) vs member p50 latency: "
                f"{bots[level].pct(0.5) / member.pct(0.5):.1f}x one at a time, "
                f"{bots_many[level].pct(0.5) / member_many.pct(0.5):.1f}x with 100 in flight"
            )
        print(
            f"  100 in flight vs one at a time, member plays/s: "
            f"{member_many.rate / member.rate:.2f}x (one connection, one writer)"
        )
        await service.close()
        await store.close()
        await durability(Path(directory))


async def durability(directory: Path, rounds: int = 3, moves: int = 1500) -> None:
    """Member plays/s with FULL only where a game ends vs FULL at every commit."""
    print("\ndurability: member vs member, one game at a time, alternating rounds")
    rates: dict[str, list[float]] = {"NORMAL": [], "FULL": []}
    for round_no in range(rounds):
        for level in ("NORMAL", "FULL"):
            store = await Store.open(directory / f"sync-{level}-{round_no}.db", synchronous=level)
            service = GameService(store, ServiceConfig(ai_workers=1))
            try:
                bench = Bench(service)
                await bench.sequential(bench.member_game, 200)  # warm-up
                rates[level].append((await bench.sequential(bench.member_game, moves)).rate)
            finally:
                await service.close()
                await store.close()
    for level, label in (("NORMAL", "FULL at game ends only"), ("FULL", "FULL at every commit")):
        figures = ", ".join(f"{r:,.0f}" for r in rates[level])
        print(f"  {label:<24} plays/s: {figures} (median {statistics.median(rates[level]):,.0f})")
    ratio = statistics.median(rates["FULL"]) / statistics.median(rates["NORMAL"])
    print(f"  every commit FULL vs game ends only: {ratio:.2f}x the plays/s")


if __name__ == "__main__":
    asyncio.run(main())
