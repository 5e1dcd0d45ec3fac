"""Copy an SQLite database into an empty PostgreSQL database, every table, in one go.

    DATABASE_URL=... python -m bot.db.copy data/tictactoe.db
    python -m bot.db.copy data/tictactoe.db --database-url-file url.txt

The PostgreSQL URL, which may hold a password, comes from the environment (DATABASE_URL,
as the bot reads it) or from a file, never from the command line, where ``ps`` and the
shell's history would keep it; nothing printed shows its password.

Stop the bot first. SQLite's write-ahead log lets the copy read while a bot writes, but
the copy reads one moment of the file: a move made after that moment is not copied.

What it does, in order:
1. Refuses (exit status 2, one line on stderr, nothing written anywhere) if the file is
   missing, is not an SQLite database or is another program's, or if any table of the
   PostgreSQL database holds a row: it never merges two databases.
2. Opens both with ``open_database``, as a bot start would: the SQLite file is migrated to
   the newest schema this code knows (the only change made to it), and so is the
   PostgreSQL database. It refuses unless both are then at the same schema version with
   the same tables and columns.
3. Reads the file in one read transaction (one snapshot) and writes every table with
   asyncpg's binary COPY in one PostgreSQL transaction: parents before the tables whose
   foreign keys point at them, each table's rows in primary-key order (a game's
   ``rematch_of`` is an older game). Then moves each identity (``games.id``,
   ``challenges.id``) past the largest id copied, so new rows continue after them, and
   compares every table's row count with the file's before it commits. Any failure rolls
   the whole copy back (exit status 1).

Values: SQLite REAL columns are read as floats (PostgreSQL DOUBLE PRECISION); integers,
the 0/1 flags included (INTEGER with CHECK IN (0, 1) on both engines), and texts are
copied as they are. A value of the wrong type is an error naming its table, never cast.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sqlite3
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import aiosqlite
import asyncpg

from bot.db.backend import POSTGRES_SCHEMES
from bot.db.opening import open_database
from bot.db.postgres import without_password
from bot.errors import StorageError
from bot.settings import database_secrets

__all__ = ["CopyRefused", "CopyReport", "copy_database", "main"]

BATCH = 5_000
"""Rows per read from SQLite, and per COPY."""
SQLITE_HEADER = b"SQLite format 3\x00"
POSTGRES_ONLY = frozenset({"schema_migrations"})
"""PostgreSQL's migration record (SQLite keeps its version in ``PRAGMA user_version``)."""
FLOAT_TYPES = frozenset({"double precision", "real"})

_PG_TABLES = (
    "SELECT table_name FROM information_schema.tables"
    " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
)
_PG_COLUMNS = (
    "SELECT column_name, data_type, is_identity = 'YES' FROM information_schema.columns"
    " WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position"
)
_PG_FOREIGN_KEYS = (
    "SELECT child.relname, parent.relname FROM pg_constraint AS k"
    " JOIN pg_class AS child ON child.oid = k.conrelid"
    " JOIN pg_class AS parent ON parent.oid = k.confrelid"
    " JOIN pg_namespace AS n ON n.oid = child.relnamespace"
    " WHERE k.contype = 'f' AND n.nspname = current_schema()"
)
_SQLITE_TABLES = (
    "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
)


class CopyRefused(Exception):
    """The copy did not start: nothing was written to PostgreSQL."""


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    columns: tuple[str, ...]
    floats: frozenset[str]
    identity: str | None
    order_by: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CopyReport:
    source: str
    target: str
    """The URL without its password."""
    schema_version: int
    rows: dict[str, int]
    """Rows copied per table, in the order they were copied."""
    seconds: float


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def check_sqlite_file(path: Path) -> None:
    """Refuse a missing file, or one that is not an SQLite database of the bot's (an empty
    one is fine: it copies nothing). Read only, before the migration writes to it."""
    try:
        with path.open("rb") as file:
            header = file.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        raise CopyRefused(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CopyRefused(f"{path} is a folder, not an SQLite database file") from None
    except OSError as error:
        raise CopyRefused(f"cannot read {path}: {error.strerror or error}") from None
    if header != SQLITE_HEADER:
        raise CopyRefused(f"{path} is not an SQLite database")
    try:
        with contextlib.closing(
            sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)
        ) as db:
            ((version,),) = db.execute("PRAGMA user_version").fetchall()
            tables = db.execute(_SQLITE_TABLES).fetchall()
    except sqlite3.Error as error:
        raise CopyRefused(f"{path} is not a readable SQLite database: {error}") from None
    if version == 0 and tables:  # every migration of the bot's sets a version
        raise CopyRefused(f"{path} is an SQLite database, but not the bot's")


