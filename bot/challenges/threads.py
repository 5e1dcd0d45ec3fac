"""A game to start in a new thread, vetted before the thread is opened: the bot opens a
thread (for a busy channel's refusal) only for a game that can start there."""

from __future__ import annotations

from bot.challenges.service import Challenges
from bot.config import ServiceConfig
from bot.games import rules
from bot.games.queries import Store
from bot.games.refusals import LimitReached
from bot.games.replies import BotReplies, plan_reply
from bot.games.server_queries import GuildStore
from bot.games.servers import Guilds
from bot.models import First
from bot.tunables import GAMES_PER_MEMBER, SERVER_GAMES, TURN_TIMEOUT
from engine.levels import DEFAULT_LEVEL

__all__ = ["NewThreads"]


class NewThreads:
    def __init__(
        self,
        store: Store,
        config: ServiceConfig,
        guilds: Guilds,
        challenges: Challenges,
        replies: BotReplies,
    ) -> None:
        self._store = store
        self._config = config
        self._guild_store = GuildStore(store.db)
        self._guilds = guilds
        self._challenges = challenges
        self._replies = replies

    async def vet(
        self,
        guild_id: int,
        parent_id: int,
        user_id: int,
        *,
        opponent_id: int | None = None,
        level: str | None = None,
        width: int = 3,
        height: int = 3,
        k: int | None = None,
        first: First | str = First.RANDOM,
    ) -> None:
        """Raise what starting this game (``opponent_id``: a challenge to them) in a new
        thread of ``parent_id`` would, before the thread exists, writing nothing.
        Everything is checked again when it starts."""
        k = rules.win_length(width, height, k)
        if opponent_id is not None:
            rules.no_level_with_opponent(level, opponent_id)
            await self._challenges.vet(
                guild_id,
                parent_id,
                user_id,
                opponent_id,
                width=width,
                height=height,
                k=k,
                first=first,
            )
            return
        level = DEFAULT_LEVEL if level is None else level
        rules.validate_options(width, height, k, level)
        order = rules.first_from(first)
        settings = await self._guilds.get(guild_id)
        rules.check_allowed_channel(settings, parent_id)
        try:
            await self._guild_store.check_places(
                guild_id,
                (user_id,),
                per_member=settings[GAMES_PER_MEMBER],
                per_server=settings[SERVER_GAMES],
            )
        except LimitReached as error:
            raise await self._guilds.too_many(error, user_id, settings) from None
        if order is not First.ME:  # the bot may move first: is there room for its search?
            probe = rules.new_game(
                guild_id,
                parent_id,
                x_id=None,
                o_id=user_id,
                bot_level=level,
                width=width,
                height=height,
                k=k,
                now=0.0,
                turn_timeout=settings[TURN_TIMEOUT],
            )
            self._replies.check_room(probe, plan_reply(probe, self._config))
