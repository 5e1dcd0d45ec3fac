"""The PostgreSQL migrations (migrations/postgresql/) against the SQLite ones: same numbers
and names, and at every version the same tables, columns, keys, constraints and indexes,
so that a schema version means the same thing on both engines; and 0003's backfill of a
database with data gives the same rows on both.

One throwaway PostgreSQL server (pgserver) serves the whole session; each test that
writes gets its own database in it. SQLite files are migrated by ``Store.open`` and read
with plain ``sqlite3``.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bot.db.migrate import DEFAULT_MIGRATIONS_DIR, find_migrations
from bot.db.pg_migrate import apply_pg_migrations as run_pg_migrations
from bot.errors import StorageError
from bot.games.queries import Store
from tests.pg import pg_schema, sqlite_schema, without_comments

if TYPE_CHECKING:
    import asyncpg

pytestmark = pytest.mark.postgresql

SQLITE_DIR = DEFAULT_MIGRATIONS_DIR
PG_DIR = DEFAULT_MIGRATIONS_DIR / "postgresql"


# -- the server (tests/conftest.py's, a new database per test) ------------------------------


@pytest.fixture
async def pg_conn(fresh_pg_database: str) -> AsyncIterator[asyncpg.Connection]:
    """A connection to a new, empty database of the session's server (dropped after)."""
    import asyncpg

    conn = await asyncpg.connect(fresh_pg_database)
    try:
        yield conn
    finally:
        await conn.close()


async def apply_pg_migrations(
    conn: asyncpg.Connection, directory: Path, *, up_to: int | None = None
) -> int:
    """The store's runner, given the migrations of ``directory`` up to version ``up_to``."""
    migrations = [(n, f) for n, f in find_migrations(directory) if up_to is None or n <= up_to]
    return await run_pg_migrations(conn, migrations)


async def sqlite_at(path: Path, version: int | None = None) -> None:
    """Migrate the SQLite database ``path`` (created if missing) with ``Store.open`` to
    ``version``, or to the newest."""
    directory = None
    if version is not None:
        directory = path.parent / f"migrations_{version}"
        directory.mkdir()
        for _number, file in find_migrations(SQLITE_DIR)[:version]:
            shutil.copy(file, directory / file.name)
    store = await Store.open(path, directory)
    assert store.schema_version == (version or len(find_migrations(SQLITE_DIR)))
    await store.close()


# -- the tests -------------------------------------------------------------------------------


def test_both_folders_hold_the_same_migrations() -> None:
    sqlite_names = [(n, path.name) for n, path in find_migrations(SQLITE_DIR)]
    pg_names = [(n, path.name) for n, path in find_migrations(PG_DIR)]
    assert sqlite_names == pg_names
    assert len(pg_names) >= 5


async def test_each_version_is_the_same_schema(pg_conn: asyncpg.Connection, tmp_path: Path) -> None:
    """At every version, not only the last (a later migration must not hide an earlier
    file's difference): the same tables, columns in the same order with the same
    nullability and defaults, primary keys, indexes (names, columns, unique, partial),
    foreign keys and number of CHECK constraints per table."""
    path = tmp_path / "bot.db"
    for version in range(1, len(find_migrations(SQLITE_DIR)) + 1):
        await sqlite_at(path, version)
        lite = sqlite_schema(path)
        assert await apply_pg_migrations(pg_conn, PG_DIR, up_to=version) == version
        pg = await pg_schema(pg_conn)

        assert sorted(pg.columns) == sorted(lite.columns), version
        for table, columns in lite.columns.items():
            assert [(c.name, c.not_null, c.default) for c in pg.columns[table]] == [
                (c.name, c.not_null, c.default) for c in columns
            ], (version, table)
        assert pg.primary_keys == lite.primary_keys, version
        assert pg.indexes == lite.indexes, version
        assert pg.foreign_keys == lite.foreign_keys, version
        assert pg.checks == lite.checks, version


# SQLite's INTEGER is 64 bits; PostgreSQL's is 32. The rule: a column that holds an id (a
# Discord snowflake, or a games/challenges row id) is BIGINT: those named ``id`` or
# ``*_id``, and the two that hold one under another name (``rematch_of``: a game's id;
# cooldowns' ``target``: the challenged member, or 0). Every other INTEGER (counts, sizes,
# slots, move numbers, 0/1 flags) stays INTEGER. REAL is DOUBLE PRECISION (PostgreSQL's
# REAL is 4 bytes: Unix times would step by 128 s), TEXT is TEXT.
ID_COLUMNS_NAMED_OTHERWISE = {"rematch_of", "target"}
# Row ids the database assigns: identities, BY DEFAULT so that copied rows keep theirs.
IDENTITIES = {("challenges", "id"), ("games", "id")}


