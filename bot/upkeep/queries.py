"""The long run: when the bot was last alive, servers it left, and pruning in batches.

- ``alive``: each process's last sign of life, under one key per shard it runs (``*`` for
  a process that runs them all). ``resume`` reads it and moves the deadlines of live games
  and the expiries of pending challenges in the process's servers on by what its
  ``decide`` callback says, and records the process alive, in one transaction, so a crash
  cannot move them twice.
- ``left_guilds``: servers the bot was removed from; erased later unless it comes back.
- ``prune``: rows nobody needs any more, deleted a batch at a time (each batch one
  statement, ``DELETE ... WHERE key IN (SELECT ... LIMIT n)`` on both engines), so that
  no write lock is held for long.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.db.backend import Database, Statement
from bot.db.rows import (
    CHALLENGE_COLUMNS,
    GAME_COLUMNS,
    IS_ACTIVE,
    IS_ENDED,
    IS_LIVE,
    IS_PENDING,
    Row,
    challenge_from_row,
    game_from_row,
)
from bot.db.shards import owned, owned_values
from bot.models import Challenge, Game, Shards

__all__ = ["Pruned", "UpkeepStore"]


def _alive_of(count: int) -> str:
    return f"SELECT alive_at FROM alive WHERE key IN ({', '.join('?' * count)})"


LATEST_ALIVE = "SELECT MAX(alive_at) FROM alive"
BEAT = (
    "INSERT INTO alive (key, alive_at) VALUES (?, ?)"
    " ON CONFLICT (key) DO UPDATE SET alive_at = excluded.alive_at"
)


FORGET_ALIVE = "DELETE FROM alive WHERE key = ?"
"""The key of a server's outage, once it is over."""


def _one_server(guild_id: int | None) -> str:
    return "" if guild_id is None else " AND guild_id = ?"


def shift_deadlines(shards: Shards | None, guild_id: int | None = None) -> str:
    """Live games' turn deadlines on by a number of seconds (then ``owned_values``, then
    the server's id if one is given)."""
    return (
        "UPDATE games SET turn_deadline = turn_deadline + ?"
        f" WHERE {IS_ACTIVE} AND turn_deadline IS NOT NULL{owned(shards)}{_one_server(guild_id)}"
    )


def shift_expiries(shards: Shards | None, guild_id: int | None = None) -> str:
    """Pending challenges' expiries on by a number of seconds (as ``shift_deadlines``)."""
    return (
        "UPDATE challenges SET expires_at = expires_at + ?"
        f" WHERE {IS_PENDING}{owned(shards)}{_one_server(guild_id)}"
    )


def known_guilds(shards: Shards | None) -> str:
    """The servers with games, challenges, players or settings, in ``shards``' servers,
    but those already noted as left (then ``owned_values`` four times)."""
    parts = " UNION ".join(
        f"SELECT guild_id FROM {table} WHERE 1 = 1{owned(shards)}"
        for table in ("games", "challenges", "players", "guild_settings")
    )
    return f"SELECT guild_id FROM ({parts}) AS known EXCEPT SELECT guild_id FROM left_guilds"


# -- what a server, or a channel, or a message leaves behind ------------------------------

LEAVE = (
    "INSERT INTO left_guilds (guild_id, left_at) VALUES (?, ?) ON CONFLICT (guild_id) DO NOTHING"
)
HAS_LEFT = "SELECT 1 FROM left_guilds WHERE guild_id = ?"
BACK = "DELETE FROM left_guilds WHERE guild_id = ? RETURNING guild_id"


def left_before(shards: Shards | None) -> str:
    """Servers left at or before a time (then ``owned_values``, then a limit)."""
    return (
        f"SELECT guild_id FROM left_guilds WHERE left_at <= ?{owned(shards)}"
        " ORDER BY left_at LIMIT ?"
    )


GUILD_LIVE = f"SELECT {GAME_COLUMNS} FROM games WHERE guild_id = ? AND {IS_LIVE} ORDER BY id"
CHANNEL_LIVE = (
    f"SELECT {GAME_COLUMNS} FROM games WHERE guild_id = ? AND channel_id = ? AND {IS_LIVE}"
    " ORDER BY id"
)
WITHDRAW_GUILD = (
    f"UPDATE challenges SET status = 'withdrawn' WHERE guild_id = ? AND {IS_PENDING}"
    f" RETURNING {CHALLENGE_COLUMNS}"
)
WITHDRAW_CHANNEL = (
    "UPDATE challenges SET status = 'withdrawn' WHERE guild_id = ? AND channel_id = ?"
    f" AND {IS_PENDING} RETURNING {CHALLENGE_COLUMNS}"
)
WITHDRAW_MESSAGE = (
    "UPDATE challenges SET status = 'withdrawn', message_id = NULL WHERE guild_id = ?"
    f" AND channel_id = ? AND {IS_PENDING} AND message_id = ? RETURNING {CHALLENGE_COLUMNS}"
)
"""Its message is forgotten too, so that nothing tries to redraw it."""
FORGET_MESSAGE = "UPDATE games SET message_id = NULL WHERE id = ? AND message_id = ?"
"""A deleted board: nothing should try to redraw it."""

