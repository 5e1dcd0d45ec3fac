"""Migrations: fresh databases, upgrades, failures that change nothing, newer schemas refused.

The database is inspected with plain ``sqlite3`` here: these tests check the file itself.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bot.challenges.queries import ChallengeQueries
from bot.db.migrate import DEFAULT_MIGRATIONS_DIR, split_statements
from bot.errors import StorageError
from bot.games.queries import Store

EXPECTED_TABLES = {"meta", "games", "challenges", "players", "bot_records"}
LATEST = len(list(DEFAULT_MIGRATIONS_DIR.glob("*.sql")))


def snapshot(path: Path) -> dict[str, Any]:
    """Everything a migration could change: version, schema and every row."""
    with sqlite3.connect(path) as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        schema = sorted(conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall())
        rows = {
            name: sorted(conn.execute(f'SELECT * FROM "{name}"').fetchall())
            for (kind, name, _sql) in schema
            if kind == "table"
        }
    conn.close()
    return {"version": version, "schema": schema, "rows": rows}


def migrations_copy(tmp_path: Path, extra: dict[str, str]) -> Path:
    """The real migrations plus ``extra`` files, in a fresh directory."""
    directory = tmp_path / "migrations"
    directory.mkdir()
    for file in DEFAULT_MIGRATIONS_DIR.glob("*.sql"):
        shutil.copy(file, directory / file.name)
    for name, text in extra.items():
        (directory / name).write_text(text)
    return directory


NEXT = f"{LATEST + 1:04d}"
GOOD_NEXT = """
-- a later migration, as the next developer would write it
ALTER TABLE players ADD COLUMN nickname TEXT DEFAULT 'none; really';
CREATE TABLE titles (guild_id INTEGER NOT NULL, user_id INTEGER NOT NULL, title TEXT);
CREATE TRIGGER players_title AFTER INSERT ON players BEGIN
    INSERT INTO titles VALUES (new.guild_id, new.user_id, 'rookie');
