"""A server's settings, allowed channels, cooldowns and challenge consent, and the reads
that tell whether a member's new game or challenge would be barred before it is tried.

Settings are stored as overrides: a NULL column means "the bot's default", so a host who
changes a default changes it for every server that did not choose otherwise. The service
resolves them (``bot.games.servers``); the store only reads and writes them.

A cooldown is claimed by one statement (an upsert that only succeeds once the previous
one ran out), so two clicks, or two processes, cannot both get through.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.db.backend import Database
from bot.db.rows import Row, challenge_from_row
from bot.games import sql
from bot.games.limits import check_places
from bot.models import Challenge
from bot.tunables import SERVER, SWITCHES

__all__ = ["CLAIM_COOLDOWN", "COOLDOWN_UNTIL", "EXTEND_COOLDOWN", "OVERRIDES", "GuildStore"]

OVERRIDES = (*(setting.name for setting in SERVER), *SWITCHES)
"""The guild_settings columns a moderator may set (``bot.tunables``: each server setting
is stored in the column of its name), in the order of GET_SETTINGS."""

GET_SETTINGS = f"SELECT {', '.join(OVERRIDES)} FROM guild_settings WHERE guild_id = ?"
PUT_SETTINGS = (
    f"INSERT INTO guild_settings (guild_id, {', '.join(OVERRIDES)}, updated_at)"
    f" VALUES (?, {', '.join('?' * len(OVERRIDES))}, ?) ON CONFLICT (guild_id) DO UPDATE SET "
    + ", ".join(f"{name} = excluded.{name}" for name in (*OVERRIDES, "updated_at"))
)
GET_PREF = "SELECT turn_pings FROM member_prefs WHERE guild_id = ? AND user_id = ?"
PUT_PREF = (
    "INSERT INTO member_prefs (guild_id, user_id, turn_pings, since) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (guild_id, user_id) DO UPDATE SET turn_pings = excluded.turn_pings,"
    " since = excluded.since"
)
GET_CHANNELS = "SELECT channel_id FROM game_channels WHERE guild_id = ? ORDER BY channel_id"
CLEAR_CHANNELS = "DELETE FROM game_channels WHERE guild_id = ?"
ADD_CHANNEL = (
    "INSERT INTO game_channels (guild_id, channel_id) VALUES (?, ?) ON CONFLICT DO NOTHING"
)

IS_BLOCKED = "SELECT 1 FROM challenge_blocks WHERE guild_id = ? AND user_id = ?"
BLOCK = (
    "INSERT INTO challenge_blocks (guild_id, user_id, since) VALUES (?, ?, ?)"
    " ON CONFLICT DO NOTHING"
)
UNBLOCK = "DELETE FROM challenge_blocks WHERE guild_id = ? AND user_id = ?"
CHALLENGED_SINCE = (
    "SELECT opponent_id, MAX(created_at) FROM challenges"
    " WHERE guild_id = ? AND challenger_id = ? AND created_at >= ? GROUP BY opponent_id"
)

CLAIM_COOLDOWN = (
    "INSERT INTO cooldowns (guild_id, user_id, action, target, until) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (guild_id, user_id, action, target) DO UPDATE SET until = excluded.until"
    " WHERE cooldowns.until <= ? RETURNING until"
)
"""Start a cooldown (parameters: guild, user, action, target, until, now): a row comes
back if it was claimed, none while the previous one still runs."""
EXTEND_COOLDOWN = (
    "INSERT INTO cooldowns (guild_id, user_id, action, target, until) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (guild_id, user_id, action, target) DO UPDATE SET until = excluded.until"
    " WHERE cooldowns.until < excluded.until"
)
"""Make a cooldown run at least until the given time (parameters: guild, user, action,
target, until)."""
COOLDOWN_UNTIL = (
    "SELECT until FROM cooldowns WHERE guild_id = ? AND user_id = ? AND action = ? AND target = ?"
)


class GuildStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def settings(self, guild_id: int) -> tuple[dict[str, Any], tuple[int, ...]]:
        """(the server's overrides by column, None for unset; its allowed channels)."""
        async with self._db.shared():
            rows = await self._db.run(GET_SETTINGS, (guild_id,))
            channels = await self._db.run(GET_CHANNELS, (guild_id,))
        values: Row = rows[0] if rows else (None,) * len(OVERRIDES)
        return dict(zip(OVERRIDES, values, strict=True)), tuple(r[0] for r in channels)

    async def put_settings(
        self,
        guild_id: int,
        overrides: Mapping[str, Any],
        channels: tuple[int, ...],
        now: float,
    ) -> None:
        """Replace the server's overrides (missing keys: unset) and allowed channels."""
        unknown = set(overrides) - set(OVERRIDES)
        if unknown:
            raise ValueError(f"not a server setting: {sorted(unknown)}")
        values = (guild_id, *(overrides.get(name) for name in OVERRIDES), now)
        writes = [(PUT_SETTINGS, values), (CLEAR_CHANNELS, (guild_id,))]
        writes += [(ADD_CHANNEL, (guild_id, channel)) for channel in channels]

        async def body(_opened: list[list[Row]]) -> None:
            await self._db.batch(writes)

        await self._db.transaction(body, lock=guild_id)

    async def blocks_challenges(self, guild_id: int, user_id: int) -> bool:
        return bool(await self._db.run_alone(IS_BLOCKED, (guild_id, user_id)))

    async def set_challenge_block(
        self, guild_id: int, user_id: int, blocked: bool, now: float
    ) -> None:
        if blocked:
            await self._db.run_alone(BLOCK, (guild_id, user_id, now))
        else:
            await self._db.run_alone(UNBLOCK, (guild_id, user_id))

    async def cooldown_until(
        self, guild_id: int, user_id: int, action: str, target: int
    ) -> float | None:
        """When the member's cooldown of ``action`` towards ``target`` runs out (perhaps
        already past); None if there never was one."""
        rows = await self._db.run_alone(COOLDOWN_UNTIL, (guild_id, user_id, action, target))
        return float(rows[0][0]) if rows else None

    async def challenged_since(
        self, guild_id: int, challenger_id: int, since: float
    ) -> dict[int, float]:
        """The members ``challenger_id`` challenged here from ``since`` on (whatever became
        of the challenge), each with the time of the latest."""
        rows = await self._db.run_alone(CHALLENGED_SINCE, (guild_id, challenger_id, since))
        return {row[0]: row[1] for row in rows}

    async def pending_of(self, guild_id: int, challenger_id: int) -> Challenge | None:
        """The challenger's pending challenge in the server (perhaps past its expiry, until
        the sweep or an answer closes it), which bars a new one; None if there is none."""
        rows = await self._db.run_alone(sql.PENDING_OF, (guild_id, challenger_id))
        return challenge_from_row(rows[0]) if rows else None

    async def check_places(
        self, guild_id: int, members: tuple[int, ...], *, per_member: int, per_server: int
    ) -> None:
        """LimitReached if a new live game of ``members`` would find no place under the
        server's cap or a member's limit, as ``Store.insert_game`` would. Nothing is
        claimed: the insert still claims, or refuses, in its own transaction."""
        async with self._db.shared():
            await check_places(self._db, guild_id, members, per_member, per_server)

    async def member_choice(self, guild_id: int, user_id: int) -> bool | None:
        """Whether the member chose turn notifications on or off here (None: never chose)."""
        rows = await self._db.run_alone(GET_PREF, (guild_id, user_id))
        return bool(rows[0][0]) if rows else None

    async def set_member_choice(self, guild_id: int, user_id: int, on: bool, now: float) -> None:
        await self._db.run_alone(PUT_PREF, (guild_id, user_id, int(on), now))
