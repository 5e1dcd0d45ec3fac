"""Payloads made of several entities: a guild as GUILD_CREATE and as the guild object, the
bot's own user (READY, ``GET /users/@me``), and a thread member."""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Any

from .entities import Channel, Guild, Member, User, iso

__all__ = ["current_user", "guild_create", "guild_object", "thread_member"]


def current_user(bot: User) -> dict[str, Any]:
    """The bot's user as it sees itself (READY's ``user``, ``GET /users/@me``)."""
    return {**bot.to_payload(), "verified": True, "mfa_enabled": False, "flags": 0, "email": None}


def thread_member(thread: Channel, user: User, joined: datetime.datetime) -> dict[str, Any]:
    """The thread member object of ``user`` in ``thread``."""
    return {
        "id": str(thread.id),
        "user_id": str(user.id),
        "join_timestamp": iso(joined),
        "flags": 0,
    }


def _thread_seen(thread: Channel, viewer: int) -> dict[str, Any]:
    """A thread of GUILD_CREATE: with ``member`` (without its ids, as Discord sends it there)
    when ``viewer`` joined it, which is how a client knows it is in a private thread."""
    payload = thread.to_payload()
    if viewer in thread.thread_members:
        joined = datetime.datetime.now(datetime.UTC)
        payload["member"] = {"join_timestamp": iso(joined), "flags": 0}
    return payload


def guild_object(guild: Guild) -> dict[str, Any]:
    """The guild object of ``GET /guilds/{id}`` and GUILD_UPDATE: no GUILD_CREATE extras."""
    payload = guild_create(guild, members=[])
    for key in ("members", "channels", "threads", "presences", "voice_states", "joined_at"):
        del payload[key]
    del payload["large"]
    return payload


def guild_create(
    guild: Guild, *, members: Iterable[Member] | None = None, viewer: int | None = None
) -> dict[str, Any]:
    """``guild``'s GUILD_CREATE payload; ``members`` defaults to every member; ``threads``
    are those ``viewer`` (the bot) sees."""
    listed = list(guild.members.values() if members is None else members)
    return {
        "id": str(guild.id),
        "name": guild.name,
        "icon": None,
        "splash": None,
        "discovery_splash": None,
        "banner": None,
        "description": None,
        "owner_id": str(guild.owner_id),
        "afk_channel_id": None,
        "afk_timeout": 300,
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "mfa_level": 0,
        "nsfw_level": 0,
        "premium_tier": 0,
        "premium_subscription_count": 0,
        "premium_progress_bar_enabled": False,
        "preferred_locale": guild.locale,
        "system_channel_id": None,
        "system_channel_flags": 0,
        "rules_channel_id": None,
        "public_updates_channel_id": None,
        "safety_alerts_channel_id": None,
        "vanity_url_code": None,
        "features": guild.features,
        "application_id": None,
        "max_members": 500000,
        "roles": [role.to_payload() for role in guild.roles.values()],
        "emojis": [],
        "stickers": [],
        "soundboard_sounds": [],
        "channels": [c.to_payload() for c in guild.channels if not c.is_thread],
        "threads": [
            _thread_seen(c, viewer)
            for c in guild.channels
            if c.is_thread and viewer is not None and guild.sees(viewer, c)
        ],
        "members": [member.to_payload() for member in listed],
        "member_count": len(guild.members),
        "large": len(guild.members) >= 250,
        "unavailable": False,
        "joined_at": iso(datetime.datetime.now(datetime.UTC)),
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
    }
