"""The SQLite backend: one aiosqlite connection, shared or exclusive access to it, and
transactions that always end (the interface is bot/db/backend.py's ``Database``).

aiosqlite runs a connection's statements one at a time on the connection's own thread,
each awaited call one round trip (a "hop") there and back. Between two awaits of one
coroutine another coroutine's statements could run, inside the first one's transaction.
So a transaction has the connection to itself (``Access.exclusive``), while statements
that stand alone (autocommit: each its own transaction) may be queued together
(``Access.shared``): aiosqlite's thread then runs them back to back instead of going to
sleep between them (see docs/decisions.md#stand-alone-statements-queued-together). A
transaction runs as a task of its own, shielded from its caller: once BEGIN is sent,
COMMIT or ROLLBACK follows before the connection is let go, even if the caller is
cancelled meanwhile (it then merely stops waiting for the outcome).

Only aiosqlite's public API is used; the connection is in autocommit mode
(``isolation_level=None``), so the BEGIN/COMMIT statements here are the only transaction
control, and a statement run outside them is a transaction of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import aiosqlite

from bot.db.backend import Statement, UniqueViolation, to_the_end
from bot.db.migrate import (
    DEFAULT_MIGRATIONS_DIR,
    apply_migrations,
    check_not_newer,
    find_migrations,
    user_version,
)
from bot.db.rows import Row
from bot.errors import StorageError

__all__ = ["SYNCHRONOUS_LEVELS", "Access", "SqliteDatabase"]

T = TypeVar("T")
log = logging.getLogger(__name__)

SYNCHRONOUS_LEVELS = ("NORMAL", "FULL", "EXTRA")
"""The ``synchronous`` settings accepted (weaker ones can corrupt the database on power loss)."""

_SYNCHRONOUS_NAMES = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
_SETTINGS = ("journal_mode", "synchronous", "busy_timeout", "foreign_keys", "wal_autocheckpoint")


class Access:
    """Many stand-alone statements at once, or one transaction alone.

    Transactions go first: while one runs or waits, new statements wait, and queued
    transactions run back to back, letting statements in only when none is left. A
    transaction waits for the statements already in flight, so each hand-over costs a
    turn of the event loop, and taking turns one by one would starve the transactions
    that start and end games (see docs/decisions.md#queued-transactions-back-to-back). Every
    count changes without awaiting, so a cancelled caller never leaves one wrong.
    """

    def __init__(self) -> None:
        self._shared = 0
        self._drained = asyncio.Event()
        self._drained.set()
        self._open = asyncio.Event()
        self._open.set()
        self._exclusive = asyncio.Lock()
        self._queued = 0

    @contextlib.asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        while not self._open.is_set():
            await self._open.wait()
        self._shared += 1
        self._drained.clear()
        try:
            yield
        finally:
            self._shared -= 1
            if self._shared == 0:
                self._drained.set()

    async def acquire(self) -> None:
        """Take the connection for a transaction, once the statements in flight are done."""
        self._queued += 1
        self._open.clear()
        try:
            await self._exclusive.acquire()
        except BaseException:
            self._queued -= 1
            if not self._queued and not self._exclusive.locked():
                self._open.set()  # nobody left to open it
            raise
        self._queued -= 1
        try:
            await self._drained.wait()
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        self._exclusive.release()
        if not self._queued:
            self._open.set()

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        await self.acquire()
        try:
            yield
        finally:
            self.release()


async def _unique_indexes(db: aiosqlite.Connection) -> dict[str, str]:
    """Index names by the column list SQLite names when one is violated ("t.a, t.b")."""
    names: dict[str, str] = {}
    tables = await db.execute_fetchall("SELECT name FROM sqlite_master WHERE type = 'table'")
    for (table,) in tables:
        for _, index, unique, *_ in await db.execute_fetchall(f"PRAGMA index_list('{table}')"):
            if unique:
                columns = await db.execute_fetchall(f"PRAGMA index_info('{index}')")
                names[", ".join(f"{table}.{c[2]}" for c in columns)] = index
    return names


class SqliteDatabase:
    """The connection, the access to it, and the transaction runner."""

    engine = "sqlite"
    row_lock = ""  # a write transaction (BEGIN IMMEDIATE) already has the database alone

    def __init__(
        self,
        db: aiosqlite.Connection,
        path: Path,
        schema_version: int,
        synchronous: str,
        unique_indexes: dict[str, str],
    ) -> None:
        self._db = db
        self.access = Access()
        """Every user of the connection goes through it (see the module's doc)."""
        self.path = path
        self.location = str(path)
        self.schema_version = schema_version
        self.synchronous = synchronous
        self._unique_indexes = unique_indexes
        self._transactions: set[asyncio.Task[Any]] = set()  # strong references while running

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        migrations_dir: str | os.PathLike[str] | None,
        synchronous: str,
        busy_timeout_ms: int,
    ) -> SqliteDatabase:
        """Connect, set the PRAGMAs and apply pending migrations (see ``Store.open``)."""
        level = synchronous.upper()
        if level not in SYNCHRONOUS_LEVELS:
            raise ValueError(f"synchronous must be NORMAL, FULL or EXTRA, not {synchronous!r}")
        path = Path(path)
        migrations = find_migrations(
            Path(migrations_dir) if migrations_dir is not None else DEFAULT_MIGRATIONS_DIR
        )
        latest = migrations[-1][0] if migrations else 0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StorageError(f"cannot create the directory of {path}: {error}") from error
        try:
            db = await aiosqlite.connect(path, isolation_level=None)
        except sqlite3.Error as error:
            raise StorageError(f"cannot open the database {path}: {error}") from error
        try:
            # Connection-level settings first: they do not touch the file.
            await db.execute_fetchall(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            await db.execute_fetchall("PRAGMA foreign_keys = ON")
            version = await user_version(db)
            check_not_newer(path, version, latest)
            ((mode,),) = await db.execute_fetchall("PRAGMA journal_mode = WAL")
            if str(mode).lower() != "wal":
                raise StorageError(f"cannot switch {path} to WAL (journal_mode is {mode})")
            await db.execute_fetchall(f"PRAGMA synchronous = {level}")
            version = await apply_migrations(db, migrations, version)
            unique_indexes = await _unique_indexes(db)
        except sqlite3.Error as error:
            await db.close()
            raise StorageError(f"cannot use the database {path}: {error}") from error
        except BaseException:
            await db.close()
            raise
        return cls(db, path, version, level, unique_indexes)

    async def close(self) -> None:
        """Close once the current user is done (a transaction always runs to its end)."""
        async with self.access.exclusive():
            await self._db.close()

    async def run(self, statement: str, parameters: Any = ()) -> list[Row]:
        """Run one statement and fetch its rows: one hop. The caller has ``access``."""
        try:
            return cast("list[Row]", await self._db.execute_fetchall(statement, parameters))
        except sqlite3.IntegrityError as error:
            prefix = "UNIQUE constraint failed: "
            if getattr(error, "sqlite_errorcode", None) != sqlite3.SQLITE_CONSTRAINT_UNIQUE:
                raise
            columns = str(error).removeprefix(prefix)
            raise UniqueViolation(self._unique_indexes.get(columns), str(error)) from error

    def shared(self) -> contextlib.AbstractAsyncContextManager[None]:
        return self.access.shared()

    async def run_alone(self, statement: str, parameters: Any = ()) -> list[Row]:
        """``run`` with shared access: one statement in autocommit, atomic without BEGIN.

        A cancelled caller leaves nothing half done: aiosqlite runs the statement anyway,
        before anything queued after it (a transaction's BEGIN included).
        """
        async with self.access.shared():
            return await self.run(statement, parameters)

    async def set_trace_callback(self, callback: Callable[[str], object] | None) -> None:
        async with self.access.exclusive():
            # aiosqlite annotates the handler as a plain Callable, but sqlite3 takes None
            # to stop tracing, and aiosqlite passes it through.
            await self._db.set_trace_callback(callback)  # type: ignore[arg-type]

    async def diagnostics(self) -> dict[str, int | str]:
        """The PRAGMAs the store manages (journal_mode, synchronous by name, busy_timeout,
        foreign_keys, wal_autocheckpoint)."""
        async with self.access.shared():
            found = {name: (await self.run(f"PRAGMA {name}"))[0][0] for name in _SETTINGS}
        found["synchronous"] = _SYNCHRONOUS_NAMES.get(found["synchronous"], found["synchronous"])
        return found

    async def batch(self, statements: Sequence[Statement]) -> list[list[Row]]:
        """Run ``statements`` in order and fetch their rows, queued together: one round
        trip to the thread for all of them instead of one each (a transaction's hops are
        what other users wait for: see docs/decisions.md#a-transaction-in-few-round-trips).
        The caller has exclusive access, so nothing else is queued between them. Every
        statement runs even if one before it fails; the first failure is then raised."""
        queued = [
            asyncio.ensure_future(self.run(sql, parameters)) for sql, parameters in statements
        ]
        results = await asyncio.gather(*queued, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return cast("list[list[Row]]", results)

    async def transaction(
        self,
        body: Callable[[list[list[Row]]], Awaitable[T]],
        *,
        first: Sequence[Statement] = (),
        lock: int | None = None,
        snapshot: bool = False,
        durable: bool = False,
    ) -> T:
        """Run ``body`` inside BEGIN ... COMMIT, rolled back on any exception, which
        then propagates. ``body`` gets the rows of the ``first`` statements, which run in
        the same round trip as BEGIN; its own statements go through ``run`` or ``batch``.

        ``BEGIN IMMEDIATE`` unless ``snapshot``: it takes the write lock before the first
        read, so what the body reads cannot change before it writes, which is stronger
        than any ``lock``. A ``snapshot`` (reads only) is a deferred ``BEGIN``.
        ``durable`` commits with synchronous = FULL (see ``_run``).
        """
        begin = "BEGIN" if snapshot else "BEGIN IMMEDIATE"
        await self.access.acquire()  # a caller cancelled here has started nothing
        try:
            task = asyncio.create_task(self._run(body, first, begin, durable))
        except BaseException:
            self.access.release()
            raise
        return await to_the_end(task, self._transactions)

    async def _run(
        self,
        body: Callable[[list[list[Row]]], Awaitable[T]],
        first: Sequence[Statement],
        begin: str,
        durable: bool,
    ) -> T:
        """The transaction itself, as a task that lets the connection go when it is over.

        SQLite refuses to change ``synchronous`` inside a transaction: the switch to FULL
        comes before BEGIN (same round trip), the way back after COMMIT or ROLLBACK. With
        FULL or EXTRA configured every commit is durable already and nothing switches.
        """
        switch = durable and self.synchronous == "NORMAL"
        full: list[Statement] = [("PRAGMA synchronous = FULL", ())] if switch else []
        back: list[Statement] = [(f"PRAGMA synchronous = {self.synchronous}", ())] if switch else []
        try:
            try:
                opened = await self.batch([*full, (begin, ()), *first])
                result = await body(opened[len(full) + 1 :])
                await self.batch([("COMMIT", ()), *back])
                return result
            except BaseException:
                if self._db.in_transaction:
                    await self.run("ROLLBACK")
                if switch:
                    await self.run(back[0][0])
                raise
        finally:
            self.access.release()