END;
INSERT INTO meta (key, value) VALUES ('upgraded', 'yes');
"""
BROKEN_NEXT = """
CREATE TABLE half_done (id INTEGER PRIMARY KEY);
INSERT INTO meta (key, value) VALUES ('half', 'done');
UPDATE players SET rating = 0;
ALTER TABLE no_such_table ADD COLUMN x INTEGER;
"""


async def test_fresh_database(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "bot.db"  # the directory is created
    store = await Store.open(path)
    try:
        assert store.schema_version == LATEST
        assert await store.integrity_check() == "ok"
        await store.set_meta("tree", "abc")
        assert await store.get_meta("tree") == "abc"
        await store.set_meta("tree", "def")
        assert await store.get_meta("tree") == "def"
        assert await store.get_meta("missing") is None
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert tables >= EXPECTED_TABLES
        assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


async def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    await (await Store.open(path)).close()
    before = snapshot(path)
    await (await Store.open(path)).close()
    assert snapshot(path) == before


async def test_upgrade_from_version_zero(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    sqlite3.connect(path).close()  # an empty database: user_version 0
    directory = migrations_copy(tmp_path, {f"{NEXT}_titles.sql": GOOD_NEXT})
    store = await Store.open(path, directory)
    assert store.schema_version == LATEST + 1
    assert await store.get_meta("upgraded") == "yes"
    await store.close()


async def test_upgrade_from_each_earlier_version_keeps_data(tmp_path: Path) -> None:
    # Bring a database to every version in turn, with data, then upgrade it to the end.
    directory = migrations_copy(tmp_path, {f"{NEXT}_titles.sql": GOOD_NEXT})
    for start in range(LATEST + 1):
        path = tmp_path / f"from_{start}.db"
        partial = tmp_path / f"partial_{start}"
        partial.mkdir()
        for file in sorted(directory.glob("*.sql"))[:start]:
            shutil.copy(file, partial / file.name)
        if start == 0:
            sqlite3.connect(path).close()
        else:
            store = await Store.open(path, partial)
            assert store.schema_version == start
            await store.set_meta("kept", str(start))
            await store.close()
        store = await Store.open(path, directory)
        assert store.schema_version == LATEST + 1
        assert await store.get_meta("kept") == (None if start == 0 else str(start))
        assert await store.integrity_check() == "ok"
        await store.close()
        with sqlite3.connect(path) as conn:
            columns = {r[1] for r in conn.execute("PRAGMA table_info(players)")}
        conn.close()
        assert "nickname" in columns


async def test_failing_migration_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    store = await Store.open(path)
    await store.set_meta("before", "1")
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO players (guild_id, user_id, rating, rated_games, wins, updated_at)"
            " VALUES (1, 2, 1620.5, 3, 3, 0)"
        )
    conn.close()
    before = snapshot(path)
    directory = migrations_copy(tmp_path, {f"{NEXT}_broken.sql": BROKEN_NEXT})
    with pytest.raises(StorageError, match=f"{NEXT}_broken.sql"):
        await Store.open(path, directory)
    assert snapshot(path) == before
    # ... and the database still opens with the migrations that work.
    store = await Store.open(path)
    assert store.schema_version == LATEST
    assert await store.integrity_check() == "ok"
    await store.close()


async def test_failing_first_migration_leaves_an_empty_database(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    directory = tmp_path / "bad"
    directory.mkdir()
    (directory / "0001_init.sql").write_text("CREATE TABLE a (x);\nCREATE TABLE a (y);\n")
    with pytest.raises(StorageError, match=r"0001_init\.sql"):
        await Store.open(path, directory)
    assert snapshot(path) == {"version": 0, "schema": [], "rows": {}}


async def test_newer_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE future (x)")
        conn.execute("INSERT INTO future VALUES (42)")
        conn.execute(f"PRAGMA user_version = {LATEST + 7}")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StorageError, match=rf"version {LATEST + 7}.*newer"):
        await Store.open(path)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["bot.db"]  # no WAL files either


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"0001_a.sql": "", "0001_b.sql": ""}, "share a number"),
        ({"0001_a.sql": "", "0003_c.sql": ""}, "without gaps"),
        ({"1_a.sql": ""}, "NNNN_description"),
        ({"0001_a.sql": "CREATE TABLE t (x"}, "0001_a.sql"),
    ],
)
async def test_bad_migration_directories(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    directory = tmp_path / "migrations"
    directory.mkdir()
    for name, text in files.items():
        (directory / name).write_text(text)
    with pytest.raises(StorageError, match=message):
        await Store.open(tmp_path / "bot.db", directory)


def test_the_default_migrations_dir_holds_the_migrations() -> None:
    """A checkout's top-level migrations/ (a wheel carries it as bot/migrations/: setup.py)."""
    checkout = Path(__file__).resolve().parents[2]
    assert checkout / "migrations" == DEFAULT_MIGRATIONS_DIR
    assert (DEFAULT_MIGRATIONS_DIR / "0001_init.sql").is_file()
    assert (DEFAULT_MIGRATIONS_DIR / "postgresql" / "0001_init.sql").is_file()


def test_split_statements() -> None:
    script = """
    -- a comment; with a semicolon
    CREATE TABLE t (x TEXT DEFAULT 'a;b');  /* block; comment */
    CREATE TRIGGER tr AFTER INSERT ON t BEGIN
        UPDATE t SET x = 'c;d';
        DELETE FROM t WHERE 0;
    END; INSERT INTO t VALUES ('e');
    -- trailing comment
    """
    statements = split_statements(script)
    assert len(statements) == 3
    assert statements[0].endswith("DEFAULT 'a;b');")
    assert statements[1].startswith("/* block; comment */")
    assert statements[1].rstrip().endswith("END;")
    assert statements[2] == "INSERT INTO t VALUES ('e');"
    with pytest.raises(ValueError, match="incomplete"):
        split_statements("CREATE TABLE t (x); SELECT 1")


