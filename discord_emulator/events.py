"""What changed in the world: one frozen dataclass per kind of change.

:class:`~discord_emulator.world.World` and the message operations (messages.py) emit them
to the world's subscribers; the gateway translation (dispatch.py) matches on their type to
decide what the bot hears. An event says what happened, not who should hear of it: an
ephemeral message is posted too, and dispatch.py keeps it from the gateway.
"""

from __future__ import annotations

from dataclasses import dataclass

from .entities import Channel, Guild, Member, Message, Role

__all__ = [
    "BotJoined",
    "BotLeft",
    "ChannelCreated",
    "ChannelDeleted",
    "Event",
    "GuildUpdated",
    "MemberJoined",
    "MessageDeleted",
    "MessageEdited",
    "MessagePosted",
    "RoleCreated",
    "ThreadCreated",
]


@dataclass(frozen=True)
class BotJoined:
    """The bot joined ``guild`` (made with it, or added back)."""

    guild: Guild


@dataclass(frozen=True)
class BotLeft:
    """The bot was removed (kicked) from ``guild``."""

    guild: Guild


@dataclass(frozen=True)
class GuildUpdated:
    """A setting of ``guild`` changed (its preferred locale)."""

    guild: Guild


@dataclass(frozen=True)
class RoleCreated:
    role: Role
    guild: Guild


@dataclass(frozen=True)
class MemberJoined:
    """Someone other than the bot became a member."""

    member: Member


@dataclass(frozen=True)
class ChannelCreated:
    """A text channel was made."""

    channel: Channel


@dataclass(frozen=True)
class ThreadCreated:
    thread: Channel


@dataclass(frozen=True)
class ChannelDeleted:
    """A server channel or a thread was deleted, with its messages."""

    channel: Channel


@dataclass(frozen=True)
class MessagePosted:
    message: Message


@dataclass(frozen=True)
class MessageEdited:
    message: Message


@dataclass(frozen=True)
class MessageDeleted:
    message: Message


Event = (
    BotJoined
    | BotLeft
    | GuildUpdated
    | RoleCreated
    | MemberJoined
    | ChannelCreated
    | ThreadCreated
    | ChannelDeleted
    | MessagePosted
    | MessageEdited
    | MessageDeleted
)
"""Every kind of change."""
