"""From the world's events to what the bot hears on the gateway.

:class:`Dispatcher` builds READY and the GUILD_CREATEs of a new session, and turns each
:data:`~discord_emulator.events.Event` into its dispatch, as Discord does: only for a guild
the bot is in, only to the sessions that own the guild, with the intent it needs, and the
message content blanked for a session without MESSAGE_CONTENT when the message is not the
bot's own and does not mention it. Ephemeral messages never reach the gateway.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, assert_never

from .entities import Channel, Guild, Message
from .events import (
    BotJoined,
    BotLeft,
    ChannelCreated,
    ChannelDeleted,
    Event,
    GuildUpdated,
    MemberJoined,
    MessageDeleted,
    MessageEdited,
    MessagePosted,
    RoleCreated,
    ThreadCreated,
)
from .gateway import Gateway, Session
from .payloads import current_user, guild_create, guild_object, thread_member
from .protocol import Intent
from .world import World

__all__ = ["Dispatcher"]


class Dispatcher:
    """Speaks for ``world`` on ``gateway``; ``gateway_url`` is READY's resume URL."""

    def __init__(self, world: World, gateway: Gateway, gateway_url: Callable[[], str]) -> None:
        self.world = world
        self.gateway = gateway
        self._gateway_url = gateway_url

    # -- a new session -----------------------------------------------------------------------

    def ready(self, session: Session) -> dict[str, Any]:
        """The READY payload of ``session``: its guilds, unavailable until GUILD_CREATE."""
        world = self.world
        payload: dict[str, Any] = {
            "v": 10,
            "user": current_user(world.bot),
            "guilds": [{"id": str(g.id), "unavailable": True} for g in self._guilds_of(session)],
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": self._gateway_url(),
            "application": {"id": str(world.application_id), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": [],
            "user_settings": {},
        }
        if session.shard is not None:
            payload["shard"] = session.shard
        return payload

    def guild_creates(self, session: Session) -> list[dict[str, Any]]:
        """The GUILD_CREATE payloads of the guilds ``session`` owns."""
        return [self.guild_create(g, session.intents) for g in self._guilds_of(session)]

    def guild_create(self, guild: Guild, intents: int) -> dict[str, Any]:
        """``guild``'s GUILD_CREATE for a session with ``intents``: without GUILD_MEMBERS,
        the bot's own member only."""
        bot = self.world.bot
        members = None if intents & Intent.GUILD_MEMBERS else [guild.members[bot.id]]
        return guild_create(guild, members=members, viewer=bot.id)

    def _guilds_of(self, session: Session) -> list[Guild]:
        return [g for g in self.world.bot_guilds() if session.owns(g.id)]

    # -- changes -------------------------------------------------------------------------------

    def on_event(self, event: Event) -> None:
        """Send what ``event`` means to the bot, if anything."""
        gateway, bot = self.gateway, self.world.bot
        match event:
            case BotJoined(guild):
                for session in gateway.targets(guild.id):
                    gateway.emit(session, "GUILD_CREATE", self.guild_create(guild, session.intents))
            case BotLeft(guild):  # no "unavailable": removed, not an outage
                gone = {"id": str(guild.id)}
                gateway.dispatch("GUILD_DELETE", gone, intent=Intent.GUILDS, guild_id=guild.id)
            case GuildUpdated(guild):
                if bot.id in guild.members:
                    gateway.dispatch("GUILD_UPDATE", guild_object(guild), intent=Intent.GUILDS)
            case ChannelDeleted(channel):
                self._channel_deleted(channel)
            case RoleCreated(role, guild):
                if bot.id in guild.members:
                    created = {"guild_id": str(guild.id), "role": role.to_payload()}
                    gateway.dispatch("GUILD_ROLE_CREATE", created, intent=Intent.GUILDS)
            case MemberJoined(member):
                if bot.id in member.guild.members:
                    joined = {**member.to_payload(), "guild_id": str(member.guild.id)}
                    gateway.dispatch("GUILD_MEMBER_ADD", joined, intent=Intent.GUILD_MEMBERS)
            case ChannelCreated(channel):
                assert channel.guild is not None
                if bot.id in channel.guild.members:
                    gateway.dispatch("CHANNEL_CREATE", channel.to_payload(), intent=Intent.GUILDS)
            case ThreadCreated(thread):
                self._thread_created(thread)
            case MessagePosted(message):
                if not message.ephemeral:
                    self._message_event("MESSAGE_CREATE", message)
            case MessageEdited(message):
                if not message.ephemeral:
                    self._message_event("MESSAGE_UPDATE", message)
            case MessageDeleted(message):
                if not message.ephemeral:
                    self._message_deleted(message)
            case _:
                assert_never(event)

    def _channel_deleted(self, channel: Channel) -> None:
        if not channel.is_thread:
            self.gateway.dispatch("CHANNEL_DELETE", channel.to_payload(), intent=Intent.GUILDS)
            return
        guild, parent = channel.guild, channel.parent
        assert guild is not None and parent is not None
        if guild.sees(self.world.bot, channel):
            data = {
                "id": str(channel.id),
                "guild_id": str(guild.id),
                "parent_id": str(parent.id),
                "type": int(channel.type),
            }
            self.gateway.dispatch("THREAD_DELETE", data, intent=Intent.GUILDS)

    def _thread_created(self, thread: Channel) -> None:
        """Only to a bot that sees the thread (a private one: a member, or Manage Threads)."""
        world, guild = self.world, thread.guild
        assert guild is not None
        if world.bot.id not in guild.members or not guild.sees(world.bot, thread):
            return
        data = {**thread.to_payload(), "newly_created": True}
        if world.bot.id in thread.thread_members:
            data["member"] = thread_member(thread, world.bot, world.clock.utcnow())
        self.gateway.dispatch("THREAD_CREATE", data, intent=Intent.GUILDS)

    def _hears(self, message: Message) -> bool:
        """Whether the bot gets events of ``message``'s channel: a server it is in, or its
        own DM (never a DM between users or a group DM)."""
        channel, bot = message.channel, self.world.bot
        if channel.guild is not None:
            return bot.id in channel.guild.members
        return channel.is_bot_dm

    def _message_deleted(self, message: Message) -> None:
        if not self._hears(message):
            return
        data = {"id": str(message.id), "channel_id": str(message.channel.id)}
        if message.guild is not None:
            data["guild_id"] = str(message.guild.id)
        intent = Intent.GUILD_MESSAGES if message.guild else Intent.DIRECT_MESSAGES
        self.gateway.dispatch("MESSAGE_DELETE", data, intent=intent)

    def _message_event(self, event: str, message: Message) -> None:
        if not self._hears(message):
            return
        world, guild = self.world, message.guild
        intent = Intent.GUILD_MESSAGES if guild else Intent.DIRECT_MESSAGES
        sessions = self.gateway.targets(guild.id if guild else None, intent)
        if not sessions:
            return  # dropped anyway: do not build it (most bots never ask for messages)
        payload = message.to_payload(world.users)
        member = guild.member(message.author) if guild else None
        if member is not None:
            payload["member"] = member.to_payload(with_user=False)
        privileged = (
            guild is not None
            and message.author is not world.bot
            and world.bot.id not in message.mentions.users
        )
        hidden = {**payload, "content": "", "embeds": [], "attachments": [], "components": []}
        for session in sessions:
            blind = privileged and not session.intents & Intent.MESSAGE_CONTENT
            self.gateway.emit(session, event, hidden if blind else payload)
