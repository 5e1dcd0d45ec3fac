"""Interactions as the emulator tracks them: the registry, the handle tests await results
through, and the payloads that carry them.

An interaction must be acknowledged once, within the deadline (3 s on Discord). Otherwise the
user sees "This interaction failed". After an acknowledgement its token works for webhook
edits and follow-ups for 15 minutes. Both are measured on the world's clock.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from .entities import Channel, Message, User
from .envelope import envelope
from .flags import MessageFlag
from .installs import forced_ephemeral
from .observations import InteractionAcknowledged, InteractionFailed, Observer, tell
from .world import World

__all__ = [
    "CallbackType",
    "InteractionHandle",
    "InteractionResponse",
    "InteractionType",
    "Interactions",
]

FAILED_TEXT = "This interaction failed"


class InteractionType(IntEnum):
    PING = 1
    APPLICATION_COMMAND = 2
    MESSAGE_COMPONENT = 3
    APPLICATION_COMMAND_AUTOCOMPLETE = 4
    MODAL_SUBMIT = 5


class CallbackType(IntEnum):
    PONG = 1
    CHANNEL_MESSAGE_WITH_SOURCE = 4
    DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE = 5
    DEFERRED_UPDATE_MESSAGE = 6
    UPDATE_MESSAGE = 7
    APPLICATION_COMMAND_AUTOCOMPLETE_RESULT = 8
    MODAL = 9


@dataclass(frozen=True)
class InteractionResponse:
    """How the bot answered: the callback type, and the message it created or updated.

    ``failed`` means no valid callback arrived within the deadline; ``type`` and ``message``
    are then None. For a modal, ``modal`` holds its payload.
    """

    type: CallbackType | None
    message: Message | None
    failed: bool
    modal: dict[str, Any] | None = None

    @property
    def ephemeral(self) -> bool:
        return self.message is not None and self.message.ephemeral

    @property
    def deferred(self) -> bool:
        return self.type in (
            CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE,
            CallbackType.DEFERRED_UPDATE_MESSAGE,
        )


class InteractionHandle:
    """One interaction sent to the bot; await :meth:`response` for its outcome.

    ``original`` is the response message: the one a type 4/5 callback created, or for a
    component interaction answered with type 6/7, the message the button is on.
    """

    def __init__(
        self,
        registry: Interactions,
        *,
        id: int,
        token: str,
        type: InteractionType,
        user: User,
        channel: Channel,
        payload: dict[str, Any],
        source_message: Message | None,
        created_at: float,
    ) -> None:
        self._registry = registry
        self.id = id
        self.token = token
        self.type = type
        self.user = user
        self.channel = channel
        self.payload = payload
        self.source_message = source_message
        self.created_at = created_at
        self.callback_type: CallbackType | None = None
        self.callback_data: dict[str, Any] | None = None
        self.original: Message | None = None
        self.followups: list[Message] = []
        self.original_edits = 0
        self.owners: dict[str, str] = dict(payload.get("authorizing_integration_owners") or {})
        self.forced_ephemeral = False
        """Discord shows every answer to the invoker only (installs.forced_ephemeral)."""
        self.failed = False
        self.failure_text: str | None = None
        self._timer: asyncio.TimerHandle | None = None

    def __repr__(self) -> str:
        state = "failed" if self.failed else (self.callback_type or "pending")
        return f"<InteractionHandle id={self.id} type={self.type.name} {state}>"

    @property
    def acknowledged(self) -> bool:
        return self.callback_type is not None

    @property
    def pending(self) -> bool:
        return not self.acknowledged and not self.failed

    # -- lifecycle (driven by the registry and the REST handlers) ------------------------------

    def acknowledge(
        self, callback_type: CallbackType, data: dict[str, Any] | None, message: Message | None
    ) -> None:
        """The bot's valid callback arrived: ``message`` is the response (or None)."""
        self.callback_type = callback_type
        self.callback_data = data
        self.original = message
        if self._timer is not None:
            self._timer.cancel()
        registry = self._registry
        if registry.observers:
            tell(registry.observers, InteractionAcknowledged(self.id, time.perf_counter()))
        registry.changed()

    def fail(self) -> None:
        """No valid callback in time: the user sees "This interaction failed"."""
        self.failed = True
        self.failure_text = FAILED_TEXT
        registry = self._registry
        if registry.observers:
            tell(registry.observers, InteractionFailed(self.id, time.perf_counter()))
        registry.changed()

    def count_original_edit(self) -> None:
        """The bot edited the original response through the webhook."""
        self.original_edits += 1
        self._registry.changed()

    def add_followup(self, message: Message) -> None:
        self.followups.append(message)
        self._registry.changed()

    def cancel_deadline(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def arm_deadline(self, seconds: float) -> None:
        """Fail the interaction unless it is acknowledged within ``seconds`` (on the clock)."""
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(seconds, self.expire_if_late)

    def expire_if_late(self) -> None:
        """Fail it now if the clock passed its deadline unanswered."""
        if not self.pending:
            return
        registry = self._registry
        remaining = self.created_at + registry.ack_deadline - registry.clock.now()
        if remaining > 0:
            self.arm_deadline(remaining)
            return
        self.fail()

    # -- what tests await -----------------------------------------------------------------

    def _result(self) -> InteractionResponse:
        modal = self.callback_data if self.callback_type == CallbackType.MODAL else None
        return InteractionResponse(
            type=self.callback_type,
            message=self.original,
            failed=self.failed,
            modal=modal,
        )

    async def response(self) -> InteractionResponse:
        """Wait until the bot acknowledged the interaction or the deadline passed."""
        await self._registry.wait_for(lambda: not self.pending)
        return self._result()

    async def edited_original(self, *, edits: int = 1) -> Message:
        """After a deferral (or any response), wait for the bot's ``edits``-th edit of the
        original response through the interaction webhook (a first follow-up that fills a
        deferred "thinking" message counts too) and return the message."""
        await self.response()
        await self._registry.wait_for(lambda: self.original_edits >= edits or self.failed)
        if self.original is None:
            raise AssertionError(f"{self!r} has no original response")
        return self.original

    async def wait_followups(self, count: int = 1) -> list[Message]:
        """Wait until the bot sent at least ``count`` follow-up messages; returns them all.

        A follow-up that fills a deferred "thinking" message is the original response, not a
        follow-up (see :meth:`edited_original`)."""
        await self._registry.wait_for(lambda: len(self.followups) >= count)
        return list(self.followups)

    # -- helpers for the emulator ---------------------------------------------------------

    def owns(self, message: Message) -> bool:
        return message is self.original or message in self.followups


def interaction_metadata(handle: InteractionHandle) -> dict[str, Any]:
    """The ``interaction_metadata`` Discord attaches to messages that answer ``handle``."""
    meta: dict[str, Any] = {
        "id": str(handle.id),
        "type": int(handle.type),
        "user": handle.user.to_payload(),
        "authorizing_integration_owners": handle.payload.get("authorizing_integration_owners", {}),
    }
    if handle.type == InteractionType.APPLICATION_COMMAND:
        data = handle.payload.get("data", {})
        meta["name"] = data.get("name", "")
        target = (data.get("resolved") or {}).get("users", {}).get(data.get("target_id"))
        if data.get("type") == 2 and target is not None:
            meta["target_user"] = target  # a user command: the member it was run on
    if handle.source_message is not None:
        meta["interacted_message_id"] = str(handle.source_message.id)
    return meta


def callback_body(
    handle: InteractionHandle, message: Message | None, users: dict[int, User]
) -> dict[str, Any]:
    """The ``with_response`` answer of an interaction callback."""
    body: dict[str, Any] = {
        "interaction": {
            "id": str(handle.id),
            "type": int(handle.type),
            "activity_instance_id": None,
            "response_message_id": None if message is None else str(message.id),
            "response_message_loading": bool(message is not None and message.loading),
            "response_message_ephemeral": bool(
                message is not None and message.flags & MessageFlag.EPHEMERAL
            ),
        }
    }
    if handle.callback_type is not None and handle.callback_type != CallbackType.MODAL:
        resource: dict[str, Any] = {"type": int(handle.callback_type)}
        if message is not None:
            resource["message"] = message.to_payload(users)
        body["resource"] = resource
    return body


class Interactions:
    """Every interaction sent to the bot in ``world``, by id (``by_id``) and by token.

    ``ack_deadline`` and ``token_lifetime`` are measured on the world's clock; ``changed`` is
    called when a handle settles or gains a message, and handles wait with ``wait_for``;
    ``observers`` are told when a handle settles (:class:`InteractionAcknowledged`,
    :class:`InteractionFailed`).
    """

    def __init__(
        self,
        world: World,
        *,
        ack_deadline: float,
        token_lifetime: float,
        changed: Callable[[], None],
        wait_for: Callable[[Callable[[], bool]], Awaitable[None]],
        observers: list[Observer] | None = None,
    ) -> None:
        self.world = world
        self.clock = world.clock
        self.ack_deadline = ack_deadline
        self.token_lifetime = token_lifetime
        self.changed = changed
        self.wait_for = wait_for
        self.observers = observers if observers is not None else []
        self.by_id: dict[int, InteractionHandle] = {}
        self.by_token: dict[str, InteractionHandle] = {}

    def open(
        self,
        user: User,
        channel: Channel,
        type: InteractionType,
        data: dict[str, Any],
        message: Message | None,
        overrides: dict[str, Any] | None = None,
        owners: dict[str, str] | None = None,
    ) -> InteractionHandle:
        """A new interaction of ``user`` in ``channel`` (on ``message``, for a component),
        registered with its acknowledgement deadline running. ``owners`` are the
        installations that authorize it (installs.py). ``overrides`` replaces top-level keys
        of its payload; a ``None`` value removes the key."""
        world = self.world
        interaction_id = world.snowflakes.next()
        token = "emu." + secrets.token_urlsafe(48)
        payload = envelope(
            world=world,
            interaction_id=interaction_id,
            token=token,
            type=type,
            data=data,
            user=user,
            channel=channel,
            message=message,
            locale=world.locale_of(user),
            owners=owners or {},
        )
        for key, value in (overrides or {}).items():
            if value is None:
                payload.pop(key, None)
            else:
                payload[key] = value
        handle = InteractionHandle(
            self,
            id=interaction_id,
            token=token,
            type=type,
            user=user,
            channel=channel,
            payload=payload,
            source_message=message,
            created_at=world.clock.now(),
        )
        handle.forced_ephemeral = forced_ephemeral(world, user, channel, handle.owners)
        self.by_id[interaction_id] = handle
        self.by_token[token] = handle
        handle.arm_deadline(self.ack_deadline)
        return handle

    def for_webhook(self, token: str) -> InteractionHandle | None:
        """The interaction whose token is ``token``, while the token is still valid."""
        handle = self.by_token.get(token)
        if handle is None or self.clock.now() - handle.created_at > self.token_lifetime:
            return None
        return handle

    def late(self, handle: InteractionHandle) -> bool:
        """Whether ``handle``'s acknowledgement deadline has passed."""
        return self.clock.now() - handle.created_at > self.ack_deadline

    def expire_late(self) -> None:
        """Fail every pending interaction whose deadline the clock has passed."""
        for handle in self.by_id.values():
            if handle.pending:
                handle.expire_if_late()

    def close(self) -> None:
        """Stop every deadline timer (the emulator is stopping)."""
        for handle in self.by_id.values():
            handle.cancel_deadline()
