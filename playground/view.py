"""What one member's Discord client shows: the server, channels, members, commands and
messages, as the JSON the page draws from.

Messages are the payloads the bot sent, as Discord's API returns them
(``Message.to_payload``), with a few client-side facts beside them: whether the viewer
alone sees it (ephemeral), whether it highlights the viewer (a mention of them, a role of
theirs or @everyone), and whether the bot is still "thinking". Nothing is rendered here:
the page draws every component from the payload, and shows the ones it does not know as
such.
"""

from __future__ import annotations

from typing import Any

from discord_emulator import LOCALES, Channel, Message, Permission, User
from discord_emulator.client import CHAT_INPUT, USER, offered_commands

from .world import World

__all__ = [
    "channel_name",
    "channel_view",
    "commands_view",
    "message_view",
    "place_view",
    "state_view",
    "unread_mentions",
]


def display_name(world: World, user: User) -> str:
    member = world.guild.member(user)
    if member is not None and member.nick:
        return member.nick
    return user.global_name or user.name


def _touches(message: Message, viewer: User, world: World, *, pinged: bool) -> bool:
    """Whether ``message`` mentions ``viewer``: ``pinged`` asks who it notified when posted
    (the unread count), otherwise who its current text highlights."""
    who = message.pings if pinged else message.mentions
    if viewer.id in who.users or who.everyone:
        return True
    member = world.guild.member(viewer)
    return member is not None and any(role.id in who.roles for role in member.roles)


def unread_mentions(world: World, viewer: User, channel: Channel) -> int:
    last = world.reads.last_read.get((viewer.id, channel.id), 0)
    return sum(
        1
        for m in world.emu.messages(channel, viewer=viewer)
        if m.id > last and m.author is not viewer and _touches(m, viewer, world, pinged=True)
    )


def mark_read(world: World, viewer: User, channel: Channel) -> bool:
    """``viewer`` has seen everything in ``channel``; False if that changes nothing."""
    latest = world.emu.latest_message(channel, viewer=viewer)
    key = (viewer.id, channel.id)
    if latest is None or world.reads.last_read.get(key, 0) >= latest.id:
        return False
    world.reads.last_read[key] = latest.id
    return True


def message_view(world: World, message: Message, viewer: User) -> dict[str, Any]:
    return {
        "payload": message.to_payload(world.emu.users),
        "ephemeral": message.ephemeral,
        "loading": message.loading,
        "highlighted": _touches(message, viewer, world, pinged=False),
        "author_name": display_name(world, message.author),
    }


def channel_name(world: World, channel: Channel) -> str:
    """A server channel's name; a DM's, the bot's name; a group DM's, its own or its
    members' names, as Discord shows an unnamed group."""
    if channel.is_bot_dm:
        return display_name(world, world.emu.bot)
    if channel.guild is None and not channel.name:
        return ", ".join(display_name(world, user) for user in channel.recipients)
    return channel.name


def place_view(world: World, channel: Channel, viewer: User | None) -> dict[str, Any]:
    """A channel as the sidebar lists it: ``kind`` text, dm or group_dm; ``place`` the
    server's name (a DM has none); ``bot`` whether the bot is a member there."""
    guild = channel.guild
    kind = "text" if guild is not None else "dm" if channel.is_dm else "group_dm"
    return {
        "id": str(channel.id),
        "name": channel_name(world, channel),
        "kind": kind,
        "place": None if guild is None else guild.name,
        "bot": channel.is_bot_dm if guild is None else world.emu.bot.id in guild.members,
        "unread_mentions": 0 if viewer is None else unread_mentions(world, viewer, channel),
    }


def channel_view(world: World, channel: Channel, viewer: User) -> dict[str, Any]:
    """The channel's messages ``viewer`` sees, oldest first (their own ephemerals included)."""
    return {
        "channel": {"id": str(channel.id), "name": channel_name(world, channel)},
        "viewer": str(viewer.id),
        "messages": [
            message_view(world, m, viewer) for m in world.emu.messages(channel, viewer=viewer)
        ],
    }


def _permissions(world: World, user: User) -> list[str]:
    granted = world.guild.permissions_of(user)
    return [p.name for p in Permission if p.name and granted & p == p]


def state_view(world: World, viewer: User | None = None) -> dict[str, Any]:
    """The server, the channels the page lists (with ``viewer``'s unread mentions), the
    members, and the names the page needs to show mentions of users, roles and channels."""
    guild = world.guild
    members = world.members
    places = world.places(viewer)
    return {
        "server": {"id": str(guild.id), "name": guild.name, "locale": guild.locale},
        "bot": {
            "id": str(world.emu.bot.id),
            "name": display_name(world, world.emu.bot),
            "roles": [r.name for r in guild.members[world.emu.bot.id].roles],
        },
        "locales": list(LOCALES),
        "channels": [place_view(world, c, viewer) for c in places],
        "members": [
            {
                "id": str(u.id),
                "name": display_name(world, u),
                "locale": world.emu.locale_of(u),
                "owner": u.id == guild.owner_id,
                "roles": [r.name for r in guild.members[u.id].roles],
                "permissions": _permissions(world, u),
                "unread_mentions": sum(unread_mentions(world, u, c) for c in world.places(u)),
            }
            for u in members
        ],
        "names": {
            "users": {str(u.id): display_name(world, u) for u in world.emu.users.values()},
            "roles": {str(r.id): r.name for r in guild.roles.values()},
            "channels": {str(c.id): channel_name(world, c) for c in places},
        },
    }


def commands_view(world: World, viewer: User, channel: Channel) -> dict[str, Any]:
    """The slash commands and the user context-menu commands ``viewer``'s client offers in
    ``channel``, localized for their client language."""
    return {
        "locale": world.emu.locale_of(viewer),
        "chat_input": offered_commands(world.emu, viewer, channel, kind=CHAT_INPUT),
        "user": offered_commands(world.emu, viewer, channel, kind=USER),
    }