async def test_fair_play_migration_gives_live_games_their_places(tmp_path: Path) -> None:
    """0003 on a database with live games and several pending challenges per challenger:
    every live game gets a server slot and its members their seats, and each
    challenger keeps only their newest pending challenge."""
    older = tmp_path / "older"
    older.mkdir()
    for file in sorted(DEFAULT_MIGRATIONS_DIR.glob("*.sql"))[:2]:
        shutil.copy(file, older / file.name)
    path = tmp_path / "bot.db"
    await (await Store.open(path, older)).close()
    game = (
        "INSERT INTO games (guild_id, channel_id, channel_slot, x_id, o_id, bot_level, width,"
        " height, k, status, result, created_at, updated_at)"
        " VALUES (?, ?, 0, ?, ?, ?, 3, 3, 3, ?, ?, 1, 1)"
    )
    challenge = (
        "INSERT INTO challenges (guild_id, channel_id, challenger_id, opponent_id, width,"
        " height, k, first, status, created_at, expires_at)"
        " VALUES (1, ?, ?, ?, 3, 3, 3, 'me', 'pending', 1, 99)"
    )
    with sqlite3.connect(path) as conn:
        conn.executemany(
            game,
            [
                (1, 10, 7, 8, None, "active", None),
                (1, 11, 8, None, "easy", "active", None),  # member 8's second live game
                (1, 12, 7, 9, None, "finished", "draw"),
                (2, 10, 7, None, "easy", "bot_to_move", None),
            ],
        )
        conn.executemany(challenge, [(20, 7, 8), (21, 7, 9), (22, 8, 9)])
    conn.close()
    await (await Store.open(path)).close()
    with sqlite3.connect(path) as conn:
        slots = conn.execute(
            "SELECT guild_id, guild_slot FROM games WHERE status IN ('active', 'bot_to_move')"
            " ORDER BY id"
        ).fetchall()
        seats = conn.execute(
            "SELECT guild_id, user_id, slot, game_id FROM live_seats ORDER BY game_id, user_id"
        ).fetchall()
        pending = conn.execute(
            "SELECT channel_id FROM challenges WHERE status = 'pending' ORDER BY id"
        ).fetchall()
    conn.close()
    assert slots == [(1, 0), (1, 1), (2, 0)]
    assert seats == [(1, 7, 0, 1), (1, 8, 0, 1), (1, 8, 1, 2), (2, 7, 0, 4)]
    assert pending == [(21,), (22,)]


def _at_version(tmp_path: Path, version: int) -> Path:
    """A copy of the first ``version`` migrations."""
    directory = tmp_path / f"up_to_{version}"
    directory.mkdir()
    for file in sorted(DEFAULT_MIGRATIONS_DIR.glob("*.sql"))[:version]:
        shutil.copy(file, directory / file.name)
    return directory


_GAME = (
    "INSERT INTO games (id, guild_id, channel_id, channel_slot, message_id, x_id, o_id,"
    " bot_level, width, height, k, moves, move_no, status, result, rated, created_at,"
    " updated_at, turn_deadline, rematch_of, guild_slot) VALUES"
    " (?, 7, 8, ?, ?, 11, 22, NULL, 3, 3, 3, ?, ?, ?, ?, 0, 1.5, 2.5, ?, ?, ?)"
)
_CHALLENGE = (
    "INSERT INTO challenges (id, guild_id, channel_id, message_id, challenger_id, opponent_id,"
    " width, height, k, first, status, created_at, expires_at, game_id, rematch_of)"
    " VALUES (?, 7, 8, ?, 11, 22, 3, 3, 3, 'me', ?, 1.0, 61.0, ?, ?)"
)


