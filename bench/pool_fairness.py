"""One server floods the search pool; how does another server's player fare?

Server A has 100 bot games whose players click again as soon as their reply came (1 ms
after a refusal); meanwhile server B's player clicks 10 times, 10 ms apart. Each search
holds the one worker for ``--search`` seconds (a thread sleeping: the queue is measured,
not the engine). Printed: B's refusals (the "busy" answer) and B's waits.

    python -m bench.pool_fairness [--search 0.05]
    cd OLD_CHECKOUT && PYTHONPATH=. python - < NEW/bench/pool_fairness.py  # before

The second line runs an older bot's pool (without per-server shares) for comparison
(from stdin, so that bench/engine.py does not hide the engine package).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import inspect
import time
from typing import Any

from bot.errors import Busy
from bot.games.pool import Cost, SearchPool

A, B = 1, 2
PER_SERVER = "server" in inspect.signature(SearchPool.promise).parameters


async def flood(search: float, games: int, clicks: int) -> tuple[int, int, list[float]]:
    """(B's refusals, A's refusals, B's waits in seconds)."""
    executor = concurrent.futures.ThreadPoolExecutor(1)
    pool: Any = SearchPool(1, executor)
    refused = {A: 0, B: 0}
    stop = asyncio.Event()

    async def click(game_id: int, server: int) -> float | None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                pool.promise(game_id, server) if PER_SERVER else pool.promise(game_id)
                break
            except Busy:
                refused[server] += 1
                if server == B:
                    return None
                await asyncio.sleep(0.001)
        asked = loop.time()
        where = {"server": server} if PER_SERVER else {"guild_id": server}
        await pool.run(Cost.BUDGETED, time.sleep, search, game_id=game_id, **where)
        return loop.time() - asked

    async def player(game_id: int) -> None:
        while not stop.is_set():
            await click(game_id, A)

    players = [asyncio.ensure_future(player(game_id)) for game_id in range(games)]
    waits: list[float] = []
    try:
        await asyncio.sleep(0.1)  # A's flood is at full load
        for _ in range(clicks):
            if (wait := await click(10**6, B)) is not None:
                waits.append(wait)
            await asyncio.sleep(0.01)
    finally:
        stop.set()
        await asyncio.gather(*players)
        await pool.close()
        executor.shutdown()
    return refused[B], refused[A], waits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--search", type=float, default=0.004, help="seconds per search")
    parser.add_argument("--games", type=int, default=100, help="server A's games")
    parser.add_argument("--clicks", type=int, default=10, help="server B's clicks")
    args = parser.parse_args()
    b_refused, a_refused, waits = asyncio.run(flood(args.search, args.games, args.clicks))
    shown = ", ".join(f"{wait * 1000:.0f}" for wait in waits) or "none answered"
    print(
        f"per-server shares: {'yes' if PER_SERVER else 'no'}; search {args.search * 1000:.0f} ms\n"
        f"server B refused on {b_refused} of {args.clicks} clicks; B's waits (ms): {shown}\n"
        f"server A refused {a_refused} times (its players click again 1 ms later)"
    )


if __name__ == "__main__":
    main()
