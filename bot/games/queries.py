"""The games' queries (``Store``): games (a game's end writes the players' rows and
records, which ``bot.stats.queries`` reads), what a channel holds, and the meta table, on
SQLite or PostgreSQL (``bot.db``); ``Store.open`` opens the database for the bot.

The store decides nothing: the service reads a game, works out its next state (and, at
its end, the players' new ratings, through the ``settle`` callback of ``end_game``) and
hands that back; the store writes it only if the game is still where the service read
it. Those guards live in the SQL itself, a conditional ``UPDATE ... WHERE id = ? AND
move_no = ? AND status = ?`` and partial unique indexes (one live game per channel, one
server slot per live game), so they hold across processes sharing the database, not just
within this one. What reads and then writes on what it read takes the server's lock
(``lock=guild_id``: one server's starts, ends, settings and erasures queue).

Durability: the end of a game (``end_game``: result, ratings, records) and erasures are
``durable``: once they return they survive a power cut, and so does every write committed
before them. Other commits survive the bot being killed, even with SIGKILL, but a power
cut may lose the last moves (SQLite: WAL with ``synchronous = NORMAL``; PostgreSQL:
``synchronous_commit = off``). ``open(..., synchronous="FULL")`` makes every commit durable.

Each feature's other tables have queries of their own on the same engine (``store.db``):
``ChallengeQueries(store.db)``, ... (``bot.challenges.queries``, ``bot.pings.queries``,
``bot.games.server_queries``, ``bot.stats.queries``, ``bot.stats.review_queries``,
``bot.privacy.queries``, ``bot.pings.calloff_queries``, ``bot.upkeep.queries``); refusals
are in bot/games/refusals.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot.db.backend import Database, Statement, Unchanged, UniqueViolation
from bot.db.opening import open_database
from bot.db.rows import (
    GAME_WIDTH,
    Row,
    challenge_from_row,
    game_from_row,
    new_game_values,
    player_from_row,
    player_values,
    rated_values,
    save_values,
    standing_from_row,
)
from bot.db.shards import owned_values
from bot.db.sqlite import SqliteDatabase
from bot.games import sql
from bot.games.limits import FREE_SEATS, claim_places, live_games_of, seat_rows
from bot.games.refusals import (
    ChannelTaken,
)
from bot.models import (
    Challenge,
    Game,
    PlayerRow,
    Settlement,
    Shards,
    StandingPing,
)

__all__ = ["ChannelView", "Store", "insert_with_places"]


async def insert_with_places(
    db: Database, game: Game, exclusive: bool, per_member: int, per_server: int
) -> Game:
    """In a transaction: insert ``game`` with its places (its server slot and its members'
    seats, else LimitReached); ChannelTaken if ``exclusive`` and the channel is taken."""
    slot, seats = await claim_places(db, game, per_member, per_server)
    values = new_game_values(game, 0 if exclusive else None, slot)
    try:
        (row,) = await db.run(sql.INSERT_GAME, values)
    except UniqueViolation as error:
        if error.index == "games_live_per_channel":
            raise ChannelTaken(str(error)) from error
        raise
    stored = game_from_row(row)
    await db.batch(seat_rows(stored, seats))
    return stored


@dataclass(frozen=True, slots=True)
class ChannelView:
    """What is going on in one channel: its live games and its unexpired pending challenges."""

    games: tuple[Game, ...]
    challenges: tuple[Challenge, ...]


class Store:
    """The bot's database. Create with ``await Store.open(path)``; close with ``close()``.

    Each method runs either statements that stand alone, each atomic on its own, or
    one transaction (see bot/db/backend.py).
    """

    def __init__(self, db: Database) -> None:
        self.db = db  # the engine: each feature's queries (``PingStore(store.db)``) run on it
        self.engine: str = db.engine  # "sqlite" or "postgresql"
        self.location: str = db.location
        self.schema_version: int = db.schema_version

    @classmethod
    async def open(
        cls,
        target: str | os.PathLike[str],
        migrations_dir: str | os.PathLike[str] | None = None,
        *,
        synchronous: str = "NORMAL",
        busy_timeout_ms: int = 10_000,
    ) -> Store:
        """Open the database (``open_database``: its errors too) as the bot's store."""
        database = await open_database(
            target, migrations_dir, synchronous=synchronous, busy_timeout_ms=busy_timeout_ms
        )
        return cls(database)

    async def close(self) -> None:
        """Close once the call in progress is done (a transaction always runs to its end)."""
        await self.db.close()

    # -- meta and diagnostics ---------------------------------------------------------------

    async def get_meta(self, key: str) -> str | None:
        rows = await self.db.run_alone(sql.GET_META, (key,))
        return rows[0][0] if rows else None

    async def set_meta(self, key: str, value: str) -> None:
        await self.db.run_alone(sql.SET_META, (key, value))

    async def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check``: "ok", or the problems found, one per line.
        PostgreSQL checks its own pages; it answers "ok"."""
        if self.engine != "sqlite":
            return "ok"
        rows = await self.db.run_alone("PRAGMA integrity_check")
        return "\n".join(str(row[0]) for row in rows)

    async def settings(self) -> dict[str, int | str]:
        """The engine's settings the store manages, for logs and tests (SQLite: its
        PRAGMAs, synchronous by name; PostgreSQL: version, synchronous_commit, isolation)."""
        return await self.db.diagnostics()

    async def trace(self, callback: Callable[[str], object] | None) -> None:
        """SQLite only: have ``callback`` called (on the database thread) with every
        statement the connection runs, parameters filled in; None stops. For tests."""
        if not isinstance(self.db, SqliteDatabase):
            raise NotImplementedError("tracing is for SQLite only")
        await self.db.set_trace_callback(callback)

    # -- games ------------------------------------------------------------------------------

    async def get_game(self, game_id: int) -> Game | None:
        rows = await self.db.run_alone(sql.GET_GAME, (game_id,))
        return game_from_row(rows[0]) if rows else None

    async def game_and_ping(self, game_id: int) -> tuple[Game | None, StandingPing | None]:
        """The game and its standing turn ping (if any), in one statement."""
        rows = await self.db.run_alone(sql.GAME_AND_PING, (game_id,))
        if not rows:
            return None, None
        row = rows[0]
        ping = standing_from_row(row[GAME_WIDTH:]) if row[GAME_WIDTH] is not None else None
        return game_from_row(row[:GAME_WIDTH]), ping

    async def insert_game(
        self, game: Game, *, exclusive: bool, per_member: int, per_server: int
    ) -> Game:
        """Store a new game (its ``id`` is ignored) and return it as stored, with its id.

        In one transaction it takes a place under the server's cap (``per_server``) and
        under each member's limit (``per_member``), else LimitReached (bot/games/limits.py).
        ``exclusive`` claims the channel, else ChannelTaken (games_live_per_channel).
        """

        async def body(_opened: list[list[Row]]) -> Game:
            return await insert_with_places(self.db, game, exclusive, per_member, per_server)

        return await self.db.transaction(body, lock=game.guild_id)

    async def save_game(self, new: Game, expected: Game) -> bool:
        """Write ``new``'s moves, status, times over the game if it is still at
        ``expected``'s move number and status (else False, changing nothing). One
        statement in autocommit; a game's end goes through ``end_game`` instead.
        """
        return bool(await self.db.run_alone(sql.SAVE_GAME, save_values(new, expected)))

    async def end_game(
        self,
        new: Game,
        expected: Game,
        settle: Callable[[Mapping[int, PlayerRow]], Settlement],
    ) -> bool:
        """End the game: write ``new`` as ``save_game`` would, plus what ``settle`` decides,
        in one transaction, committed with synchronous = FULL (durable when this returns).

        ``settle`` gets the current row of each member in ``new.human_ids`` (a default
        ``PlayerRow`` for one without a row) and must not await or touch the store: it runs
        inside the transaction, with the write lock held. Whatever it raises rolls back and
        propagates. Its ``players`` rows are written as they are (absolute values), its
        ``bot_record`` is added to the member's record for that level, and the game's
        ``rated`` is set from it. Returns False, writing nothing, if the game was no longer
        at ``expected`` (``settle`` may have been called all the same).
        """
        members = new.human_ids
        first = [(sql.SAVE_GAME, save_values(new, expected))]
        if members:
            first.append((sql.players_of(len(members)), (new.guild_id, *members)))

        async def body(opened: list[list[Row]]) -> None:
            if not opened[0]:
                raise Unchanged
            rows = {member: PlayerRow() for member in members}
            for row in opened[1] if members else ():
                rows[row[0]] = player_from_row(row[1:])
            settlement = settle(rows)
            writes: list[Statement] = [(sql.SET_RATED, rated_values(settlement, new.id))]
            writes.append((FREE_SEATS, (new.id,)))
            if settlement.players:
                values = player_values(new.guild_id, settlement.players, new.updated_at)
                writes.append((sql.write_players(len(settlement.players)), values))
            if settlement.bot_record is not None:
                user, level, record = settlement.bot_record
                added = (record.wins, record.losses, record.draws)
                writes.append((sql.ADD_BOT_RECORD, (new.guild_id, user, level, *added)))
            await self.db.batch(writes)

        try:
            await self.db.transaction(body, first=first, lock=new.guild_id, durable=True)
        except Unchanged:
            return False
        return True

    async def set_game_message(self, game_id: int, message_id: int) -> bool:
        """Remember the message showing the game's board; False if there is no such game."""
        return bool(await self.db.run_alone(sql.SET_GAME_MESSAGE, (message_id, game_id)))

    async def live_games(self, guild_id: int, channel_id: int) -> list[Game]:
        """The channel's live games, newest first."""
        return [
            game_from_row(r)
            for r in await self.db.run_alone(sql.LIVE_GAMES, (guild_id, channel_id))
        ]

    async def live_games_of(self, guild_id: int, *members: int) -> dict[int, list[Game]]:
        """Each member's live games in a guild (the ones holding their seats), oldest
        first, in one statement."""
        rows = await self.db.run_alone(live_games_of(len(members)), (guild_id, *members))
        found: dict[int, list[Game]] = {member: [] for member in members}
        for row in rows:
            found[row[0]].append(game_from_row(row[1:]))
        return found

    async def games_bot_to_move(self, shards: Shards | None = None) -> list[Game]:
        """Games waiting for the bot's move (after a crash, say), oldest first; with
        ``shards``, only in the servers they own (see ``bot.models.Shards``)."""
        rows = await self.db.run_alone(sql.games_bot_to_move(shards), owned_values(shards))
        return [game_from_row(r) for r in rows]

    async def overdue_games(self, now: float, shards: Shards | None = None) -> list[Game]:
        """Active games whose turn deadline is at or before ``now``, by deadline; with
        ``shards``, only in the servers they own."""
        rows = await self.db.run_alone(sql.overdue_games(shards), (now, *owned_values(shards)))
        return [game_from_row(r) for r in rows]

    async def history(self, guild_id: int, user_id: int | None, limit: int) -> list[Game]:
        """Ended (finished or abandoned) games of a guild, or of one member in it, newest first."""
        if user_id is None:
            rows = await self.db.run_alone(sql.GUILD_HISTORY, (guild_id, limit))
        else:
            parameters = (guild_id, user_id, guild_id, user_id, limit)
            rows = await self.db.run_alone(sql.MEMBER_HISTORY, parameters)
        return [game_from_row(r) for r in rows]

    # -- challenges -------------------------------------------------------------------------

    async def channel_view(self, guild_id: int, channel_id: int, now: float) -> ChannelView:
        """The channel's live games (newest first) and its pending challenges not yet past
        expiry. Two reads, not one snapshot: it is the service's check before it starts
        something, and the unique index on live games guards the start itself."""
        async with self.db.shared():
            games = await self.db.run(sql.LIVE_GAMES, (guild_id, channel_id))
            challenges = await self.db.run(sql.PENDING_CHALLENGES, (guild_id, channel_id, now))
        return ChannelView(
            tuple(map(game_from_row, games)), tuple(map(challenge_from_row, challenges))
        )
