"""The things of a Discord: users, roles, members, guilds, channels (threads and DMs too),
and messages, with the rules that read them (permissions, who sees what) and their JSON.

They are plain data; ``to_payload`` gives the shapes of Discord API v10. They refer to one
another both ways (a channel lists its messages, a message knows its channel), so they live
together. The :class:`~discord_emulator.world.World` owns and changes them.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from . import layout
from .flags import ALL_PERMISSIONS, ChannelType, MessageFlag, Permission
from .layout import Button
from .locales import DEFAULT_LOCALE

__all__ = ["Channel", "Guild", "Member", "Message", "Pings", "Role", "User", "iso"]


def iso(moment: datetime.datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


@dataclass(eq=False)
class User:
    """A Discord account. ``locale`` is the language its client is set to (None: the
    emulator's default); Discord never shows it to bots except as an interaction's
    ``locale``."""

    id: int
    name: str
    bot: bool = False
    global_name: str | None = None
    locale: str | None = None

    @property
    def mention(self) -> str:
        return f"<@{self.id}>"

    def to_payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "id": str(self.id),
            "username": self.name,
            "discriminator": "0",
            "global_name": self.global_name,
            "avatar": None,
            "public_flags": 0,
        }
        if self.bot:
            payload["bot"] = True
        return payload


@dataclass(eq=False)
class Role:
    id: int
    guild_id: int
    name: str
    permissions: int = 0
    position: int = 0
    mentionable: bool = False
    managed: bool = False

    @property
    def mention(self) -> str:
        return f"<@&{self.id}>"

    def to_payload(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "name": self.name,
            "permissions": str(self.permissions),
            "position": self.position,
            "color": 0,
            "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
            "hoist": False,
            "icon": None,
            "unicode_emoji": None,
            "managed": self.managed,
            "mentionable": self.mentionable,
            "flags": 0,
        }


@dataclass(eq=False)
class Member:
    user: User
    guild: Guild = field(repr=False)
    roles: list[Role] = field(default_factory=list)
    nick: str | None = None
    joined_at: datetime.datetime = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC)
    )

    @property
    def permissions(self) -> int:
        return self.guild.permissions_of(self.user)

    def to_payload(
        self, *, with_user: bool = True, with_permissions: bool = False
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "roles": [str(role.id) for role in self.roles],
            "nick": self.nick,
            "avatar": None,
            "banner": None,
            "joined_at": iso(self.joined_at),
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "pending": False,
            "flags": 0,
            "communication_disabled_until": None,
        }
        if with_user:
            payload["user"] = self.user.to_payload()
        if with_permissions:
            payload["permissions"] = str(self.permissions)
        return payload


@dataclass(eq=False)
class Guild:
    """A server. ``locale`` is its preferred locale ("Server Primary Language"), which only a
    Community server (``community``) can set to anything but en-US."""

    id: int
    name: str
    owner_id: int
    locale: str = DEFAULT_LOCALE
    community: bool = False
    roles: dict[int, Role] = field(default_factory=dict)
    members: dict[int, Member] = field(default_factory=dict)
    channels: list[Channel] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"<Guild id={self.id} name={self.name!r} members={len(self.members)}>"

    @property
    def everyone(self) -> Role:
        return self.roles[self.id]

    def member(self, user: User | int) -> Member | None:
        return self.members.get(user if isinstance(user, int) else user.id)

    def permissions_of(self, user: User | int) -> int:
        """Guild-level permissions (channel overwrites are not modelled)."""
        user_id = user if isinstance(user, int) else user.id
        if user_id == self.owner_id:
            return ALL_PERMISSIONS
        member = self.members.get(user_id)
        if member is None:
            return 0
        value = self.everyone.permissions
        for role in member.roles:
            value |= role.permissions
        if value & Permission.ADMINISTRATOR:
            return ALL_PERMISSIONS
        return value

    def sees(self, user: User | int, channel: Channel) -> bool:
        """Whether ``user`` sees ``channel``: View Channel, and for a private thread being
        one of its members or holding Manage Threads."""
        user_id = user if isinstance(user, int) else user.id
        perms = self.permissions_of(user_id)
        if not perms & Permission.VIEW_CHANNEL:
            return False
        if channel.type is not ChannelType.PRIVATE_THREAD:
            return True
        return user_id in channel.thread_members or bool(perms & Permission.MANAGE_THREADS)

    @property
    def features(self) -> list[str]:
        return ["COMMUNITY"] if self.community else []


@dataclass(eq=False)
class Channel:
    """A text channel, a DM, a group DM, or a thread: a thread has the text channel it lives
    in (``parent``), its creator (``owner_id``) and its members (``thread_members``), who
    alone see it when it is private (with those holding Manage Threads).

    The bot's DM with a user has that user as ``recipient``. A DM between two users, or a
    group DM (``owner_id`` its owner), has ``recipients`` instead: the bot is none of them,
    so it sees nothing there and hears of it only through interactions."""

    id: int
    type: ChannelType
    name: str
    guild: Guild | None = None
    recipient: User | None = None
    position: int = 0
    messages: list[Message] = field(default_factory=list)
    parent: Channel | None = None
    owner_id: int | None = None
    thread_members: set[int] = field(default_factory=set)
    recipients: list[User] = field(default_factory=list)
    slowmode: int = 0  # seconds between a member's messages (rate_limit_per_user); 0: off

    @property
    def is_thread(self) -> bool:
        return self.type in (ChannelType.PUBLIC_THREAD, ChannelType.PRIVATE_THREAD)

    @property
    def send_permission(self) -> int:
        """What posting here takes: Send Messages, or in a thread Send Messages in Threads."""
        if self.is_thread:
            return int(Permission.SEND_MESSAGES_IN_THREADS)
        return int(Permission.SEND_MESSAGES)

    def __repr__(self) -> str:
        if self.recipient is not None:
            where = f"DM with {self.recipient.name}"
        elif self.recipients:
            kind = "group DM" if self.type is ChannelType.GROUP_DM else "DM"
            where = f"{kind} of {', '.join(user.name for user in self.recipients)}"
        else:
            where = f"#{self.name}"
        return f"<Channel id={self.id} {where}>"

    @property
    def is_dm(self) -> bool:
        return self.type is ChannelType.DM

    @property
    def is_private(self) -> bool:
        """A DM or a group DM: no server around it."""
        return self.type in (ChannelType.DM, ChannelType.GROUP_DM)

    @property
    def is_bot_dm(self) -> bool:
        """The bot's own DM with a user (interaction context 1, BOT_DM)."""
        return self.is_dm and self.recipient is not None

    @property
    def mention(self) -> str:
        return f"<#{self.id}>"

    def to_payload(self) -> dict[str, Any]:
        last = next((m.id for m in reversed(self.messages) if m.visible_to is None), None)
        last_id = None if last is None else str(last)
        if self.type is ChannelType.DM:
            people = [self.recipient] if self.recipient is not None else self.recipients
            return {
                "id": str(self.id),
                "type": int(self.type),
                "recipients": [user.to_payload() for user in people],
                "last_message_id": last_id,
                "flags": 0,
            }
        if self.type is ChannelType.GROUP_DM:
            return {
                "id": str(self.id),
                "type": int(self.type),
                "name": self.name or None,
                "icon": None,
                "owner_id": str(self.owner_id),
                "recipients": [user.to_payload() for user in self.recipients],
                "last_message_id": last_id,
                "flags": 0,
            }
        assert self.guild is not None
        if self.is_thread:
            assert self.parent is not None
            return {
                "id": str(self.id),
                "type": int(self.type),
                "guild_id": str(self.guild.id),
                "parent_id": str(self.parent.id),
                "owner_id": str(self.owner_id),
                "name": self.name,
                "last_message_id": last_id,
                "rate_limit_per_user": self.slowmode,
                "message_count": len(self.messages),
                "member_count": min(len(self.thread_members), 50),
                "thread_metadata": {
                    "archived": False,
                    "auto_archive_duration": 1440,
                    "archive_timestamp": iso(datetime.datetime.now(datetime.UTC)),
                    "locked": False,
                    "invitable": self.type is ChannelType.PUBLIC_THREAD,
                },
                "flags": 0,
            }
        return {
            "id": str(self.id),
            "type": int(self.type),
            "guild_id": str(self.guild.id),
            "name": self.name,
            "position": self.position,
            "permission_overwrites": [],
            "parent_id": None,
            "topic": None,
            "nsfw": False,
            "rate_limit_per_user": self.slowmode,
            "last_message_id": last_id,
            "flags": 0,
        }


@dataclass(frozen=True)
class Pings:
    """Who a message notifies, after Discord's allowed-mentions rules were applied."""

    users: frozenset[int] = frozenset()
    roles: frozenset[int] = frozenset()
    everyone: bool = False

    @property
    def nobody(self) -> bool:
        return not (self.users or self.roles or self.everyone)


@dataclass(eq=False)
class Message:
    """A message as the emulator stores it; always the latest revision.

    ``visible_to`` is the id of the only user who sees an ephemeral message (``None`` for normal
    messages). ``pings`` is who was notified when the message was posted (for a deferred
    interaction response: when the "thinking" placeholder was first filled); ``mentions`` is
    who the current content highlights.
    """

    id: int
    channel: Channel
    author: User
    content: str = ""
    embeds: list[dict[str, Any]] = field(default_factory=list)
    components: list[dict[str, Any]] = field(default_factory=list)
    attachments: list[dict[str, Any]] = field(default_factory=list)
    flags: int = 0
    type: int = 0
    tts: bool = False
    created_at: datetime.datetime = field(
        default_factory=lambda: datetime.datetime.now(datetime.UTC)
    )
    edited_at: datetime.datetime | None = None
    visible_to: int | None = None
    pings: Pings = field(default_factory=Pings)
    mentions: Pings = field(default_factory=Pings)
    allowed_mentions: dict[str, Any] | None = None
    webhook_id: int | None = None
    application_id: int | None = None
    interaction_metadata: dict[str, Any] | None = None
    reference: dict[str, Any] | None = None
    nonce: str | int | None = None
    deleted: bool = False
    edits: int = 0

    def __repr__(self) -> str:
        extra = " ephemeral" if self.ephemeral else ""
        extra += " deleted" if self.deleted else ""
        return (
            f"<Message id={self.id} {self.channel!r} author={self.author.name!r}"
            f" flags={int(self.flags)}{extra} text={self.text[:60]!r}>"
        )

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & MessageFlag.EPHEMERAL)

    @property
    def loading(self) -> bool:
        """True while this is a deferred response's "thinking…" placeholder."""
        return bool(self.flags & MessageFlag.LOADING)

    @property
    def components_v2(self) -> bool:
        return bool(self.flags & MessageFlag.IS_COMPONENTS_V2)

    @property
    def guild(self) -> Guild | None:
        return self.channel.guild

    def visible_for(self, user: User | int) -> bool:
        user_id = user if isinstance(user, int) else user.id
        return self.visible_to is None or self.visible_to == user_id

    @property
    def text(self) -> str:
        """Content, embed texts and Components V2 text displays, one per line."""
        return layout.flatten_text(self.content, self.embeds, self.components)

    def buttons(self) -> list[Button]:
        """Every button, in document order."""
        return layout.buttons(self.components)

    def button_grid(self) -> list[list[Button]]:
        """Buttons by action row (a section's accessory button forms a row of its own)."""
        return layout.button_grid(self.components)

    def to_payload(self, users: dict[int, User]) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "id": str(self.id),
            "channel_id": str(self.channel.id),
            "type": self.type,
            "author": self.author.to_payload(),
            "content": self.content,
            "timestamp": iso(self.created_at),
            "edited_timestamp": iso(self.edited_at),
            "tts": self.tts,
            "mention_everyone": self.mentions.everyone,
            "mentions": [users[uid].to_payload() for uid in sorted(self.mentions.users)],
            "mention_roles": [str(rid) for rid in sorted(self.mentions.roles)],
            "attachments": self.attachments,
            "embeds": self.embeds,
            "components": self.components,
            "reactions": [],
            "pinned": False,
            "flags": self.flags,
        }
        if self.channel.guild is not None:
            payload["guild_id"] = str(self.channel.guild.id)
        if self.webhook_id is not None:
            payload["webhook_id"] = str(self.webhook_id)
        if self.application_id is not None:
            payload["application_id"] = str(self.application_id)
        if self.interaction_metadata is not None:
            payload["interaction_metadata"] = self.interaction_metadata
        if self.reference is not None:
            payload["message_reference"] = self.reference
        if self.nonce is not None:
            payload["nonce"] = self.nonce
        return payload
