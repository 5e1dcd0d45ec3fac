"""Per-server settings (within the bot's bounds), and members' consent to challenges.

Moderators choose within the bounds of ``bot.tunables``; what they leave unset follows the
bot's defaults (``ServiceConfig``), so a host's new default reaches every server that did
not choose.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from bot.config import ServiceConfig
from bot.durations import parse_duration
from bot.errors import InvalidSettings, TooManyGames
from bot.games import rules
from bot.games.queries import Store
from bot.games.refusals import LimitReached
from bot.games.server_queries import GuildStore
from bot.i18n import N_, Duration, Message
from bot.models import Change, GuildSettings
from bot.refs import Channel
from bot.tunables import BOUNDS, BY_NAME, SERVER, SWITCHES

__all__ = ["BOUNDS", "DURATIONS", "MAX_CHANNELS", "Choices", "Guilds", "read_duration"]

MAX_CHANNELS = 25
"""Channels a server may list for games (a longer list is easier as "every channel")."""
DURATIONS = frozenset(setting.name for setting in SERVER if not setting.whole)
"""The settings that are lengths of time (typed as ``90s``, ``5m``, ``1h30m``, ``1d``)."""


@dataclass(frozen=True, slots=True)
class Choices:
    """A member's choices in a server, as in force (their own, else the server's)."""

    turn_pings: bool
    challenges: bool


class Guilds:
    def __init__(self, store: Store, config: ServiceConfig, clock: Callable[[], float]) -> None:
        self._store = store
        self._guild_store = GuildStore(store.db)
        self._config = config
        self._clock = clock

    def defaults(self) -> GuildSettings:
        return GuildSettings(numbers=self._config.numbers.only(SERVER))

    async def get(self, guild_id: int) -> GuildSettings:
        """The server's settings as they apply now."""
        overrides, channels = await self._guild_store.settings(guild_id)
        return self._resolve(overrides, channels)

    def _resolve(self, overrides: Mapping[str, Any], channels: tuple[int, ...]) -> GuildSettings:
        chosen = {name: value for name, value in overrides.items() if value is not None}
        switches = {name: bool(chosen.pop(name)) for name in SWITCHES if name in chosen}
        defaults = self.defaults()
        numbers = defaults.numbers.replace(**chosen)
        return replace(defaults, channels=channels, numbers=numbers, **switches)

    async def change(
        self,
        guild_id: int,
        changes: Mapping[str, Any],
        *,
        allow_channel: int | None = None,
        remove_channel: int | None = None,
        all_channels: bool = False,
        reset: bool = False,
    ) -> Change[GuildSettings]:
        """Apply a moderator's changes: the settings in force before and after.

        ``changes`` maps setting names to new values (None: back to the default).
        ``reset`` first returns every setting, channels included, to the defaults. Every
        value is checked before anything is written: InvalidSettings changes nothing.
        """
        for name, value in changes.items():
            _check(name, value)
        overrides, channels = await self._guild_store.settings(guild_id)
        before = self._resolve(overrides, channels)
        if reset:
            overrides, channels = {}, ()
        overrides = {**overrides, **changes}
        listed = [] if all_channels else list(channels)
        if allow_channel is not None and allow_channel not in listed:
            if len(listed) >= MAX_CHANNELS:
                raise InvalidSettings(
                    N_(
                        "At most {n} channels can be listed; remove one first, or allow every"
                        " channel.",
                        n=MAX_CHANNELS,
                    )
                )
            listed.append(allow_channel)
        if remove_channel is not None:
            if remove_channel not in listed:
                raise InvalidSettings(
                    N_(
                        "{channel} isn't in the list of game channels.",
                        channel=Channel(remove_channel),
                    )
                )
            listed.remove(remove_channel)
            if not listed:
                raise InvalidSettings(
                    N_(
                        "That is the last game channel; to allow every channel, use {option}.",
                        option=N_("all_channels"),
                    )
                )
        stored = tuple(sorted(listed))
        for switch in SWITCHES:
            if overrides.get(switch) is not None:
                overrides[switch] = int(bool(overrides[switch]))
        await self._guild_store.put_settings(guild_id, overrides, stored, self._clock())
        return Change(before, self._resolve(overrides, stored))

    async def too_many(
        self, error: LimitReached, actor: int, settings: GuildSettings
    ) -> TooManyGames:
        """The answer to a refused start: the limit reached, linking the games in the way."""
        found = [await self._store.get_game(game_id) for game_id in error.game_ids[:3]]
        games = [game for game in found if game is not None]
        return rules.too_many_games(error.user_id, actor, games, settings)

    async def set_challenges(self, guild_id: int, user_id: int, allowed: bool) -> None:
        """Turn challenges to ``user_id`` in this server on or off."""
        await self._guild_store.set_challenge_block(guild_id, user_id, not allowed, self._clock())

    async def accepts_challenges(self, guild_id: int, user_id: int) -> bool:
        return not await self._guild_store.blocks_challenges(guild_id, user_id)

    # -- a member's choices ---------------------------------------------------------------

    async def set_turn_pings(self, guild_id: int, user_id: int, on: bool) -> None:
        """The member's turn notifications in this server, on or off."""
        await self._guild_store.set_member_choice(guild_id, user_id, on, self._clock())

    async def turn_pings_of(self, guild_id: int, user_id: int) -> bool | None:
        """The member's own choice of turn notifications here (None: the server's)."""
        return await self._guild_store.member_choice(guild_id, user_id)

    async def choices(
        self,
        guild_id: int,
        user_id: int,
        *,
        turn_pings: bool | None = None,
        challenges: bool | None = None,
    ) -> Change[Choices]:
        """The member's choices here before and after changing those given (None: kept)."""
        chosen = await self.turn_pings_of(guild_id, user_id)
        if chosen is None:
            chosen = (await self.get(guild_id)).turn_pings
        before = Choices(chosen, await self.accepts_challenges(guild_id, user_id))
        if turn_pings is not None:
            await self.set_turn_pings(guild_id, user_id, turn_pings)
        if challenges is not None:
            await self.set_challenges(guild_id, user_id, challenges)
        after = Choices(
            before.turn_pings if turn_pings is None else turn_pings,
            before.challenges if challenges is None else challenges,
        )
        return Change(before, after)


