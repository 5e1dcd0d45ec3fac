"""Saving an emulator's world to JSON and loading it back, so that a long-lived emulator
(the playground) keeps its ids across restarts.

A bot stores Discord ids: the server, the channels, the members and the messages it posted.
After a restart those ids must still name the same things, or the bot's old messages could
no longer be edited and their buttons would lead nowhere. :func:`snapshot` captures
everything with an id (users, the bot and its application, servers with their roles,
members and channels, DM channels, messages, synced commands); :func:`restore` puts it
into a new, not yet started :class:`Emulator`. Not kept: interactions (their tokens would
have expired on Discord too), gateway sessions, recorded requests, injected faults,
deleted messages and "thinking" placeholders (their interaction cannot fill them any
more). The bot's token is new at every start, as after a token reset.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from .commands import CommandRegistry
from .entities import Channel, Guild, Member, Message, Pings, Role, User
from .flags import ChannelType

if TYPE_CHECKING:
    from .emulator import Emulator

__all__ = ["FORMAT", "restore", "snapshot"]

FORMAT = 1
"""Bumped when the layout changes; :func:`restore` refuses other versions."""


def _time(moment: datetime.datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _parse_time(raw: str | None) -> datetime.datetime | None:
    return None if raw is None else datetime.datetime.fromisoformat(raw)


def _pings(pings: Pings) -> dict[str, Any]:
    return {"users": sorted(pings.users), "roles": sorted(pings.roles), "everyone": pings.everyone}


def _parse_pings(raw: dict[str, Any]) -> Pings:
    return Pings(frozenset(raw["users"]), frozenset(raw["roles"]), bool(raw["everyone"]))


def snapshot(emu: Emulator) -> dict[str, Any]:
    """Everything :func:`restore` needs, as JSON-ready data."""
    return {
        "format": FORMAT,
        "locale": emu.locale,
        "bot": emu.bot.id,
        "application_id": emu.application_id,
        "application_owner": emu.application_owner.id,
        "users": [
            {
                "id": u.id,
                "name": u.name,
                "bot": u.bot,
                "global_name": u.global_name,
                "locale": u.locale,
            }
            for u in emu.users.values()
        ],
        "guilds": [_guild(g) for g in emu.guilds.values()],
        "dm_channels": [
            {"id": c.id, "recipient": c.recipient.id}
            for c in emu.channels.values()
            if c.is_dm and c.recipient is not None
        ],
        "private_channels": [
            {
                "id": c.id,
                "type": int(c.type),
                "name": c.name,
                "owner": c.owner_id,
                "recipients": [u.id for u in c.recipients],
            }
            for c in emu.channels.values()
            if c.is_private and not c.is_bot_dm
        ],
        "install_types": sorted(emu.install_types),
        "user_installs": sorted(emu.user_installs),
        "messages": [
            _message(m)
            for c in emu.channels.values()
            for m in c.messages
            if not m.deleted and not m.loading
        ],
        "commands": [
            {"guild": scope, "commands": commands}
            for scope, commands in emu.commands.scopes.items()
        ],
    }


def _guild(guild: Guild) -> dict[str, Any]:
    return {
        "id": guild.id,
        "name": guild.name,
        "owner_id": guild.owner_id,
        "locale": guild.locale,
        "community": guild.community,
        "roles": [
            {
                "id": r.id,
                "name": r.name,
                "permissions": r.permissions,
                "position": r.position,
                "mentionable": r.mentionable,
                "managed": r.managed,
            }
            for r in guild.roles.values()
        ],
        "members": [
            {
                "user": m.user.id,
                "roles": [r.id for r in m.roles],
                "nick": m.nick,
                "joined_at": _time(m.joined_at),
            }
            for m in guild.members.values()
        ],
        "channels": [_channel(c) for c in guild.channels],
    }


def _channel(channel: Channel) -> dict[str, Any]:
    """A server channel; a thread with its type, parent, creator and members (after its
    parent in the list, as threads are made after their channels)."""
    saved: dict[str, Any] = {"id": channel.id, "name": channel.name, "position": channel.position}
    if channel.is_thread:
        assert channel.parent is not None
        saved["type"] = int(channel.type)
        saved["parent"] = channel.parent.id
        saved["owner"] = channel.owner_id
        saved["members"] = sorted(channel.thread_members)
    return saved


def _message(message: Message) -> dict[str, Any]:
    return {
        "id": message.id,
        "channel": message.channel.id,
        "author": message.author.id,
        "content": message.content,
        "embeds": message.embeds,
        "components": message.components,
        "attachments": message.attachments,
        "flags": int(message.flags),
        "type": message.type,
        "tts": message.tts,
        "created_at": _time(message.created_at),
        "edited_at": _time(message.edited_at),
        "visible_to": message.visible_to,
        "pings": _pings(message.pings),
        "mentions": _pings(message.mentions),
        "allowed_mentions": message.allowed_mentions,
        "webhook_id": message.webhook_id,
        "application_id": message.application_id,
        "interaction_metadata": message.interaction_metadata,
        "reference": message.reference,
        "nonce": message.nonce,
        "edits": message.edits,
    }


def restore(emu: Emulator, state: dict[str, Any]) -> None:
    """Replace the world of ``emu`` (built but not started) with ``state``."""
    if state.get("format") != FORMAT:
        raise ValueError(f"not an emulator snapshot of format {FORMAT}")
    if emu.server.port is not None:
        raise RuntimeError("restore into an emulator before starting it")
    emu.locale = state["locale"]
    emu.users = {
        u["id"]: User(
            id=u["id"],
            name=u["name"],
            bot=u["bot"],
            global_name=u["global_name"],
            locale=u["locale"],
        )
        for u in state["users"]
    }
    emu.bot = emu.users[state["bot"]]
    emu.application_id = state["application_id"]
    emu.application_owner = emu.users[state["application_owner"]]
    emu.guilds, emu.channels, emu.message_index = {}, {}, {}
    for raw in state["guilds"]:
        guild = Guild(
            id=raw["id"],
            name=raw["name"],
            owner_id=raw["owner_id"],
            locale=raw["locale"],
            community=raw["community"],
        )
        for r in raw["roles"]:
            guild.roles[r["id"]] = Role(guild_id=guild.id, **r)
        for m in raw["members"]:
            guild.members[m["user"]] = Member(
                user=emu.users[m["user"]],
                guild=guild,
                roles=[guild.roles[rid] for rid in m["roles"]],
                nick=m["nick"],
                joined_at=_parse_time(m["joined_at"]) or emu.clock.utcnow(),
            )
        for c in raw["channels"]:
            channel = Channel(
                id=c["id"],
                type=ChannelType(c.get("type", ChannelType.GUILD_TEXT)),
                name=c["name"],
                guild=guild,
                position=c["position"],
                parent=emu.channels[c["parent"]] if "parent" in c else None,
                owner_id=c.get("owner"),
                thread_members=set(c.get("members", ())),
            )
            guild.channels.append(channel)
            emu.channels[channel.id] = channel
        emu.guilds[guild.id] = guild
    for c in state["dm_channels"]:
        recipient = emu.users[c["recipient"]]
        emu.channels[c["id"]] = Channel(
            id=c["id"], type=ChannelType.DM, name=recipient.name, recipient=recipient
        )
    for c in state.get("private_channels", ()):  # absent from older snapshots
        emu.channels[c["id"]] = Channel(
            id=c["id"],
            type=ChannelType(c["type"]),
            name=c["name"],
            owner_id=c["owner"],
            recipients=[emu.users[uid] for uid in c["recipients"]],
        )
    emu.install_types = set(state.get("install_types", (0,)))
    emu.user_installs = set(state.get("user_installs", ()))
    for raw in sorted(state["messages"], key=lambda m: m["id"]):
        message = _restored_message(emu, raw)
        message.channel.messages.append(message)
        emu.message_index[message.id] = message
    emu.commands = CommandRegistry(
        emu.application_id, emu.snowflakes.next, lambda: emu.install_types
    )
    for scope in state["commands"]:
        emu.commands.scopes[scope["guild"]] = scope["commands"]
    highest = max([*emu.users, *emu.guilds, *emu.channels, *emu.message_index], default=0)
    emu.snowflakes.advance_past(highest)


def _restored_message(emu: Emulator, raw: dict[str, Any]) -> Message:
    return Message(
        id=raw["id"],
        channel=emu.channels[raw["channel"]],
        author=emu.users[raw["author"]],
        content=raw["content"],
        embeds=raw["embeds"],
        components=raw["components"],
        attachments=raw["attachments"],
        flags=raw["flags"],
        type=raw["type"],
        tts=raw["tts"],
        created_at=_parse_time(raw["created_at"]) or emu.clock.utcnow(),
        edited_at=_parse_time(raw["edited_at"]),
        visible_to=raw["visible_to"],
        pings=_parse_pings(raw["pings"]),
        mentions=_parse_pings(raw["mentions"]),
        allowed_mentions=raw["allowed_mentions"],
        webhook_id=raw["webhook_id"],
        application_id=raw["application_id"],
        interaction_metadata=raw["interaction_metadata"],
        reference=raw["reference"],
        nonce=raw["nonce"],
        edits=raw["edits"],
    )
