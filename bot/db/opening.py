"""Opening the database: PostgreSQL for a ``postgresql://`` URL, else an SQLite file,
with pending migrations applied. The one way in for the bot (``Store.open``) and for
``python -m bot.db.copy``."""

from __future__ import annotations

import os

from bot.db.backend import POSTGRES_SCHEMES, Database
from bot.db.postgres import PostgresDatabase
from bot.db.sqlite import SqliteDatabase

__all__ = ["open_database"]


async def open_database(
    target: str | os.PathLike[str],
    migrations_dir: str | os.PathLike[str] | None = None,
    *,
    synchronous: str = "NORMAL",
    busy_timeout_ms: int = 10_000,
) -> Database:
    """Open the database and apply pending migrations: PostgreSQL for a
    ``postgresql://`` URL ``target`` (migrations/postgresql/), else the SQLite file at
    ``target``, created with its folder if need be, with its PRAGMAs set (WAL,
    ``synchronous``, foreign keys, busy timeout). ``busy_timeout_ms`` is PostgreSQL's
    ``lock_timeout`` there.

    StorageError if a migration fails (naming the file; the database stays as it was
    before it), if the schema is newer than the newest migration known here (the file
    is left untouched), or if the file cannot be opened or switched to WAL;
    ValueError if ``synchronous`` is not NORMAL, FULL or EXTRA.
    """
    if isinstance(target, str) and target.startswith(POSTGRES_SCHEMES):
        return await PostgresDatabase.open(
            target, migrations_dir, synchronous=synchronous, lock_timeout_ms=busy_timeout_ms
        )
    return await SqliteDatabase.open(target, migrations_dir, synchronous, busy_timeout_ms)
