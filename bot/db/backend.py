"""What the store needs from a database engine, and the choice between SQLite and PostgreSQL.

The sub-stores hold one ``Database`` and speak only through it: stand-alone statements
(``run_alone``), a few statements on one connection (``shared`` then ``run``), and
transactions (``transaction``). Every statement is written once, in the store's modules,
with ``?`` or ``:name`` placeholders; the PostgreSQL backend rewrites them to ``$n``
(bot/db/dialect.py). What a transaction needs beyond its statements is said as an
intent, and each backend meets it its own way:

- ``lock=guild_id``: nothing else that asks for the same server's lock runs between its
  reads and its writes (starting a game reads the free places, then takes one). SQLite
  already serialises every write transaction (``BEGIN IMMEDIATE``); PostgreSQL takes a
  transaction-level advisory lock on the guild id first.
- ``snapshot=True``: its reads see one moment. SQLite: a deferred ``BEGIN``; PostgreSQL:
  ``REPEATABLE READ READ ONLY``.
- ``durable=True``: committed to disk before it returns, even under a power cut.

A statement that breaks a unique index raises ``UniqueViolation`` naming the index, on
either engine, so the store maps refusals by index name and never by an engine's message.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, TypeVar

from bot.db.rows import Row

__all__ = [
    "POSTGRES_SCHEMES",
    "Database",
    "Statement",
    "Unchanged",
    "UniqueViolation",
    "to_the_end",
]

T = TypeVar("T")
log = logging.getLogger(__name__)

Statement = tuple[str, Any]
"""SQL and its parameters (a sequence for ``?``, a mapping for ``:name``)."""

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class Unchanged(Exception):
    """Raised in a transaction whose guard matched no row: roll back, nothing was written."""


class UniqueViolation(Exception):
    """A statement would have broken the unique index ``index`` (its name in the schema)."""

    def __init__(self, index: str | None, detail: str) -> None:
        super().__init__(detail)
        self.index = index


def _log_orphan(task: asyncio.Task[Any]) -> None:
    """Log the failure of a transaction whose caller was cancelled (nobody else will)."""
    if task.cancelled():
        return
    error = task.exception()
    if error is not None and not isinstance(error, Unchanged):
        log.warning("a transaction failed after its caller was cancelled", exc_info=error)


async def to_the_end(task: asyncio.Task[T], running: set[asyncio.Task[Any]]) -> T:
    """``task``'s result, the task shielded from its caller: a cancelled caller stops
    waiting, but the transaction still commits or rolls back (a failure is then logged).
    ``running`` holds it meanwhile (the event loop keeps only weak references)."""
    running.add(task)
    task.add_done_callback(running.discard)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if not task.done():
            task.add_done_callback(_log_orphan)
        raise


class Database(Protocol):
    """One engine behind the store (SQLite: bot/db/sqlite.py; PostgreSQL: postgres.py)."""

    engine: str
    """"sqlite" or "postgresql", for logs and the benches."""
    location: str
    """Where the data is, for logs (a file path, or the URL without its password)."""
    schema_version: int
    row_lock: str
    """Appended to a SELECT inside a transaction to lock the rows it reads against other
    writers until the end of the transaction ("" where every write transaction is alone)."""

    async def close(self) -> None: ...

    async def run(self, statement: str, parameters: Any = ()) -> list[Row]:
        """One statement on the connection of the current ``shared`` block or transaction."""
        ...

    async def run_alone(self, statement: str, parameters: Any = ()) -> list[Row]:
        """One statement as a transaction of its own."""
        ...

    def shared(self) -> AbstractAsyncContextManager[None]:
        """A block whose ``run`` calls share one connection (no snapshot, no transaction)."""
        ...

    async def batch(self, statements: Sequence[Statement]) -> list[list[Row]]:
        """``statements`` in order inside the current transaction; the first error raised."""
        ...

    async def transaction(
        self,
        body: Callable[[list[list[Row]]], Awaitable[T]],
        *,
        first: Sequence[Statement] = (),
        lock: int | None = None,
        snapshot: bool = False,
        durable: bool = False,
    ) -> T:
        """Run ``first``, then ``body`` with their rows, in one transaction that commits
        when ``body`` returns and rolls back on any exception, which propagates. It always
        ends, even if the caller is cancelled meanwhile."""
        ...

    async def diagnostics(self) -> dict[str, int | str]:
        """The engine's settings that matter to durability and locking, for logs and tests."""
        ...
