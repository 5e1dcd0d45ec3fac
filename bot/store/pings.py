"""Turn notifications: the one ping message each member game may have standing.

A ping is ranked by (the move it announced, whether it is the reminder): a newer move
outranks an older one, and at one move the reminder outranks the first ping. ``claim``
records a sent ping only if it outranks the standing one and the game is still live at
that move, in one ``BEGIN IMMEDIATE`` transaction, so the rule holds between the
coroutines of one process and between processes sharing the file.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.models import Game, Shards
from bot.store.backend import Database, Unchanged
from bot.store.rows import GAME_COLUMNS, IS_ACTIVE, IS_ENDED, Row, game_from_row
from bot.store.shards import owned, owned_named, owned_names, owned_values

__all__ = ["Claim", "PingStore", "StandingPing"]

_COLUMNS = "game_id, channel_id, message_id, user_id, move_no, reminder"
STANDING = f"SELECT {_COLUMNS} FROM turn_pings WHERE game_id = ?"
GAME_STATE = f"SELECT move_no, {IS_ACTIVE} FROM games WHERE id = ?"
# Sending this ping would announce nothing new: the game is no longer active at this move,
# or a ping ranking at least as high stands already.
PING_STATE = (
    "SELECT g.move_no, g.status, p.game_id, p.channel_id, p.message_id, p.user_id, p.move_no,"
    " p.reminder FROM games AS g LEFT JOIN turn_pings AS p ON p.game_id = g.id WHERE g.id = ?"
)
UPSERT = (
    f"INSERT INTO turn_pings ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (game_id) DO UPDATE SET channel_id = excluded.channel_id,"
    " message_id = excluded.message_id, user_id = excluded.user_id,"
    " move_no = excluded.move_no, reminder = excluded.reminder"
)
# A game's standing ping, once the game has ended (never while it is live).
TAKE_ENDED = (
    "DELETE FROM turn_pings WHERE game_id = ?"
    f" AND game_id IN (SELECT id FROM games WHERE id = ? AND {IS_ENDED})"
    " RETURNING channel_id, message_id"
)


def reminders_due(shards: Shards | None = None) -> str:
    """Active member games whose player has not been reminded at this move, once the
    reminder is due: ``lead`` (at most max_lead, a fifth of the turn) before the deadline,
    brought forward by ``early`` (the sweep's interval, so a sweep cannot step over it) but
    never into the first half of the turn, where the first ping is still fresh. Only in
    ``shards``' servers, if given (bot/store/shards.py). (now >= d - min(a, b) is written
    as now >= d - a AND now >= d - b: scalar min and max are SQLite's only.)"""
    return (
        f"SELECT {', '.join('g.' + c.strip() for c in GAME_COLUMNS.split(','))} FROM games AS g"
        " LEFT JOIN turn_pings AS p ON p.game_id = g.id"
        f" WHERE g.{IS_ACTIVE} AND g.bot_level IS NULL AND g.turn_deadline IS NOT NULL"
        " AND :now < g.turn_deadline AND g.turn_deadline <= :now + :max_lead + :early"
        " AND :now >= (g.updated_at + g.turn_deadline) / 2.0"
        " AND :now >= g.turn_deadline - :max_lead - :early"
        " AND :now >= g.turn_deadline - (g.turn_deadline - g.updated_at) / 5.0 - :early"
        " AND (p.game_id IS NULL OR p.move_no < g.move_no OR p.reminder = 0)"
        f"{owned_named(shards, 'g.guild_id')} ORDER BY g.turn_deadline LIMIT :limit"
    )


def left_behind(shards: Shards | None = None) -> str:
    """Pings left standing by games that ended without their removal (a crash in between),
    in ``shards``' servers if given (parameters: ``owned_values``, then the limit)."""
    return (
        f"SELECT p.game_id FROM turn_pings AS p JOIN games AS g ON g.id = p.game_id"
        f" WHERE g.{IS_ENDED}{owned(shards, 'g.guild_id')} LIMIT ?"
    )


REMINDERS_DUE = reminders_due()
LEFT_BEHIND = left_behind()


@dataclass(frozen=True, slots=True)
class StandingPing:
    game_id: int
    channel_id: int
    message_id: int
    user_id: int
    move_no: int
    reminder: bool

    @property
    def rank(self) -> tuple[int, bool]:
        return (self.move_no, self.reminder)


@dataclass(frozen=True, slots=True)
class Claim:
    """The outcome of ``claim``: ``won`` (the new ping stands) and, if it did, the
    message it replaced (to delete); if it lost, the caller deletes its own."""

    won: bool
    replaced: StandingPing | None = None


def _standing(row: Row) -> StandingPing:
    return StandingPing(row[0], row[1], row[2], row[3], row[4], bool(row[5]))


class PingStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, game_id: int) -> StandingPing | None:
        rows = await self._db.run_alone(STANDING, (game_id,))
        return _standing(rows[0]) if rows else None

    async def news(
        self, game_id: int, move_no: int, reminder: bool
    ) -> tuple[bool, StandingPing | None]:
        """Whether a ping for ``move_no`` (``reminder``) would outrank the standing one
        while the game is active at that move (a cheap look before sending it), and the
        standing one."""
        rows = await self._db.run_alone(PING_STATE, (game_id,))
        if not rows:
            return False, None
        stored_move, status, *ping = rows[0]
        standing = _standing(ping) if ping[0] is not None else None
        if status != "active" or stored_move != move_no:
            return False, standing
        return standing is None or standing.rank < (move_no, reminder), standing

    async def claim(self, ping: StandingPing) -> Claim:
        """Record ``ping`` (already sent) if it outranks the standing one and its game is
        still active at its move; else leave everything as it was."""

        async def body(rows: list[list[Row]]) -> Claim:
            game_rows, standing_rows = rows
            if not game_rows or not game_rows[0][1] or game_rows[0][0] != ping.move_no:
                raise Unchanged()
            old = _standing(standing_rows[0]) if standing_rows else None
            if old is not None and old.rank >= ping.rank:
                raise Unchanged()
            values = (
                ping.game_id,
                ping.channel_id,
                ping.message_id,
                ping.user_id,
                ping.move_no,
                int(ping.reminder),
            )
            await self._db.run(UPSERT, values)
            return Claim(True, old)

        # The game's row first, locked: claims of one game queue, and a move waits for it.
        first = [(GAME_STATE + self._db.row_lock, (ping.game_id,)), (STANDING, (ping.game_id,))]
        try:
            return await self._db.transaction(body, first=first)
        except Unchanged:
            return Claim(False)

    async def take_ended(self, game_id: int) -> tuple[int, int] | None:
        """Forget an ended game's standing ping: its (channel id, message id), to delete.
        None if there is none, or if the game is still live."""
        rows = await self._db.run_alone(TAKE_ENDED, (game_id, game_id))
        return (rows[0][0], rows[0][1]) if rows else None

    async def reminders_due(
        self,
        now: float,
        *,
        max_lead: float,
        early: float,
        limit: int = 100,
        shards: Shards | None = None,
    ) -> list[Game]:
        """Games whose reminder is due (see REMINDERS_DUE), in ``shards``' servers only if
        given (the sweep's once-only work: see ``bot.models.Shards``)."""
        parameters = {"now": now, "max_lead": max_lead, "early": early, "limit": limit}
        rows = await self._db.run_alone(reminders_due(shards), parameters | owned_names(shards))
        return [game_from_row(row) for row in rows]

    async def left_behind(self, limit: int = 100, *, shards: Shards | None = None) -> list[int]:
        """Ids of ended games whose ping still stands, in ``shards``' servers if given."""
        rows = await self._db.run_alone(left_behind(shards), (*owned_values(shards), limit))
        return [row[0] for row in rows]
