"""Time running out without waiting for it, for tests of the real bot process.

The host's clocks have the servers' bounds (a turn at least 30 s, a challenge at least
15 s), so a test that needs a game or a challenge to run out moves its deadline into the
past in the database, with a connection of its own, and lets the bot's sweep
(``SWEEP_INTERVAL_SECONDS``, 1 s in the tests) or a click find it overdue, as it would
after the real wait. Nothing in the bot knows: the deadline is the stored one.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import asyncpg

__all__ = ["run_out"]

_GAME = "UPDATE games SET turn_deadline = {at} WHERE message_id = {id} AND status = 'active'"
_CHALLENGE = (
    "UPDATE challenges SET expires_at = {at} WHERE message_id = {id} AND status = 'pending'"
)


async def run_out(database: str | Path | None, message_id: int, *, ago: float = 1.0) -> None:
    """Make the live game or the pending challenge shown by the message ``message_id``
    overdue by ``ago`` seconds; fails if there is none (it ended, or is not stored yet).

    ``database`` is the bot's SQLite file or PostgreSQL URL."""
    assert database is not None, "the test knows no database"
    at = time.time() - ago
    if isinstance(database, Path):
        changed = 0
        # A busy timeout: the bot may be writing at the same moment.
        with sqlite3.connect(database, timeout=30) as conn:
            for query in (_GAME, _CHALLENGE):
                changed += conn.execute(query.format(at="?", id="?"), (at, message_id)).rowcount
        conn.close()
    else:
        conn = await asyncpg.connect(database)
        try:
            changed = 0
            for query in (_GAME, _CHALLENGE):
                status = await conn.execute(query.format(at="$1", id="$2"), at, message_id)
                changed += int(status.split()[-1])
        finally:
            await conn.close()
    assert changed == 1, f"no live game or pending challenge shows message {message_id}"