_SETTING_NAMES = {*(setting.name for setting in SERVER), *SWITCHES}


def _check(name: str, value: Any) -> None:
    """InvalidSettings unless ``value`` is allowed for the setting ``name`` (None: default)."""
    if name not in _SETTING_NAMES:
        raise InvalidSettings(N_("There is no setting called {name}.", name=repr(name)))
    if value is None:
        return
    if name == "reviews":
        if not isinstance(value, bool):
            raise InvalidSettings(N_("Reviews are either on or off."))
        return
    if name == "turn_pings":
        if not isinstance(value, bool):
            raise InvalidSettings(N_("Turn notifications are either on or off."))
        return
    setting = BY_NAME[name]
    low, high, whole = setting.low, setting.high, setting.whole
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidSettings(N_("{setting} must be a number.", setting=label(name)))
    if whole and not float(value).is_integer():
        raise InvalidSettings(N_("{setting} must be a whole number.", setting=label(name)))
    if not math.isfinite(value) or not low <= value <= high:
        if whole:
            shown: dict[str, object] = {
                "low": f"{low:g}",
                "high": f"{high:g}",
                "value": f"{value:g}",
            }
        else:
            shown = {"low": Duration(low), "high": Duration(high), "value": Duration(value)}
            if not math.isfinite(value) or not float(value).is_integer():
                shown["value"] = repr(value)
        raise InvalidSettings(
            N_("{setting} must be from {low} to {high}, not {value}.", setting=label(name), **shown)
        )


def read_duration(name: str, text: str) -> float:
    """The seconds a moderator typed for the setting ``name``: ``90s``, ``5m``, ``1h30m``,
    ``1d`` or a number of seconds; InvalidSettings if it is none of those (``change``
    checks the bounds)."""
    try:
        return parse_duration(text)
    except ValueError:
        raise InvalidSettings(
            N_(
                "{setting}: write a time such as 90s, 5m, 1h30m or 1d, not {value}.",
                setting=label(name),
                value=repr(text[:20]),
            )
        ) from None


def label(name: str) -> Message:
    """A server setting's name as people read it (``bot.tunables``)."""
    text = BY_NAME[name].label
    assert text is not None, f"{name} is not a server setting"
    return text
