"""How fast the game service plays moves on a real database.

    python -m bench.service                          # SQLite file (WAL), about 20 s
    python -m bench.service --database postgresql    # a throwaway PostgreSQL 16 (pgserver)
    python -m bench.service --database postgresql --database-url postgresql://...
    python -m bench.service --compare-engines        # SQLite and PostgreSQL, in turns

Measures ``GameService.move`` (load, check, one conditional write; plus the AI reply in
the process pool for bot games) on 3x3 boards: member games and bot games at every level,
one game at a time and with 100 games in flight at once (over four servers: a server has
at most 25 live games by default). Every figure comes from the same run, so the ratios
are the numbers to compare between machines. The first lines say which engine (and
version) it runs on.

It ends with the price of durability: member games played one at a time with the
store's default against every commit durable, in alternating rounds. SQLite's default is
``synchronous = NORMAL`` with FULL for the transaction that ends a game; PostgreSQL's is
``synchronous_commit = off`` with it on for that transaction; ``Store.open(...,
synchronous="FULL")`` makes every commit durable on either.

``--compare-engines`` plays member games only, one at a time and 100 in flight, in rounds
that alternate SQLite and PostgreSQL (a new database each), and prints each engine's
member moves per second, p50 and p99, and PostgreSQL's figures as ratios of SQLite's. The
PostgreSQL server's processes run beside this one on the same cores.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from bench.pg import (
    add_database_arguments,
    check_database_arguments,
    describe,
    fresh_database,
    postgres_server,
)
from bot.app import GameService
from bot.config import ServiceConfig
from bot.games.queries import Store
from bot.models import First, Game
from bot.tunables import SERVER_GAMES, Values
from engine.levels import LEVELS

# 100 games in flight need four servers: a server has at most 25 live games by default.
SERVERS = -(-100 // SERVER_GAMES.default)


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

    def guild(self) -> int:
        """The server of the next game (of ``SERVERS``, in turns), chosen after its channel."""
        return 1 + self.channel % SERVERS

    async def member_game(self) -> Game:
        a, b = self.rng.getrandbits(40) + 1, self.rng.getrandbits(40) + 1
        channel = self.next_channel()
        challenge = await self.service.challenges.create(
            self.guild(), channel, a, b, first=First.ME
        )
        return await self.service.challenges.accept(challenge.id, b)

    def bot_game_maker(self, level: str) -> Callable[[], Awaitable[Game]]:
        async def make() -> Game:
            player = self.rng.getrandbits(40) + 1
            channel = self.next_channel()
            return await self.service.start_bot_game(
                self.guild(), channel, player, level=level, first=First.ME
            )

        return make

    async def play_through(self, game: Game, latencies: list[float]) -> None:
        while game.is_live:
            player = game.current_player_id
            assert player is not None
            cell = self.rng.choice([c for c in range(9) if c not in game.moves])
            start = time.perf_counter()
            game = (await self.service.move(game.id, player, cell, game.move_no)).game
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


@dataclass
class Engine:
    """Where new stores come from: SQLite files in ``directory``, or new databases on the
    PostgreSQL server of ``server`` (its URL)."""

    name: str  # "sqlite" or "postgresql"
    directory: Path
    server: str | None = None

    @contextlib.asynccontextmanager
    async def store(self, synchronous: str = "NORMAL") -> AsyncIterator[Store]:
        """A store on a new, empty database, closed (and dropped, on PostgreSQL) on exit."""
        async with contextlib.AsyncExitStack() as stack:
            if self.name == "sqlite":
                target: str | Path = self.directory / f"bench-{uuid.uuid4().hex[:8]}.db"
            else:
                assert self.server is not None
                target = await stack.enter_async_context(fresh_database(self.server))
            store = await Store.open(target, synchronous=synchronous)
            stack.push_async_callback(store.close)
            yield store

    async def describe(self) -> str:
        return await describe(self.name, self.server)


async def main(engine: Engine) -> None:
    async with engine.store() as store:
        service = GameService(store, ServiceConfig(Values(ai_workers=1)))
        started = time.perf_counter()
        await service.start()
        print(f"game service benchmark: GameService.move on 3x3, {await engine.describe()}")
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
        writers = "one writer" if engine.name == "sqlite" else "a pool of connections"
        print(
            f"  100 in flight vs one at a time, member plays/s: "
            f"{member_many.rate / member.rate:.2f}x ({writers})"
        )
        await service.close()
    await durability(engine)


DURABILITY_LABELS = {
    "sqlite": ("FULL at game ends only", "FULL at every commit"),
    "postgresql": ("sync commit at game ends", "sync commit every commit"),
}


async def durability(engine: Engine, rounds: int = 3, moves: int = 1500) -> None:
    """Member plays/s with durable commits where a game ends only vs at every commit."""
    print("\ndurability: member vs member, one game at a time, alternating rounds")
    if engine.name == "postgresql":
        print("  (store default: synchronous_commit = off, on for the commit that ends a game)")
    rates: dict[str, list[float]] = {"NORMAL": [], "FULL": []}
    for _ in range(rounds):
        for level in ("NORMAL", "FULL"):
            async with engine.store(synchronous=level) as store:
                service = GameService(store, ServiceConfig(Values(ai_workers=1)))
                try:
                    bench = Bench(service)
                    await bench.sequential(bench.member_game, 200)  # warm-up
                    rates[level].append((await bench.sequential(bench.member_game, moves)).rate)
                finally:
                    await service.close()
    for level, label in zip(("NORMAL", "FULL"), DURABILITY_LABELS[engine.name], strict=True):
        figures = ", ".join(f"{r:,.0f}" for r in rates[level])
        print(f"  {label:<24} plays/s: {figures} (median {statistics.median(rates[level]):,.0f})")
    ratio = statistics.median(rates["FULL"]) / statistics.median(rates["NORMAL"])
    print(f"  every commit durable vs game ends only: {ratio:.2f}x the plays/s")


async def compare_engines(engines: list[Engine], rounds: int, moves: int) -> None:
    """Member games on each engine in alternating rounds (the order flips every round, so
    neither always runs second): one game at a time, then 100 in flight."""
    print("engines compared: GameService.move, member vs member on 3x3, a new database each round")
    for engine in engines:
        print(f"  {engine.name}: {await engine.describe()}")
    print(f"  {rounds} rounds, each {moves:,} moves one game at a time then 100 games in flight")
    one: dict[str, list[Figures]] = {engine.name: [] for engine in engines}
    many: dict[str, list[Figures]] = {engine.name: [] for engine in engines}
    for round_no in range(rounds):
        for engine in engines if round_no % 2 == 0 else engines[::-1]:
            async with engine.store() as store:
                service = GameService(store, ServiceConfig(Values(ai_workers=1)))
                try:
                    bench = Bench(service)
                    await bench.sequential(bench.member_game, min(300, moves))  # warm-up
                    one[engine.name].append(await bench.sequential(bench.member_game, moves))
                    many[engine.name].append(await bench.in_flight(bench.member_game, 100))
                finally:
                    await service.close()
    base, other = (engine.name for engine in engines)
    for title, runs in (("one game at a time", one), ("100 games in flight at once", many)):
        print(f"\n{title}")
        summary = {name: summarise(figures) for name, figures in runs.items()}
        for name, (rates, p50, p99) in summary.items():
            each = ", ".join(f"{rate:,.0f}" for rate in rates)
            print(
                f"  {name:<10} member moves/s {statistics.median(rates):>7,.0f} (rounds: {each})"
                f"  p50 {p50 * 1e3:6.2f} ms  p99 {p99 * 1e3:6.2f} ms"
            )
        (rates_a, p50_a, p99_a), (rates_b, p50_b, p99_b) = summary[base], summary[other]
        rate_ratio = statistics.median(rates_b) / statistics.median(rates_a)
        print(
            f"  {other} / {base}: moves/s {rate_ratio:.2f}x,"
            f" p50 {p50_b / p50_a:.2f}x, p99 {p99_b / p99_a:.2f}x"
        )


def summarise(runs: list[Figures]) -> tuple[list[float], float, float]:
    """Each round's moves/s, and p50 and p99 of every round's moves together."""
    pooled = Figures([latency for run in runs for latency in run.latencies], 1.0)
    return [run.rate for run in runs], pooled.pct(0.5), pooled.pct(0.99)


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        directory = Path(folder)
        server = None
        if args.database == "postgresql" or args.compare_engines:
            server = stack.enter_context(postgres_server(args.database_url))
        if args.compare_engines:
            engines = [Engine("sqlite", directory), Engine("postgresql", directory, server)]
            await compare_engines(engines, args.rounds, args.moves)
        else:
            await main(Engine(args.database, directory, server))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_database_arguments(parser)
    parser.add_argument(
        "--compare-engines",
        action="store_true",
        help="member games on SQLite and on PostgreSQL in alternating rounds (not --database)",
    )
    parser.add_argument("--rounds", type=int, default=6, help="rounds with --compare-engines")
    parser.add_argument(
        "--moves", type=int, default=2000, help="moves one at a time per round (--compare-engines)"
    )
    arguments = parser.parse_args()
    check_database_arguments(parser, arguments, both=arguments.compare_engines)
    asyncio.run(run(arguments))
