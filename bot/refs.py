"""What a message points at: a member, a channel, a game's or challenge's message, a list
of them, a command, a moment.

The service puts these into a ``bot.i18n.Message``'s fields as data and knows nothing of
how a client shows them; the Discord layer renders them (``bot.ui.refs``) as mentions,
message links, command names in the reader's language and timestamps their client shows
in its own language.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from bot.i18n import Message

__all__ = ["Channel", "Command", "Member", "Moment", "Place", "Places", "Ref"]


@dataclass(frozen=True, slots=True)
class Member:
    user_id: int

    def __str__(self) -> str:  # logs; bot/ui renders them for Discord
        return f"member {self.user_id}"


@dataclass(frozen=True, slots=True)
class Channel:
    channel_id: int

    def __str__(self) -> str:
        return f"channel {self.channel_id}"


@dataclass(frozen=True, slots=True)
class Place:
    """A game's or challenge's message; its channel until the message exists."""

    guild_id: int
    channel_id: int
    message_id: int | None

    def __str__(self) -> str:
        where = f"channel {self.channel_id}"
        return where if self.message_id is None else f"message {self.message_id} in {where}"


@dataclass(frozen=True, slots=True)
class Places:
    """Several places, shown as one list."""

    items: tuple[Place | Channel, ...]

    def __str__(self) -> str:
        return ", ".join(map(str, self.items))


@dataclass(frozen=True, slots=True)
class Command:
    """A slash command, by its name in the catalogs (``N_("tictactoe-stop")``)."""

    name: Message

    def __str__(self) -> str:
        return self.name.singular


@dataclass(frozen=True, slots=True)
class Moment:
    """A point in time (Unix seconds), shown relative to the reader's now."""

    at: float

    def __str__(self) -> str:
        return datetime.datetime.fromtimestamp(self.at, datetime.UTC).isoformat(timespec="seconds")


Ref = Member | Channel | Place | Places | Command | Moment
