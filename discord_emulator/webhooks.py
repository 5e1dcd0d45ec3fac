"""The interaction endpoints, authorized by the interaction's id and token rather than the
bot's: the callback (one answer, within the acknowledgement deadline, of a type the
interaction allows) and the interaction webhook (the original response and follow-ups,
while the token lives)."""

from __future__ import annotations

from typing import Any

from .components import MAX_CUSTOM_ID
from .entities import Message, User
from .errors import APIError, FormErrors
from .flags import MessageFlag
from .installs import user_install_only
from .interactions import (
    CallbackType,
    InteractionHandle,
    Interactions,
    InteractionType,
    callback_body,
)
from .messages import Draft, parse_message_payload
from .posting import Poster
from .server import NO_CONTENT, ApiCall, Router, snowflake, truthy
from .world import World

__all__ = ["InteractionApi"]

# Docs (Create Followup Message): where only a user install authorizes an interaction.
MAX_FOLLOWUPS = 5

_ALLOWED_CALLBACKS: dict[int, set[int]] = {
    InteractionType.APPLICATION_COMMAND: {4, 5, 9},
    InteractionType.MESSAGE_COMPONENT: {4, 5, 6, 7, 9},
    InteractionType.MODAL_SUBMIT: {4, 5, 6, 7},
}


class InteractionApi:
    """Registers the interaction routes on a :class:`Router`: callbacks and webhooks of
    ``interactions``, whose messages go through ``poster``."""

    def __init__(self, world: World, poster: Poster, interactions: Interactions) -> None:
        self.world = world
        self.poster = poster
        self.interactions = interactions

    def register(self, router: Router) -> None:
        add = router.add
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

    # -- interaction callbacks ---------------------------------------------------------------

    async def callback(self, call: ApiCall) -> Any:
        interaction_id = snowflake(call.params["interaction_id"], "interaction_id")
        handle = self.interactions.by_id.get(interaction_id)
        if handle is None or handle.token != call.params["token"]:
            raise APIError(404, 10062, "Unknown interaction")
        if handle.acknowledged:
            raise APIError(400, 40060, "Interaction has already been acknowledged.")
        if handle.failed or self.interactions.late(handle):
            if handle.pending:
                handle.fail()
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
        handle.acknowledge(callback_type, data, message)
        if not truthy(call.query.get("with_response")):
            return NO_CONTENT
        return callback_body(handle, message, self.world.users)

    def _apply_callback(
        self,
        handle: InteractionHandle,
        kind: CallbackType,
        data: dict[str, Any],
        files: list[dict[str, Any]],
    ) -> Message | None:
        poster, bot = self.poster, self.world.bot
        command = handle.type == InteractionType.APPLICATION_COMMAND
        message_type = 20 if command else 0
        if kind == CallbackType.CHANNEL_MESSAGE_WITH_SOURCE:
            draft = parse_message_payload(data, files=files, prefix=("data",))
            draft.reference = None
            ephemeral = self._ephemeral_for(handle, draft)
            return poster.post(
                handle.channel,
                bot,
                draft,
                ephemeral_for=ephemeral,
                interaction=handle,
                message_type=message_type,
            )
        if kind == CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE:
            flags = int(data.get("flags") or 0)
            placeholder = Draft(
                flags=MessageFlag.LOADING
                | (flags & (MessageFlag.SUPPRESS_NOTIFICATIONS | MessageFlag.EPHEMERAL))
            )
            ephemeral = self._ephemeral_for(handle, placeholder)
            return poster.post(
                handle.channel,
                bot,
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
                poster.edit(
                    source, parse_message_payload(data, base=source, files=files, prefix=("data",))
                )
            return source
        self._check_modal(data)
        return None

    @staticmethod
    def _ephemeral_for(handle: InteractionHandle, draft: Draft) -> User | None:
        """Who alone sees the answer ``draft``: the invoker if it asks to be ephemeral, or
        if Discord forces it (a server that keeps its members' apps private); else all."""
        if handle.forced_ephemeral:
            draft.flags |= MessageFlag.EPHEMERAL
        return handle.user if draft.flags & MessageFlag.EPHEMERAL else None

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
        if call.params["application_id"] != str(self.world.application_id):
            raise APIError(404, 10015, "Unknown Webhook")
        handle = self.interactions.for_webhook(call.params["token"])
        if handle is None:
            raise APIError(401, 50027, "Invalid Webhook Token")
        return handle

    def _original(self, call: ApiCall) -> tuple[InteractionHandle, Message]:
        handle = self._webhook(call)
        if handle.original is None or handle.original.deleted:
            raise APIError(404, 10008, "Unknown Message")
        return handle, handle.original

    def _followup_message(self, call: ApiCall) -> tuple[InteractionHandle, Message]:
        handle = self._webhook(call)
        message = self.world.message(snowflake(call.params["message_id"], "message_id"))
        if message is None or message.deleted or not handle.owns(message):
            raise APIError(404, 10008, "Unknown Message")
        return handle, message

    def _edit_owned(self, handle: InteractionHandle, message: Message, call: ApiCall) -> Any:
        self.poster.edit(
            message, parse_message_payload(call.json or {}, base=message, files=call.files)
        )
        if message is handle.original:
            handle.count_original_edit()
        return message.to_payload(self.world.users)

    async def get_original(self, call: ApiCall) -> Any:
        return self._original(call)[1].to_payload(self.world.users)

    async def edit_original(self, call: ApiCall) -> Any:
        return self._edit_owned(*self._original(call), call)

    async def delete_original(self, call: ApiCall) -> Any:
        self.poster.delete(self._original(call)[1])
        return NO_CONTENT

    async def followup(self, call: ApiCall) -> Any:
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
            return result if truthy(call.query.get("wait")) else NO_CONTENT
        if user_install_only(handle.owners) and len(handle.followups) >= MAX_FOLLOWUPS:
            raise APIError(
                400, 40094, "This interaction has hit the maximum number of follow up messages"
            )
        draft = parse_message_payload(call.json or {}, files=call.files)
        draft.reference = None
        ephemeral = self._ephemeral_for(handle, draft)
        command = handle.type == InteractionType.APPLICATION_COMMAND
        message = self.poster.post(
            handle.channel,
            self.world.bot,
            draft,
            ephemeral_for=ephemeral,
            interaction=handle,
            message_type=20 if command else 0,
        )
        handle.add_followup(message)
        return (
            message.to_payload(self.world.users) if truthy(call.query.get("wait")) else NO_CONTENT
        )

    async def get_followup(self, call: ApiCall) -> Any:
        return self._followup_message(call)[1].to_payload(self.world.users)

    async def edit_followup(self, call: ApiCall) -> Any:
        return self._edit_owned(*self._followup_message(call), call)

    async def delete_followup(self, call: ApiCall) -> Any:
        self.poster.delete(self._followup_message(call)[1])
        return NO_CONTENT
