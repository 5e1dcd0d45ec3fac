"""The PostgreSQL backend: an asyncpg pool behind bot/db/backend.py's ``Database``.

Each transaction, and each ``shared`` block, holds one pooled connection; the statements
of its body find that connection through a context variable, so the store's code is the
same on both engines. A transaction runs as a task of its own, shielded from its caller:
once begun it commits or rolls back before its connection goes back to the pool.

Concurrency (PostgreSQL's default READ COMMITTED, no SERIALIZABLE):
- A guarded write (a move, an answer to a challenge, an expiry) is one ``UPDATE ... WHERE``
  on the row's current version: of two racing writers one matches and the other waits for
  it, re-checks the WHERE on the new row and matches nothing. The same guarantee as SQLite.
- What reads, then writes on what it read (free places before a new game, players' rows
  before a result, a server's settings, an erasure) first takes ``lock``, a transaction-level
  advisory lock on the guild id, so those of one server queue as they do behind SQLite's
  write lock; other servers' go on. The unique indexes stay the last line of defence.
- A read that must be one moment (``snapshot``) is REPEATABLE READ READ ONLY.
SERIALIZABLE would need every transaction retried, and a retry would run ``settle``
twice; its predicate locks on partial indexes also fail innocent pairs. Session-level
advisory locks are never taken: a pooled connection outlives them.

Durability mirrors SQLite's ``synchronous``: with NORMAL, commits use
``synchronous_commit = off`` (a killed bot loses nothing, the server has the commit; a
crash of the server itself can lose its last fraction of a second) and ``durable``
transactions switch it on for themselves; FULL or EXTRA leave it on for every commit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import yarl

from bot.db.backend import Statement, UniqueViolation, to_the_end
from bot.db.dialect import parameters, translate
from bot.db.migrate import DEFAULT_MIGRATIONS_DIR, find_migrations
from bot.db.pg_migrate import apply_pg_migrations, pg_schema_version
from bot.db.rows import Row
from bot.errors import StorageError
from bot.settings import SECRET_PARAMETERS

__all__ = ["PostgresDatabase", "without_password"]

T = TypeVar("T")

POOL_SIZE = 10
_SETTINGS = (
    "server_version",
    "synchronous_commit",
    "default_transaction_isolation",
    "lock_timeout",
    "max_connections",
)


def without_password(url: str) -> str:
    """``url`` fit for a log line or an error message: without the password of its user
    part (``user:password@``) nor its ``password`` or ``sslpassword`` parameters."""
    try:
        parsed = yarl.URL(url).with_password(None)
        query = [(k, v) for k, v in parsed.query.items() if k.lower() not in SECRET_PARAMETERS]
        return str(parsed.with_query(query))
    except (TypeError, ValueError):
        return "the database URL"  # unparsable: never echoed, it may hold a password


class PostgresDatabase:
    """A pool of connections to one PostgreSQL database."""

    engine = "postgresql"
    row_lock = " FOR UPDATE"

    def __init__(self, pool: asyncpg.Pool, location: str, version: int, durable: bool) -> None:
        self._pool = pool
        self.location = location
        self.schema_version = version
        self._always_durable = durable
        self._connection: ContextVar[asyncpg.Connection | None] = ContextVar(
            "store_connection", default=None
        )
        self._transactions: set[asyncio.Task[Any]] = set()

    @classmethod
    async def open(
        cls,
        url: str,
        migrations_dir: str | os.PathLike[str] | None,
        *,
        synchronous: str = "NORMAL",
        lock_timeout_ms: int = 10_000,
        pool_size: int = POOL_SIZE,
    ) -> PostgresDatabase:
        """Connect a pool and apply pending migrations (migrations/postgresql/)."""
        base = Path(migrations_dir) if migrations_dir is not None else DEFAULT_MIGRATIONS_DIR
        migrations = find_migrations(base / "postgresql")
        latest = migrations[-1][0] if migrations else 0
        durable = synchronous.upper() != "NORMAL"
        location = without_password(url)
        server_settings = {
            "lock_timeout": str(int(lock_timeout_ms)),
            "synchronous_commit": "on" if durable else "off",
            "application_name": "tictactoe-bot",
        }
        try:
            pool = await asyncpg.create_pool(
                url,
                min_size=1,
                max_size=pool_size,
                statement_cache_size=512,
                server_settings=server_settings,
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, ssl.SSLError) as error:
            raise StorageError(f"cannot connect to {location}: {error}") from error
        try:
            async with pool.acquire() as conn:
                version = await pg_schema_version(conn)
                if version > latest:
                    raise StorageError(
                        f"the database {location} has schema version {version}, newer than"
                        f" the newest this code knows ({latest}); run a newer version of the bot"
                    )
                version = await apply_pg_migrations(conn, migrations)
        except asyncpg.PostgresError as error:
            await pool.close()
            raise StorageError(f"cannot use the database {location}: {error}") from error
        except BaseException:
            await pool.close()
            raise
        return cls(pool, location, version, durable)

    async def close(self) -> None:
        """Close once the transactions in flight are over."""
        if self._transactions:
            await asyncio.wait(set(self._transactions))
        await self._pool.close()

    async def _fetch(self, conn: asyncpg.Connection, statement: str, values: Any) -> list[Row]:
        text, names = translate(statement)
        try:
            records = await conn.fetch(text, *parameters(names, values))
        except asyncpg.UniqueViolationError as error:
            raise UniqueViolation(error.constraint_name, str(error)) from error
        return [tuple(record) for record in records]

    async def run(self, statement: str, parameters: Any = ()) -> list[Row]:
        conn = self._connection.get()
        if conn is None:
            return await self.run_alone(statement, parameters)
        return await self._fetch(conn, statement, parameters)

    async def run_alone(self, statement: str, parameters: Any = ()) -> list[Row]:
        async with self._pool.acquire() as conn:
            return await self._fetch(conn, statement, parameters)

    @contextlib.asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        if self._connection.get() is not None:
            yield
            return
        async with self._pool.acquire() as conn:
            token = self._connection.set(conn)
            try:
                yield
            finally:
                self._connection.reset(token)

    async def batch(self, statements: Sequence[Statement]) -> list[list[Row]]:
        return [await self.run(sql, values) for sql, values in statements]

    async def diagnostics(self) -> dict[str, int | str]:
        async with self._pool.acquire() as conn:
            return {name: await conn.fetchval(f"SHOW {name}") for name in _SETTINGS}

    async def transaction(
        self,
        body: Callable[[list[list[Row]]], Awaitable[T]],
        *,
        first: Sequence[Statement] = (),
        lock: int | None = None,
        snapshot: bool = False,
        durable: bool = False,
    ) -> T:
        task = asyncio.create_task(self._run(body, first, lock, snapshot, durable))
        return await to_the_end(task, self._transactions)

    async def _run(
        self,
        body: Callable[[list[list[Row]]], Awaitable[T]],
        first: Sequence[Statement],
        lock: int | None,
        snapshot: bool,
        durable: bool,
    ) -> T:
        isolation = "repeatable_read" if snapshot else "read_committed"
        async with (
            self._pool.acquire() as conn,
            conn.transaction(isolation=isolation, readonly=snapshot),
        ):
            token = self._connection.set(conn)
            try:
                if durable and not self._always_durable:
                    await conn.execute("SET LOCAL synchronous_commit = on")
                if lock is not None:
                    await conn.execute("SELECT pg_advisory_xact_lock($1)", lock)
                return await body(await self.batch(first))
            finally:
                self._connection.reset(token)
