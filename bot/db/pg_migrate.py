"""PostgreSQL's numbered migrations: migrations/postgresql/NNNN_description.sql.

Each file is the same-numbered SQLite migration written for PostgreSQL, so one schema
version means one schema on both engines (the copy tool relies on it). Progress is the
``schema_migrations`` table. Each file runs in one transaction with its row, after taking
an advisory lock and reading the version again, so processes starting together migrate
once; PostgreSQL's DDL is transactional, so a failing file leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import asyncpg

from bot.errors import StorageError

__all__ = ["MIGRATION_LOCK", "apply_pg_migrations", "pg_schema_version"]

MIGRATION_LOCK = -1
"""The advisory lock key migrations hold; the store's own locks are guild ids (positive)."""

_CREATE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
)


async def pg_schema_version(conn: asyncpg.Connection) -> int:
    """The newest migration applied (0 for an empty database)."""
    exists = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
    if not exists:
        return 0
    return int(await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"))


async def apply_pg_migrations(conn: asyncpg.Connection, migrations: list[tuple[int, Path]]) -> int:
    """Apply the migrations not yet recorded, in order; the schema version reached."""
    for number, path in migrations:
        try:
            script = await asyncio.to_thread(path.read_text, encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise StorageError(f"cannot read migration {path.name}: {error}") from error
        try:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
                await conn.execute(_CREATE)
                if await pg_schema_version(conn) >= number:
                    continue  # applied before, or by another process meanwhile
                await conn.execute(script)
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                    number,
                    path.name,
                    time.time(),
                )
        except asyncpg.PostgresError as error:
            raise StorageError(
                f"migration postgresql/{path.name} failed and was rolled back: {error}"
            ) from error
    return await pg_schema_version(conn)
