"""How long an erasure holds the store's one connection (every server's clicks wait).

Run as ``python -m bench.erase [server games] [other games]``. Fills a database with
two servers of ended games (each game with its accepted challenge, members 100 to a
server), then times ``erase_guild`` on the first and ``erase_member`` of a member with
1/100 of the second's games. ``--no-fk-indexes`` drops migrations/0004_privacy.sql's
indexes first, to show what they are for.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from bot.games.queries import Store
from bot.privacy.queries import PrivacyStore

GAME = (
    "INSERT INTO games (guild_id, channel_id, x_id, o_id, width, height, k, status, result,"
    " created_at, updated_at) VALUES (?, ?, ?, ?, 3, 3, 3, 'abandoned', 'abandoned', 0, ?)"
)
CHALLENGE = (
    "INSERT INTO challenges (guild_id, channel_id, challenger_id, opponent_id, width, height,"
    " k, first, status, created_at, expires_at, game_id)"
    " VALUES (?, ?, ?, ?, 3, 3, 3, 'me', 'accepted', 0, 1, last_insert_rowid())"
)
FK_INDEXES = ("games_by_rematch_of", "challenges_by_game", "challenges_by_rematch_of")


def fill(path: Path, sizes: dict[int, int], fk_indexes: bool) -> None:
    with sqlite3.connect(path) as db:
        for guild, count in sizes.items():
            for i in range(count):
                players = (guild, i % 50, 10 + i % 100, 200 + i % 100)
                db.execute(GAME, (*players, i))
                db.execute(CHALLENGE, players)
        if not fk_indexes:
            for index in FK_INDEXES:
                db.execute(f"DROP INDEX {index}")
    db.close()


async def main(server: int, other: int, fk_indexes: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        await (await Store.open(path)).close()  # creates the schema
        fill(path, {1: server, 2: other}, fk_indexes)
        store = await Store.open(path)
        try:
            start = time.perf_counter()
            await PrivacyStore(store.db).erase_guild(1)
            guild = time.perf_counter() - start
            start = time.perf_counter()
            await PrivacyStore(store.db).erase_member(2, 10)
            member = time.perf_counter() - start
        finally:
            await store.close()
    print(
        f"{server:,} games erased among {server + other:,}"
        f" ({'with' if fk_indexes else 'without'} the foreign-key indexes):"
        f" erase_guild {guild * 1000:.0f} ms; erase_member ({other // 100:,} games)"
        f" {member * 1000:.1f} ms"
    )


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if not a.startswith("--")]
    sizes = (numbers + [2000, 8000][len(numbers) :])[:2]
    asyncio.run(main(sizes[0], sizes[1], "--no-fk-indexes" not in sys.argv))
