"""The REST endpoints a bot calls with its token: login, the gateway's address, command
sync, guilds, channels, threads and channel messages. Each handler enforces the Discord
rule that applies (permissions, authorship, validation) and answers errors in Discord's
shape. The interaction endpoints, authorized by the interaction's token, are webhooks.py's.
"""

from __future__ import annotations

from typing import Any, Protocol

from .commands import CommandRegistry
from .entities import Channel, Guild, Message
from .errors import APIError, FormErrors
from .flags import ChannelType, MessageFlag, Permission
from .interactions import (
    Interactions,
)
from .locales import LOCALES, localized_view
from .messages import parse_message_payload
from .payloads import current_user, guild_object, thread_member
from .posting import Poster
from .server import NO_CONTENT, ApiCall, Router, snowflake, truthy
from .shards import SessionStartLimit
from .world import World

__all__ = ["Application", "RestApi"]

THREAD_NAME_LENGTH = (1, 100)
ARCHIVE_DURATIONS = (60, 1440, 4320, 10080)
"""Minutes of inactivity after which a thread is hidden: the only values Discord takes."""


class Application(Protocol):
    """The application's side of Discord: its commands, and its gateway's address."""

    commands: CommandRegistry
    command_syncs: int
    session_start_limit: SessionStartLimit

    @property
    def gateway_url(self) -> str: ...

    @property
    def recommended_shards(self) -> int: ...


