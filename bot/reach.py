"""Where a game can be reached: through its channel, or only through interactions.

A game (or challenge) started where the bot is a member of the server keeps that
server's id and is reached through its channel, as always. Anywhere else (the bot's own
DM, DMs between users, group DMs, servers that never added the bot) it is kept under
``OUTSIDE`` (guild id 0): the player's own space, one for all such places. There the bot
answers through interactions alone: each click's answer, and in between through the
webhook of the game's last interaction while Discord still accepts its token
(``token_live``), never through a channel route. The bot's own DM takes that road too
(one road everywhere), though a channel route would work there.

Games there are unrated and in no server's leaderboard; they make the player's own
record. Per-member limits and cooldowns are keyed on the member under ``OUTSIDE``, one
bucket for every DM, group DM and unknown server, so moving between them resets nothing;
no server cap applies there (it is no server). One game per channel holds: the DM or
group DM is the channel (channel ids are unique across Discord).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "FOLLOWUP_LIMIT",
    "OUTSIDE",
    "TOKEN_LIFETIME",
    "TOKEN_MARGIN",
    "by_channel",
    "followup_room",
    "home_of",
    "token_live",
]

OUTSIDE: Final = 0
"""The guild id of games outside servers that added the bot (no snowflake is 0)."""
TOKEN_LIFETIME: Final = 15 * 60.0
"""How long Discord accepts an interaction's token after issuing it."""
TOKEN_MARGIN: Final = 60.0
"""A token this close to its end is not used: a request sent then could land too late."""
FOLLOWUP_LIMIT: Final = 5
"""Follow-ups Discord takes per interaction where only a user install applies."""


def home_of(guild_id: int | None, bot_is_member: bool) -> int:
    """The guild id a game started here is kept under: the server's own if the bot is a
    member of it, else ``OUTSIDE`` (a DM, a group DM, a server without the bot)."""
    return guild_id if guild_id is not None and bot_is_member else OUTSIDE


def by_channel(guild_id: int) -> bool:
    """Whether the bot may reach a game kept under ``guild_id`` through its channel."""
    return guild_id != OUTSIDE


def token_live(issued_at: float | None, now: float) -> bool:
    """Whether a token issued at ``issued_at`` may still be used at ``now``: known from
    its age alone, never learned from a refusal."""
    return issued_at is not None and now - issued_at < TOKEN_LIFETIME - TOKEN_MARGIN


def followup_room(sent: int, user_install_only: bool) -> bool:
    """Whether one more follow-up may go through a token that took ``sent`` already:
    Discord caps them only where the user install alone authorizes the interaction."""
    return not user_install_only or sent < FOLLOWUP_LIMIT
