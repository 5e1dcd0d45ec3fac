"""A member's data on request: erasing their stats, ratings and history in a server, or,
for members with Manage Server, everything the bot holds about the server.

Both are refused while games they would touch are being played: a live game belongs to
its other player too, and ending it here would need a result (forfeit? unrated?) that
neither player chose. The refusal links those games; the member (or a moderator, whose
/tictactoe-stop is unrated) can end them and ask again.

An erasure is asked for, then confirmed with a button. The confirmation is valid for
``CONFIRM_SECONDS`` from the moment it was shown, measured on Discord's clock (the
snowflakes of the message and of the click), so the bot's own clock does not matter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from bot.config import ServiceConfig
from bot.errors import ConfirmationExpired, GamesInTheWay, NotYourConfirmation, PermissionDenied
from bot.games.endings import may_stop
from bot.games.queries import Store
from bot.games.rules import STOP_COMMAND, place_of
from bot.i18n import N_, Message, Nn_
from bot.models import DELETED_MEMBER, Challenge, Game, GuildData, MemberData
from bot.privacy.queries import LiveGames, PrivacyStore
from bot.refs import Places

__all__ = ["CONFIRM_SECONDS", "LINKED_GAMES", "Privacy"]

CONFIRM_SECONDS = 300.0
"""How long an erasure's confirm button stays valid after it is shown."""
LINKED_GAMES = 3
"""At most this many games are linked in a refusal; the rest are counted."""
Asker = tuple[int | None, bool]
"""Who asks for a server erasure: their id (None: not known) and whether they are a
moderator (Manage Messages), which decides whether a refusal names /tictactoe-stop."""


def _links(games: Sequence[Game]) -> Places | Message:
    """``<a>, <b>, <c>`` / ``<a>, <b>, <c> and 2 more``."""
    links = Places(tuple(place_of(game) for game in games[:LINKED_GAMES]))
    more = len(games) - LINKED_GAMES
    if more <= 0:
        return links
    return Nn_("{links} and {n} more", "{links} and {n} more", more, links=links)


def _member_refusal(games: Sequence[Game]) -> GamesInTheWay:
    return GamesInTheWay(
        Nn_(
            "You have {n} game in progress: {links}. Finish or stop it (`/{command}`)"
            " first, then ask again. Nothing was erased.",
            "You have {n} games in progress: {links}. Finish or stop them (`/{command}`)"
            " first, then ask again. Nothing was erased.",
            len(games),
            links=_links(games),
            command=STOP_COMMAND,
        )
    )


def _guild_refusal(games: Sequence[Game], asker: Asker) -> GamesInTheWay:
    """The refusal of a server erasure while ``games`` are live; ``/tictactoe-stop`` is
    named only if the asker may stop every one of them (``endings.may_stop``)."""
    user_id, is_moderator = asker
    if user_id is not None and not all(
        may_stop(game, user_id, is_moderator=is_moderator) for game in games
    ):
        return GamesInTheWay(
            Nn_(
                "This server has {n} game in progress: {links}. Let it end, then ask again."
                " Nothing was erased.",
                "This server has {n} games in progress: {links}. Let them end, then ask"
                " again. Nothing was erased.",
                len(games),
                links=_links(games),
            )
        )
    return GamesInTheWay(
        Nn_(
            "This server has {n} game in progress: {links}. Let it end, or stop it"
            " (`/{command}` in its channel; a moderator's stop doesn't count for ratings),"
            " then ask again. Nothing was erased.",
            "This server has {n} games in progress: {links}. Let them end, or stop them"
            " (`/{command}` in their channel; a moderator's stop doesn't count for"
            " ratings), then ask again. Nothing was erased.",
            len(games),
            links=_links(games),
            command=STOP_COMMAND,
        )
    )


