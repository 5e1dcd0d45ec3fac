"""What a message points at: a member, a channel, a game's or challenge's message, a list
of them, a command, a moment.

The service puts these into a ``bot.i18n.Message``'s fields as data and knows nothing of
how a client shows them; the Discord layer renders them (``bot.ui.refs``) as mentions,
message links, command names in the reader's language and timestamps their client shows
in its own language.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.i18n import Message

__all__ = ["Channel", "Command", "Member", "Moment", "Place", "Places", "Ref"]


@dataclass(frozen=True, slots=True)
class Member:
    user_id: int


@dataclass(frozen=True, slots=True)
class Channel:
    channel_id: int


@dataclass(frozen=True, slots=True)
class Place:
    """A game's or challenge's message; its channel until the message exists."""

    guild_id: int
    channel_id: int
    message_id: int | None


@dataclass(frozen=True, slots=True)
class Places:
    """Several places, shown as one list."""

    items: tuple[Place | Channel, ...]


@dataclass(frozen=True, slots=True)
class Command:
    """A slash command, by its name in the catalogs (``N_("tictactoe-stop")``)."""

    name: Message


@dataclass(frozen=True, slots=True)
class Moment:
    """A point in time (Unix seconds), shown relative to the reader's now."""

    at: float


Ref = Member | Channel | Place | Places | Command | Moment
