"""Helpers for tests that reach a database directly: PostgreSQL URLs, emptying a
database between tests, and reading rows from either engine without the store."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg


def database_url(server: Any, database: str) -> str:
    """``server``'s URI pointing at ``database``."""
    return str(server.get_uri(database))


@contextlib.contextmanager
def new_pg_database(server: Any) -> Iterator[str]:
    """A new, empty database on ``server`` (its URL), dropped afterwards."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    server.psql(f"CREATE DATABASE {name};")
    try:
        yield database_url(server, name)
    finally:
        server.psql(f"DROP DATABASE {name} WITH (FORCE);")


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


async def empty_database(url: str) -> None:
    """Delete every row (foreign keys left unchecked meanwhile) and restart identities."""
    conn = await asyncpg.connect(url)
    try:
        tables = await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            " AND tablename <> 'schema_migrations'"
        )
        sequences = await conn.fetch("SELECT sequencename FROM pg_sequences")
        async with conn.transaction():
            await conn.execute("SET LOCAL session_replication_role = replica")
            for (table,) in tables:
                await conn.execute(f'DELETE FROM "{table}"')
            for (sequence,) in sequences:
                await conn.execute(f'ALTER SEQUENCE "{sequence}" RESTART')
    finally:
        await conn.close()


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