async def tables_with_rows(conn: asyncpg.Connection) -> list[str]:
    """The tables of the database's schema that hold a row (the migration record aside)."""
    found = []
    for (name,) in await conn.fetch(_PG_TABLES + " ORDER BY table_name"):
        if name not in POSTGRES_ONLY and await conn.fetchval(
            f"SELECT EXISTS (SELECT 1 FROM {quoted(name)})"
        ):
            found.append(name)
    return found


def refuse_rows(url: str, tables: Sequence[str]) -> None:
    if tables:
        raise CopyRefused(
            f"{without_password(url)} already holds rows (in {', '.join(tables)});"
            " the copy goes into an empty database only"
        )


def copy_order(tables: Iterable[str], foreign_keys: Iterable[tuple[str, str]]) -> list[str]:
    """``tables`` with each after the tables its foreign keys point at (ties by name)."""
    names = sorted(tables)
    parents: dict[str, set[str]] = {name: set() for name in names}
    for child, parent in foreign_keys:
        if child != parent and child in parents and parent in parents:
            parents[child].add(parent)
    ordered: list[str] = []
    while len(ordered) < len(names):
        ready = [n for n in names if n not in ordered and parents[n] <= set(ordered)]
        if not ready:
            left = sorted(set(names) - set(ordered))
            raise StorageError(f"the foreign keys of {', '.join(left)} form a cycle")
        ordered.append(ready[0])
    return ordered


async def describe(pg: asyncpg.Connection, lite: aiosqlite.Connection) -> list[Table]:
    """The tables to copy, in copy order; CopyRefused unless both schemas have the same."""
    pg_names = {name for (name,) in await pg.fetch(_PG_TABLES)} - POSTGRES_ONLY
    lite_names = {name for (name,) in await lite.execute_fetchall(_SQLITE_TABLES)}
    if pg_names != lite_names:
        only_lite, only_pg = sorted(lite_names - pg_names), sorted(pg_names - lite_names)
        raise CopyRefused(
            f"the two databases have different tables (only in SQLite: {only_lite};"
            f" only in PostgreSQL: {only_pg})"
        )
    order = copy_order(pg_names, await pg.fetch(_PG_FOREIGN_KEYS))
    tables = []
    for name in order:
        pg_columns = await pg.fetch(_PG_COLUMNS, name)
        info = await lite.execute_fetchall(f"PRAGMA table_info({quoted(name)})")
        columns = tuple(column for column, _, _ in pg_columns)
        if set(columns) != {row[1] for row in info}:
            raise CopyRefused(f"the table {name} has different columns in the two databases")
        keys = tuple(row[1] for row in sorted(info, key=lambda row: row[5]) if row[5] > 0)
        tables.append(
            Table(
                name=name,
                columns=columns,
                floats=frozenset(c for c, kind, _ in pg_columns if kind in FLOAT_TYPES),
                identity=next((c for c, _, identity in pg_columns if identity), None),
                order_by=keys or ("rowid",),
            )
        )
    return tables


def select(table: Table) -> str:
    """The SQLite query reading ``table`` in the order and types COPY sends."""
    columns = ", ".join(
        f"CAST({quoted(c)} AS REAL)" if c in table.floats else quoted(c) for c in table.columns
    )
    keys = ", ".join(quoted(c) for c in table.order_by)
    return f"SELECT {columns} FROM {quoted(table.name)} ORDER BY {keys}"