async def test_0006_makes_ids_never_reused_keeping_rows_and_foreign_keys(tmp_path: Path) -> None:
    """A database at version 5 with games that point at each other, and rows in every table
    that points at games: after 0006 every row is there with its id, the foreign keys
    still act (cascades, SET NULL), and the ids of deleted rows are never given again."""
    path = tmp_path / "bot.db"
    await (await Store.open(path, _at_version(tmp_path, 5))).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(_GAME, (1, None, 501, "0,4,8", 3, "finished", "win", None, None, None))
        conn.execute(_GAME, (2, None, 502, "", 0, "finished", "abandoned", None, 1, None))
        conn.execute(_GAME, (3, 0, 503, "4", 1, "active", None, 99.0, 2, 0))
        conn.execute(_CHALLENGE, (1, 601, "accepted", 3, 2))
        conn.execute(_CHALLENGE, (2, 602, "declined", None, 1))
        conn.execute("INSERT INTO live_seats VALUES (7, 11, 0, 3), (7, 22, 0, 3)")
        conn.execute("INSERT INTO turn_pings VALUES (3, 8, 701, 22, 1, 0)")
        conn.execute("INSERT INTO calloffs VALUES (3, 11, 1, 702, 5.0)")
        conn.execute("INSERT INTO reviews VALUES (1, '{}'), (2, '{}')")
    conn.close()
    before = snapshot(path)

    store = await Store.open(path)
    assert store.schema_version == LATEST
    assert await store.integrity_check() == "ok"
    await store.close()
    after = snapshot(path)
    for table, rows in before["rows"].items():  # later migrations add columns at the end
        assert [row[: len(rows[0])] for row in after["rows"][table]] == rows, table
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA foreign_keys = ON")
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'games'").fetchone()[0]
        assert "AUTOINCREMENT" in sql
        # The foreign keys still point at the rebuilt tables, and still act.
        conn.execute("DELETE FROM games WHERE id = 1")
        assert conn.execute("SELECT game_id FROM reviews").fetchall() == [(2,)]
        assert conn.execute("SELECT rematch_of FROM games WHERE id = 2").fetchone() == (None,)
        assert conn.execute("SELECT rematch_of FROM challenges WHERE id = 2").fetchone() == (None,)
        conn.execute("DELETE FROM challenges")
        conn.execute("DELETE FROM live_seats")
        conn.execute("DELETE FROM games")
        assert conn.execute("SELECT COUNT(*) FROM turn_pings").fetchone() == (0,)
        # Ids once given are never given again, even with the tables empty.
        conn.execute(_GAME, (None, None, 504, "", 0, "finished", "abandoned", None, None, None))
        conn.execute(_CHALLENGE, (None, 603, "expired", None, None))
        assert conn.execute("SELECT id FROM games").fetchall() == [(4,)]
        assert conn.execute("SELECT id FROM challenges").fetchall() == [(3,)]
    conn.close()


async def test_a_migration_that_breaks_a_foreign_key_is_rolled_back(tmp_path: Path) -> None:
    """Foreign keys are off while a migration runs, and checked before it commits."""
    path = tmp_path / "bot.db"
    directory = migrations_copy(
        tmp_path,
        {f"{NEXT}_orphans.sql": "INSERT INTO reviews (game_id, review) VALUES (12345, '{}');"},
    )
    await (await Store.open(path)).close()
    before = snapshot(path)
    with pytest.raises(StorageError, match="would point at nothing"):
        await Store.open(path, directory)
    assert snapshot(path) == before


async def test_0008_keeps_old_games_without_rating_changes_and_one_pending_rematch(
    tmp_path: Path,
) -> None:
    """Games that ended before 0008 have no rating change kept (their boards show none),
    and of two pending rematches of one game an older version let in, the older stays."""
    path = tmp_path / "bot.db"
    await (await Store.open(path, _at_version(tmp_path, 7))).close()
    with sqlite3.connect(path) as conn:
        conn.execute(_GAME, (1, None, 501, "0,4,8,1,2", 5, "finished", "win", None, None, None))
        conn.execute(_CHALLENGE, (1, 601, "pending", None, 1))
        conn.execute(
            "INSERT INTO challenges (id, guild_id, channel_id, message_id, challenger_id,"
            " opponent_id, width, height, k, first, status, created_at, expires_at, rematch_of)"
            " VALUES (2, 7, 8, 602, 22, 11, 3, 3, 3, 'me', 'pending', 1.0, 61.0, 1)"
        )
    conn.close()
    store = await Store.open(path)
    try:
        game = await store.get_game(1)
        assert game is not None and (game.x_rating, game.o_rating) == (None, None)
        pending = await ChallengeQueries(store.db).pending_rematch(1)
        assert pending is not None and pending.id == 1
        assert (await ChallengeQueries(store.db).get_challenge(2)).status.value == "expired"  # type: ignore[union-attr]
    finally:
        await store.close()