class RestApi:
    """Registers the REST routes on a :class:`Router`: they read ``world``, change its
    messages through ``poster``, answer ``interactions`` and sync ``app``'s commands."""

    def __init__(
        self, world: World, poster: Poster, interactions: Interactions, app: Application
    ) -> None:
        self.world = world
        self.poster = poster
        self.interactions = interactions
        self.app = app

    def register(self, router: Router) -> None:
        add = router.add
        add("GET", "/users/@me", self.get_me)
        add("POST", "/users/@me/channels", self.create_dm)
        add("GET", "/users/{user_id}", self.get_user)
        add("GET", "/oauth2/applications/@me", self.get_application)
        add("GET", "/applications/@me", self.get_application)
        add("GET", "/gateway", self.get_gateway, auth=False)
        add("GET", "/gateway/bot", self.get_gateway_bot)
        add("GET", "/applications/{application_id}/commands", self.get_commands)
        add("PUT", "/applications/{application_id}/commands", self.put_commands)
        add("GET", "/applications/{application_id}/guilds/{guild_id}/commands", self.get_commands)
        add("PUT", "/applications/{application_id}/guilds/{guild_id}/commands", self.put_commands)
        add("GET", "/guilds/{guild_id}", self.get_guild)
        add("GET", "/guilds/{guild_id}/channels", self.get_guild_channels)
        add("GET", "/guilds/{guild_id}/members/{user_id}", self.get_member)
        add("GET", "/channels/{channel_id}", self.get_channel)
        add("POST", "/channels/{channel_id}/typing", self.typing)
        add("POST", "/channels/{channel_id}/threads", self.start_thread)
        add("GET", "/channels/{channel_id}/messages", self.list_messages)
        add("POST", "/channels/{channel_id}/messages", self.create_message)
        add("GET", "/channels/{channel_id}/messages/{message_id}", self.get_message)
        add("PATCH", "/channels/{channel_id}/messages/{message_id}", self.edit_message)
        add("DELETE", "/channels/{channel_id}/messages/{message_id}", self.delete_message)

    # -- users, application, gateway ---------------------------------------------------------

    async def get_me(self, call: ApiCall) -> Any:
        return current_user(self.world.bot)

    async def get_user(self, call: ApiCall) -> Any:
        user = self.world.user(snowflake(call.params["user_id"], "user_id"))
        if user is None:
            raise APIError(404, 10013, "Unknown User")
        return user.to_payload()

    async def create_dm(self, call: ApiCall) -> Any:
        body = call.json if isinstance(call.json, dict) else {}
        user = self.world.user(snowflake(str(body.get("recipient_id", "")), "recipient_id"))
        if user is None:
            raise APIError(404, 10013, "Unknown User")
        return self.world.dm_channel(user).to_payload()

    async def get_application(self, call: ApiCall) -> Any:
        world = self.world
        return {
            "id": str(world.application_id),
            "name": world.bot.name,
            "icon": None,
            "description": "",
            "summary": "",
            "type": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "owner": world.application_owner.to_payload(),
            "team": None,
            "flags": 0,
            "bot": world.bot.to_payload(),
            "interactions_endpoint_url": None,
            "redirect_uris": [],
            "tags": [],
            "approximate_guild_count": len(world.bot_guilds()),
            "integration_types_config": {str(t): {} for t in sorted(world.install_types)},
        }

    async def get_gateway(self, call: ApiCall) -> Any:
        return {"url": self.app.gateway_url}

    async def get_gateway_bot(self, call: ApiCall) -> Any:
        app = self.app
        return {
            "url": app.gateway_url,
            "shards": app.recommended_shards,
            "session_start_limit": app.session_start_limit.payload(self.world.clock.now()),
        }

    # -- commands ----------------------------------------------------------------------------

    def _command_scope(self, call: ApiCall) -> int | None:
        if call.params["application_id"] != str(self.world.application_id):
            raise APIError(403, 50001, "Missing Access")
        if "guild_id" not in call.params:
            return None
        guild = self.world.guild(snowflake(call.params["guild_id"], "guild_id"))
        if guild is None or self.world.bot.id not in guild.members:
            raise APIError(403, 50001, "Missing Access")
        return guild.id

    async def get_commands(self, call: ApiCall) -> Any:
        """Full localization dictionaries only with ``with_localizations=true``; otherwise
        ``name_localized``/``description_localized`` in the requester's locale: the
        ``X-Discord-Locale`` header, else ``Accept-Language``, else the bot's own locale."""
        commands = self.app.commands.list(self._command_scope(call))
        if truthy(call.query.get("with_localizations")):
            return commands
        return [localized_view(command, self._requester_locale(call)) for command in commands]

    def _requester_locale(self, call: ApiCall) -> str:
        asked = call.headers.get("X-Discord-Locale")
        if asked not in LOCALES:
            language = call.headers.get("Accept-Language", "").split(",")[0]
            asked = language.split(";")[0].strip()
        if asked in LOCALES:
            return str(asked)
        return self.world.locale_of(self.world.bot)

    async def put_commands(self, call: ApiCall) -> Any:
        scope = self._command_scope(call)
        result = self.app.commands.overwrite(scope, call.json)
        self.app.command_syncs += 1
        return result

    # -- guilds and channels -----------------------------------------------------------------

    def _bot_guild(self, call: ApiCall) -> Guild:
        guild = self.world.guild(snowflake(call.params["guild_id"], "guild_id"))
        if guild is None:
            raise APIError(404, 10004, "Unknown Guild")
        if self.world.bot.id not in guild.members:
            raise APIError(403, 50001, "Missing Access")
        return guild

    async def get_guild(self, call: ApiCall) -> Any:
        return guild_object(self._bot_guild(call))

    async def get_guild_channels(self, call: ApiCall) -> Any:
        return [channel.to_payload() for channel in self._bot_guild(call).channels]

    async def get_member(self, call: ApiCall) -> Any:
        member = self._bot_guild(call).member(snowflake(call.params["user_id"], "user_id"))
        if member is None:
            raise APIError(404, 10007, "Unknown Member")
        return member.to_payload()

    def _channel(self, call: ApiCall, need: int = 0) -> Channel:
        """The channel of the path, if the bot may see it and has the ``need`` permissions."""
        channel = self.world.channel(snowflake(call.params["channel_id"], "channel_id"))
        if channel is None:
            raise APIError(404, 10003, "Unknown Channel")
        guild = channel.guild
        if guild is None:  # a DM or group DM: the bot's own DM only
            if not self.world.can_view(self.world.bot, channel):
                raise APIError(403, 50001, "Missing Access")
            return channel
        perms = guild.permissions_of(self.world.bot)
        if self.world.bot.id not in guild.members or not guild.sees(self.world.bot, channel):
            raise APIError(403, 50001, "Missing Access")
        if need & Permission.SEND_MESSAGES:  # in a thread: Send Messages in Threads instead
            need = (need & ~Permission.SEND_MESSAGES) | channel.send_permission
        if need & ~perms:
            raise APIError(403, 50013, "Missing Permissions")
        return channel

    async def get_channel(self, call: ApiCall) -> Any:
        return self._channel(call).to_payload()

    async def typing(self, call: ApiCall) -> Any:
        self._channel(call, Permission.SEND_MESSAGES)
        return NO_CONTENT

    async def start_thread(self, call: ApiCall) -> Any:
        """Start Thread without Message: a public (type 11) or private (12, the default in
        API v10) thread of a text channel. It takes View Channel and Create Public Threads
        (or Create Private Threads) in the channel; the bot is its first member and hears
        THREAD_CREATE. Posting in it then takes Send Messages in Threads."""
        body = call.json if isinstance(call.json, dict) else {}
        errors = FormErrors()
        name = body.get("name")
        low, high = THREAD_NAME_LENGTH
        if not isinstance(name, str) or not low <= len(name) <= high:
            errors.add(
                ("name",), "BASE_TYPE_BAD_LENGTH", f"Must be between {low} and {high} in length."
            )
        kind = body.get("type", int(ChannelType.PRIVATE_THREAD))
        if kind not in (ChannelType.PUBLIC_THREAD, ChannelType.PRIVATE_THREAD):
            errors.add(("type",), "BASE_TYPE_CHOICES", "Value must be one of {11, 12}.")
        archive = body.get("auto_archive_duration")
        if archive is not None and archive not in ARCHIVE_DURATIONS:
            choices = ", ".join(map(str, ARCHIVE_DURATIONS))
            errors.add(
                ("auto_archive_duration",),
                "BASE_TYPE_CHOICES",
                f"Value must be one of {{{choices}}}.",
            )
        slowmode = body.get("rate_limit_per_user")
        if slowmode is not None and (
            isinstance(slowmode, bool)
            or not isinstance(slowmode, int)
            or not 0 <= slowmode <= 21600
        ):
            errors.add(
                ("rate_limit_per_user",),
                "NUMBER_TYPE_MAX",
                "int value should be between 0 and 21600.",
            )
        errors.raise_if_any()
        assert isinstance(name, str)  # raise_if_any raised otherwise
        private = kind == ChannelType.PRIVATE_THREAD
        need = Permission.CREATE_PRIVATE_THREADS if private else Permission.CREATE_PUBLIC_THREADS
        parent = self._channel(call, Permission.VIEW_CHANNEL | need)
        if parent.type is not ChannelType.GUILD_TEXT:
            raise APIError(400, 50024, "Cannot execute action on this channel type")
        world = self.world
        thread = world.add_thread(parent, name, owner=world.bot, private=private)
        return {
            **thread.to_payload(),
            "member": thread_member(thread, world.bot, world.clock.utcnow()),
        }

    def _channel_message(self, call: ApiCall, channel: Channel) -> Message:
        message = self.world.message(snowflake(call.params["message_id"], "message_id"))
        if (
            message is None
            or message.deleted
            or message.channel is not channel
            or message.ephemeral
        ):
            raise APIError(404, 10008, "Unknown Message")
        return message

    async def list_messages(self, call: ApiCall) -> Any:
        channel = self._channel(call, Permission.READ_MESSAGE_HISTORY)
        try:
            limit = int(call.query.get("limit", "50"))
        except ValueError:
            limit = 50
        if not 1 <= limit <= 100:
            raise APIError.invalid_field(
                ("limit",), "NUMBER_TYPE_MAX", "int value should be between 1 and 100."
            )
        visible = [m for m in self.world.messages(channel) if not m.ephemeral]
        if "before" in call.query:
            before = snowflake(call.query["before"], "before")
            visible = [m for m in visible if m.id < before]
        if "after" in call.query:
            after = snowflake(call.query["after"], "after")
            visible = [m for m in visible if m.id > after][:limit]
        if "around" in call.query:
            around = snowflake(call.query["around"], "around")
            older = [m for m in visible if m.id <= around][-(limit // 2 + limit % 2) :]
            newer = [m for m in visible if m.id > around][: limit // 2]
            visible = older + newer
        return [m.to_payload(self.world.users) for m in reversed(visible[-limit:])]

    async def create_message(self, call: ApiCall) -> Any:
        channel = self._channel(call, Permission.SEND_MESSAGES)
        if channel.is_dm and channel.recipient is not None and channel.recipient.bot:
            raise APIError(400, 50007, "Cannot send messages to this user")
        draft = parse_message_payload(call.json or {}, files=call.files)
        draft.flags &= ~MessageFlag.EPHEMERAL
        return self.poster.post(channel, self.world.bot, draft).to_payload(self.world.users)

    async def get_message(self, call: ApiCall) -> Any:
        channel = self._channel(call, Permission.READ_MESSAGE_HISTORY)
        return self._channel_message(call, channel).to_payload(self.world.users)

    async def edit_message(self, call: ApiCall) -> Any:
        channel = self._channel(call)
        message = self._channel_message(call, channel)
        if message.author is not self.world.bot:
            raise APIError(403, 50005, "Cannot edit a message authored by another user")
        self.poster.edit(
            message, parse_message_payload(call.json or {}, base=message, files=call.files)
        )
        return message.to_payload(self.world.users)

    async def delete_message(self, call: ApiCall) -> Any:
        channel = self._channel(call)
        message = self._channel_message(call, channel)
        if message.author is not self.world.bot:
            if channel.guild is None:
                raise APIError(403, 50003, "Cannot execute action on a DM channel")
            if not channel.guild.permissions_of(self.world.bot) & Permission.MANAGE_MESSAGES:
                raise APIError(403, 50013, "Missing Permissions")
        self.poster.delete(message)
        return NO_CONTENT