async def migrate(target: str | Path, migrations_dir: Path | None) -> int:
    """Open ``target`` as a bot start would (migrating it); its schema version."""
    database = await open_database(target, migrations_dir)
    try:
        return database.schema_version
    finally:
        await database.close()


async def copy_database(
    source: str | Path, url: str, *, migrations_dir: str | Path | None = None
) -> CopyReport:
    """Copy the SQLite file ``source`` into the empty PostgreSQL database at ``url``.

    Raises CopyRefused before anything is copied (see the module's doc), StorageError if
    either database cannot be opened or migrated, or if the copy failed (rolled back).
    """
    path = Path(source)
    if not url.startswith(POSTGRES_SCHEMES):
        raise CopyRefused(f"{without_password(url)} is not a postgresql:// URL")
    check_sqlite_file(path)
    started = time.perf_counter()
    try:
        return await _copy(path, url, migrations_dir, started)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, sqlite3.Error) as error:
        raise StorageError(f"the copy failed; nothing was committed: {error}") from error


async def _copy(
    path: Path, url: str, migrations_dir: str | Path | None, started: float
) -> CopyReport:
    pg = await connect(url)
    try:
        refuse_rows(url, await tables_with_rows(pg))  # before either database is migrated
        directory = Path(migrations_dir) if migrations_dir is not None else None
        version = await migrate(path, directory)
        pg_version = await migrate(url, directory)
        if version != pg_version:
            raise CopyRefused(
                f"{path} is at schema version {version} and {without_password(url)} at"
                f" {pg_version}; run the copy with the bot version that made them"
            )
        async with aiosqlite.connect(path, isolation_level=None) as lite:
            tables = await describe(pg, lite)
            rows = await copy_tables(pg, lite, url, tables)
    finally:
        await pg.close()
    return CopyReport(
        str(path), without_password(url), version, rows, time.perf_counter() - started
    )


