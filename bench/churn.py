"""Database size per finished game over a long life of churn: does growth stay bounded?

Run as ``python -m bench.churn [--games 100000] [--every 10000] [--database ...]``. Plays
games through the service on a fake clock (two minutes apart, so 100,000 games span
139 days: past every pruning window) in one server of 200 members: each game is a
challenge, accepted, a move each, a forfeit (rated) and a stored review; every other game a
declined challenge too, and a bot game stopped at once (an abandoned game: the
"permanent row every two interactions" of a bot game and /tictactoe-stop); every fifth a
call-off proposal that the next move makes stale. Cooldowns are claimed as members
would. The sweep's pruning (``Upkeep.prune``) runs every minute of the fake clock.

The same games are played twice in one invocation: without pruning (the baseline, as
the bot was before it pruned) and with it; with ``--history-days`` a third time with
HISTORY_DAYS set. At every ``--every`` games it prints the database's size in use per
ended game (SQLite: pages in use, after a checkpoint, free pages left out: they are
reused; PostgreSQL: ``pg_database_size`` after a VACUUM) and that figure as a ratio to
the baseline's, and, at the end, each run's last figure as a ratio to its first: 1.0 is
flat.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import tempfile
import time
from pathlib import Path

from bench.pg import (
    add_database_arguments,
    check_database_arguments,
    database_size,
    describe,
    fresh_database,
    postgres_server,
    read_rows,
)
from bot.app import GameService
from bot.config import ServiceConfig
from bot.games.queries import Store
from bot.models import First
from bot.pings.calloff_queries import CallOffStore
from bot.stats.review_queries import ReviewStore
from bot.tunables import Values

GUILD = 1 << 22
MEMBERS = 200
CHANNELS = 20
STEP = 120.0
"""Seconds of the fake clock between two games."""
REVIEW = json.dumps(
    {"moves": [{"cell": c, "value": 0, "best": [c, 8 - c], "mistake": None} for c in range(5)]}
)
"""A stored review's size, as the engine's Review of a short 3x3 game is in JSON."""


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


async def size_in_use(store: Store, target: str | Path) -> int:
    """Bytes the data takes: SQLite's pages in use; PostgreSQL's database after VACUUM."""
    if isinstance(target, Path):
        await read_rows(target, "PRAGMA wal_checkpoint(TRUNCATE)")
        ((pages,),) = await read_rows(target, "PRAGMA page_count")
        ((free,),) = await read_rows(target, "PRAGMA freelist_count")
        ((size,),) = await read_rows(target, "PRAGMA page_size")
        return int((pages - free) * size)
    await read_rows(target, "VACUUM")
    return await database_size(target)


async def play(
    target: str | Path, args: argparse.Namespace, *, prune: bool, history_days: float | None
) -> list[tuple[int, float]]:
    """Play ``args.games`` games; (ended games, bytes per kept ended game) every
    ``args.every`` games."""
    games, every = args.games, args.every
    store = await Store.open(target)
    clock = Clock()
    numbers = Values(
        challenge_cooldown=60.0, games_per_member=5, server_games=100, history_days=history_days
    )
    config = ServiceConfig(numbers, inline_cells=9)
    service = GameService(store, config, clock=clock)
    rng = random.Random(23)
    figures: list[tuple[int, float]] = []
    ended = 0
    pruned_at = clock.now
    await service.start()
    try:
        for n in range(1, games + 1):
            clock.now += STEP
            x, o = rng.sample(range(1, MEMBERS + 1), 2)
            channel = n % CHANNELS
            challenge = await service.challenges.create(GUILD, channel, x, o, first=First.ME)
            game = await service.challenges.accept(challenge.id, o)
            if n % 5 == 0:  # made stale by the move that follows
                await CallOffStore(store.db).propose(game.id, x, 0, clock.now)
            game = (await service.move(game.id, x, 4, 0)).game
            game = (await service.move(game.id, o, 0, 1)).game  # both moved: the forfeit is rated
            await service.endings.forfeit(game.id, o)
            await ReviewStore(store.db).put(game.id, REVIEW)
            ended += 1
            if n % 2 == 0:
                declined = await service.challenges.create(GUILD, channel, o, x)
                await service.challenges.decline(declined.id, x)
                await service.start_bot_game(GUILD, channel, x, level="easy", first=First.ME)
                await service.endings.stop(GUILD, channel, x, is_moderator=False)
                ended += 1
            if prune and clock.now - pruned_at >= 60.0:
                await service.upkeep.prune(lambda _guild: True)
                pruned_at = clock.now
            if n % every == 0:
                kept = ended if history_days is None else await count_ended(target)
                figures.append((ended, await size_in_use(store, target) / max(1, kept)))
    finally:
        await service.close()
        await store.close()
    return figures


async def count_ended(target: str | Path) -> int:
    ((n,),) = await read_rows(target, "SELECT COUNT(*) FROM games")
    return int(n)


async def run(args: argparse.Namespace) -> None:
    runs: list[tuple[str, bool, float | None]] = [("no pruning", False, None)]
    runs.append(("pruned", True, None))
    if args.history_days is not None:
        runs.append((f"HISTORY_DAYS={args.history_days:g}", True, args.history_days))
    results: dict[str, list[tuple[int, float]]] = {}
    with contextlib.ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory(dir=args.folder))
        server = None
        if args.database == "postgresql":
            server = stack.enter_context(postgres_server(args.database_url))
        print(await describe(args.database, server))
        for name, prune, history in runs:
            started = time.perf_counter()
            async with contextlib.AsyncExitStack() as databases:
                target: str | Path = Path(folder) / f"run{len(results)}.db"
                if server is not None:
                    target = await databases.enter_async_context(fresh_database(server))
                figures = await play(target, args, prune=prune, history_days=history)
            results[name] = figures
            print(f"  {name}: {args.games} games in {time.perf_counter() - started:.0f} s")
    base, pruned = results["no pruning"], results["pruned"]
    names = list(results)
    header = "  ".join(f"{name + ' B/game':>24}" for name in names)
    print(f"{'ended games':>11}  {header}  pruned / no pruning")
    for i, (ended, _) in enumerate(base):
        cells = "  ".join(f"{results[name][i][1]:>24.0f}" for name in names)
        print(f"{ended:>11}  {cells}  {pruned[i][1] / base[i][1]:>19.2f}")
    for name in names:
        first, last = results[name][0][1], results[name][-1][1]
        print(f"{name}: bytes per ended game, last / first: {last / first:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--every", type=int, default=10_000)
    parser.add_argument("--history-days", type=float, default=None, metavar="DAYS")
    parser.add_argument(
        "--folder", default=None, help="where the SQLite files go (default: the temp folder)"
    )
    add_database_arguments(parser)
    args = parser.parse_args()
    check_database_arguments(parser, args)
    if not 0 < args.every <= args.games:
        parser.error(f"--every must be from 1 to --games ({args.games:,}), not {args.every:,}")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