# -- pruning ------------------------------------------------------------------------------

PRUNE_COOLDOWNS = (
    "DELETE FROM cooldowns WHERE (guild_id, user_id, action, target) IN"
    " (SELECT guild_id, user_id, action, target FROM cooldowns WHERE until <= ? LIMIT ?)"
)
PRUNE_CHALLENGES = (
    "DELETE FROM challenges WHERE id IN (SELECT id FROM challenges"
    " WHERE status <> 'pending' AND expires_at < ? LIMIT ?)"
)
"""An ended challenge ended at its expiry at the latest (answered before, or expired)."""
PRUNE_PINGS = (
    "DELETE FROM turn_pings WHERE game_id IN (SELECT p.game_id FROM turn_pings AS p"
    " CROSS JOIN games AS g WHERE g.id = p.game_id"
    f" AND g.{IS_ENDED} AND g.updated_at < ? LIMIT ?)"
)
"""Rows of games that ended long ago (the sweep removes a fresh one with its message).
CROSS JOIN keeps SQLite reading the small table first (PostgreSQL plans it as a join),
not every ended game older than the cut-off, a list that only grows (see
docs/decisions.md#pruning-reads-a-small-table-first)."""
PRUNE_CALLOFFS = (
    "DELETE FROM calloffs WHERE game_id IN (SELECT c.game_id FROM calloffs AS c"
    " JOIN games AS g ON g.id = c.game_id"
    f" WHERE (g.{IS_ENDED} OR g.move_no <> c.move_no) AND c.created_at < ? LIMIT ?)"
)
"""Proposals that can no longer be accepted: their game ended or moved on."""
PRUNE_REVIEWS = (
    "DELETE FROM reviews WHERE game_id IN (SELECT game_id FROM (SELECT r.game_id, g.updated_at"
    " FROM reviews AS r JOIN games AS g ON g.id = r.game_id ORDER BY r.game_id LIMIT :batch)"
    " AS oldest WHERE updated_at < :before)"
)
"""Among the ``batch`` reviews of the oldest games (ids grow with time): a look at the
head of the table, however many reviews of recent games it holds, so a round never reads
every review (see docs/decisions.md#pruning-reads-a-small-table-first)."""
PRUNE_GAMES = (
    "DELETE FROM games WHERE id IN"
    f" (SELECT id FROM games WHERE {IS_ENDED} AND updated_at < ? LIMIT ?)"
)
"""Ended games (HISTORY_DAYS); their reviews, pings and call-offs go with them, and the
rows that name them as a rematch or a challenge's game keep NULL there."""


@dataclass(frozen=True, slots=True)
class Pruned:
    """Rows deleted by one round of pruning, per kind."""

    cooldowns: int = 0
    challenges: int = 0
    pings: int = 0
    calloffs: int = 0
    reviews: int = 0
    games: int = 0

    @property
    def total(self) -> int:
        kinds = (self.cooldowns, self.challenges, self.pings, self.calloffs, self.reviews)
        return sum(kinds) + self.games


class UpkeepStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    # -- alive ----------------------------------------------------------------------------

    async def resume(
        self,
        keys: Sequence[str],
        now: float,
        decide: Callable[[float | None], float],
        shards: Shards | None,
        guild_id: int | None = None,
    ) -> float:
        """Record ``keys`` alive at ``now`` and move the live deadlines and pending expiries
        of ``shards``' servers on by ``decide(last)`` seconds, if more than 0, in one
        transaction; returns that shift. ``last``: when ``keys`` were last alive (the
        oldest of them), else the newest any process was (the shards were laid out
        otherwise), else None (never). ``decide`` must not await or touch the store.
        With ``guild_id``, only that server's are moved (an outage of one server)."""
        first = [(_alive_of(len(keys)) + self._db.row_lock, tuple(keys)), (LATEST_ALIVE, ())]

        async def body(opened: list[list[Row]]) -> float:
            mine, ((latest,),) = opened
            if len(mine) == len(keys):
                last: float | None = min(float(row[0]) for row in mine)
            else:
                last = None if latest is None else float(latest)
            shift = decide(last)
            writes: list[Statement] = [(BEAT, (key, now)) for key in keys]
            if shift > 0:
                owned_ = (*owned_values(shards), *(() if guild_id is None else (guild_id,)))
                writes.append((shift_deadlines(shards, guild_id), (shift, *owned_)))
                writes.append((shift_expiries(shards, guild_id), (shift, *owned_)))
            await self._db.batch(writes)
            return shift

        return await self._db.transaction(body, first=first)

    async def forget_alive(self, key: str) -> None:
        """Forget the key of an outage that is over."""
        await self._db.run_alone(FORGET_ALIVE, (key,))

    # -- servers left ---------------------------------------------------------------------

    async def known(self, shards: Shards | None) -> set[int]:
        """The servers the bot holds data of in ``shards``' servers, and has not left."""
        rows = await self._db.run_alone(known_guilds(shards), owned_values(shards) * 4)
        return {int(row[0]) for row in rows}

    async def leave(self, guild_id: int, now: float) -> None:
        """Note that the bot was removed from the server at ``now`` (kept if noted before)."""
        await self._db.run_alone(LEAVE, (guild_id, now))

    async def back(self, guild_id: int) -> bool:
        """The bot is in the server again: forget that it left. Whether it had. A read
        first: this is asked for every server at every start, and almost none has left."""
        if not await self._db.run_alone(HAS_LEFT, (guild_id,)):
            return False
        return bool(await self._db.run_alone(BACK, (guild_id,)))

    async def left_before(self, when: float, shards: Shards | None, limit: int) -> list[int]:
        """Servers left at or before ``when``, in ``shards``' servers, oldest first."""
        rows = await self._db.run_alone(left_before(shards), (when, *owned_values(shards), limit))
        return [int(row[0]) for row in rows]

    async def live_games(self, guild_id: int, channel_id: int | None = None) -> list[Game]:
        """The server's (or one channel's) live games, oldest first."""
        if channel_id is None:
            rows = await self._db.run_alone(GUILD_LIVE, (guild_id,))
        else:
            rows = await self._db.run_alone(CHANNEL_LIVE, (guild_id, channel_id))
        return [game_from_row(row) for row in rows]

    async def forget_message(self, game_id: int, message_id: int) -> None:
        """The game's board was deleted: forget it (its buttons went with it)."""
        await self._db.run_alone(FORGET_MESSAGE, (game_id, message_id))

    async def withdraw(
        self, guild_id: int, channel_id: int | None = None, message_id: int | None = None
    ) -> list[Challenge]:
        """Withdraw the pending challenges of a server, of one of its channels, or shown by
        one message there; returns them as withdrawn."""
        if channel_id is None:
            rows = await self._db.run_alone(WITHDRAW_GUILD, (guild_id,))
        elif message_id is None:
            rows = await self._db.run_alone(WITHDRAW_CHANNEL, (guild_id, channel_id))
        else:
            rows = await self._db.run_alone(WITHDRAW_MESSAGE, (guild_id, channel_id, message_id))
        return sorted(map(challenge_from_row, rows), key=lambda c: c.id)

    # -- pruning --------------------------------------------------------------------------

    async def prune(
        self,
        now: float,
        *,
        challenges_before: float,
        pings_before: float,
        reviews_before: float,
        games_before: float | None,
        batch: int,
    ) -> Pruned:
        """Delete at most ``batch`` rows of each kind: cooldowns run out by ``now``,
        challenges ended before ``challenges_before``, ping rows of games ended before
        ``pings_before``, call-off proposals that can no longer be accepted, reviews of
        games ended before ``reviews_before``, and (unless None) ended games that ended
        before ``games_before``. Each statement stands alone."""
        counts = []
        for statement, before in (
            (PRUNE_COOLDOWNS, now),
            (PRUNE_CHALLENGES, challenges_before),
            (PRUNE_PINGS, pings_before),
            (PRUNE_CALLOFFS, now),
            (PRUNE_REVIEWS, reviews_before),
            (PRUNE_GAMES, games_before),
        ):
            if before is None:
                counts.append(0)
                continue
            counts.append(await self._delete(statement, before, batch))
        return Pruned(*counts)

    async def _delete(self, statement: str, before: float, batch: int) -> int:
        values = {"before": before, "batch": batch} if ":batch" in statement else (before, batch)
        rows = await self._db.run_alone(statement + " RETURNING 1", values)
        return len(rows)
