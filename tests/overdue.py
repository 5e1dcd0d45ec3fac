"""Time passing without waiting for it, for tests of the real bot.

The host's clocks have the servers' bounds (a turn at least 30 s, a challenge at least
15 s), so a test that needs a game or a challenge to run out moves its deadline into the
past in the database, with a connection of its own (``run_out``), or moves its whole
turn back as if some seconds had passed (``elapse``: the turn's start too, for the
grace and the reminder of turn notifications), and lets the bot's sweep
(in the test's loop, when the test sweeps) or a click find it, as it would after the
real wait. Nothing in the bot knows: the times are the stored ones.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import asyncpg

__all__ = ["WAIT", "elapse", "outage", "run_out"]

WAIT = 10.0
"""Seconds to wait for the bot to record the message's id."""

_GAME = "UPDATE games SET turn_deadline = {at} WHERE message_id = {id} AND status = 'active'"
_CHALLENGE = (
    "UPDATE challenges SET expires_at = {at} WHERE message_id = {id} AND status = 'pending'"
)
_GAME_BACK = (
    "UPDATE games SET updated_at = updated_at - {by}, turn_deadline = turn_deadline - {by}"
    " WHERE message_id = {id}"
)
_CHALLENGE_BACK = (
    "UPDATE challenges SET created_at = created_at - {by}, expires_at = expires_at - {by}"
    " WHERE message_id = {id} AND status = 'pending'"
)


async def run_out(
    database: str | Path | None, message_id: int, *, ago: float = 1.0, missing_ok: bool = False
) -> bool:
    """Make the live game or the pending challenge shown by the message ``message_id``
    overdue by ``ago`` seconds (a negative ``ago``: about to run out, that many seconds
    from now). Whether there was one. The bot records a message's id just after sending
    it, so this waits for it a few seconds; unless ``missing_ok`` (then it tries once),
    it fails if there is none (it ended, or was never stored).

    ``database`` is the bot's SQLite file or PostgreSQL URL."""
    assert database is not None, "the test knows no database"
    loop = asyncio.get_running_loop()
    give_up = loop.time() + (0 if missing_ok else WAIT)
    while not await _change(database, message_id, time.time() - ago, (_GAME, _CHALLENGE)):
        if loop.time() >= give_up:
            assert missing_ok, f"no live game or pending challenge shows message {message_id}"
            return False
        await asyncio.sleep(0.02)
    return True


async def elapse(database: str | Path | None, message_id: int, seconds: float) -> None:
    """Move the game (live or over) or the pending challenge shown by the message
    ``message_id`` back in time by ``seconds``, its start and its deadline both: to the
    bot, ``seconds`` more of it have passed. Waits a few seconds for the bot to record the
    message's id; fails if there is no such game or challenge."""
    assert database is not None, "the test knows no database"
    loop = asyncio.get_running_loop()
    give_up = loop.time() + WAIT
    while not await _change(database, message_id, seconds, (_GAME_BACK, _CHALLENGE_BACK)):
        assert loop.time() < give_up, f"no game or pending challenge shows message {message_id}"
        await asyncio.sleep(0.02)


async def outage(database: str | Path, seconds: float) -> None:
    """Move the bot's last sign of life (the ``alive`` table) back by ``seconds``: to its
    next start, it was down that much longer. Only while no bot runs (a running one
    records itself alive at every sweep)."""
    if isinstance(database, Path):
        with sqlite3.connect(database, timeout=30) as conn:
            conn.execute("UPDATE alive SET alive_at = alive_at - ?", (seconds,))
        conn.close()
        return
    conn = await asyncpg.connect(database)
    try:
        await conn.execute("UPDATE alive SET alive_at = alive_at - $1", seconds)
    finally:
        await conn.close()


async def _change(
    database: str | Path, message_id: int, value: float, queries: tuple[str, str]
) -> bool:
    """Run the game's and the challenge's query (``{at}`` or ``{by}``: ``value``); whether
    exactly one row changed."""
    changed = 0
    if isinstance(database, Path):
        # In a thread: the bot may be writing at the same moment, in this very loop.
        changed = await asyncio.to_thread(_change_sqlite, database, message_id, value, queries)
    else:
        conn = await asyncpg.connect(database)
        try:
            for query in queries:
                sql = query.format(at="$1", by="$1", id="$2")
                status = await conn.execute(sql, value, message_id)
                changed += int(status.split()[-1])
        finally:
            await conn.close()
    return changed == 1


def _change_sqlite(database: Path, message_id: int, value: float, queries: tuple[str, str]) -> int:
    changed = 0
    # A busy timeout: the bot may be writing at the same moment.
    with sqlite3.connect(database, timeout=30) as conn:
        for query in queries:
            sql = query.format(at="?", by="?", id="?")
            values = (value,) * sql.count("?")
            changed += conn.execute(sql, (*values[:-1], message_id)).rowcount
    conn.close()
    return changed
