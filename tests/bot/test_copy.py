"""bot/db/copy.py: an SQLite database played through the service, copied into an empty
PostgreSQL database, reads and plays the same there; refusals write nothing.

The SQLite file is real and filled by the service (FakeClock); the target is a new
database of the session's PostgreSQL server (``fresh_pg_database``). Tables and rows are
compared with connections of the test's own (tests/pgtools.read_rows).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.app import GameService
from bot.db.copy import CopyRefused, copy_database, copy_order
from bot.db.migrate import DEFAULT_MIGRATIONS_DIR, find_migrations
from bot.errors import StorageError
from bot.games.queries import Store
from bot.games.token_queries import Token
from bot.models import Challenge, ChallengeStatus, First, Game, GameStatus
from bot.pings.queries import PingStore
from bot.pings.service import Due, Kind
from bot.privacy.queries import PrivacyStore
from tests.pgtools import read_rows

from .helpers import ALICE, BOB, CAROL, CHANNEL, GUILD, FakeClock, make_service, play_out

pytestmark = pytest.mark.postgresql

DAVE = 44
X_WINS = [0, 3, 1, 4, 2]
DRAW = [0, 4, 8, 2, 6, 3, 5, 7, 1]
OTHER_GUILD = GUILD + 1
ROOT = Path(__file__).resolve().parents[2]

LATEST = len(find_migrations(DEFAULT_MIGRATIONS_DIR))
"""The schema version a database has once every migration ran."""


@dataclass
class Played:
    """What the SQLite file holds, by id."""

    won: Game
    rematch: Game
    bot_game: Game
    bot_rematch: Game
    active: Game
    pending: Challenge
    other_guild: Game


def config(executor: concurrent.futures.Executor, clock: FakeClock, store: Store) -> GameService:
    # 3 x 3 replies and reviews inline; the default cooldown between challenges.
    return make_service(store, clock, executor, inline_cells=9, challenge_cooldown=60.0)


async def bot_plays_out(service: GameService, game: Game) -> Game:
    """Play the lowest free cell for the human until the game ends."""
    while game.status is GameStatus.ACTIVE:
        player = game.current_player_id
        assert player is not None
        cell = next(c for c in range(game.cells) if c not in game.moves)
        game = (await service.move(game.id, player, cell, game.move_no)).game
    return game


async def fill(service: GameService, store: Store) -> Played:
    """Every table gets rows: finished rated games, a drawn rematch, a bot game and its
    rematch, a live member game with its turn ping and a call-off proposal, a pending,
    a declined and an accepted challenge, settings with game channels, a cooldown, a
    blocked member, a stored review, a second server, a server the bot left, and the
    command fingerprint (the start recorded the bot alive)."""
    await service.guilds.change(GUILD, {"turn_timeout": 120.0}, allow_channel=CHANNEL)
    for channel in (CHANNEL + 1, CHANNEL + 2, CHANNEL + 3):
        await service.guilds.change(GUILD, {}, allow_channel=channel)
    challenge = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB, first=First.ME)
    won = await play_out(service, await service.challenges.accept(challenge.id, BOB), X_WINS)
    again = await service.rematch(won.id, BOB)  # exempt from the cooldown
    assert isinstance(again, Challenge)
    rematch = await play_out(service, await service.challenges.accept(again.id, ALICE), DRAW)
    bot_game = await service.start_bot_game(GUILD, CHANNEL + 1, CAROL, level="easy", first=First.ME)
    bot_game = await bot_plays_out(service, bot_game)
    bot_rematch = await service.rematch(bot_game.id, CAROL)
    assert isinstance(bot_rematch, Game)
    challenge = await service.challenges.create(GUILD, CHANNEL + 2, ALICE, CAROL, first=First.ME)
    active = await play_out(service, await service.challenges.accept(challenge.id, CAROL), [4, 0])
    claim = await service.pings.record(Due(active, Kind.PING, None), 9001)
    assert claim.won
    await service.guilds.set_turn_pings(GUILD, BOB, False)
    await service.pings.refused(active)  # as if its channel had refused the reminder
    await service.calloffs.propose(active.id, CAROL, GUILD)
    await service.calloffs.answer(active.id, ALICE, False, GUILD)  # a declined proposal
    await service.calloffs.propose(active.id, ALICE, GUILD)
    pending = await service.challenges.create(GUILD, CHANNEL + 3, BOB, CAROL)
    declined = await service.challenges.create(GUILD, CHANNEL, DAVE, BOB)
    await service.challenges.decline(declined.id, BOB)
    await service.guilds.set_challenges(GUILD, DAVE, False)
    await service.reviews.review(won.id, ALICE)
    other = await service.challenges.create(OTHER_GUILD, CHANNEL, BOB, ALICE, first=First.ME)
    other_guild = await play_out(service, await service.challenges.accept(other.id, ALICE), X_WINS)
    await store.set_meta("commands", "fingerprint-1")
    # A game outside servers' last token (bot/reach.py); issued "later" than any sweep
    # of the scenario's clock looks, so none forgets it.
    await service.tokens.put("game", active.id, Token("token-1", 4e9, user_only=True, followups=2))
    await service.upkeep.guild_left(OTHER_GUILD + 1)  # a server the bot was removed from
    assert rematch.status is GameStatus.FINISHED and rematch.rematch_of == won.id
    return Played(won, rematch, bot_game, bot_rematch, active, pending, other_guild)


@pytest.fixture
async def played(
    tmp_path: Path, executor: concurrent.futures.Executor
) -> tuple[Path, Played, FakeClock]:
    """A real SQLite file filled through the service, closed (as a stopped bot leaves it)."""
    path = tmp_path / "data" / "tictactoe.db"
    clock = FakeClock()
    store = await Store.open(path)
    service = config(executor, clock, store)
    await service.start()
    try:
        played = await fill(service, store)
    finally:
        await service.close()
        await store.close()
    return path, played, clock


async def views(service: GameService, store: Store, p: Played) -> dict[str, Any]:
    """What players and moderators see, read through the service."""
    games = [p.won, p.rematch, p.bot_game, p.bot_rematch, p.active, p.other_guild]
    return {
        "leaderboards": [await service.stats.leaderboard(g) for g in (GUILD, OTHER_GUILD)],
        "stats": [await service.stats.player_stats(GUILD, m) for m in (ALICE, BOB, CAROL, DAVE)],
        "history": [await service.stats.history(GUILD, m, 50) for m in (None, ALICE, CAROL)],
        "games": [await service.get_game(g.id) for g in games],
        "live": [await service.active_game(GUILD, CHANNEL + n) for n in range(4)],
        "pending": await service.challenges.get(p.pending.id),
        "settings": await service.guilds.get(GUILD),
        "dave_open": await service.guilds.accepts_challenges(GUILD, DAVE),
        "ping": await PingStore(store.db).get(p.active.id),
        "bob_notified": await service.guilds.turn_pings_of(GUILD, BOB),
        "review": await service.reviews.at_once(p.won.id),
        "member_data": await PrivacyStore(store.db).member_data(GUILD, ALICE),  # live games too
        "guild_data": await PrivacyStore(store.db).guild_data(GUILD),
        "meta": await store.get_meta("commands"),
    }


async def seen(
    target: str | Path, p: Played, clock: FakeClock, executor: concurrent.futures.Executor
) -> dict[str, Any]:
    store = await Store.open(target)
    try:
        return await views(config(executor, clock, store), store, p)
    finally:
        await store.close()


async def tables(path: Path) -> list[str]:
    rows = await read_rows(
        path, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"
    )
    return [name for (name,) in rows if not name.startswith("sqlite_")]


async def every_row(target: str | Path, table: str) -> list[tuple[Any, ...]]:
    rows = await read_rows(target, f"SELECT * FROM {table}")
    return sorted(rows, key=repr)


async def pg_count(url: str, table: str) -> int:
    ((n,),) = await read_rows(url, f"SELECT COUNT(*) FROM {table}")
    return int(n)


# -- the copy -------------------------------------------------------------------------------


async def test_a_copied_database_reads_and_plays_the_same_on_postgresql(
    played: tuple[Path, Played, FakeClock],
    fresh_pg_database: str,
    executor: concurrent.futures.Executor,
) -> None:
    path, p, clock = played
    before = await seen(path, p, clock, executor)
    report = await copy_database(path, fresh_pg_database)

    names = await tables(path)
    assert sorted(report.rows) == names  # every table, none left out
    assert report.schema_version == LATEST
    for table in names:
        assert report.rows[table] > 0, f"the scenario leaves {table} empty"
        lite, pg = await every_row(path, table), await every_row(fresh_pg_database, table)
        assert pg == lite, table
        assert [[type(v) for v in row] for row in pg] == [[type(v) for v in row] for row in lite]
        assert report.rows[table] == len(lite)
    order = list(report.rows)
    for child in ("challenges", "live_seats", "turn_pings", "calloffs", "reviews"):
        assert order.index("games") < order.index(child)

    after = await seen(fresh_pg_database, p, clock, executor)
    assert after == before
    assert before["pending"].status is ChallengeStatus.PENDING
    assert before["ping"] is not None and before["ping"].message_id == 9001
    assert before["bob_notified"] is False
    assert before["settings"].channels == tuple(CHANNEL + n for n in range(4))
    assert before["dave_open"] is False
    assert before["leaderboards"][0].total_players == 2  # ALICE and BOB; CAROL's not done

    store = await Store.open(fresh_pg_database)
    service = config(executor, clock, store)
    await service.start()
    try:
        # The live game goes on where it stood (X 4, O 0), its ping with it.
        ended = await play_out(service, p.active, [1, 2])
        assert ended.status is GameStatus.ACTIVE and ended.move_no == 4
        ended = await play_out(service, ended, [7])  # X: 4, 1, 7
        assert ended.status is GameStatus.FINISHED and ended.winner_id == ALICE
        assert await service.pings.stale() == [(p.active.id, CHANNEL + 2, 9001, GUILD)]
        board = await service.stats.leaderboard(GUILD)
        assert board.total_players == 3
        # New rows continue after the copied ids.
        ((games,),) = await read_rows(path, "SELECT MAX(id) FROM games")
        fresh = await service.start_bot_game(GUILD, CHANNEL + 2, BOB, level="easy", first=First.ME)
        assert fresh.id == games + 1
        ((challenges,),) = await read_rows(path, "SELECT MAX(id) FROM challenges")
        challenge = await service.challenges.create(GUILD, CHANNEL, CAROL, BOB)
        assert challenge.id == challenges + 1
    finally:
        await service.close()
        await store.close()


async def test_the_sqlite_file_is_left_as_it_was(
    played: tuple[Path, Played, FakeClock], fresh_pg_database: str
) -> None:
    path, _, _ = played
    before = {t: await every_row(path, t) for t in await tables(path)}
    await copy_database(path, fresh_pg_database)
    assert {t: await every_row(path, t) for t in await tables(path)} == before


async def test_a_failure_midway_rolls_the_whole_copy_back(
    played: tuple[Path, Played, FakeClock], fresh_pg_database: str
) -> None:
    """SQLite keeps a text in an INTEGER column; the copy names it and commits nothing."""
    path, _, _ = played
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE games SET message_id = 'not a number' WHERE id = 2")
    conn.close()
    names = await tables(path)
    with pytest.raises(StorageError, match="copying the table games failed"):
        await copy_database(path, fresh_pg_database)
    for table in names:  # the tables copied before games too
        assert await pg_count(fresh_pg_database, table) == 0, table
    with sqlite3.connect(path) as conn:  # fixed, the copy goes through at the next try
        conn.execute("UPDATE games SET message_id = 7 WHERE id = 2")
    conn.close()
    report = await copy_database(path, fresh_pg_database)
    assert report.rows["games"] == await pg_count(fresh_pg_database, "games") > 0


# -- refusals -------------------------------------------------------------------------------


async def test_a_target_with_rows_is_refused_and_left_alone(
    played: tuple[Path, Played, FakeClock], fresh_pg_database: str
) -> None:
    path, _, _ = played
    first = await copy_database(path, fresh_pg_database)
    with pytest.raises(CopyRefused, match=r"already holds rows \(in .*games"):
        await copy_database(path, fresh_pg_database)
    for table, rows in first.rows.items():
        assert await pg_count(fresh_pg_database, table) == rows


async def test_a_single_row_anywhere_in_the_target_is_refused(
    played: tuple[Path, Played, FakeClock], fresh_pg_database: str
) -> None:
    path, _, _ = played
    store = await Store.open(fresh_pg_database)
    await store.set_meta("commands", "another bot's")
    await store.close()
    with pytest.raises(CopyRefused, match=r"already holds rows \(in meta\)"):
        await copy_database(path, fresh_pg_database)
    assert await pg_count(fresh_pg_database, "games") == 0


async def test_a_file_not_the_bots_is_refused_before_anything_is_written(
    tmp_path: Path, fresh_pg_database: str
) -> None:
    text = tmp_path / "tictactoe.db"
    text.write_text("games,ratings\n1,1500\n")
    with pytest.raises(CopyRefused, match="is not an SQLite database"):
        await copy_database(text, fresh_pg_database)
    with pytest.raises(CopyRefused, match="no such file"):
        await copy_database(tmp_path / "missing.db", fresh_pg_database)
    foreign = tmp_path / "other.db"  # another program's database: not migrated into
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    conn.close()
    with pytest.raises(CopyRefused, match="is an SQLite database, but not the bot's"):
        await copy_database(foreign, fresh_pg_database)
    assert await read_rows(foreign, "SELECT name FROM sqlite_schema") == [("notes",)]
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    with pytest.raises(CopyRefused, match="is not a readable SQLite database"):
        await copy_database(broken, fresh_pg_database)
    assert text.read_text() == "games,ratings\n1,1500\n"
    assert not (tmp_path / "missing.db").exists()
    (migrated,) = await read_rows(fresh_pg_database, "SELECT to_regclass('games') IS NOT NULL")
    assert migrated == (False,)  # not even migrated


async def test_different_schema_versions_are_refused(
    played: tuple[Path, Played, FakeClock], fresh_pg_database: str, tmp_path: Path
) -> None:
    """A bot whose PostgreSQL migrations stop one short of its SQLite ones."""
    path, _, _ = played
    older = tmp_path / "migrations"
    shutil.copytree(DEFAULT_MIGRATIONS_DIR, older)
    find_migrations(older / "postgresql")[-1][1].unlink()
    with pytest.raises(CopyRefused, match=rf"schema version {LATEST} .* at {LATEST - 1}"):
        await copy_database(path, fresh_pg_database, migrations_dir=older)
    assert await pg_count(fresh_pg_database, "games") == 0


async def test_an_older_sqlite_file_is_migrated_first(
    tmp_path: Path, fresh_pg_database: str
) -> None:
    """A file a bot of schema 2 left behind: migrated to the newest schema, then copied."""
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        for number in (1, 2):
            (script,) = DEFAULT_MIGRATIONS_DIR.glob(f"000{number}_*.sql")
            conn.executescript(script.read_text())
        conn.execute(
            "INSERT INTO games (guild_id, channel_id, x_id, o_id, width, height, k, moves,"
            " move_no, status, result, winner_id, winner_mark, rated, created_at, updated_at)"
            " VALUES (1, 2, 11, 22, 3, 3, 3, '0,3,1,4,2', 5, 'finished', 'win', 11, 'X', 1,"
            " 1700000000, 1700000060.5)"
        )
        conn.execute("PRAGMA user_version = 2")
    conn.close()
    report = await copy_database(path, fresh_pg_database)
    assert report.schema_version == LATEST and report.rows["games"] == 1
    ((version,),) = await read_rows(path, "PRAGMA user_version")
    assert version == LATEST
    rows = await read_rows(fresh_pg_database, "SELECT created_at, updated_at, locale FROM games")
    assert rows == [(1700000000.0, 1700000060.5, None)]
    assert isinstance(rows[0][0], float)  # an integer in a REAL column arrives as a float


def test_tables_are_copied_after_the_tables_they_point_at() -> None:
    keys = [("live_seats", "games"), ("games", "games"), ("reviews", "games"), ("b", "a")]
    order = copy_order(["reviews", "live_seats", "games", "meta", "b", "a"], keys)
    assert order == ["a", "b", "games", "live_seats", "meta", "reviews"]


# -- the command line -----------------------------------------------------------------------


async def run_copy(*args: str, url: str | None = None) -> tuple[int, str, str]:
    """The command, with ``url`` as DATABASE_URL (the environment has none otherwise)."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    if url is not None:
        env["DATABASE_URL"] = url
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.db.copy",
        *args,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_the_command_copies_then_refuses_a_second_time(
    played: tuple[Path, Played, FakeClock], fresh_pg_database: str, tmp_path: Path
) -> None:
    path, _, _ = played
    status, out, err = await run_copy(str(path), url=fresh_pg_database)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith(f"copied {path} (schema {LATEST}) to postgresql://")
    counted = {name: int(n) for name, n in (line.split() for line in lines[1:-1])}
    names = await tables(path)
    assert sorted(counted) == names
    for table in names:
        assert counted[table] == await pg_count(fresh_pg_database, table)
    assert lines[-1].startswith(f"{sum(counted.values())} rows in {len(names)} tables in ")

    url_file = tmp_path / "url.txt"
    url_file.write_text(fresh_pg_database + "\n")
    status, out, err = await run_copy(str(path), "--database-url-file", str(url_file))
    assert (status, out) == (2, "")
    assert err.startswith("refused: ") and "already holds rows" in err
    assert len(err.splitlines()) == 1

    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("hello")
    status, _, err = await run_copy(str(not_sqlite), url=fresh_pg_database)
    assert status == 2 and err == f"refused: {not_sqlite} is not an SQLite database\n"

    unreachable = "postgresql://nobody:s3cr3t@/none?host=/nonexistent&password=other"
    status, _, err = await run_copy(str(path), url=unreachable)
    assert status == 1 and err.startswith("error: cannot connect to") and len(err.splitlines()) == 1
    assert "s3cr3t" not in err and "other" not in err, err

    # A URL on the command line is refused, and not repeated.
    status, out, err = await run_copy(str(path), unreachable, url=fresh_pg_database)
    assert (status, out) == (2, "") and "not on the command line" in err
    assert "s3cr3t" not in err and "nobody" not in err, err
    status, _, err = await run_copy(str(path))
    assert status == 2 and "set DATABASE_URL" in err


async def test_the_command_explains_itself() -> None:
    status, out, _ = await run_copy("--help")
    assert status == 0
    for words in ("Stop the bot", "migrated", "empty PostgreSQL database", "Exit status"):
        assert words in " ".join(out.split())
    status, _, err = await run_copy()
    assert status == 2 and "sqlite_file" in err
