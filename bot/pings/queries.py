"""Turn notifications: the one ping message each member game may have standing, the
turns whose ping a channel refused, and members' choices about them.

The store decides nothing: which game is due a ping, and which ping outranks which, are
``bot.pings.service``'s rules. ``claim`` runs the service's rank rule inside one
transaction that locks the game's row, so it holds between coroutines and processes.
A ping's row is forgotten only once Discord has deleted its message (``forget``), so a
message whose delete failed is found again (``stale``) and retried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.db.backend import Database, Unchanged
from bot.db.rows import (
    G_GAME_COLUMNS,
    GAME_WIDTH,
    IS_ACTIVE,
    PING_COLUMNS,
    Row,
    game_from_row,
    standing_from_row,
)
from bot.db.shards import owned, owned_named, owned_names, owned_values
from bot.models import Game, Shards, StandingPing

__all__ = ["Claim", "PingStore", "StandingPing", "TurnState"]

_COLUMNS = PING_COLUMNS
STANDING = f"SELECT {_COLUMNS} FROM turn_pings WHERE game_id = ?"
GAME_STATE = f"SELECT move_no, {IS_ACTIVE} FROM games WHERE id = ?"
UPSERT = (
    f"INSERT INTO turn_pings ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (game_id) DO UPDATE SET channel_id = excluded.channel_id,"
    " message_id = excluded.message_id, user_id = excluded.user_id,"
    " move_no = excluded.move_no, reminder = excluded.reminder"
)
FORGET = "DELETE FROM turn_pings WHERE game_id = ? AND message_id = ?"
DROP = "DELETE FROM turn_pings WHERE game_id = ?"
REFUSE = (
    "INSERT INTO ping_refusals (game_id, move_no) VALUES (?, ?)"
    " ON CONFLICT (game_id) DO UPDATE SET move_no = excluded.move_no"
)


def waiting(shards: Shards | None = None) -> str:
    """Active member games on a clock whose turn began at or before ``:started``, with
    what the rules need: the standing ping, the member whose Accept started the game,
    the server's choices, both players' choices and the move whose ping was refused.
    Rows ``bot.pings.service.due`` would turn down whatever the clock says are left out,
    so the limit is spent on games that may be due: a turn whose ping was refused or
    whose reminder stands, and one pinged whose deadline is after ``:remind_by``."""
    return (
        f"SELECT {G_GAME_COLUMNS}, p.message_id, p.user_id, p.move_no, p.reminder, c.opponent_id,"
        " s.turn_pings, s.ping_grace, mx.turn_pings, mo.turn_pings, r.move_no"
        " FROM games AS g"
        " LEFT JOIN turn_pings AS p ON p.game_id = g.id"
        " LEFT JOIN ping_refusals AS r ON r.game_id = g.id"
        " LEFT JOIN challenges AS c ON c.game_id = g.id"
        " LEFT JOIN guild_settings AS s ON s.guild_id = g.guild_id"
        " LEFT JOIN member_prefs AS mx ON mx.guild_id = g.guild_id AND mx.user_id = g.x_id"
        " LEFT JOIN member_prefs AS mo ON mo.guild_id = g.guild_id AND mo.user_id = g.o_id"
        f" WHERE g.{IS_ACTIVE} AND g.bot_level IS NULL AND g.turn_deadline IS NOT NULL"
        " AND g.updated_at <= :started AND :now < g.turn_deadline"
        " AND (r.game_id IS NULL OR r.move_no <> g.move_no)"
        " AND (p.game_id IS NULL OR p.move_no <> g.move_no"
        " OR (p.reminder = 0 AND g.turn_deadline <= :remind_by))"
        f"{owned_named(shards, 'g.guild_id')} ORDER BY g.updated_at LIMIT :limit"
    )


def stale(shards: Shards | None = None) -> str:
    """Pings standing for a turn that is over (the game moved on or ended), in
    ``shards``' servers if given (parameters: ``owned_values``, then the limit). The few
    pings lead, each looking up its game (a LEFT JOIN keeps SQLite from scanning games
    instead; the WHERE drops the rows without one, so it means the inner join)."""
    return (
        f"SELECT p.game_id, p.channel_id, p.message_id, g.guild_id FROM turn_pings AS p"
        " LEFT JOIN games AS g ON g.id = p.game_id"
        f" WHERE (p.move_no <> g.move_no OR NOT g.{IS_ACTIVE}){owned(shards, 'g.guild_id')}"
        " LIMIT ?"
    )


@dataclass(frozen=True, slots=True)
class TurnState:
    """A waiting member game and what decides whether its player is due a ping."""

    game: Game
    standing: StandingPing | None
    starter: int | None  # the member whose Accept started the game
    server_default: bool | None  # the server's choice (None: the bot's default)
    server_grace: float | None
    choices: dict[int, bool]  # members who chose, by id
    refused_move: int | None = None  # the move whose ping the channel refused


@dataclass(frozen=True, slots=True)
class Claim:
    """The outcome of ``claim``: ``won`` (the new ping stands) and, if it did, the
    message it replaced (to delete); if it lost, the caller deletes its own."""

    won: bool
    replaced: StandingPing | None = None


def _turn_state(row: Row) -> TurnState:
    game = game_from_row(row[:GAME_WIDTH])
    extra = row[GAME_WIDTH:]
    message_id, user_id, move_no, reminder, starter, default, grace, x_pref, o_pref = extra[:9]
    refused = extra[9]
    standing = None
    if message_id is not None:
        standing = StandingPing(
            game.id, game.channel_id, message_id, user_id, move_no, bool(reminder)
        )
    choices = {
        member: bool(pref)
        for member, pref in ((game.x_id, x_pref), (game.o_id, o_pref))
        if member is not None and pref is not None
    }
    return TurnState(
        game,
        standing,
        starter,
        None if default is None else bool(default),
        grace,
        choices,
        refused,
    )


class PingStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, game_id: int) -> StandingPing | None:
        rows = await self._db.run_alone(STANDING, (game_id,))
        return standing_from_row(rows[0]) if rows else None

    async def claim(
        self, ping: StandingPing, outranks: Callable[[StandingPing | None], bool]
    ) -> Claim:
        """Record ``ping`` (already sent) if its game is still active at its move and
        ``outranks(the standing ping)``; else leave everything as it was."""

        async def body(rows: list[list[Row]]) -> Claim:
            game_rows, standing_rows = rows
            if not game_rows or not game_rows[0][1] or game_rows[0][0] != ping.move_no:
                raise Unchanged()
            old = standing_from_row(standing_rows[0]) if standing_rows else None
            if not outranks(old):
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

    async def forget(self, game_id: int, message_id: int) -> None:
        """Forget a ping whose message Discord deleted (or no longer knows)."""
        await self._db.run_alone(FORGET, (game_id, message_id))

    async def drop(self, game_id: int) -> None:
        """Forget the game's ping, whatever its message: one the bot can no longer reach
        (its channel was deleted, or the bot left the server)."""
        await self._db.run_alone(DROP, (game_id,))

    async def refuse(self, game_id: int, move_no: int) -> None:
        """Remember that the channel refused the ping of ``game_id``'s move ``move_no``."""
        await self._db.run_alone(REFUSE, (game_id, move_no))

    async def waiting(
        self,
        now: float,
        started: float,
        remind_by: float,
        *,
        limit: int = 500,
        shards: Shards | None = None,
    ) -> list[TurnState]:
        """The member games waiting for a move since ``started`` or before (see
        ``waiting``), oldest turn first, in ``shards``' servers only if given."""
        parameters = {"now": now, "started": started, "remind_by": remind_by, "limit": limit}
        parameters |= owned_names(shards)
        rows = await self._db.run_alone(waiting(shards), parameters)
        return [_turn_state(row) for row in rows]

    async def stale(
        self, limit: int = 500, *, shards: Shards | None = None
    ) -> list[tuple[int, int, int, int]]:
        """(game id, channel id, message id, guild id) of pings whose turn is over."""
        rows = await self._db.run_alone(stale(shards), (*owned_values(shards), limit))
        return [(row[0], row[1], row[2], row[3]) for row in rows]
