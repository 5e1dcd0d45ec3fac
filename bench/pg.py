"""The benchmarks' databases: SQLite files or PostgreSQL, and a line saying which.

``--database postgresql`` without ``--database-url`` starts a throwaway PostgreSQL 16 from
the ``pgserver`` wheel (the test extra installs it) in a folder of /tmp, listening on a unix
socket only, and deletes it afterwards. Not under a folder only root may enter: run as
root, pgserver starts PostgreSQL as a user of its own. With ``--database-url`` the
benchmark uses that server instead; its user must be allowed to create databases.

Every run gets a database of its own, made empty and dropped afterwards, as every SQLite
run gets a new file: a run never starts on another's rows or dead tuples. ``read_rows``
reads a database's rows without the store (the tests use it too, and the throwaway server).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sqlite3
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import yarl

from bench.procs import parent_pid, process_name

__all__ = [
    "ENGINES",
    "add_database_arguments",
    "check_database_arguments",
    "database_size",
    "describe",
    "fresh_database",
    "postgres_server",
    "read_rows",
    "server_pid",
    "throwaway_pg_server",
]

ENGINES = ("sqlite", "postgresql")


def add_database_arguments(parser: argparse.ArgumentParser) -> None:
    """``--database sqlite|postgresql`` and ``--database-url``."""
    parser.add_argument(
        "--database", choices=ENGINES, default="sqlite", help="the engine (default: sqlite)"
    )
    parser.add_argument(
        "--database-url",
        metavar="URL",
        help="postgresql://... of an existing server to use instead of a throwaway pgserver"
        " (its user must be allowed to CREATE DATABASE: each run gets a new one)",
    )


def check_database_arguments(
    parser: argparse.ArgumentParser, args: argparse.Namespace, *, both: bool = False
) -> None:
    """Exit with the reason if ``--database-url`` is given for SQLite alone (``both``: the
    benchmark runs both engines, so the URL is the PostgreSQL one's)."""
    if args.database_url and args.database == "sqlite" and not both:
        parser.error("--database-url is a PostgreSQL server's: add --database postgresql")


@contextlib.contextmanager
def postgres_server(url: str | None = None) -> Iterator[str]:
    """A PostgreSQL server's URL: ``url`` as given, else a throwaway pgserver's (started
    here, about a second; stopped and deleted on exit)."""
    if url is not None:
        yield url
        return
    with throwaway_pg_server("ttt-bench-pg-") as server:
        yield str(server.get_uri("postgres"))


@contextlib.asynccontextmanager
async def fresh_database(server_url: str) -> AsyncIterator[str]:
    """A new, empty database on ``server_url``'s server (its URL), dropped on exit."""
    name = f"bench_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(f"CREATE DATABASE {name}")
    finally:
        await conn.close()
    try:
        server = yarl.URL(server_url)
        yield str(server.with_path(f"/{name}").with_query(server.query))
    finally:
        conn = await asyncpg.connect(server_url)
        try:
            await conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
        finally:
            await conn.close()


async def database_size(url: str) -> int:
    """``pg_database_size`` of ``url``'s database, in bytes (tables, indexes, catalog)."""
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval("SELECT pg_database_size(current_database())"))
    finally:
        await conn.close()


async def server_pid(url: str) -> int | None:
    """The pid of the PostgreSQL server (its postmaster) of ``url`` if it runs on this
    machine (the parent of this connection's backend, named postgres), else None."""
    conn = await asyncpg.connect(url)
    try:
        backend = int(await conn.fetchval("SELECT pg_backend_pid()"))
        try:
            parent = parent_pid(backend)
            name = process_name(parent)
        except (OSError, IndexError, ValueError):  # a server elsewhere
            return None
    finally:
        await conn.close()
    return parent if name.startswith("postgres") else None


async def describe(engine: str, url: str | None = None) -> str:
    """What a benchmark runs on, for its first lines: the engine and its version (PostgreSQL:
    ``SHOW server_version`` of ``url``'s server, and where it is, without a password)."""
    if engine == "sqlite":
        return f"SQLite {sqlite3.sqlite_version} (a new file per run, WAL)"
    assert url is not None
    conn = await asyncpg.connect(url)
    try:
        version = await conn.fetchval("SHOW server_version")
    finally:
        await conn.close()
    where = yarl.URL(url).with_password(None)
    return f"PostgreSQL {version} at {where} (a new database per run)"


@contextlib.contextmanager
def throwaway_pg_server(prefix: str) -> Iterator[Any]:
    """A PostgreSQL server from the ``pgserver`` wheel (its URI: ``.get_uri(database)``),
    listening on a unix socket only, in a new folder of /tmp that is deleted afterwards.

    Not under pytest's temporary folder: run as root, pgserver starts PostgreSQL as a user
    of its own, and any pytest starting meanwhile makes that folder root-only.
    """
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ.setdefault("XDG_RUNTIME_DIR", str(folder))  # platformdirs' lock files
    import pgserver  # the test extra's; imported once XDG_RUNTIME_DIR is set

    try:
        server = pgserver.get_server(folder / "data", cleanup_mode="delete")
        try:
            yield server
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def read_rows(target: str | Path, query: str, *parameters: Any) -> list[tuple[Any, ...]]:
    """``query``'s rows, read by a connection of the test's own (``?`` placeholders on
    SQLite, ``$n`` on PostgreSQL): what is in the database, whatever the store says."""
    if isinstance(target, Path):
        with sqlite3.connect(target) as conn:
            rows = conn.execute(query, parameters).fetchall()
        conn.close()
        return rows
    conn = await asyncpg.connect(target)
    try:
        return [tuple(r) for r in await conn.fetch(query, *parameters)]
    finally:
        await conn.close()
