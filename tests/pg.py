"""A throwaway PostgreSQL server for tests (pgserver), the migrations applied to it, and
schemas of both engines read as comparable data.

``pgserver`` and ``asyncpg`` are imported where they are used, so that importing this
module needs neither, and a caller can set ``XDG_RUNTIME_DIR`` first (pgserver reads it,
through platformdirs, when it is imported).
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bot.store.migrate import find_migrations

if TYPE_CHECKING:
    import asyncpg

__all__ = [
    "MIGRATIONS_LOCK",
    "RUNNER_TABLE",
    "Column",
    "Index",
    "Schema",
    "apply_pg_migrations",
    "pg_schema",
    "sqlite_schema",
    "start_pg_server",
    "stop_pg_server",
    "without_comments",
]

# The advisory lock key migrations take: negative, as app-wide keys are (guild ids are
# positive).
MIGRATIONS_LOCK = -1

RUNNER_TABLE = "schema_migrations"  # the runner's own table, not part of the schema
_CREATE_VERSIONS = f"""
CREATE TABLE IF NOT EXISTS {RUNNER_TABLE} (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at DOUBLE PRECISION NOT NULL
)
"""


def start_pg_server(path: Path) -> str:
    """Initialise a PostgreSQL cluster in ``path`` (created if missing; its parent must
    exist), start it listening on a unix socket only, and return its URI
    (``postgresql://postgres:@/postgres?host=<socket dir>``, which asyncpg accepts).

    As root, pgserver runs the server as a ``pgserver`` system user it creates. Stop it
    with ``stop_pg_server(path)``; otherwise it is stopped, and ``path`` deleted, when the
    interpreter exits.
    """
    import pgserver

    return pgserver.get_server(path, cleanup_mode="delete").get_uri()


def stop_pg_server(path: Path) -> None:
    """Stop the server ``start_pg_server(path)`` started and delete its directory."""
    import pgserver

    pgserver.get_server(path, cleanup_mode="delete").cleanup()


async def apply_pg_migrations(
    conn: asyncpg.Connection, directory: Path, *, up_to: int | None = None
) -> int:
    """Apply the migrations of ``directory`` (``NNNN_name.sql``) that the database has not
    had, up to version ``up_to`` (default: all), in order; the version reached.

    Each file runs as one script in its own transaction, which first takes the migrations'
    advisory lock and reads the version again (another process may have migrated
    meanwhile), and records the version in ``schema_migrations`` (created if missing). A
    failing file rolls back alone, leaving the versions before it applied.
    """
    reached = 0
    for version, path in find_migrations(directory):
        if up_to is not None and version > up_to:
            break
        script = await asyncio.to_thread(path.read_text, encoding="utf-8")
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATIONS_LOCK)
            await conn.execute(_CREATE_VERSIONS)
            done = await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")
            reached = max(reached, done)
            if done < version:
                await conn.execute(script)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                    version,
                    path.name,
                    time.time(),
                )
                reached = version
    return reached


# -- schemas as data -------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # as declared (SQLite) or data_type (PostgreSQL)
    not_null: bool  # primary key columns count as NOT NULL on both
    default: str | None  # without PostgreSQL's "::type" cast


@dataclass(frozen=True)
class Index:
    table: str
    columns: tuple[tuple[str, bool], ...]  # (column, descending)
    unique: bool
    partial: bool


@dataclass
class Schema:
    columns: dict[str, list[Column]]  # per table, in column order
    primary_keys: dict[str, tuple[str, ...]]
    indexes: dict[str, Index]  # CREATE INDEX ones, by name (no primary keys)
    foreign_keys: set[tuple[str, str, str, str, str]]  # table, column, to table, to, on delete
    checks: dict[str, int]  # number of CHECK constraints per table


def without_comments(sql: str) -> str:
    """``sql`` without its ``--`` comments (none of ours has ``--`` inside a literal)."""
    return re.sub(r"--[^\n]*", "", sql)


def sqlite_schema(path: Path) -> Schema:
    """The schema of the SQLite database ``path``, read with plain ``sqlite3``."""
    with sqlite3.connect(path) as conn:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        schema = Schema({}, {}, {}, set(), {})
        for table in tables:
            info = conn.execute(
                'SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)'
                " ORDER BY cid",
                (table,),
            ).fetchall()
            schema.columns[table] = [
                Column(name, kind, bool(not_null or pk), default)
                for name, kind, not_null, default, pk in info
            ]
            schema.primary_keys[table] = tuple(
                name for name, *_, pk in sorted(info, key=lambda row: row[4]) if pk
            )
            for name, unique, origin, partial in conn.execute(
                'SELECT name, "unique", origin, partial FROM pragma_index_list(?)', (table,)
            ):
                if origin != "c":
                    continue  # a primary key's automatic index
                columns = conn.execute(
                    'SELECT name, "desc" FROM pragma_index_xinfo(?) WHERE key ORDER BY seqno',
                    (name,),
                ).fetchall()
                schema.indexes[name] = Index(
                    table,
                    tuple((col, bool(desc)) for col, desc in columns),
                    bool(unique),
                    bool(partial),
                )
            for _id, _seq, target, source, to, _update, on_delete, _match in conn.execute(
                "SELECT * FROM pragma_foreign_key_list(?)", (table,)
            ):
                schema.foreign_keys.add((table, source, target, to, on_delete))
            (sql,) = conn.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone()
            schema.checks[table] = len(re.findall(r"\bCHECK\s*\(", without_comments(sql)))
    conn.close()
    return schema


_ON_DELETE = {
    "a": "NO ACTION",
    "r": "RESTRICT",
    "c": "CASCADE",
    "n": "SET NULL",
    "d": "SET DEFAULT",
}


async def pg_schema(conn: asyncpg.Connection) -> Schema:
    """The schema of ``conn``'s database (its ``public`` schema), without the runner's
    ``schema_migrations``; types are ``information_schema`` ``data_type`` names."""
    schema = Schema({}, {}, {}, set(), {})
    for row in await conn.fetch(
        "SELECT c.table_name, c.column_name, c.data_type, c.is_nullable, c.column_default"
        " FROM information_schema.columns AS c"
        " JOIN information_schema.tables AS t USING (table_schema, table_name)"
        " WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'"
        " AND c.table_name <> $1 ORDER BY c.table_name, c.ordinal_position",
        RUNNER_TABLE,
    ):
        default = row["column_default"]
        if default is not None:
            default = re.sub(r"::[a-z ]+$", "", default)
        schema.columns.setdefault(row["table_name"], []).append(
            Column(row["column_name"], row["data_type"], row["is_nullable"] == "NO", default)
        )
    for row in await conn.fetch(
        "SELECT ic.relname AS name, t.relname AS table, i.indisunique, i.indisprimary,"
        " i.indpred IS NOT NULL AS partial,"
        " ARRAY(SELECT a.attname FROM generate_series(0, i.indnkeyatts - 1) AS k"
        "       JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[k]"
        "       ORDER BY k) AS columns,"
        " ARRAY(SELECT (i.indoption[k] & 1) = 1 FROM generate_series(0, i.indnkeyatts - 1) AS k"
        "       ORDER BY k) AS descending"
        " FROM pg_index AS i JOIN pg_class AS ic ON ic.oid = i.indexrelid"
        " JOIN pg_class AS t ON t.oid = i.indrelid"
        " JOIN pg_namespace AS n ON n.oid = t.relnamespace"
        " WHERE n.nspname = 'public' AND t.relname <> $1",
        RUNNER_TABLE,
    ):
        assert len(row["columns"]) == len(row["descending"]), row  # no expression indexes
        if row["indisprimary"]:
            schema.primary_keys[row["table"]] = tuple(row["columns"])
        else:
            schema.indexes[row["name"]] = Index(
                row["table"],
                tuple(zip(row["columns"], row["descending"], strict=True)),
                row["indisunique"],
                row["partial"],
            )
    for row in await conn.fetch(
        "SELECT t.relname AS table, a.attname AS column, rt.relname AS target,"
        " ra.attname AS to, CAST(c.confdeltype AS text) AS on_delete,"
        " cardinality(c.conkey) AS width"
        " FROM pg_constraint AS c JOIN pg_class AS t ON t.oid = c.conrelid"
        " JOIN pg_class AS rt ON rt.oid = c.confrelid"
        " JOIN pg_attribute AS a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]"
        " JOIN pg_attribute AS ra ON ra.attrelid = c.confrelid AND ra.attnum = c.confkey[1]"
        " WHERE c.contype = 'f' AND t.relnamespace = CAST('public' AS regnamespace)"
    ):
        assert row["width"] == 1, row  # the SQLite side reads single-column keys only
        schema.foreign_keys.add(
            (row["table"], row["column"], row["target"], row["to"], _ON_DELETE[row["on_delete"]])
        )
    for row in await conn.fetch(
        "SELECT t.relname AS table, count(c.oid) AS checks FROM pg_class AS t"
        " JOIN pg_namespace AS n ON n.oid = t.relnamespace"
        " LEFT JOIN pg_constraint AS c ON c.conrelid = t.oid AND c.contype = 'c'"
        " WHERE n.nspname = 'public' AND t.relkind = 'r' AND t.relname <> $1"
        " GROUP BY t.relname",
        RUNNER_TABLE,
    ):
        schema.checks[row["table"]] = row["checks"]
    return schema
