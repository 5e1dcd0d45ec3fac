"""The REST endpoints a bot uses: login, command sync, channel messages, interaction
callbacks and interaction webhooks. Each handler enforces the Discord rule that applies
(permissions, authorship, the acknowledgement deadline, one response per interaction,
token lifetime) and answers errors in Discord's shape."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .components import MAX_CUSTOM_ID
from .errors import APIError, FormErrors
from .interactions import CallbackType, InteractionHandle, InteractionType, callback_body
from .locales import LOCALES, localized_view
from .messages import Draft, parse_message_payload
from .server import NO_CONTENT, ApiCall, Router
from .world import Channel, ChannelType, Message, MessageFlag, Permission, iso

if TYPE_CHECKING:
    from .emulator import Emulator

__all__ = ["RestApi"]

THREAD_NAME_LENGTH = (1, 100)
ARCHIVE_DURATIONS = (60, 1440, 4320, 10080)
"""Minutes of inactivity after which a thread is hidden: the only values Discord takes."""

_ALLOWED_CALLBACKS: dict[int, set[int]] = {
    InteractionType.APPLICATION_COMMAND: {4, 5, 9},
    InteractionType.MESSAGE_COMPONENT: {4, 5, 6, 7, 9},
    InteractionType.MODAL_SUBMIT: {4, 5, 6, 7},
}


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


def _snowflake(value: str, field: str) -> int:
    if not value.isdigit():
        raise APIError.invalid_field(
            (field,), "NUMBER_TYPE_COERCE", f'Value "{value}" is not snowflake.'
        )
    return int(value)


class RestApi:
    """Registers the emulator's REST routes on a :class:`Router`."""

    def __init__(self, emulator: Emulator) -> None:
        self.emu = emulator

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
        add("POST", "/interactions/{interaction_id}/{token}/callback", self.callback, auth=False)
        original = "/webhooks/{application_id}/{token}/messages/@original"
        add("GET", original, self.get_original, auth=False)
        add("PATCH", original, self.edit_original, auth=False)
        add("DELETE", original, self.delete_original, auth=False)
        add("POST", "/webhooks/{application_id}/{token}", self.followup, auth=False)
        followup = "/webhooks/{application_id}/{token}/messages/{message_id}"
        add("GET", followup, self.get_followup, auth=False)
        add("PATCH", followup, self.edit_followup, auth=False)
        add("DELETE", followup, self.delete_followup, auth=False)

    # -- users, application, gateway ---------------------------------------------------------

    async def get_me(self, call: ApiCall) -> Any:
        return {
            **self.emu.bot.to_payload(),
            "verified": True,
            "mfa_enabled": False,
            "flags": 0,
            "email": None,
        }

    async def get_user(self, call: ApiCall) -> Any:
        user = self.emu.user(_snowflake(call.params["user_id"], "user_id"))
        if user is None:
            raise APIError(404, 10013, "Unknown User")
        return user.to_payload()

    async def create_dm(self, call: ApiCall) -> Any:
        body = call.json if isinstance(call.json, dict) else {}
        user = self.emu.user(_snowflake(str(body.get("recipient_id", "")), "recipient_id"))
        if user is None:
            raise APIError(404, 10013, "Unknown User")
        return self.emu.dm_channel(user).to_payload()

    async def get_application(self, call: ApiCall) -> Any:
        emu = self.emu
        return {
            "id": str(emu.application_id),
            "name": emu.bot.name,
            "icon": None,
            "description": "",
            "summary": "",
            "type": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "owner": emu.application_owner.to_payload(),
            "team": None,
            "flags": 0,
            "bot": emu.bot.to_payload(),
            "interactions_endpoint_url": None,
            "redirect_uris": [],
            "tags": [],
            "approximate_guild_count": len(emu.bot_guilds()),
            "integration_types_config": {"0": {}},
        }

    async def get_gateway(self, call: ApiCall) -> Any:
        return {"url": self.emu.gateway_url}

    async def get_gateway_bot(self, call: ApiCall) -> Any:
        emu = self.emu
        return {
            "url": emu.gateway_url,
            "shards": emu.recommended_shards,
            "session_start_limit": emu.session_start_limit.payload(emu.clock.now()),
        }

    # -- commands ----------------------------------------------------------------------------

    def _command_scope(self, call: ApiCall) -> int | None:
        if call.params["application_id"] != str(self.emu.application_id):
            raise APIError(403, 50001, "Missing Access")
        if "guild_id" not in call.params:
            return None
        guild = self.emu.guild(_snowflake(call.params["guild_id"], "guild_id"))
        if guild is None or self.emu.bot.id not in guild.members:
            raise APIError(403, 50001, "Missing Access")
        return guild.id

    async def get_commands(self, call: ApiCall) -> Any:
        """Full localization dictionaries only with ``with_localizations=true``; otherwise
        ``name_localized``/``description_localized`` in the requester's locale: the
        ``X-Discord-Locale`` header, else ``Accept-Language``, else the bot's own locale."""
        commands = self.emu.commands.list(self._command_scope(call))
        if _truthy(call.query.get("with_localizations")):
            return commands
        return [localized_view(command, self._requester_locale(call)) for command in commands]

    def _requester_locale(self, call: ApiCall) -> str:
        asked = call.headers.get("X-Discord-Locale")
        if asked not in LOCALES:
            language = call.headers.get("Accept-Language", "").split(",")[0]
            asked = language.split(";")[0].strip()
        if asked in LOCALES:
            return str(asked)
        return self.emu.locale_of(self.emu.bot)

    async def put_commands(self, call: ApiCall) -> Any:
        scope = self._command_scope(call)
        result = self.emu.commands.overwrite(scope, call.json)
        self.emu.command_syncs += 1
        return result

    # -- guilds and channels -----------------------------------------------------------------

    def _bot_guild(self, call: ApiCall) -> Any:
        guild = self.emu.guild(_snowflake(call.params["guild_id"], "guild_id"))
        if guild is None:
            raise APIError(404, 10004, "Unknown Guild")
        if self.emu.bot.id not in guild.members:
            raise APIError(403, 50001, "Missing Access")
        return guild

    async def get_guild(self, call: ApiCall) -> Any:
        return self._bot_guild(call).to_guild_object()

    async def get_guild_channels(self, call: ApiCall) -> Any:
        return [channel.to_payload() for channel in self._bot_guild(call).channels]

    async def get_member(self, call: ApiCall) -> Any:
        member = self._bot_guild(call).member(_snowflake(call.params["user_id"], "user_id"))
        if member is None:
            raise APIError(404, 10007, "Unknown Member")
        return member.to_payload()

    def _channel(self, call: ApiCall, need: int = 0) -> Channel:
        """The channel of the path, if the bot may see it and has the ``need`` permissions."""
        channel = self.emu.channel(_snowflake(call.params["channel_id"], "channel_id"))
        if channel is None:
            raise APIError(404, 10003, "Unknown Channel")
        guild = channel.guild
        if guild is None:
            return channel
        perms = guild.permissions_of(self.emu.bot)
        if self.emu.bot.id not in guild.members or not guild.sees(self.emu.bot, channel):
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
        thread = self.emu.add_thread(parent, name, owner=self.emu.bot, private=private)
        return {
            **thread.to_payload(),
            "member": {
                "id": str(thread.id),
                "user_id": str(self.emu.bot.id),
                "join_timestamp": iso(self.emu.clock.utcnow()),
                "flags": 0,
            },
        }

    def _channel_message(self, call: ApiCall, channel: Channel) -> Message:
        message = self.emu.message(_snowflake(call.params["message_id"], "message_id"))
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
        visible = [m for m in self.emu.messages(channel) if not m.ephemeral]
        if "before" in call.query:
            before = _snowflake(call.query["before"], "before")
            visible = [m for m in visible if m.id < before]
        if "after" in call.query:
            after = _snowflake(call.query["after"], "after")
            visible = [m for m in visible if m.id > after][:limit]
        if "around" in call.query:
            around = _snowflake(call.query["around"], "around")
            older = [m for m in visible if m.id <= around][-(limit // 2 + limit % 2) :]
            newer = [m for m in visible if m.id > around][: limit // 2]
            visible = older + newer
        return [m.to_payload(self.emu.users) for m in reversed(visible[-limit:])]

    async def create_message(self, call: ApiCall) -> Any:
        channel = self._channel(call, Permission.SEND_MESSAGES)
        if channel.is_dm and channel.recipient is not None and channel.recipient.bot:
            raise APIError(400, 50007, "Cannot send messages to this user")
        draft = parse_message_payload(call.json or {}, files=call.files)
        draft.flags &= ~MessageFlag.EPHEMERAL
        return self.emu._post(channel, self.emu.bot, draft).to_payload(self.emu.users)

    async def get_message(self, call: ApiCall) -> Any:
        channel = self._channel(call, Permission.READ_MESSAGE_HISTORY)
        return self._channel_message(call, channel).to_payload(self.emu.users)

    async def edit_message(self, call: ApiCall) -> Any:
        channel = self._channel(call)
        message = self._channel_message(call, channel)
        if message.author is not self.emu.bot:
            raise APIError(403, 50005, "Cannot edit a message authored by another user")
        self.emu._edit(
            message, parse_message_payload(call.json or {}, base=message, files=call.files)
        )
        return message.to_payload(self.emu.users)

    async def delete_message(self, call: ApiCall) -> Any:
        channel = self._channel(call)
        message = self._channel_message(call, channel)
        if message.author is not self.emu.bot:
            if channel.guild is None:
                raise APIError(403, 50003, "Cannot execute action on a DM channel")
            if not channel.guild.permissions_of(self.emu.bot) & Permission.MANAGE_MESSAGES:
                raise APIError(403, 50013, "Missing Permissions")
        self.emu._delete(message)
        return NO_CONTENT

    # -- interaction callbacks ---------------------------------------------------------------

    async def callback(self, call: ApiCall) -> Any:
        emu = self.emu
        handle = emu.interactions.get(_snowflake(call.params["interaction_id"], "interaction_id"))
        if handle is None or handle.token != call.params["token"]:
            raise APIError(404, 10062, "Unknown interaction")
        if handle.acknowledged:
            raise APIError(400, 40060, "Interaction has already been acknowledged.")
        if handle.failed or emu.clock.now() - handle.created_at > emu.ack_deadline:
            if handle.pending:
                handle._fail()
            raise APIError(404, 10062, "Unknown interaction")

        body = call.json if isinstance(call.json, dict) else {}
        kind = body.get("type")
        allowed = _ALLOWED_CALLBACKS.get(handle.type, {4, 5})
        if kind not in allowed:
            raise APIError.invalid_field(
                ("type",),
                "INTERACTION_RESPONSE_TYPE_INVALID",
                f"Value must be one of {sorted(allowed)}.",
            )
        data = body.get("data") or {}
        callback_type = CallbackType(kind)
        message = self._apply_callback(handle, callback_type, data, call.files)
        handle._acknowledge(callback_type, data, message)
        if not _truthy(call.query.get("with_response")):
            return NO_CONTENT
        return callback_body(handle, message)

    def _apply_callback(
        self,
        handle: InteractionHandle,
        kind: CallbackType,
        data: dict[str, Any],
        files: list[dict[str, Any]],
    ) -> Message | None:
        emu = self.emu
        command = handle.type == InteractionType.APPLICATION_COMMAND
        message_type = 20 if command else 0
        if kind == CallbackType.CHANNEL_MESSAGE_WITH_SOURCE:
            draft = parse_message_payload(data, files=files, prefix=("data",))
            draft.reference = None
            ephemeral = handle.user if draft.flags & MessageFlag.EPHEMERAL else None
            return emu._post(
                handle.channel,
                emu.bot,
                draft,
                ephemeral_for=ephemeral,
                interaction=handle,
                message_type=message_type,
            )
        if kind == CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE:
            flags = int(data.get("flags") or 0)
            placeholder = Draft(
                flags=MessageFlag.LOADING | (flags & MessageFlag.SUPPRESS_NOTIFICATIONS)
            )
            ephemeral = handle.user if flags & MessageFlag.EPHEMERAL else None
            return emu._post(
                handle.channel,
                emu.bot,
                placeholder,
                ephemeral_for=ephemeral,
                interaction=handle,
                message_type=message_type,
            )
        source = handle.source_message
        if kind in (CallbackType.DEFERRED_UPDATE_MESSAGE, CallbackType.UPDATE_MESSAGE):
            if source is None or source.deleted:
                raise APIError(404, 10008, "Unknown Message")
            if kind == CallbackType.UPDATE_MESSAGE:
                emu._edit(
                    source, parse_message_payload(data, base=source, files=files, prefix=("data",))
                )
            return source
        self._check_modal(data)
        return None

    @staticmethod
    def _check_modal(data: dict[str, Any]) -> None:
        errors = FormErrors()
        custom_id = data.get("custom_id")
        if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= MAX_CUSTOM_ID:
            errors.add(
                ("data", "custom_id"),
                "BASE_TYPE_BAD_LENGTH",
                f"Must be between 1 and {MAX_CUSTOM_ID} in length.",
            )
        title = data.get("title")
        if not isinstance(title, str) or not 1 <= len(title) <= 45:
            errors.add(
                ("data", "title"), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 45 in length."
            )
        components = data.get("components")
        if not isinstance(components, list) or not 1 <= len(components) <= 5:
            errors.add(
                ("data", "components"), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length."
            )
        errors.raise_if_any()

    # -- interaction webhooks ----------------------------------------------------------------

    def _webhook(self, call: ApiCall) -> InteractionHandle:
        emu = self.emu
        if call.params["application_id"] != str(emu.application_id):
            raise APIError(404, 10015, "Unknown Webhook")
        handle = emu._by_token.get(call.params["token"])
        if handle is None or emu.clock.now() - handle.created_at > emu.token_lifetime:
            raise APIError(401, 50027, "Invalid Webhook Token")
        return handle

    def _original(self, call: ApiCall) -> tuple[InteractionHandle, Message]:
        handle = self._webhook(call)
        if handle.original is None or handle.original.deleted:
            raise APIError(404, 10008, "Unknown Message")
        return handle, handle.original

    def _followup_message(self, call: ApiCall) -> tuple[InteractionHandle, Message]:
        handle = self._webhook(call)
        message = self.emu.message(_snowflake(call.params["message_id"], "message_id"))
        if message is None or message.deleted or not handle.owns(message):
            raise APIError(404, 10008, "Unknown Message")
        return handle, message

    def _edit_owned(self, handle: InteractionHandle, message: Message, call: ApiCall) -> Any:
        self.emu._edit(
            message, parse_message_payload(call.json or {}, base=message, files=call.files)
        )
        if message is handle.original:
            handle.original_edits += 1
            self.emu._changed()
        return message.to_payload(self.emu.users)

    async def get_original(self, call: ApiCall) -> Any:
        return self._original(call)[1].to_payload(self.emu.users)

    async def edit_original(self, call: ApiCall) -> Any:
        return self._edit_owned(*self._original(call), call)

    async def delete_original(self, call: ApiCall) -> Any:
        self.emu._delete(self._original(call)[1])
        return NO_CONTENT

    async def followup(self, call: ApiCall) -> Any:
        emu = self.emu
        handle = self._webhook(call)
        if not handle.acknowledged:
            raise APIError(404, 10015, "Unknown Webhook")
        original = handle.original
        if original is not None and original.loading and not original.deleted:
            # Discord turns the first follow-up after a "thinking" deferral into that message.
            payload = dict(call.json or {})
            payload.pop("flags", None)
            result = self._edit_owned(
                handle,
                original,
                ApiCall(call.method, call.path, call.params, call.query, payload, call.files),
            )
            return result if _truthy(call.query.get("wait")) else NO_CONTENT
        draft = parse_message_payload(call.json or {}, files=call.files)
        draft.reference = None
        ephemeral = handle.user if draft.flags & MessageFlag.EPHEMERAL else None
        command = handle.type == InteractionType.APPLICATION_COMMAND
        message = emu._post(
            handle.channel,
            emu.bot,
            draft,
            ephemeral_for=ephemeral,
            interaction=handle,
            message_type=20 if command else 0,
        )
        handle.followups.append(message)
        emu._changed()
        return message.to_payload(emu.users) if _truthy(call.query.get("wait")) else NO_CONTENT

    async def get_followup(self, call: ApiCall) -> Any:
        return self._followup_message(call)[1].to_payload(self.emu.users)

    async def edit_followup(self, call: ApiCall) -> Any:
        return self._edit_owned(*self._followup_message(call), call)

    async def delete_followup(self, call: ApiCall) -> Any:
        self.emu._delete(self._followup_message(call)[1])
        return NO_CONTENT
