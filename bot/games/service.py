"""Games: starting and playing them, the bot's replies, and settling overdue turns.

The Discord layer calls these coroutines and turns their ``GameError``s into ephemeral
answers. Nothing here keeps game state in memory: each operation loads the row, checks
it with ``rules``, and writes the next state with a statement guarded on the move number
and status it was read at (``Store.save_game``/``end_game``). Two clicks, a click and a
sweep, or two processes on one database can therefore never both land; the loser is
told StaleBoard or GameOver. A game's end (result, ratings, records, streaks) is written
in one durable transaction.

Bot moves: a human move that leaves the bot to play is committed with status
BOT_TO_MOVE, unless the reply is instant (``bot.games.replies``), which is committed
with it. Otherwise the reply is computed in the search pool, outside any
transaction and lock, and written by a second guarded write. A crash in between leaves a
BOT_TO_MOVE game that ``GameService.start()`` completes before clicks are served (and
``settle_overdue()`` takes over if another process left it stranded). Each reply's rng
is seeded from the game id and move number, so a game replays identically.

Deadlines: every move gives the player now on move ``turn_timeout`` seconds, the first
move the server's shorter first-move clock (``rules.first_move_pending``: a game whose
first move never comes is aborted, so nobody holds a channel for nothing). The sweep
(``settle_overdue``) ends overdue games (the player on move loses by TIMEOUT), and so
does anything a user does to such a game, so the result does not depend on when the
sweep runs.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from bot.config import ServiceConfig
from bot.errors import (
    GameNotFound,
    NotAPlayer,
)
from bot.games import rules, walkaways, writes
from bot.games.locks import KeyedLocks
from bot.games.queries import Store
from bot.games.refusals import ChannelTaken, LimitReached
from bot.games.replies import BotReplies, ReplyPlan, plan_reply
from bot.games.servers import Guilds
from bot.games.writes import TIME_RAN_OUT, turn_over
from bot.models import First, Game, GameStatus, Ping
from bot.tunables import FIRST_MOVE_TIMEOUT, GAMES_PER_MEMBER, SERVER_GAMES, TURN_TIMEOUT
from engine.levels import DEFAULT_LEVEL

__all__ = ["TIME_RAN_OUT", "Games", "Moved"]

log = logging.getLogger(__name__)

COMMANDS_DIGEST = "commands_hash"
"""The meta key under which the digest of the commands last synced is kept."""

STRANDED_AFTER = 30.0
"""Seconds a BOT_TO_MOVE game may wait before ``sweep()`` computes the move itself."""


@dataclass(frozen=True, slots=True)
class Moved:
    """A move played (``GameService.move``): the game after it, the turn ping the move
    made stale, whose message is to be deleted, and the plan of the bot's reply if the
    game still owes it (at BOT_TO_MOVE: ``bot_reply`` makes it)."""

    game: Game
    stale_ping: Ping | None
    reply: ReplyPlan | None = None


class Games:
    """Games and the bot's moves. Set up by ``GameService`` (``bot.app``), which
    gives it the parts it uses."""

    _store: Store
    config: ServiceConfig
    _clock: Callable[[], float]
    _rng: random.Random
    _locks: KeyedLocks
    replies: BotReplies
    guilds: Guilds
    _bot_tasks: dict[int, asyncio.Task[Game | None]]

    # -- reading ------------------------------------------------------------------------

    async def get_game(self, game_id: int, guild_id: int | None = None) -> Game:
        """The game; GameNotFound if missing or (with ``guild_id``) in another guild."""
        return await writes.load_game(self._store, game_id, guild_id)

    async def commands_digest(self) -> str | None:
        """The digest of the commands last synced (None: never)."""
        return await self._store.get_meta(COMMANDS_DIGEST)

    async def commands_synced(self, digest: str) -> None:
        await self._store.set_meta(COMMANDS_DIGEST, digest)

    async def active_game(self, guild_id: int, channel_id: int) -> Game | None:
        """The channel's live game (the newest, if several are allowed), or None."""
        games = await self._store.live_games(guild_id, channel_id)
        return games[0] if games else None

    async def set_game_message(self, game_id: int, message_id: int) -> None:
        if not await self._store.set_game_message(game_id, message_id):
            raise GameNotFound()

    async def overdue_at_stake(self) -> list[Game]:
        """The overdue games whose time-out would count (a rating, or a member's record
        against the bot; not an abort): the sweep checks that their board still exists
        before settling them (``Reposts.check_before_timeout``). With ``config.shards``,
        in this process's servers."""
        games = await self._store.overdue_games(self._clock(), self.config.shards)
        return [game for game in games if not rules.is_abort(game)]

    async def reposted(self, game: Game, message_id: int) -> Game | None:
        """``game``'s deleted board was posted again as ``message_id``: record it, and give
        the player on move a fresh turn clock (since when they had no board is unknown).
        None if the game ended or moved on meanwhile."""
        async with self._locks[game.id]:
            current = await self._store.get_game(game.id)
            if current is None or not current.is_live or current.message_id != game.message_id:
                return None
            now = self._clock()
            clock = current.turn_seconds or self.config[TURN_TIMEOUT]
            deadline = None if current.turn_deadline is None else now + clock
            await self._store.set_game_message(game.id, message_id)
            new = replace(current, message_id=message_id, turn_deadline=deadline, updated_at=now)
            return await writes.write(self._store, new, current)

    # -- starting -----------------------------------------------------------------------

    async def start_bot_game(
        self,
        guild_id: int,
        channel_id: int,
        player_id: int,
        *,
        level: str | None = None,
        width: int = 3,
        height: int = 3,
        k: int | None = 3,
        first: First | str = First.RANDOM,
        rematch_of: int | None = None,
        locale: str | None = None,
        parent_id: int | None = None,
        on_slow: Callable[[], Awaitable[object]] | None = None,
    ) -> Game:
        """A new game against the bot (``level`` None: the default one; ``k`` None: the
        board's usual win length); if the bot is X, its first move is already made.
        ``locale``: the server's Discord locale, the language of the game's board;
        ``parent_id``: the channel whose thread ``channel_id`` is, if it is one;
        ``on_slow`` is awaited, once every check passed, before a first move made in the
        pool, which may queue past Discord's 3 seconds (the Discord layer defers its
        answer there)."""
        level = DEFAULT_LEVEL if level is None else level
        k = rules.win_length(width, height, k)
        rules.validate_options(width, height, k, level)
        order = rules.first_from(first)
        if order is First.RANDOM:
            order = self._rng.choice((First.ME, First.OPPONENT))
        player_is_x = order is First.ME
        settings = await self.guilds.get(guild_id)
        rules.check_allowed_channel(settings, channel_id, parent_id)
        await walkaways.check(self._store.db, settings, guild_id, player_id, self._clock())
        async with self._locks[("channel", guild_id, channel_id)]:
            now = self._clock()
            view = await self._store.channel_view(guild_id, channel_id, now)
            exclusive = self.config.one_game_per_channel
            rules.check_channel(view, player_id, (player_id,), exclusive=exclusive)
            new = rules.new_game(
                guild_id,
                channel_id,
                x_id=player_id if player_is_x else None,
                o_id=None if player_is_x else player_id,
                bot_level=level,
                width=width,
                height=height,
                k=k,
                now=now,
                turn_timeout=settings[TURN_TIMEOUT],
                rematch_of=rematch_of,
                locale=locale,
                first_move_timeout=settings[FIRST_MOVE_TIMEOUT],
            )
            plan = None
            if new.status is GameStatus.BOT_TO_MOVE:
                plan = plan_reply(new, self.config)
                self.replies.check_room(new, plan)  # Busy if the pool is full, before the insert
            try:
                game = await self._store.insert_game(
                    new,
                    exclusive=exclusive,
                    per_member=settings[GAMES_PER_MEMBER],
                    per_server=settings[SERVER_GAMES],
                )
            except ChannelTaken:  # a game started meanwhile (another process): link it
                games = await self._store.live_games(guild_id, channel_id)
                raise rules.busy(games) from None
            except LimitReached as error:
                raise await self.guilds.too_many(error, player_id, settings) from None
        if plan is None:
            return game
        if on_slow is not None and not plan.instant:
            await on_slow()
        return await self._bot_move(game, plan, settings[FIRST_MOVE_TIMEOUT])

    async def rematchable(self, game_id: int, user_id: int, guild_id: int | None = None) -> Game:
        """The game ``user_id`` asks a rematch of; NotAPlayer unless they played in it.
        (The Discord layer asks first, to know whether to defer before ``rematch``.)"""
        game = await self.get_game(game_id, guild_id)
        if user_id not in game.human_ids:
            raise NotAPlayer()
        return game

    # -- playing ------------------------------------------------------------------------

    async def move(
        self,
        game_id: int,
        user_id: int,
        cell: int,
        move_no: int,
        *,
        guild_id: int | None = None,
        message_id: int | None = None,
        await_reply: bool = True,
    ) -> Moved:
        """Play ``cell`` (0-based) for ``user_id`` on the board they saw at ``move_no``.

        Checks, in order: GameNotFound (also for a click on another message than the
        game's, ``message_id``), GameOver (also when the player on move ran out of
        time: the timeout is settled here), then ``rules.check_move``'s, then Busy if the
        reply this move would owe needs the search pool and it is full (nothing is
        written then; see ``SearchPool.promise``). In a bot game the result includes the
        bot's reply, unless ``await_reply`` is False and the reply needs the pool: then the
        game comes back at BOT_TO_MOVE and ``bot_reply`` completes it.

        The result also names the turn ping the move made stale, read with the game: a
        click needs no second read to delete it. (A ping recorded between that read and
        the move is left to the sweep's ``stale``.)"""
        async with self._locks[game_id]:
            now = self._clock()
            game, standing = await writes.load_game_and_ping(
                self._store, game_id, guild_id, message_id
            )
            await writes.settle_if_overdue(self._store, game, now)
            rules.check_move(game, user_id, cell, move_no)
            new = rules.advance(game, cell, now, self.config[TURN_TIMEOUT])
            plan = None
            if new.status is GameStatus.BOT_TO_MOVE:
                plan = plan_reply(new, self.config)
                if plan.instant:
                    reply = self.replies.instant(new, plan)
                    new = rules.advance(new, reply, now, self.config[TURN_TIMEOUT])
                    plan = None
                else:
                    self.replies.promise(new, plan)  # Busy if the pool is full, before any write
            written = None
            try:
                written = await writes.write(self._store, new, game)
            finally:
                if plan is not None and written is None:
                    self.replies.withdraw(new)
            if written is None:
                raise await writes.conflict(self._store, game_id, guild_id)
            new = written
        if plan is not None and await_reply:
            new = await self._bot_move(new, plan)
            plan = None
        return Moved(new, turn_over(new, standing), plan)

    async def bot_reply(self, game: Game, plan: ReplyPlan | None = None) -> Game:
        """``game`` after the bot's owed move (as stored: if someone else made it, theirs).
        ``plan``: the reply's, as ``move`` gave it; None plans it here (a game read back)."""
        if game.status is not GameStatus.BOT_TO_MOVE:
            return game
        if plan is None:
            plan = plan_reply(game, self.config)
        return await self._bot_move(game, plan)

    async def _bot_move(
        self, game: Game, plan: ReplyPlan, first_clock: float | None = None
    ) -> Game:
        """Complete the bot's owed move; one task per game, immune to cancellation.
        ``first_clock``: the server's first-move clock, if the caller read it."""
        task = self._bot_tasks.get(game.id)
        if task is None or task.done():
            task = asyncio.create_task(self._complete_bot_move(game, plan, first_clock))
            self._bot_tasks[game.id] = task
            task.add_done_callback(functools.partial(self._forget_bot_task, game.id))
        result = await asyncio.shield(task)
        return game if result is None else result

    def _forget_bot_task(self, game_id: int, task: asyncio.Task[Game | None]) -> None:
        if self._bot_tasks.get(game_id) is task:
            del self._bot_tasks[game_id]

    async def _complete_bot_move(
        self, game: Game, plan: ReplyPlan, first_clock: float | None
    ) -> Game | None:
        cell = await self.replies.compute(game, plan)
        if first_clock is None and game.move_no == 0:  # the member's first has its own clock
            first_clock = (await self.guilds.get(game.guild_id))[FIRST_MOVE_TIMEOUT]
        async with self._locks[game.id]:
            now = self._clock()
            new = rules.advance(game, cell, now, self.config[TURN_TIMEOUT], first_clock)
            written = await writes.write(self._store, new, game)
            if written is not None:
                return written
            return await self._store.get_game(game.id)  # ended or done elsewhere meanwhile

    async def settle_overdue(self) -> list[Game]:
        """End overdue games (the player on move loses by TIMEOUT), and complete bot
        moves a dead process left owed; each by a guarded write of its own, so if the
        process dies half-way, the games it had not reached stay for its next sweep.
        Returns the games changed. With ``config.shards``, in this process's servers."""
        now = self._clock()
        changed: list[Game] = []
        shards = self.config.shards
        for game in await self._store.overdue_games(now, shards):
            async with self._locks[game.id]:
                timeout = rules.time_out(game, now)
                if (ended := await writes.write(self._store, timeout, game)) is not None:
                    changed.append(ended)
                    if rules.first_move_pending(game):
                        walked = game.player_of(game.turn)
                        await walkaways.record(self._store.db, game, walked, now)
        for game in await self._store.games_bot_to_move(shards):
            if game.id not in self._bot_tasks and now - game.updated_at >= STRANDED_AFTER:
                try:
                    changed.append(await self._bot_move(game, plan_reply(game, self.config)))
                except Exception:
                    log.exception("Could not complete the bot's move in game %s", game.id)
        return changed