def _holds_an_id(column: str) -> bool:
    return column == "id" or column.endswith("_id") or column in ID_COLUMNS_NAMED_OTHERWISE


async def test_column_types_follow_the_rule(pg_conn: asyncpg.Connection, tmp_path: Path) -> None:
    await sqlite_at(tmp_path / "bot.db")
    lite = sqlite_schema(tmp_path / "bot.db")
    await apply_pg_migrations(pg_conn, PG_DIR)
    pg = await pg_schema(pg_conn)

    expected_types: dict[tuple[str, str], str] = {}
    for table, columns in lite.columns.items():
        for column in columns:
            if column.type == "INTEGER":
                wanted = "bigint" if _holds_an_id(column.name) else "integer"
            else:
                wanted = {"REAL": "double precision", "TEXT": "text"}[column.type]
            expected_types[table, column.name] = wanted
    actual_types = {(t, c.name): c.type for t, columns in pg.columns.items() for c in columns}
    assert actual_types == expected_types
    # Every foreign key joins an id column to an id column.
    for table, column, target, to, _on_delete in lite.foreign_keys:
        assert actual_types[table, column] == actual_types[target, to] == "bigint"

    identities = await pg_conn.fetch(
        "SELECT table_name, column_name, identity_generation FROM information_schema.columns"
        " WHERE table_schema = 'public' AND is_identity = 'YES'"
    )
    assert {(r["table_name"], r["column_name"]) for r in identities} == IDENTITIES
    assert {r["identity_generation"] for r in identities} == {"BY DEFAULT"}


# -- 0003 on a database with data ------------------------------------------------------------

GUILD_A = 1_100_000_000_000_000_001  # snowflake-sized: more than 32 bits
GUILD_B = 1_100_000_000_000_000_002
U7, U8, U9 = (1_200_000_000_000_000_000 + n for n in (7, 8, 9))
T = 1_700_000_000.123456  # a float4 would store 1700000000.0

GAME_COLUMNS = (
    "guild_id, channel_id, channel_slot, x_id, o_id, bot_level, width, height, k,"
    " status, result, created_at, updated_at"
)
GAMES = [
    (GUILD_A, 10, 0, U7, U8, None, 3, 3, 3, "active", None, T, T),
    (GUILD_A, 11, 0, U8, None, "easy", 3, 3, 3, "active", None, T, T),  # U8's second
    (GUILD_A, 12, None, U7, U9, None, 3, 3, 3, "finished", "draw", T, T),  # ended: no place
    (GUILD_B, 10, 0, None, U7, "hard", 4, 4, 3, "bot_to_move", None, T, T),  # U7 plays O
    (GUILD_A, 13, 0, U9, U7, None, 5, 5, 4, "active", None, T, T + 1),  # U7's second in A
    (GUILD_A, 10, None, U8, U9, None, 3, 3, 3, "abandoned", "abandoned", T, T),
]
CHALLENGE_COLUMNS = (
    "guild_id, channel_id, challenger_id, opponent_id, width, height, k, first, status,"
    " created_at, expires_at"
)
CHALLENGES = [
    (GUILD_A, 20, U7, U8, 3, 3, 3, "me", "pending", T, T + 60),  # older duplicate: expires
    (GUILD_A, 21, U7, U9, 3, 3, 3, "me", "pending", T, T + 60),
    (GUILD_A, 22, U8, U9, 3, 3, 3, "random", "pending", T, T + 60),
    (GUILD_B, 20, U7, U8, 3, 3, 3, "opponent", "pending", T, T + 60),  # another server
    (GUILD_A, 23, U9, U7, 3, 3, 3, "me", "declined", T, T + 60),
]
RESULTS = {
    "games": "SELECT id, guild_slot, turn_seconds, locale, created_at, updated_at"
    " FROM games ORDER BY id",
    "seats": "SELECT guild_id, user_id, slot, game_id FROM live_seats"
    " ORDER BY guild_id, user_id, slot",
    "challenges": "SELECT id, status, pinged, locale FROM challenges ORDER BY id",
}


def _insert(table: str, columns: str, count: int, placeholder: str) -> str:
    marks = ", ".join(placeholder.format(n=n) for n in range(1, count + 1))
    return f"INSERT INTO {table} ({columns}) VALUES ({marks})"