async def connect(url: str) -> asyncpg.Connection:
    try:
        return await asyncpg.connect(url)
    except (OSError, ValueError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        raise StorageError(f"cannot connect to {without_password(url)}: {error}") from error


async def copy_tables(
    pg: asyncpg.Connection, lite: aiosqlite.Connection, url: str, tables: list[Table]
) -> dict[str, int]:
    """Every table in one transaction on each side; the rows copied per table."""
    await lite.execute("BEGIN")  # one snapshot, from the first read to the end
    try:
        counts = {t.name: await count(lite, t.name) for t in tables}
        async with pg.transaction():
            await pg.execute("SET LOCAL synchronous_commit = on")
            names = ", ".join(quoted(t.name) for t in tables)
            await pg.execute(f"LOCK TABLE {names} IN EXCLUSIVE MODE")  # no writer meanwhile
            refuse_rows(url, await tables_with_rows(pg))
            for table in tables:
                await send(pg, lite, table)
            for table in tables:
                if table.identity is not None:
                    await pg.execute(
                        f"SELECT setval(pg_get_serial_sequence($1, $2),"
                        f" COALESCE(MAX({quoted(table.identity)}), 0) + 1, false)"
                        f" FROM {quoted(table.name)}",
                        quoted(table.name),
                        table.identity,
                    )
            for table in tables:
                copied = await pg.fetchval(f"SELECT COUNT(*) FROM {quoted(table.name)}")
                if copied != counts[table.name]:
                    raise StorageError(
                        f"{table.name}: {counts[table.name]} rows in SQLite but {copied}"
                        " in PostgreSQL; the copy was rolled back"
                    )
    finally:
        await lite.execute("ROLLBACK")
    return counts


async def count(lite: aiosqlite.Connection, table: str) -> int:
    ((n,),) = await lite.execute_fetchall(f"SELECT COUNT(*) FROM {quoted(table)}")
    return int(n)


async def send(pg: asyncpg.Connection, lite: aiosqlite.Connection, table: Table) -> None:
    """``table``'s rows, one COPY per batch read (PostgreSQL's side, the indexes and the
    foreign-key checks, takes four fifths of the time: reading ahead would gain little)."""
    try:
        async with lite.execute(select(table)) as cursor:
            while rows := await cursor.fetchmany(BATCH):
                await pg.copy_records_to_table(
                    table.name, records=rows, columns=list(table.columns)
                )
    except (
        asyncpg.PostgresError,
        asyncpg.InterfaceError,
        sqlite3.Error,
        TypeError,
        ValueError,
    ) as error:
        raise StorageError(
            f"copying the table {table.name} failed, and the whole copy was rolled back: {error}"
        ) from error


def parser() -> argparse.ArgumentParser:
    command = argparse.ArgumentParser(
        prog="python -m bot.db.copy",
        description=(
            "Copy the bot's SQLite database into an empty PostgreSQL database. Stop the bot"
            " first: moves made while the copy runs are not copied. Both databases are first"
            " migrated to the newest schema, as a bot start would; the SQLite file is"
            " otherwise left as it was. Everything is copied in one transaction, or nothing."
        ),
        epilog=(
            "Exit status: 0 copied; 2 refused, nothing copied (a missing file or one that"
            " is not the bot's SQLite database, rows already in the PostgreSQL database,"
            " different schema versions); 1 failed (a database could not be opened, or"
            " the copy was rolled back)."
        ),
    )
    command.add_argument("sqlite_file", type=Path, help="the SQLite file (DATABASE_PATH)")
    command.add_argument(
        "--database-url-file",
        type=Path,
        metavar="FILE",
        help=(
            "a file holding the target's URL (postgresql://user:password@host:5432/database);"
            " without it, the URL is read from the DATABASE_URL environment variable, as the"
            " bot reads it. Never on the command line: ps and the shell's history keep it."
        ),
    )
    return command


def target_url(url_file: Path | None, environ: Mapping[str, str]) -> str:
    """The PostgreSQL URL: the first line of ``url_file``, else DATABASE_URL."""
    if url_file is not None:
        try:
            lines = url_file.read_text(encoding="utf-8").strip().splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise CopyRefused(f"cannot read {url_file}: {error}") from None
        if not lines:
            raise CopyRefused(f"{url_file} is empty; put the PostgreSQL URL in it")
        return lines[0].strip()
    url = (environ.get("DATABASE_URL") or "").strip()
    if not url:
        raise CopyRefused(
            "no PostgreSQL URL: set DATABASE_URL (as for the bot) or give --database-url-file"
        )
    return url


def summary(report: CopyReport) -> str:
    width = max(len(name) for name in report.rows) if report.rows else 0
    lines = [f"copied {report.source} (schema {report.schema_version}) to {report.target}"]
    lines += [f"  {name:<{width}}  {rows:>9}" for name, rows in report.rows.items()]
    total = sum(report.rows.values())
    lines.append(f"{total} rows in {len(report.rows)} tables in {report.seconds:.2f} s")
    return "\n".join(lines)


def one_line(error: Exception) -> str:
    return " ".join(str(error).split())


def main(argv: Sequence[str] | None = None) -> int:
    args, extra = parser().parse_known_args(argv)
    if extra:  # never echoed: it may be the URL, password and all
        print(
            f"refused: {len(extra)} unexpected argument(s); the PostgreSQL URL goes in"
            " DATABASE_URL or a file (--database-url-file), not on the command line",
            file=sys.stderr,
        )
        return 2
    passwords: set[str] = set()
    try:
        url = target_url(args.database_url_file, os.environ)
        passwords = database_secrets(url, os.environ)
        report = asyncio.run(copy_database(args.sqlite_file, url))
    except CopyRefused as refusal:
        print(f"refused: {hidden(one_line(refusal), passwords)}", file=sys.stderr)
        return 2
    except StorageError as error:
        print(f"error: {hidden(one_line(error), passwords)}", file=sys.stderr)
        return 1
    print(summary(report))
    return 0


def hidden(text: str, passwords: set[str]) -> str:
    """``text`` with each password replaced, in case an error quoted one."""
    for password in sorted(passwords, key=len, reverse=True):
        text = text.replace(password, "[password]")
    return text


if __name__ == "__main__":
    sys.exit(main())
