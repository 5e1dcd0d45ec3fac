"""The game service as the bot runs it: ``GameService``, the games feature's ``Games``
with every feature's service as a part (``challenges``, ``endings``, ``calloffs``,
``pings``, ``privacy``, ``reviews``, ``stats``, ``upkeep``, ...), which callers call
directly; and what spans features: start-up, the sweep, rematches, closing, and the
steps upkeep takes from pings and privacy (``drop_ping``, ``erase_left``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import random
import time
from collections.abc import Awaitable, Callable

from bot.challenges.rematches import Rematched, Rematches
from bot.challenges.service import Challenges
from bot.challenges.threads import NewThreads
from bot.config import ServiceConfig
from bot.errors import AlreadyPlaying, ChannelBusy, RematchUnavailable
from bot.games import ai, rules
from bot.games.endings import Endings
from bot.games.locks import KeyedLocks
from bot.games.pool import SearchPool
from bot.games.queries import Store
from bot.games.replies import BotReplies, plan_reply
from bot.games.servers import Guilds
from bot.games.service import Games
from bot.games.token_queries import Tokens
from bot.i18n import N_
from bot.models import DELETED_MEMBER, Challenge, First, Game
from bot.pings.calloffs import CallOffs
from bot.pings.service import TurnPings
from bot.privacy.service import Privacy
from bot.reach import TOKEN_LIFETIME
from bot.stats.reviews import Reviews
from bot.stats.service import Stats
from bot.tunables import AI_WORKERS, SERVER_POOL_PERCENT
from bot.upkeep.service import Upkeep, monotonic_for

__all__ = ["GameService"]

log = logging.getLogger(__name__)


class GameService(Games):
    def __init__(
        self,
        store: Store,
        config: ServiceConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
        executor: concurrent.futures.Executor | None = None,
        rng: random.Random | None = None,
        monotonic: Callable[[], float] | None = None,
    ) -> None:
        config = config if config is not None else ServiceConfig()
        self._store = store
        self.config = config
        self._clock = clock
        self._rng = rng if rng is not None else random.Random()
        self._locks = KeyedLocks()
        self._pool = SearchPool(
            config[AI_WORKERS], executor, server_percent=config[SERVER_POOL_PERCENT]
        )
        self.replies = BotReplies(self._pool, reply_seconds=config.reply_seconds)
        self.guilds = Guilds(store, config, clock)
        self.challenges = Challenges(store, config, clock, self._rng, self._locks, self.guilds)
        self.rematches = Rematches(self.challenges, store, clock)
        self.stats = Stats(store)
        self.tokens = Tokens(store.db)  # where games are reached by interactions alone
        self.endings = Endings(store, self._locks, clock)
        self.calloffs = CallOffs(store, self.endings, clock)
        self.pings = TurnPings(store, config, clock)
        self.reviews = Reviews(store, config, clock, self._pool, self.guilds)
        self.threads = NewThreads(store, config, self.guilds, self.challenges, self.replies, clock)
        self.privacy = Privacy(store, config, clock)
        ticks = monotonic or monotonic_for(clock)  # a wall clock jump shows against it
        self.upkeep = Upkeep(
            store,
            config,
            clock,
            ticks,
            self._locks,
            drop_ping=self.pings.drop,
            erase_left=self.privacy.erase_left,
        )
        self._bot_tasks: dict[int, asyncio.Task[Game | None]] = {}

    # -- life cycle ---------------------------------------------------------------------

    async def start(self) -> list[Game]:
        """Start the search pool, move turn clocks on by the time the bot was down
        (``Upkeep.resume``), then finish bot moves owed since a crash (in this process's
        servers, with ``config.shards``).

        Returns the games whose owed move was completed, so their boards can be redrawn.
        """
        await self._pool.start()
        await self.upkeep.resume()
        if self.config.inline_cells:
            ai.warm_up()  # builds the 3x3 tables here (~50 ms) before the first click
        owed = await self._store.games_bot_to_move(self.config.shards)
        results = await asyncio.gather(
            *(self._bot_move(game, plan_reply(game, self.config)) for game in owed),
            return_exceptions=True,
        )
        completed: list[Game] = []
        for game, result in zip(owed, results, strict=True):
            if isinstance(result, BaseException):
                log.error("Could not complete the bot's move in game %s", game.id, exc_info=result)
            else:
                completed.append(result)
        return completed

    async def close(self) -> None:
        """Wait for bot moves and reviews in flight, then stop the search pool."""
        while pending := [task for task in self._bot_tasks.values() if not task.done()]:
            await asyncio.gather(*pending, return_exceptions=True)
        await self.reviews.close()
        await self._pool.close()

    async def rematch(
        self,
        game_id: int,
        user_id: int,
        guild_id: int | None = None,
        *,
        locale: str | None = None,
        parent_id: int | None = None,
        on_slow: Callable[[], Awaitable[object]] | None = None,
    ) -> Game | Challenge | Rematched:
        """Play an ended game again with sides swapped, in the server's ``locale`` (by
        default the old game's); ``parent_id``: the channel of the game's thread, if any;
        ``on_slow``: as for ``start_bot_game``.

        Against the bot: the new game at once. Between members: a challenge to the other
        player, whose acceptance starts the game with sides swapped, or, if they already
        asked for this rematch, their challenge accepted (``Rematches.rematch``).
        """
        game = await self.rematchable(game_id, user_id, guild_id)
        if game.is_live:
            raise RematchUnavailable(N_("Finish this game before asking for a rematch."))
        active = await self.active_game(game.guild_id, game.channel_id)
        if active is not None and (self.config.one_game_per_channel or user_id in active.human_ids):
            raise RematchUnavailable(ChannelBusy(rules.place_of(active), game=active).message)
        locale = locale or game.locale
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
                    locale=locale,
                    parent_id=parent_id,
                    on_slow=on_slow,
                )
            if DELETED_MEMBER in game.human_ids:
                raise RematchUnavailable(N_("Your opponent in this game has erased their data."))
            return await self.rematches.rematch(game, user_id, locale=locale, parent_id=parent_id)
        except (ChannelBusy, AlreadyPlaying) as error:  # each links what is in the way
            raise RematchUnavailable(error.message) from error

    async def sweep(
        self, check: Callable[[list[Game]], Awaitable[None]] | None = None
    ) -> tuple[list[Game], list[Challenge]]:
        """Record the bot alive (``Upkeep.beat``), settle overdue turns and bot moves left
        owed (``Games.settle_overdue``), expire challenges. Returns what changed, so the
        Discord layer can redraw those messages. ``check`` is handed the overdue games
        whose time-out would count, before they are settled (``overdue_at_stake``): after
        the beat, so that games an outage holds back are not among them.

        With ``config.shards``, only in this process's servers: each process sweeps its
        own, so each game is swept by one (see ``bot.models.Shards`` for why not a
        leader).
        """
        await self.upkeep.beat()  # first: a clock that jumped ahead moves deadlines on
        if check is not None:
            await check(await self.overdue_at_stake())
        changed = await self.settle_overdue()
        # Tokens Discord no longer takes are of no use: forgotten (bot/reach.py).
        await self.tokens.drop_older_than(self._clock() - TOKEN_LIFETIME)
        return changed, await self.challenges.expire()
