"""The game service: starting, playing, ending and sweeping games, and the bot's replies.

The Discord layer calls these coroutines and turns their ``GameError``s into ephemeral
answers. Nothing here keeps game state in memory: each operation loads the row, checks
it with ``rules``, and writes the next state with a statement guarded on the move number
and status it was read at (``Store.save_game``/``end_game``). Two clicks, a click and a
sweep, or two processes on one database can therefore never both land; the loser is
told StaleBoard or GameOver. A game's end (result, ratings, records, streaks) is written
in one durable transaction.

Bot moves: a human move that leaves the bot to play is committed with status
BOT_TO_MOVE, unless the reply is a table lookup (``BotReplies.is_inline``), which is
committed with it. Otherwise the reply is computed in the search pool, outside any
transaction and lock, and written by a second guarded write. A crash in between leaves a
BOT_TO_MOVE game that ``start()`` completes before clicks are served (and ``sweep()``
takes over if another process left it stranded). Each reply's rng is seeded from the
game id and move number, so a game replays identically.

Deadlines: every move gives the player now on move ``turn_timeout`` seconds. ``sweep()``
ends overdue games (the player on move loses by TIMEOUT), and so does anything a user
does to such a game, so the result does not depend on when the sweep runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import random
import time
from collections.abc import Callable

from bot.errors import (
    AlreadyPlaying,
    ChannelBusy,
    GameError,
    GameInProgress,
    GameNotFound,
    GameOver,
    NotAPlayer,
    PermissionDenied,
    RematchUnavailable,
    StaleBoard,
)
from bot.models import DELETED_MEMBER, Challenge, First, Game, GameStatus, Result
from bot.service import ai, rules
from bot.service.challenges import Challenges
from bot.service.config import ServiceConfig
from bot.service.guilds import Guilds
from bot.service.locks import KeyedLocks
from bot.service.pings import TurnPings
from bot.service.pool import Cost, SearchPool
from bot.service.privacy import Privacy
from bot.service.replies import BotReplies
from bot.service.reviews import Reviews
from bot.service.stats import Stats
from bot.store import ChannelTaken, Store
from engine.analysis import Review

__all__ = ["TIME_RAN_OUT", "GameService"]

log = logging.getLogger(__name__)

STRANDED_AFTER = 30.0
"""Seconds a BOT_TO_MOVE game may wait before ``sweep()`` computes the move itself."""
TIME_RAN_OUT = "Time ran out for this game: it's over."


class GameService:
    """Games and the bot's moves; ``challenges`` and ``stats`` hold the rest."""

    def __init__(
        self,
        store: Store,
        config: ServiceConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
        executor: concurrent.futures.Executor | None = None,
        rng: random.Random | None = None,
    ) -> None:
        config = config if config is not None else ServiceConfig()
        self._store = store
        self.config = config
        self._clock = clock
        self._rng = rng if rng is not None else random.Random()
        self._locks = KeyedLocks()
        self._pool = SearchPool(config.ai_workers, executor)
        self.replies = BotReplies(
            self._pool, inline_cells=config.inline_cells, reply_seconds=config.reply_seconds
        )
        self.challenges = Challenges(store, config, clock, self._rng, self._locks)
        self.stats = Stats(store)
        self.guilds = Guilds(store, config, clock)
        self.pings = TurnPings(store, config, clock)
        self.reviews = Reviews(store, config, clock)
        self.privacy = Privacy(store, config, clock)
        self._bot_tasks: dict[int, asyncio.Task[Game | None]] = {}

    # -- life cycle ---------------------------------------------------------------------

    async def start(self) -> list[Game]:
        """Start the search pool, then finish bot moves owed since a crash.

        Returns the games whose owed move was completed, so their boards can be redrawn.
        """
        await self._pool.start()
        if self.config.inline_cells:
            ai.warm_up()  # builds the 3x3 tables here (~50 ms) before the first click
        owed = await self._store.games_bot_to_move()
        results = await asyncio.gather(
            *(self._bot_move(game) for game in owed), return_exceptions=True
        )
        completed: list[Game] = []
        for game, result in zip(owed, results, strict=True):
            if isinstance(result, BaseException):
                log.error("Could not complete the bot's move in game %s", game.id, exc_info=result)
            else:
                completed.append(result)
        return completed

    async def close(self) -> None:
        """Wait for bot moves in flight, then stop the search pool."""
        while pending := [task for task in self._bot_tasks.values() if not task.done()]:
            await asyncio.gather(*pending, return_exceptions=True)
        await self._pool.close()

    # -- reading ------------------------------------------------------------------------

    async def get_game(self, game_id: int, guild_id: int | None = None) -> Game:
        """The game; GameNotFound if missing or (with ``guild_id``) in another guild."""
        game = await self._store.get_game(game_id)
        if game is None or (guild_id is not None and game.guild_id != guild_id):
            raise GameNotFound()
        return game

    async def active_game(self, guild_id: int, channel_id: int) -> Game | None:
        """The channel's live game (the newest, if several are allowed), or None."""
        games = await self._store.live_games(guild_id, channel_id)
        return games[0] if games else None

    async def set_game_message(self, game_id: int, message_id: int) -> None:
        if not await self._store.set_game_message(game_id, message_id):
            raise GameNotFound()

    def is_slow_search(self, game: Game) -> bool:
        """See ``BotReplies.is_slow``."""
        return self.replies.is_slow(game)

    # -- writing ------------------------------------------------------------------------

    async def _write(self, new: Game, before: Game) -> bool:
        """Write ``new`` if the game is still at ``before``; an ending settles the result."""
        if before.is_live and not new.is_live:
            settle = functools.partial(rules.settle, new)
            return await self._store.end_game(new, before, settle)
        return await self._store.save_game(new, before)

    async def _conflict(self, game_id: int, guild_id: int | None) -> GameError:
        """The error for a write that lost a race: the game ended, or it moved on."""
        game = await self._store.get_game(game_id)
        if game is None or (guild_id is not None and game.guild_id != guild_id):
            return GameNotFound()
        return StaleBoard() if game.is_live else GameOver()

    async def _settle_if_overdue(self, game: Game, now: float) -> None:
        """GameOver if the player on move ran out of time, after settling the timeout.

        Whatever a user does to a game whose clock ran out (move, forfeit, stop) finds it
        lost on time, as the sweep would have left it.
        """
        if rules.is_overdue(game, now):
            ended = rules.end(game, Result.TIMEOUT, game.turn, now)
            if not await self._write(ended, game):
                ended = await self.get_game(game.id)  # settled elsewhere meanwhile
            raise GameOver(TIME_RAN_OUT, game=ended)

    # -- starting -----------------------------------------------------------------------

    async def start_bot_game(
        self,
        guild_id: int,
        channel_id: int,
        player_id: int,
        *,
        level: str,
        width: int = 3,
        height: int = 3,
        k: int = 3,
        first: First | str = First.RANDOM,
        rematch_of: int | None = None,
    ) -> Game:
        """A new game against the bot; if the bot is X, its first move is already made."""
        rules.validate_options(width, height, k, level)
        order = rules.first_from(first)
        if order is First.RANDOM:
            order = self._rng.choice((First.ME, First.OPPONENT))
        player_is_x = order is First.ME
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
                turn_timeout=self.config.turn_timeout,
                rematch_of=rematch_of,
            )
            try:
                game = await self._store.insert_game(new, exclusive=exclusive)
            except ChannelTaken:
                raise ChannelBusy() from None
        if game.status is GameStatus.BOT_TO_MOVE:
            return await self._bot_move(game)
        return game

    async def rematchable(self, game_id: int, user_id: int, guild_id: int | None = None) -> Game:
        """The game ``user_id`` asks a rematch of; NotAPlayer unless they played in it.
        (The Discord layer asks first, to know whether to defer before ``rematch``.)"""
        game = await self.get_game(game_id, guild_id)
        if user_id not in game.human_ids:
            raise NotAPlayer()
        return game

    async def rematch(
        self, game_id: int, user_id: int, guild_id: int | None = None
    ) -> Game | Challenge:
        """Play an ended game again with sides swapped.

        Against the bot: the new game at once. Between members: a challenge to the other
        player, whose acceptance starts the game with sides swapped.
        """
        game = await self.rematchable(game_id, user_id, guild_id)
        if game.is_live:
            raise RematchUnavailable("Finish this game before asking for a rematch.")
        busy = RematchUnavailable("There's already a game in this channel.")
        active = await self.active_game(game.guild_id, game.channel_id)
        if active is not None and (self.config.one_game_per_channel or user_id in active.human_ids):
            raise busy
        try:
            if game.is_bot_game:
                assert game.bot_level is not None
                return await self.start_bot_game(
                    game.guild_id,
                    game.channel_id,
                    user_id,
                    level=game.bot_level,
                    width=game.width,
                    height=game.height,
                    k=game.k,
                    first=First.ME if game.x_id is None else First.OPPONENT,
                    rematch_of=game.id,
                )
            other = game.o_id if user_id == game.x_id else game.x_id
            assert other is not None
            if other == DELETED_MEMBER:
                raise RematchUnavailable("Your opponent in this game has erased their data.")
            return await self.challenges.create(
                game.guild_id,
                game.channel_id,
                user_id,
                other,
                width=game.width,
                height=game.height,
                k=game.k,
                first=First.OPPONENT if user_id == game.x_id else First.ME,
                rematch_of=game.id,
            )
        except (ChannelBusy, AlreadyPlaying) as error:
            raise busy from error

    # -- playing ------------------------------------------------------------------------

    async def play(
        self,
        game_id: int,
        user_id: int,
        cell: int,
        move_no: int,
        *,
        guild_id: int | None = None,
        await_reply: bool = True,
    ) -> Game:
        """Play ``cell`` (0-based) for ``user_id`` on the board they saw at ``move_no``.

        Checks, in order: GameNotFound, GameOver (also when the player on move ran out of
        time: the timeout is settled here), then ``rules.check_move``'s. In a bot game the
        result includes the bot's reply, unless ``await_reply`` is False and the reply
        needs the pool: then the game comes back at BOT_TO_MOVE and ``bot_reply``
        completes it.
        """
        async with self._locks[game_id]:
            now = self._clock()
            game = await self.get_game(game_id, guild_id)
            await self._settle_if_overdue(game, now)
            rules.check_move(game, user_id, cell, move_no)
            new = rules.advance(game, cell, now, self.config.turn_timeout)
            if new.status is GameStatus.BOT_TO_MOVE and self.replies.is_inline(new):
                new = rules.advance(new, self.replies.inline(new), now, self.config.turn_timeout)
            if not await self._write(new, game):
                raise await self._conflict(game_id, guild_id)
        if new.status is GameStatus.BOT_TO_MOVE and await_reply:
            return await self._bot_move(new)
        return new

    async def bot_reply(self, game: Game) -> Game:
        """``game`` after the bot's owed move (as stored: if someone else made it, theirs)."""
        if game.status is not GameStatus.BOT_TO_MOVE:
            return game
        return await self._bot_move(game)

    async def _bot_move(self, game: Game) -> Game:
        """Complete the bot's owed move; one task per game, immune to cancellation."""
        task = self._bot_tasks.get(game.id)
        if task is None or task.done():
            task = asyncio.create_task(self._complete_bot_move(game))
            self._bot_tasks[game.id] = task
            task.add_done_callback(functools.partial(self._forget_bot_task, game.id))
        result = await asyncio.shield(task)
        return game if result is None else result

    def _forget_bot_task(self, game_id: int, task: asyncio.Task[Game | None]) -> None:
        if self._bot_tasks.get(game_id) is task:
            del self._bot_tasks[game_id]

    async def _complete_bot_move(self, game: Game) -> Game | None:
        cell = await self.replies.compute(game)
        async with self._locks[game.id]:
            new = rules.advance(game, cell, self._clock(), self.config.turn_timeout)
            if await self._write(new, game):
                return new
            return await self._store.get_game(game.id)  # ended or done elsewhere meanwhile

    # -- ending -------------------------------------------------------------------------

    async def _end(
        self,
        game_id: int,
        guild_id: int | None,
        move_no: int | None,
        decide: Callable[[Game, float], Game],
    ) -> Game:
        """End the live game with ``decide`` (which checks the user and returns the ended
        game). With ``move_no`` a game that moved on gives StaleBoard; without, the latest
        state is ended (retrying if another process wrote first)."""
        async with self._locks[game_id]:
            for _attempt in range(5):
                now = self._clock()
                game = await self.get_game(game_id, guild_id)
                await self._settle_if_overdue(game, now)
                if not game.is_live:
                    raise GameOver()
                ended = decide(game, now)
                if move_no is not None and move_no != game.move_no:
                    raise StaleBoard()
                if await self._write(ended, game):
                    return ended
                if move_no is not None:
                    break
            raise await self._conflict(game_id, guild_id)

    async def forfeit(
        self, game_id: int, user_id: int, *, move_no: int | None = None, guild_id: int | None = None
    ) -> Game:
        """The player gives up and loses (rated between members)."""

        def decide(game: Game, now: float) -> Game:
            mark = game.mark_of(user_id)
            if mark is None:
                raise NotAPlayer()
            return rules.end(game, Result.FORFEIT, mark, now)

        return await self._end(game_id, guild_id, move_no, decide)

    async def stop(
        self,
        guild_id: int,
        channel_id: int,
        user_id: int,
        *,
        is_moderator: bool,
        move_no: int | None = None,
    ) -> Game:
        """Abandon the channel's live game (unrated, uncounted): its players or a moderator.

        With several live games in the channel, the one ``user_id`` plays in, else the newest.
        """
        games = await self._store.live_games(guild_id, channel_id)
        if not games:
            raise GameNotFound("There's no game in progress in this channel.")
        target = next((g for g in games if user_id in g.human_ids), games[0])

        def decide(game: Game, now: float) -> Game:
            if user_id not in game.human_ids and not is_moderator:
                raise PermissionDenied()
            return rules.end(game, Result.ABANDONED, None, now)

        return await self._end(target.id, guild_id, move_no, decide)

    async def sweep(self) -> tuple[list[Game], list[Challenge]]:
        """Settle overdue turns (the player on move loses by TIMEOUT), expire challenges,
        and complete bot moves a dead process left owed. Returns what changed, so the
        Discord layer can redraw those messages."""
        now = self._clock()
        changed: list[Game] = []
        for game in await self._store.overdue_games(now):
            async with self._locks[game.id]:
                ended = rules.end(game, Result.TIMEOUT, game.turn, now)
                if await self._write(ended, game):
                    changed.append(ended)
        for game in await self._store.games_bot_to_move():
            if game.id not in self._bot_tasks and now - game.updated_at >= STRANDED_AFTER:
                try:
                    changed.append(await self._bot_move(game))
                except Exception:
                    log.exception("Could not complete the bot's move in game %s", game.id)
        return changed, await self.challenges.expire()

    async def review(self, game_id: int, guild_id: int | None = None) -> tuple[Game, Review]:
        """An ended game and the engine's review of it (searched in the pool)."""
        game = await self.get_game(game_id, guild_id)
        if game.is_live:
            raise GameInProgress()
        review = await self._pool.run(
            Cost.REVIEW, ai.review_game, game.moves, game.width, game.height, game.k
        )
        return game, review
