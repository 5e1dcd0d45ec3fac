"""Posting, editing and deleting messages in a :class:`~discord_emulator.world.World`.

The :class:`Poster` stores a validated :class:`~discord_emulator.messages.Draft` as Discord
does: a reply's reference is checked, who the message pings is resolved by the mention
rules, components get their ids, attachments their URLs, and an interaction's answer its
webhook and ``interaction_metadata``. Each change is emitted to the world's subscribers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .components import assign_ids
from .entities import Channel, Message, Pings, User
from .errors import APIError
from .events import MessageDeleted, MessageEdited, MessagePosted
from .flags import MessageFlag
from .interactions import InteractionHandle, interaction_metadata
from .mentions import mention_text, resolve_pings
from .messages import Draft
from .wire import copy_json
from .world import World

__all__ = ["Poster"]


class Poster:
    """Changes the messages of ``world``; ``files_base`` gives the ``http://host:port`` that
    attachment URLs start with."""

    def __init__(self, world: World, files_base: Callable[[], str]) -> None:
        self.world = world
        self._files_base = files_base

    def post(
        self,
        channel: Channel,
        author: User,
        draft: Draft,
        *,
        ephemeral_for: User | None = None,
        interaction: InteractionHandle | None = None,
        message_type: int = 0,
    ) -> Message:
        """Store a validated message (``interaction``: one answering it, from the bot)."""
        world = self.world
        reference = None
        replied: int | None = None
        if draft.reference is not None:
            target = self.world.message(draft.reference["message_id"])
            if (
                target is None
                or target.deleted
                or target.channel is not channel
                or target.visible_to is not None
            ):
                if draft.reference.get("fail_if_not_exists", True):
                    raise APIError.invalid_field(
                        ("message_reference",),
                        "MESSAGE_REFERENCE_UNKNOWN_MESSAGE",
                        "Unknown message",
                    )
            else:
                reference = {"type": 0, "message_id": str(target.id), "channel_id": str(channel.id)}
                if channel.guild is not None:
                    reference["guild_id"] = str(channel.guild.id)
                replied = target.author.id
                message_type = 19
        flags = draft.flags & ~MessageFlag.EPHEMERAL
        if ephemeral_for is not None:
            flags |= MessageFlag.EPHEMERAL
        components = copy_json(draft.components)
        assign_ids(components)
        message = Message(
            id=world.snowflakes.next(),
            channel=channel,
            author=author,
            content=draft.content,
            embeds=copy_json(draft.embeds),
            components=components,
            attachments=[self._attachment(f) for f in draft.attachments],
            flags=flags,
            type=message_type,
            tts=draft.tts,
            created_at=world.clock.utcnow(),
            visible_to=ephemeral_for.id if ephemeral_for else None,
            allowed_mentions=draft.allowed_mentions,
            reference=reference,
            nonce=draft.nonce,
        )
        message.mentions = self._pings_for(
            channel, author, message, draft.allowed_mentions, replied
        )
        if not message.ephemeral and not message.loading:
            message.pings = message.mentions
        if interaction is not None:
            message.webhook_id = world.application_id
            message.application_id = world.application_id
            message.interaction_metadata = interaction_metadata(interaction)
        channel.messages.append(message)
        world.message_index[message.id] = message
        world.emit(MessagePosted(message))
        return message

    def _attachment(self, file: dict[str, Any]) -> dict[str, Any]:
        if "url" in file:
            return file
        attachment_id = str(self.world.snowflakes.next())
        base = self._files_base()
        return {
            "id": attachment_id,
            "filename": file["filename"],
            "size": file["size"],
            "content_type": file.get("content_type"),
            "url": f"{base}/attachments/{attachment_id}/{file['filename']}",
            "proxy_url": f"{base}/attachments/{attachment_id}/{file['filename']}",
        }

    def edit(self, message: Message, draft: Draft) -> None:
        """Apply a validated edit; filling a deferred "thinking" message counts as posting it."""
        was_loading = message.loading
        components = copy_json(draft.components)
        assign_ids(components)
        message.content = draft.content
        message.embeds = copy_json(draft.embeds)
        message.components = components
        message.attachments = [self._attachment(f) for f in draft.attachments]
        message.flags = draft.flags & ~MessageFlag.LOADING
        message.allowed_mentions = draft.allowed_mentions
        if not was_loading:
            message.edited_at = self.world.clock.utcnow()
        message.edits += 1
        replied = None
        if message.reference is not None:
            target = self.world.message(message.reference["message_id"])
            replied = target.author.id if target else None
        message.mentions = self._pings_for(
            message.channel, message.author, message, message.allowed_mentions, replied
        )
        if was_loading and not message.ephemeral:
            message.pings = message.mentions
        self.world.emit(MessageEdited(message))

    def delete(self, message: Message) -> None:
        """Mark ``message`` deleted."""
        message.deleted = True
        self.world.emit(MessageDeleted(message))

    def _pings_for(
        self,
        channel: Channel,
        author: User,
        message: Message,
        allowed: dict[str, Any] | None,
        replied: int | None,
    ) -> Pings:
        """Who ``message``'s content and Text Displays mention (highlight), by the rules."""
        guild = channel.guild
        return resolve_pings(
            mention_text(message.content, message.components),
            allowed,
            guild=guild,
            author_permissions=guild.permissions_of(author) if guild else 0,
            user_exists=lambda uid: uid in self.world.users,
            replied_author=replied,
        )
