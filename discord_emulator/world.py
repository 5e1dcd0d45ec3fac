"""The emulated Discord world: users, guilds, roles, members, channels and messages.

Objects here are plain data with ``to_payload`` methods giving the JSON shapes of Discord API v10.
The :class:`World` owns them, hands out snowflake ids and keeps the clock that the emulator
measures deadlines and token lifetimes with.
"""

from __future__ import annotations

import datetime
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum, IntFlag
from typing import Any

from . import layout
from .errors import UserActionError
from .layout import Button
from .locales import DEFAULT_LOCALE, check_locale

__all__ = [
    "ALL_PERMISSIONS",
    "DEFAULT_BOT_PERMISSIONS",
    "DEFAULT_EVERYONE_PERMISSIONS",
    "Channel",
    "ChannelType",
    "Clock",
    "Guild",
    "Member",
    "Message",
    "MessageFlag",
    "Permission",
    "Pings",
    "Role",
    "User",
    "World",
]

DISCORD_EPOCH_MS = 1_420_070_400_000


class Permission(IntFlag):
    """The permission bits the emulator looks at (any other bit may still be set and is kept)."""

    CREATE_INSTANT_INVITE = 1 << 0
    KICK_MEMBERS = 1 << 1
    BAN_MEMBERS = 1 << 2
    ADMINISTRATOR = 1 << 3
    MANAGE_CHANNELS = 1 << 4
    MANAGE_GUILD = 1 << 5
    ADD_REACTIONS = 1 << 6
    VIEW_CHANNEL = 1 << 10
    SEND_MESSAGES = 1 << 11
    MANAGE_MESSAGES = 1 << 13
    EMBED_LINKS = 1 << 14
    ATTACH_FILES = 1 << 15
    READ_MESSAGE_HISTORY = 1 << 16
    MENTION_EVERYONE = 1 << 17
    USE_EXTERNAL_EMOJIS = 1 << 18
    MANAGE_ROLES = 1 << 28
    USE_APPLICATION_COMMANDS = 1 << 31
    MANAGE_THREADS = 1 << 34  # also: view every private thread
    CREATE_PUBLIC_THREADS = 1 << 35
    CREATE_PRIVATE_THREADS = 1 << 36
    SEND_MESSAGES_IN_THREADS = 1 << 38  # what a thread asks instead of SEND_MESSAGES


ALL_PERMISSIONS = (1 << 51) - 1
DEFAULT_EVERYONE_PERMISSIONS = int(
    Permission.VIEW_CHANNEL
    | Permission.SEND_MESSAGES
    | Permission.READ_MESSAGE_HISTORY
    | Permission.ADD_REACTIONS
    | Permission.EMBED_LINKS
    | Permission.ATTACH_FILES
    | Permission.USE_EXTERNAL_EMOJIS
    | Permission.USE_APPLICATION_COMMANDS
    | Permission.CREATE_PUBLIC_THREADS
    | Permission.CREATE_PRIVATE_THREADS
    | Permission.SEND_MESSAGES_IN_THREADS
)
DEFAULT_BOT_PERMISSIONS = DEFAULT_EVERYONE_PERMISSIONS
# What Discord reports as the app's permissions in a DM with the bot.
DM_APP_PERMISSIONS = DEFAULT_EVERYONE_PERMISSIONS


class MessageFlag(IntFlag):
    CROSSPOSTED = 1 << 0
    SUPPRESS_EMBEDS = 1 << 2
    EPHEMERAL = 1 << 6
    LOADING = 1 << 7
    SUPPRESS_NOTIFICATIONS = 1 << 12
    IS_COMPONENTS_V2 = 1 << 15


class ChannelType(IntEnum):
    GUILD_TEXT = 0
    DM = 1
    PUBLIC_THREAD = 11
    PRIVATE_THREAD = 12


