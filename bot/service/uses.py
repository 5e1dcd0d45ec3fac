"""What the Discord layer asks of the service: one method per thing a member does, or
Discord reports, beyond playing a move (``GameService``'s own methods).

Each method hands the request to the part whose rules it concerns and reads, itself,
whatever those rules need (a server's settings, the host's config): the Discord layer
passes only what the interaction says, and never checks what the service checks. The
parts stay reachable for tests and benches, not for bot/ui (tests/bot/test_architecture.py
holds it to these methods).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.errors import InvalidSettings
from bot.i18n import N_
from bot.models import (
    CallOff,
    Challenge,
    Change,
    First,
    Game,
    GuildData,
    GuildSettings,
    LeaderboardPage,
    MemberData,
    PlayerStats,
)
from bot.refs import Member
from bot.service import rules
from bot.service.challenges import Challenges
from bot.service.config import ServiceConfig
from bot.service.endings import Endings, may_stop
from bot.service.guilds import Guilds
from bot.service.pings import Due, Ping, Recorded, TurnPings
from bot.service.privacy import Privacy
from bot.service.replies import BotReplies, plan_reply
from bot.service.reviews import Reviews
from bot.service.rules import win_length
from bot.service.stats import Stats
from bot.service.upkeep import Upkeep
from bot.store import LimitReached, Store
from bot.tunables import GAMES_PER_MEMBER, REVIEW_COOLDOWN, SERVER_GAMES, TURN_TIMEOUT
from engine.analysis import Review
from engine.levels import DEFAULT_LEVEL

__all__ = ["COMMANDS_DIGEST", "Choices", "UseCases"]

COMMANDS_DIGEST = "commands_hash"
"""The meta key under which the digest of the commands last synced is kept."""

Lost = tuple[list[Game], list[Challenge]]
"""Games ended and challenges withdrawn because what held them went away."""


@dataclass(frozen=True, slots=True)
class Choices:
    """A member's choices in a server, as in force (their own, else the server's)."""

    turn_pings: bool
    challenges: bool


def _level_with_opponent(opponent_id: int) -> InvalidSettings:
    """The refusal of a difficulty given with an opponent: asked before anything happens
    (nobody is pinged), as the player may have meant either game."""
    return InvalidSettings(
        N_(
            "A difficulty is for games against me: leave it out to challenge {member}, or"
            " leave out the opponent to play me.",
            member=Member(opponent_id),
        )
    )


class UseCases:
    """Mixed into ``GameService``, which sets these parts up."""

    _store: Store
    config: ServiceConfig
    challenges: Challenges
    endings: Endings
    guilds: Guilds
    pings: TurnPings
    privacy: Privacy
    replies: BotReplies
    reviews: Reviews
    stats: Stats
    upkeep: Upkeep

    # -- challenges -------------------------------------------------------------------------

    async def challenge(
        self,
        guild_id: int,
        channel_id: int,
        challenger_id: int,
        opponent_id: int,
        *,
        opponent_is_bot: bool = False,
        level: str | None = None,
        width: int = 3,
        height: int = 3,
        k: int | None = None,
        first: First | str = First.RANDOM,
        locale: str | None = None,
        parent_id: int | None = None,
    ) -> Challenge:
        """See ``Challenges.create``; ``k`` None: the board's usual win length. A
        ``level`` is refused before anything else: it is for games against the bot."""
        if level is not None:
            raise _level_with_opponent(opponent_id)
        return await self.challenges.create(
            guild_id,
            channel_id,
            challenger_id,
            opponent_id,
            opponent_is_bot=opponent_is_bot,
            width=width,
            height=height,
            k=win_length(width, height, k),
            first=first,
            locale=locale,
            parent_id=parent_id,
        )

    async def vet_new_thread(
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
        thread of ``parent_id`` would, before the thread exists, writing nothing: the
        bot opens a thread only for a game that can start there. Everything is checked
        again when it starts."""
        k = win_length(width, height, k)
        if opponent_id is not None:
            if level is not None:
                raise _level_with_opponent(opponent_id)
            await self.challenges.vet(
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
        settings = await self.guilds.get(guild_id)
        rules.check_allowed_channel(settings, parent_id)
        try:
            await self._store.guilds.check_places(
                guild_id,
                (user_id,),
                per_member=settings[GAMES_PER_MEMBER],
                per_server=settings[SERVER_GAMES],
            )
        except LimitReached as error:
            raise await self.guilds.too_many(error, user_id, settings) from None
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
            self.replies.check_room(plan_reply(probe, self.config))

    def may_stop(self, game: Game, user_id: int, *, is_moderator: bool) -> bool:
        """Whether ``user_id`` may use /tictactoe-stop on ``game`` (``endings.may_stop``)."""
        return may_stop(game, user_id, is_moderator=is_moderator)

    async def accept(
        self, challenge_id: int, user_id: int, guild_id: int | None, message_id: int | None
    ) -> Game:
        return await self.challenges.accept(challenge_id, user_id, guild_id, message_id=message_id)

    async def decline(
        self, challenge_id: int, user_id: int, guild_id: int | None, message_id: int | None
    ) -> Challenge:
        return await self.challenges.decline(challenge_id, user_id, guild_id, message_id)

    async def withdraw(
        self, challenge_id: int, user_id: int, guild_id: int | None, message_id: int | None
    ) -> Challenge:
        return await self.challenges.withdraw(challenge_id, user_id, guild_id, message_id)

    async def get_challenge(
        self, challenge_id: int, guild_id: int | None = None, message_id: int | None = None
    ) -> Challenge:
        return await self.challenges.get(challenge_id, guild_id, message_id)

    async def set_challenge_message(self, challenge: Challenge, message_id: int) -> None:
        await self.challenges.set_message(challenge, message_id)

    # -- ending games -----------------------------------------------------------------------

    async def ask_forfeit(
        self, game_id: int, user_id: int, guild_id: int | None, message_id: int | None
    ) -> tuple[Game, float]:
        return await self.endings.ask_forfeit(game_id, user_id, guild_id, message_id)

    async def forfeit(
        self,
        game_id: int,
        user_id: int,
        guild_id: int | None,
        message_id: int | None = None,
        *,
        move_no: int | None = None,
        until: float | None = None,
    ) -> Game:
        return await self.endings.forfeit(
            game_id,
            user_id,
            move_no=move_no,
            until=until,
            guild_id=guild_id,
            message_id=message_id,
        )

    async def stop(
        self, guild_id: int, channel_id: int, user_id: int, *, is_moderator: bool
    ) -> Game:
        return await self.endings.stop(guild_id, channel_id, user_id, is_moderator=is_moderator)

    async def propose_calloff(
        self, game_id: int, user_id: int, guild_id: int | None
    ) -> tuple[Game, CallOff | None]:
        return await self.endings.propose_calloff(game_id, user_id, guild_id)

    async def set_calloff_message(self, game_id: int, proposer_id: int, message_id: int) -> None:
        await self.endings.set_calloff_message(game_id, proposer_id, message_id)

    async def answer_calloff(
        self, game_id: int, user_id: int, agree: bool, guild_id: int | None
    ) -> Game:
        return await self.endings.answer_calloff(game_id, user_id, agree, guild_id)

    async def lapsed_calloffs(self) -> list[tuple[CallOff, int]]:
        return await self.endings.lapsed_calloffs()

    async def forget_calloff(self, proposal: CallOff) -> None:
        await self.endings.forget_calloff(proposal)

    # -- reviews, results -------------------------------------------------------------------

    async def review(
        self,
        game_id: int,
        user_id: int,
        guild_id: int,
        *,
        on_search: Callable[[], Awaitable[object]] | None = None,
    ) -> tuple[Game, Review]:
        """``Reviews.review`` under the server's Review setting and cooldown."""
        settings = await self.guilds.get(guild_id)
        return await self.reviews.review(
            game_id,
            user_id,
            guild_id,
            cooldown=settings[REVIEW_COOLDOWN],
            enabled=settings.reviews,
            on_search=on_search,
        )

    async def leaderboard(self, guild_id: int, page: int = 1) -> LeaderboardPage:
        return await self.stats.leaderboard(guild_id, page)

    async def player_stats(self, guild_id: int, user_id: int) -> PlayerStats:
        return await self.stats.player_stats(guild_id, user_id)

    # -- settings and choices ---------------------------------------------------------------

    async def server_settings(self, guild_id: int) -> GuildSettings:
        return await self.guilds.get(guild_id)

    async def update_settings(
        self,
        guild_id: int,
        changes: Mapping[str, Any],
        *,
        allow_channel: int | None = None,
        remove_channel: int | None = None,
        all_channels: bool = False,
        reset: bool = False,
    ) -> Change[GuildSettings]:
        return await self.guilds.change(
            guild_id,
            changes,
            allow_channel=allow_channel,
            remove_channel=remove_channel,
            all_channels=all_channels,
            reset=reset,
        )

    async def choices(
        self,
        guild_id: int,
        user_id: int,
        *,
        turn_pings: bool | None = None,
        challenges: bool | None = None,
    ) -> Change[Choices]:
        """The member's choices here before and after changing those given (None: kept)."""
        chosen = await self.pings.choice(guild_id, user_id)
        if chosen is None:
            chosen = (await self.guilds.get(guild_id)).turn_pings
        before = Choices(chosen, await self.guilds.accepts_challenges(guild_id, user_id))
        if turn_pings is not None:
            await self.pings.set_choice(guild_id, user_id, turn_pings)
        if challenges is not None:
            await self.guilds.set_challenges(guild_id, user_id, challenges)
        after = Choices(
            before.turn_pings if turn_pings is None else turn_pings,
            before.challenges if challenges is None else challenges,
        )
        return Change(before, after)

    # -- privacy ----------------------------------------------------------------------------

    async def member_data(self, guild_id: int, user_id: int) -> MemberData:
        return await self.privacy.member_data(guild_id, user_id)

    async def erase_member(self, guild_id: int, user_id: int) -> MemberData:
        return await self.privacy.erase_member(guild_id, user_id)

    async def guild_data(
        self,
        guild_id: int,
        *,
        may_manage: bool,
        user_id: int | None = None,
        is_moderator: bool = True,
    ) -> GuildData:
        """``Privacy.guild_data``; a refusal names /tictactoe-stop only if ``user_id``
        (a moderator or not) may stop every game in the way."""
        asker = (user_id, is_moderator)
        return await self.privacy.guild_data(guild_id, may_manage=may_manage, asker=asker)

    async def erase_guild(
        self,
        guild_id: int,
        *,
        may_manage: bool,
        user_id: int | None = None,
        is_moderator: bool = True,
    ) -> GuildData:
        asker = (user_id, is_moderator)
        return await self.privacy.erase_guild(guild_id, may_manage=may_manage, asker=asker)

    def check_confirmation(
        self, owner_id: int, user_id: int, shown_at: float, clicked_at: float
    ) -> None:
        self.privacy.check_confirmation(owner_id, user_id, shown_at, clicked_at)

    # -- turn notifications -----------------------------------------------------------------

    async def pings_due(self) -> list[Due]:
        return await self.pings.due()

    async def ping_still_due(self, item: Due) -> bool:
        return await self.pings.still_due(item)

    async def record_ping(self, item: Due, message_id: int) -> Recorded:
        return await self.pings.record(item, message_id)

    async def ping_to_delete(self, game: Game) -> Ping | None:
        """``game``'s standing ping if its turn is over (see ``TurnPings.standing``)."""
        return await self.pings.standing(game)

    async def stale_pings(self) -> list[tuple[int, int, int, int]]:
        return await self.pings.stale()

    async def forget_ping(self, game_id: int, message_id: int) -> None:
        await self.pings.forget(game_id, message_id)

    async def ping_refused(self, game: Game) -> None:
        await self.pings.refused(game)

    # -- what Discord reports gone, and housekeeping ----------------------------------------

    async def server_left(self, guild_id: int) -> Lost:
        return await self.upkeep.guild_left(guild_id)

    async def server_back(self, guild_id: int) -> bool:
        return await self.upkeep.guild_back(guild_id)

    async def channel_gone(
        self, guild_id: int, channel_id: int, ended: tuple[int, ...] = ()
    ) -> Lost:
        return await self.upkeep.channel_gone(guild_id, channel_id, ended)

    async def message_gone(self, guild_id: int, channel_id: int, message_id: int) -> Lost:
        return await self.upkeep.message_gone(guild_id, channel_id, message_id)

    async def tidy(self, still_member: Callable[[int], bool]) -> None:
        """Prune what has outlived its use, and erase servers left long ago
        (``Upkeep.tidy``); ``still_member``: whether the bot is in a server now."""
        await self.upkeep.tidy(still_member)

    async def commands_digest(self) -> str | None:
        """The digest of the commands last synced (None: never)."""
        return await self._store.get_meta(COMMANDS_DIGEST)

    async def commands_synced(self, digest: str) -> None:
        await self._store.set_meta(COMMANDS_DIGEST, digest)