async def test_fair_play_backfill_gives_the_same_rows(
    pg_conn: asyncpg.Connection, tmp_path: Path
) -> None:
    """Both engines at version 2 get the same live games and pending challenges; after
    0003-0005 they hold the same places, seats and challenge statuses (and the right
    ones), with snowflake-sized ids and sub-second times intact."""
    path = tmp_path / "bot.db"
    await sqlite_at(path, 2)
    with sqlite3.connect(path) as lite:
        lite.executemany(_insert("games", GAME_COLUMNS, len(GAMES[0]), "?"), GAMES)
        lite.executemany(
            _insert("challenges", CHALLENGE_COLUMNS, len(CHALLENGES[0]), "?"), CHALLENGES
        )
    lite.close()
    await sqlite_at(path)
    with sqlite3.connect(path) as lite:
        sqlite_rows = {name: lite.execute(sql).fetchall() for name, sql in RESULTS.items()}
    lite.close()

    assert await apply_pg_migrations(pg_conn, PG_DIR, up_to=2) == 2
    await pg_conn.executemany(_insert("games", GAME_COLUMNS, len(GAMES[0]), "${n}"), GAMES)
    await pg_conn.executemany(
        _insert("challenges", CHALLENGE_COLUMNS, len(CHALLENGES[0]), "${n}"), CHALLENGES
    )
    assert await apply_pg_migrations(pg_conn, PG_DIR) == len(find_migrations(PG_DIR))
    pg_rows = {
        name: [tuple(row) for row in await pg_conn.fetch(sql)] for name, sql in RESULTS.items()
    }

    assert pg_rows == sqlite_rows
    games = pg_rows["games"]
    assert [(game_id, slot) for game_id, slot, *_ in games] == [
        (1, 0), (2, 1), (3, None), (4, 0), (5, 2), (6, None)
    ]  # fmt: skip
    assert {(seconds, locale) for _id, _slot, seconds, locale, *_ in games} == {(None, None)}
    assert games[4][4:] == (T, T + 1)
    assert pg_rows["seats"] == [
        (GUILD_A, U7, 0, 1), (GUILD_A, U7, 1, 5),
        (GUILD_A, U8, 0, 1), (GUILD_A, U8, 1, 2),
        (GUILD_A, U9, 0, 5),
        (GUILD_B, U7, 0, 4),
    ]  # fmt: skip
    assert pg_rows["challenges"] == [
        (1, "expired", 1, None),
        (2, "pending", 1, None),
        (3, "pending", 1, None),
        (4, "pending", 1, None),
        (5, "declined", 1, None),
    ]
    versions = await pg_conn.fetch("SELECT version, name FROM schema_migrations ORDER BY version")
    assert [tuple(row) for row in versions] == [
        (n, path.name) for n, path in find_migrations(PG_DIR)
    ]


async def test_a_failing_migration_leaves_its_version_undone(
    pg_conn: asyncpg.Connection, tmp_path: Path
) -> None:
    """A file that fails halfway rolls back alone, as the runner promises: the statements
    before the error are undone and no version is recorded for it."""
    directory = tmp_path / "migrations"
    directory.mkdir()
    for _number, file in find_migrations(PG_DIR)[:2]:
        shutil.copy(file, directory / file.name)
    (directory / "0003_broken.sql").write_text(
        "CREATE TABLE half_done (id BIGINT PRIMARY KEY);\n"
        "INSERT INTO meta (key, value) VALUES ('half', 'done');\n"
        "ALTER TABLE no_such_table ADD COLUMN x INTEGER;\n"
    )
    with pytest.raises(StorageError, match=r"0003_broken\.sql failed and was rolled back"):
        await apply_pg_migrations(pg_conn, directory)
    assert await pg_conn.fetchval("SELECT MAX(version) FROM schema_migrations") == 2
    assert await pg_conn.fetchval("SELECT to_regclass('half_done')") is None
    assert await pg_conn.fetchval("SELECT count(*) FROM meta") == 0


def test_migration_files_are_plain_scripts() -> None:
    """The runner executes each file in its own transaction: a file must not end or open
    one itself, nor create the runner's table."""
    for _number, path in find_migrations(PG_DIR):
        text = without_comments(path.read_text(encoding="utf-8")).upper()
        for word in ("BEGIN", "COMMIT", "ROLLBACK", "SCHEMA_MIGRATIONS"):
            assert not re.search(rf"\b{word}\b", text), (path.name, word)