class Clock:
    """Monotonic seconds that tests can move forward with :meth:`advance`.

    The emulator measures the acknowledgement deadline and interaction token lifetimes on this
    clock, and stamps messages with the wall-clock time shifted by the same offset.
    """

    def __init__(self) -> None:
        self.offset = 0.0

    def now(self) -> float:
        return time.monotonic() + self.offset

    def utcnow(self) -> datetime.datetime:
        return datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=self.offset)

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        self.offset += seconds


class Snowflakes:
    """Generates unique, increasing snowflakes whose timestamp part is the current time."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._last = 0

    def next(self) -> int:
        millis = int(self._clock.utcnow().timestamp() * 1000) - DISCORD_EPOCH_MS
        value = max(millis << 22, self._last + 1)
        self._last = value
        return value

    def advance_past(self, taken: int) -> None:
        """Never hand out ``taken`` or a smaller id (after restoring saved objects)."""
        self._last = max(self._last, taken)

    def next_on_shard(self, shard_id: int, shard_count: int) -> int:
        """A fresh snowflake with ``(id >> 22) % shard_count == shard_id``: its timestamp is
        moved up to ``shard_count - 1`` ms ahead so that the formula picks that shard."""
        if not 0 <= shard_id < shard_count:
            raise ValueError(f"no shard {shard_id} among {shard_count}")
        millis = int(self._clock.utcnow().timestamp() * 1000) - DISCORD_EPOCH_MS
        stamp = max(millis, (self._last >> 22) + 1)
        stamp += (shard_id - stamp) % shard_count
        self._last = stamp << 22
        return self._last


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

    def to_guild_object(self) -> dict[str, Any]:
        """The guild object of ``GET /guilds/{id}`` and GUILD_UPDATE: no GUILD_CREATE extras."""
        payload = self.to_payload(members=[])
        for key in ("members", "channels", "threads", "presences", "voice_states", "joined_at"):
            del payload[key]
        del payload["large"]
        return payload

    def to_payload(
        self, *, members: Iterable[Member] | None = None, viewer: int | None = None
    ) -> dict[str, Any]:
        """A full GUILD_CREATE payload; ``members`` defaults to every member; ``threads``
        are those ``viewer`` (the bot) sees."""
        listed = list(self.members.values() if members is None else members)
        return {
            "id": str(self.id),
            "name": self.name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "banner": None,
            "description": None,
            "owner_id": str(self.owner_id),
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
            "preferred_locale": self.locale,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "safety_alerts_channel_id": None,
            "vanity_url_code": None,
            "features": self.features,
            "application_id": None,
            "max_members": 500000,
            "roles": [role.to_payload() for role in self.roles.values()],
            "emojis": [],
            "stickers": [],
            "soundboard_sounds": [],
            "channels": [c.to_payload() for c in self.channels if not c.is_thread],
            "threads": [
                c.to_payload()
                for c in self.channels
                if c.is_thread and viewer is not None and self.sees(viewer, c)
            ],
            "members": [member.to_payload() for member in listed],
            "member_count": len(self.members),
            "large": len(self.members) >= 250,
            "unavailable": False,
            "joined_at": iso(datetime.datetime.now(datetime.UTC)),
            "voice_states": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
        }


@dataclass(eq=False)
class Channel:
    """A text channel, a DM, or a thread: a thread has the text channel it lives in
    (``parent``), its creator (``owner_id``) and its members (``thread_members``), who alone
    see it when it is private (with those holding Manage Threads)."""

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
        where = f"DM with {self.recipient.name}" if self.recipient else f"#{self.name}"
        return f"<Channel id={self.id} {where}>"

    @property
    def is_dm(self) -> bool:
        return self.type is ChannelType.DM

    @property
    def mention(self) -> str:
        return f"<#{self.id}>"

    def to_payload(self) -> dict[str, Any]:
        last = next((m.id for m in reversed(self.messages) if m.visible_to is None), None)
        last_id = None if last is None else str(last)
        if self.type is ChannelType.DM:
            recipients = [] if self.recipient is None else [self.recipient.to_payload()]
            return {
                "id": str(self.id),
                "type": int(self.type),
                "recipients": recipients,
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
                "rate_limit_per_user": 0,
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
            "rate_limit_per_user": 0,
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


class World:
    """Holds every user, guild, channel and message, and builds new ones with fresh ids.

    The bot user and its application exist from the start (``bot``, ``application_id``,
    ``bot_token``). Subclasses hear about changes through :meth:`_world_changed`.
    """

    def __init__(
        self, *, bot_name: str = "TestBot", clock: Clock | None = None, locale: str = DEFAULT_LOCALE
    ) -> None:
        self.locale = check_locale(locale)
        self.clock = clock or Clock()
        self.snowflakes = Snowflakes(self.clock)
        self.users: dict[int, User] = {}
        self.guilds: dict[int, Guild] = {}
        self.channels: dict[int, Channel] = {}
        self.message_index: dict[int, Message] = {}
        self.bot = self._new_user(bot_name, bot=True)
        self.application_id = self.bot.id
        self.application_owner = self._new_user(f"{bot_name} owner")
        self.bot_token = f"{secrets.token_urlsafe(18)}.{secrets.token_urlsafe(6)}.emulated"

    # -- building -------------------------------------------------------------------------

    def _new_user(self, name: str, *, bot: bool = False) -> User:
        user = User(id=self.snowflakes.next(), name=name, bot=bot)
        self.users[user.id] = user
        return user

    def add_user(
        self,
        name: str,
        *,
        bot: bool = False,
        global_name: str | None = None,
        locale: str | None = None,
    ) -> User:
        """A Discord account (a person, or with ``bot=True`` some other bot). ``locale`` is
        its client language (one of Discord's locale codes; None: the emulator's ``locale``);
        change it later with :meth:`set_user_locale` or by assigning ``user.locale``."""
        user = self._new_user(name, bot=bot)
        user.global_name = global_name
        user.locale = None if locale is None else check_locale(locale)
        return user

    def set_user_locale(self, user: User, locale: str | None) -> None:
        """The user picks another language in their client settings (None: the default).
        Discord tells bots nothing until the user's next interaction."""
        user.locale = None if locale is None else check_locale(locale)

    def locale_of(self, user: User) -> str:
        """The locale ``user``'s client sends: their own, else the emulator's default."""
        return check_locale(user.locale) if user.locale is not None else self.locale

    def add_guild(
        self,
        name: str,
        *,
        owner: User | None = None,
        bot_member: bool = True,
        bot_permissions: int = DEFAULT_BOT_PERMISSIONS,
        everyone_permissions: int = DEFAULT_EVERYONE_PERMISSIONS,
        locale: str = DEFAULT_LOCALE,
        community: bool | None = None,
        shard: tuple[int, int] | None = None,
    ) -> Guild:
        """A guild; the bot joins it (with a managed role holding ``bot_permissions``) unless
        ``bot_member`` is false. The owner, if given, becomes a member and has every permission.
        ``locale`` is its preferred locale; any but en-US makes it a Community server unless
        ``community`` says otherwise (then ValueError: only Community servers choose one).
        ``shard=(shard_id, shard_count)`` picks an id whose events go to that shard when the
        bot runs ``shard_count`` shards.
        """
        check_locale(locale)
        if community is None:
            community = locale != DEFAULT_LOCALE
        if not community and locale != DEFAULT_LOCALE:
            raise ValueError("only a Community server has a preferred locale other than en-US")
        guild_id = (
            self.snowflakes.next() if shard is None else self.snowflakes.next_on_shard(*shard)
        )
        guild = Guild(
            id=guild_id,
            name=name,
            owner_id=owner.id if owner else self.snowflakes.next(),
            locale=locale,
            community=community,
        )
        guild.roles[guild_id] = Role(
            id=guild_id, guild_id=guild_id, name="@everyone", permissions=everyone_permissions
        )
        self.guilds[guild_id] = guild
        if owner is not None:
            self._join(guild, owner, [], None)
        if bot_member:
            role = Role(
                id=self.snowflakes.next(),
                guild_id=guild_id,
                name=self.bot.name,
                permissions=bot_permissions,
                position=1,
                managed=True,
            )
            guild.roles[role.id] = role
            self._join(guild, self.bot, [role], None)
            self._world_changed("guild_join", guild)
        return guild

    def set_guild_locale(self, guild: Guild, locale: str) -> None:
        """An admin changes the server's primary language (Server Settings); the bot gets a
        GUILD_UPDATE. Raises :class:`UserActionError` on a non-Community server, where the
        client offers no such setting."""
        check_locale(locale)
        if not guild.community:
            raise UserActionError(
                f"{guild.name} is not a Community server: its preferred locale stays en-US"
            )
        guild.locale = locale
        self._world_changed("guild_update", guild)

    def add_role(
        self, guild: Guild, name: str, *, permissions: int = 0, mentionable: bool = False
    ) -> Role:
        role = Role(
            id=self.snowflakes.next(),
            guild_id=guild.id,
            name=name,
            permissions=int(permissions),
            position=len(guild.roles),
            mentionable=mentionable,
        )
        guild.roles[role.id] = role
        self._world_changed("role_create", role)
        return role

    def add_member(
        self,
        guild: Guild,
        user: User,
        *,
        roles: Iterable[Role] = (),
        permissions: int = 0,
        nick: str | None = None,
    ) -> Member:
        """Make ``user`` a member. ``permissions`` (e.g. ``Permission.MANAGE_MESSAGES``) is
        granted through a role made for this member, since Discord permissions live on roles.
        """
        granted = list(roles)
        if permissions:
            granted.append(
                self.add_role(guild, f"{user.name} permissions", permissions=int(permissions))
            )
        return self._join(guild, user, granted, nick)

    def _join(self, guild: Guild, user: User, roles: list[Role], nick: str | None) -> Member:
        member = Member(
            user=user, guild=guild, roles=roles, nick=nick, joined_at=self.clock.utcnow()
        )
        guild.members[user.id] = member
        if user is not self.bot:
            self._world_changed("member_join", member)
        return member

    def add_text_channel(self, guild: Guild, name: str) -> Channel:
        channel = Channel(
            id=self.snowflakes.next(),
            type=ChannelType.GUILD_TEXT,
            name=name,
            guild=guild,
            position=len(guild.channels),
        )
        guild.channels.append(channel)
        self.channels[channel.id] = channel
        self._world_changed("channel_create", channel)
        return channel

    def add_thread(
        self,
        parent: Channel,
        name: str,
        *,
        owner: User,
        private: bool = False,
        members: Iterable[User] = (),
    ) -> Channel:
        """``owner`` starts a thread in the text channel ``parent`` (Create Public Threads,
        or Create Private Threads for a private one) and adds ``members``; the bot gets
        THREAD_CREATE if it sees the thread. A private thread is seen by its members and
        by those with Manage Threads only."""
        guild = parent.guild
        if guild is None or parent.type is not ChannelType.GUILD_TEXT:
            raise UserActionError("threads live in a server's text channels")
        if not self.can_view(owner, parent):
            raise UserActionError(f"{owner.name} cannot see #{parent.name}")
        need = Permission.CREATE_PRIVATE_THREADS if private else Permission.CREATE_PUBLIC_THREADS
        if not guild.permissions_of(owner) & need:
            raise UserActionError(f"{owner.name} may not create that thread in #{parent.name}")
        thread = Channel(
            id=self.snowflakes.next(),
            type=ChannelType.PRIVATE_THREAD if private else ChannelType.PUBLIC_THREAD,
            name=name,
            guild=guild,
            parent=parent,
            owner_id=owner.id,
            thread_members={owner.id, *(user.id for user in members)},
        )
        guild.channels.append(thread)
        self.channels[thread.id] = thread
        self._world_changed("thread_create", thread)
        return thread

    def delete_channel(self, channel: Channel) -> None:
        """A moderator deletes a server channel: it and its messages are gone (Discord sends
        CHANNEL_DELETE, and no MESSAGE_DELETE for the messages that went with it)."""
        guild = channel.guild
        if guild is None:
            raise ValueError("only a server channel can be deleted")
        for thread in [c for c in guild.channels if c.parent is channel]:
            self.delete_channel(thread)  # a channel's threads go with it
        guild.channels.remove(channel)
        del self.channels[channel.id]
        for message in channel.messages:
            message.deleted = True
        self._world_changed("channel_delete", channel)

    def remove_bot(self, guild: Guild) -> None:
        """The bot is removed (kicked) from ``guild``; it gets a GUILD_DELETE without
        ``unavailable``. ``add_bot`` adds it back."""
        if guild.members.pop(self.bot.id, None) is None:
            raise ValueError(f"the bot is not in {guild.name}")
        for role_id in [r.id for r in guild.roles.values() if r.managed]:
            del guild.roles[role_id]
        self._world_changed("guild_leave", guild)

    def add_bot(self, guild: Guild, *, permissions: int = DEFAULT_BOT_PERMISSIONS) -> None:
        """The bot is added (back) to ``guild``, with a managed role of ``permissions``."""
        role = Role(
            id=self.snowflakes.next(),
            guild_id=guild.id,
            name=self.bot.name,
            permissions=permissions,
            position=1,
            managed=True,
        )
        guild.roles[role.id] = role
        self._join(guild, self.bot, [role], None)
        self._world_changed("guild_join", guild)

    def dm_channel(self, user: User) -> Channel:
        """The DM channel between ``user`` and the bot (made on first use)."""
        for channel in self.channels.values():
            if channel.is_dm and channel.recipient is user:
                return channel
        channel = Channel(
            id=self.snowflakes.next(), type=ChannelType.DM, name=user.name, recipient=user
        )
        self.channels[channel.id] = channel
        return channel

    def _world_changed(self, kind: str, obj: Any) -> None:
        """Hook for subclasses; ``kind`` is guild_join, guild_leave, guild_update,
        role_create, member_join, channel_create, channel_delete or thread_create."""

    # -- looking things up ------------------------------------------------------------------

    def user(self, user_id: int | str) -> User | None:
        return self.users.get(int(user_id))

    def channel(self, channel_id: int | str) -> Channel | None:
        return self.channels.get(int(channel_id))

    def guild(self, guild_id: int | str) -> Guild | None:
        return self.guilds.get(int(guild_id))

    def message(self, message_id: int | str) -> Message | None:
        """Any message by id, deleted ones included (check ``deleted``)."""
        return self.message_index.get(int(message_id))

    def messages(
        self, channel: Channel, *, viewer: User | None = None, include_deleted: bool = False
    ) -> list[Message]:
        """Messages of ``channel`` oldest first; with ``viewer``, only those that user sees."""
        return [
            message
            for message in channel.messages
            if (include_deleted or not message.deleted)
            and (viewer is None or message.visible_for(viewer))
        ]

    def latest_message(self, channel: Channel, *, viewer: User | None = None) -> Message | None:
        found = self.messages(channel, viewer=viewer)
        return found[-1] if found else None

    def ephemeral_messages(self, user: User, channel: Channel | None = None) -> list[Message]:
        """Ephemeral messages shown to ``user`` (optionally in one channel), oldest first."""
        channels = [channel] if channel is not None else list(self.channels.values())
        found = [
            message
            for chan in channels
            for message in chan.messages
            if message.visible_to == user.id and not message.deleted
        ]
        return sorted(found, key=lambda message: message.id)

    def can_view(self, user: User, channel: Channel) -> bool:
        if channel.is_dm:
            return user is channel.recipient or user is self.bot
        assert channel.guild is not None
        return channel.guild.sees(user, channel)
