"""Helpers for tests that reach a database directly: PostgreSQL URLs, emptying a
database between tests, and (from ``bench.pg``, which the benchmarks share) a throwaway
PostgreSQL server and reading rows from either engine without the store."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

import asyncpg

from bench.pg import read_rows, throwaway_pg_server

__all__ = [
    "database_url",
    "empty_database",
    "new_pg_database",
    "read_rows",
    "throwaway_pg_server",
]


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
