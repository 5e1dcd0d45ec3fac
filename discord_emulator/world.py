"""The state of the emulated Discord and its changes: the :class:`World`.

It owns every user, guild, channel and message, hands out snowflake ids, keeps the clock
deadlines and token lifetimes are measured on, and builds and removes things as Discord
would allow. Each change is emitted as a typed event (events.py) to the world's subscribers;
the world knows nothing of the gateway or of HTTP. Messages are posted, edited and deleted
by messages.py, on this state.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable

from .clock import Clock, Snowflakes
from .entities import Channel, Guild, Member, Message, Role, User
from .errors import UserActionError
from .events import (
    BotJoined,
    BotLeft,
    ChannelCreated,
    ChannelDeleted,
    Event,
    GuildUpdated,
    MemberJoined,
    RoleCreated,
    ThreadCreated,
)
from .flags import (
    DEFAULT_BOT_PERMISSIONS,
    DEFAULT_EVERYONE_PERMISSIONS,
    ChannelType,
    Permission,
)
from .locales import DEFAULT_LOCALE, check_locale

__all__ = ["World"]


class World:
    """Holds every user, guild, channel and message, and builds new ones with fresh ids.

    The bot user and its application exist from the start (``bot``, ``application_id``,
    ``bot_token``). Every change is told to each of ``subscribers`` as an :data:`Event`.
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
        self.subscribers: list[Callable[[Event], None]] = []
        self.install_types: set[int] = {0}
        """The app's installation contexts (Developer Portal > Installation): 0 guild
        install, 1 user install. A synced command without ``integration_types`` gets these."""
        self.user_installs: set[int] = set()
        """Ids of the users who added the app to their account (a user install)."""

    def emit(self, event: Event) -> None:
        """Tell every subscriber about ``event``."""
        for subscriber in self.subscribers:
            subscriber(event)

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
            self.emit(BotJoined(guild))
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
        self.emit(GuildUpdated(guild))

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
        self.emit(RoleCreated(role, guild))
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
            self.emit(MemberJoined(member))
        return member

    def add_text_channel(self, guild: Guild, name: str, *, slowmode: int = 0) -> Channel:
        channel = Channel(
            id=self.snowflakes.next(),
            type=ChannelType.GUILD_TEXT,
            name=name,
            guild=guild,
            position=len(guild.channels),
            slowmode=slowmode,
        )
        guild.channels.append(channel)
        self.channels[channel.id] = channel
        self.emit(ChannelCreated(channel))
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
        self.emit(ThreadCreated(thread))
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
        self.emit(ChannelDeleted(channel))

    def remove_bot(self, guild: Guild) -> None:
        """The bot is removed (kicked) from ``guild``; it gets a GUILD_DELETE without
        ``unavailable``. ``add_bot`` adds it back."""
        if guild.members.pop(self.bot.id, None) is None:
            raise ValueError(f"the bot is not in {guild.name}")
        for role_id in [r.id for r in guild.roles.values() if r.managed]:
            del guild.roles[role_id]
        self.emit(BotLeft(guild))

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
        self.emit(BotJoined(guild))

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

    def add_user_install(self, user: User) -> None:
        """``user`` adds the app to their account ("Add to My Apps"): its commands meant for
        user installs follow them into DMs, group DMs and servers without the bot. Raises
        :class:`UserActionError` unless the app offers user installs (``install_types``)."""
        if 1 not in self.install_types:
            raise UserActionError("the app does not offer user installs (install_types)")
        self.user_installs.add(user.id)

    def remove_user_install(self, user: User) -> None:
        """``user`` removes the app from their account (Authorized Apps > Deauthorize)."""
        self.user_installs.discard(user.id)

    def open_dm(self, user: User, other: User) -> Channel:
        """The DM between ``user`` and ``other`` (made on first use). With the bot as either
        one, it is the bot's DM (:meth:`dm_channel`); between two people, the bot is not a
        recipient: it sees nothing there but the interactions it is sent."""
        if user is other:
            raise UserActionError("a DM takes two different users")
        if self.bot in (user, other):
            return self.dm_channel(other if user is self.bot else user)
        pair = {user.id, other.id}
        for channel in self.channels.values():
            if channel.is_dm and {u.id for u in channel.recipients} == pair:
                return channel
        channel = Channel(
            id=self.snowflakes.next(),
            type=ChannelType.DM,
            name=f"{user.name}, {other.name}",
            recipients=[user, other],
        )
        self.channels[channel.id] = channel
        return channel

    def open_group_dm(self, owner: User, others: Iterable[User], *, name: str = "") -> Channel:
        """A group DM (type 3) of ``owner`` and ``others`` (2 to 10 people in all). A bot
        cannot be added to a group DM, so the bot hears nothing of it but interactions."""
        people = [owner, *(u for u in others if u is not owner)]
        if len({u.id for u in people}) != len(people) or not 2 <= len(people) <= 10:
            raise UserActionError("a group DM has 2 to 10 different people")
        if any(u.bot for u in people):
            raise UserActionError("bots cannot be added to a group DM")
        channel = Channel(
            id=self.snowflakes.next(),
            type=ChannelType.GROUP_DM,
            name=name,
            owner_id=owner.id,
            recipients=people,
        )
        self.channels[channel.id] = channel
        return channel

    def set_use_external_apps(self, guild: Guild, allowed: bool) -> None:
        """An admin turns Use External Apps on or off for @everyone (channel overwrites are
        not modelled). Off, a member's user-installed apps answer only privately there
        where the app is not also installed to the server."""
        everyone = guild.everyone
        if allowed:
            everyone.permissions |= Permission.USE_EXTERNAL_APPS
        else:
            everyone.permissions &= ~Permission.USE_EXTERNAL_APPS

    # -- looking things up ------------------------------------------------------------------

    def bot_guilds(self) -> list[Guild]:
        """The guilds the bot is a member of."""
        return [g for g in self.guilds.values() if self.bot.id in g.members]

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
        if channel.is_bot_dm:
            return user is channel.recipient or user is self.bot
        if channel.is_private:
            return any(user is someone for someone in channel.recipients)
        assert channel.guild is not None
        return channel.guild.sees(user, channel)
