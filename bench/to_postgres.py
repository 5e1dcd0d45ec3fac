"""How long ``python -m bot.db.copy`` takes to move an SQLite database to PostgreSQL.

Run as ``python -m bench.to_postgres [games]`` (default 100,000) with the test extra installed
(it starts a throwaway PostgreSQL 16 from the pgserver wheel). Fills an SQLite file with
ended rated games over 200 servers, each with its accepted challenge, and the players'
rows, then copies it into an empty database and prints the copy's summary.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import tempfile
import time
from pathlib import Path

import pgserver

from bot.db.copy import copy_database, summary
from bot.games.queries import Store

GAME = (
    "INSERT INTO games (id, guild_id, channel_id, x_id, o_id, width, height, k, moves,"
    " move_no, status, result, winner_id, winner_mark, rated, created_at, updated_at, locale)"
    " VALUES (?, ?, 2000, ?, ?, 3, 3, 3, '0,3,1,4,2', 5, 'finished', 'win', ?, 'X', 1, ?, ?,"
    " 'en-US')"
)
CHALLENGE = (
    "INSERT INTO challenges (guild_id, channel_id, challenger_id, opponent_id, width, height,"
    " k, first, status, created_at, expires_at, game_id)"
    " VALUES (?, 2000, ?, ?, 3, 3, 3, 'me', 'accepted', ?, ?, ?)"
)
PLAYER = (
    "INSERT OR IGNORE INTO players (guild_id, user_id, rating, rated_games, wins, losses,"
    " draws, updated_at) VALUES (?, ?, 1500.0, 0, 0, 0, 0, ?)"
)


def fill(path: Path, games: int) -> None:
    with sqlite3.connect(path) as db:
        for i in range(1, games + 1):
            guild, x, o, at = 1000 + i % 200, 10 + i % 100, 200 + i % 100, 1.7e9 + i
            db.execute(GAME, (i, guild, x, o, x, at, at + 30.5))
            db.execute(CHALLENGE, (guild, x, o, at - 10, at + 50, i))
            db.execute(PLAYER, (guild, x, at))
            db.execute(PLAYER, (guild, o, at))
    db.close()


async def main(games: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tictactoe.db"
        await (await Store.open(path)).close()
        started = time.perf_counter()
        fill(path, games)
        size = path.stat().st_size / 1e6
        print(
            f"filled {path.name}: {games:,} games in {time.perf_counter() - started:.1f} s,"
            f" {size:.0f} MB"
        )
        server = pgserver.get_server(Path(folder) / "pg", cleanup_mode="delete")
        try:
            server.psql("CREATE DATABASE tictactoe;")
            print(summary(await copy_database(path, server.get_uri("tictactoe"))))
        finally:
            server.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="?", type=int, default=100_000)
    asyncio.run(main(parser.parse_args().games))