class Privacy:
    def __init__(self, store: Store, config: ServiceConfig, clock: Callable[[], float]) -> None:
        self._store = store
        self._privacy_store = PrivacyStore(store.db)
        self._config = config
        self._clock = clock

    # -- one member ---------------------------------------------------------------------

    async def member_data(self, guild_id: int, user_id: int) -> MemberData:
        """What an erasure would take; GamesInTheWay while the member plays a live game."""
        data, live = await self._privacy_store.member_data(guild_id, user_id)
        if live:
            raise _member_refusal(live)
        return data

    async def erase_member(self, guild_id: int, user_id: int) -> MemberData:
        """Erase the member's data in the server: their standing, records, cooldowns,
        consent and challenges go; their ended games stay, with ``DELETED_MEMBER`` in
        their place (other members' ratings are untouched). Returns what was erased, with
        their pending challenges as withdrawn, whose messages need redrawing.
        GamesInTheWay, erasing nothing, while they play a live game there."""
        try:
            erased = await self._privacy_store.erase_member(guild_id, user_id)
        except LiveGames as refused:
            raise _member_refusal(refused.games) from None
        withdrawn = tuple(_without(challenge, user_id) for challenge in erased.withdrawn)
        return replace(erased, withdrawn=withdrawn)

    # -- a whole server -----------------------------------------------------------------

    async def guild_data(
        self,
        guild_id: int,
        *,
        may_manage: bool,
        user_id: int | None = None,
        is_moderator: bool = True,
    ) -> GuildData:
        """What a server erasure would take; PermissionDenied without Manage Server,
        GamesInTheWay while the server has live games, whose refusal names
        /tictactoe-stop only if ``user_id`` (a moderator or not) may stop them all."""
        _check_manager(may_manage)
        asker = (user_id, is_moderator)
        data, live = await self._privacy_store.guild_data(guild_id)
        if live:
            raise _guild_refusal(live, asker)
        return data

    async def erase_guild(
        self,
        guild_id: int,
        *,
        may_manage: bool,
        user_id: int | None = None,
        is_moderator: bool = True,
    ) -> GuildData:
        """Delete everything the bot holds about the server (games, challenges, ratings,
        records, settings, cooldowns, consent). Returns what there was, with its pending
        challenges as withdrawn. Refused as ``guild_data`` is, erasing nothing."""
        _check_manager(may_manage)
        asker = (user_id, is_moderator)
        try:
            return await self._privacy_store.erase_guild(guild_id)
        except LiveGames as refused:
            raise _guild_refusal(refused.games, asker) from None

    async def erase_left(self, guild_id: int) -> bool:
        """Erase a server the bot left long ago (``Upkeep.prune``) as ``erase_guild``
        would, with nobody to ask. Whether it was: not while it has live games (a game
        started again meanwhile), and then nothing is written."""
        try:
            await self._privacy_store.erase_guild(guild_id)
        except LiveGames:
            return False
        return True

    # -- the confirm button -------------------------------------------------------------

    @staticmethod
    def check_confirmation(owner_id: int, user_id: int, shown_at: float, clicked_at: float) -> None:
        """NotYourConfirmation unless ``user_id`` asked for it; ConfirmationExpired if it
        was clicked more than CONFIRM_SECONDS after it was shown (both times from Discord)."""
        if user_id != owner_id:
            raise NotYourConfirmation()
        if clicked_at - shown_at > CONFIRM_SECONDS:
            minutes = round(CONFIRM_SECONDS / 60)
            raise ConfirmationExpired(
                Nn_(
                    "This confirmation expired (it lasts {n} minute); nothing was erased. Run"
                    " the command again if you still want to.",
                    "This confirmation expired (it lasts {n} minutes); nothing was erased. Run"
                    " the command again if you still want to.",
                    minutes,
                )
            )


def _without(challenge: Challenge, user_id: int) -> Challenge:
    """The challenge as its message is redrawn: the erased member shown as deleted."""
    if challenge.challenger_id == user_id:
        return replace(challenge, challenger_id=DELETED_MEMBER)
    return replace(challenge, opponent_id=DELETED_MEMBER)


def _check_manager(may_manage: bool) -> None:
    if not may_manage:
        raise PermissionDenied(N_("Only members with Manage Server can erase this server's data."))
