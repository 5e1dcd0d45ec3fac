"""Schemas of both engines read as comparable data (the server is tests/conftest.py's)."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncpg

__all__ = [
    "Column",
    "Index",
    "Schema",
    "pg_schema",
    "sqlite_schema",
    "without_comments",
]

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
        "schema_migrations",
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
        "schema_migrations",
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
        "schema_migrations",
    ):
        schema.checks[row["table"]] = row["checks"]
    return schema
