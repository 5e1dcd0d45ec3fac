"""The service's references (``bot.refs``) as Discord shows them: ``<@id>`` mentions,
``<#id>`` channels, message links, command names in the reader's language and ``<t:…:R>``
timestamps (which each client shows in its own language and time zone)."""

from __future__ import annotations

import math
from typing import Protocol

from bot.i18n import Message
from bot.reach import by_channel
from bot.refs import Channel, Command, Member, Moment, Place, Places

__all__ = ["for_discord", "game_link", "message_link"]


def message_link(guild_id: int, channel_id: int, message_id: int | None) -> str:
    """A link to a message (to the channel until the message exists)."""
    if message_id is None:
        return f"<#{channel_id}>"
    # Outside servers that added the bot (bot.reach) the server is not known: "@me",
    # Discord's scope of DMs and group DMs, where most such games are.
    scope = guild_id if by_channel(guild_id) else "@me"
    return f"https://discord.com/channels/{scope}/{channel_id}/{message_id}"


class Located(Protocol):
    """A game, a challenge or a place: whatever has a message in a channel."""

    @property
    def guild_id(self) -> int: ...
    @property
    def channel_id(self) -> int: ...
    @property
    def message_id(self) -> int | None: ...


def game_link(game: Located) -> str:
    """A link to a game's (or challenge's, or place's) message."""
    return message_link(game.guild_id, game.channel_id, game.message_id)


def _render(value: object) -> object:
    if isinstance(value, Member):
        return f"<@{value.user_id}>"
    if isinstance(value, Channel):
        return f"<#{value.channel_id}>"
    if isinstance(value, Place):
        return message_link(value.guild_id, value.channel_id, value.message_id)
    if isinstance(value, Places):
        return ", ".join(str(_render(item)) for item in value.items)
    if isinstance(value, Command):
        return value.name  # a Message: the reader's translator names the command
    if isinstance(value, Moment):
        return f"<t:{math.ceil(value.at)}:R>"
    if isinstance(value, Message):
        return for_discord(value)
    return value


def for_discord(message: Message) -> Message:
    """``message`` with every reference in its fields (nested ones too) rendered."""
    if not message.params:
        return message
    params = {name: _render(value) for name, value in message.params.items()}
    return Message(message.singular, message.plural, message.n, params)
