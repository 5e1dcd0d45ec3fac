"""Turning a create/edit message payload into validated message fields.

The same rules serve channel messages, interaction responses and webhook edits: content up to
2000 characters, at most 10 embeds of at most 6000 characters, the component rules of
:mod:`components`, no content or embeds on a Components V2 message, and no empty message.
An edit changes only the fields it sends; the merged result is what gets validated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .components import validate_components
from .entities import Message
from .errors import APIError, FormErrors, Path
from .flags import MessageFlag
from .mentions import validate_allowed_mentions

__all__ = ["Draft", "parse_message_payload"]

SENDABLE_FLAGS = int(
    MessageFlag.SUPPRESS_EMBEDS
    | MessageFlag.EPHEMERAL
    | MessageFlag.SUPPRESS_NOTIFICATIONS
    | MessageFlag.IS_COMPONENTS_V2
)
EDITABLE_FLAGS = int(MessageFlag.SUPPRESS_EMBEDS | MessageFlag.IS_COMPONENTS_V2)
MAX_CONTENT = 2000
MAX_EMBEDS = 10
MAX_EMBED_TOTAL = 6000
_EMBED_LIMITS = {"title": 256, "description": 4096}


@dataclass
class Draft:
    """Validated message fields, ready to be stored."""

    content: str = ""
    embeds: list[dict[str, Any]] = field(default_factory=list)
    components: list[dict[str, Any]] = field(default_factory=list)
    attachments: list[dict[str, Any]] = field(default_factory=list)
    flags: int = 0
    allowed_mentions: dict[str, Any] | None = None
    reference: dict[str, Any] | None = None
    tts: bool = False
    nonce: str | int | None = None
    content_changed: bool = False


def parse_message_payload(
    payload: Any,
    *,
    base: Message | None = None,
    files: list[dict[str, Any]] | None = None,
    prefix: Path = (),
) -> Draft:
    """Validate ``payload`` as a new message (``base`` None) or as an edit of ``base``.

    Raises :class:`APIError` (50035 with an ``errors`` tree, or 50006 for an empty message).
    Errors are reported under ``prefix`` (``("data",)`` for interaction callbacks).
    """
    if not isinstance(payload, dict):
        raise APIError.invalid_field(
            prefix, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType"
        )
    errors = FormErrors()
    draft = Draft()
    if base is not None:
        draft.content = base.content
        draft.embeds = list(base.embeds)
        draft.components = list(base.components)
        draft.attachments = list(base.attachments)
        draft.flags = base.flags
        draft.allowed_mentions = base.allowed_mentions

    if "content" in payload:
        content = payload["content"]
        if content is None:
            content = ""
        if not isinstance(content, str):
            errors.add((*prefix, "content"), "BASE_TYPE_STRING", "Must be a string.")
        elif len(content) > MAX_CONTENT:
            errors.add(
                (*prefix, "content"),
                "BASE_TYPE_MAX_LENGTH",
                f"Must be {MAX_CONTENT} or fewer in length.",
            )
        else:
            draft.content_changed = content != draft.content
            draft.content = content

    embeds = payload.get("embeds", payload.get("embed", ...))
    if embeds is not ...:
        if isinstance(embeds, dict):
            embeds = [embeds]
        draft.embeds = _check_embeds(embeds or [], errors, (*prefix, "embeds"))

    if "components" in payload:
        draft.components = payload["components"] or []

    if payload.get("flags") is not None:
        flags = payload["flags"]
        if not isinstance(flags, int) or isinstance(flags, bool):
            errors.add((*prefix, "flags"), "NUMBER_TYPE_COERCE", f"Value {flags!r} is not int.")
        elif base is None:
            draft.flags = flags & SENDABLE_FLAGS
        else:
            if base.components_v2 and not flags & MessageFlag.IS_COMPONENTS_V2:
                errors.add(
                    (*prefix, "flags"),
                    "MESSAGE_CANNOT_REMOVE_COMPONENTS_V2_FLAG",
                    "The IS_COMPONENTS_V2 flag cannot be removed once set.",
                )
            draft.flags = (base.flags & ~EDITABLE_FLAGS) | (flags & EDITABLE_FLAGS)

    if "allowed_mentions" in payload:
        validate_allowed_mentions(
            payload["allowed_mentions"], errors, (*prefix, "allowed_mentions")
        )
        draft.allowed_mentions = payload["allowed_mentions"]

    if base is None:
        draft.attachments = list(files or [])
        draft.tts = bool(payload.get("tts", False))
        draft.nonce = payload.get("nonce")
        reference = payload.get("message_reference")
        if reference is not None and not (
            isinstance(reference, dict) and reference.get("message_id")
        ):
            errors.add(
                (*prefix, "message_reference"), "BASE_TYPE_REQUIRED", "message_id is required"
            )
        draft.reference = reference
    else:
        if "attachments" in payload:
            keep = {
                str(item.get("id"))
                for item in payload["attachments"] or []
                if isinstance(item, dict)
            }
            draft.attachments = [a for a in draft.attachments if a["id"] in keep]
        draft.attachments.extend(files or [])

    v2 = bool(draft.flags & MessageFlag.IS_COMPONENTS_V2)
    validate_components(draft.components, v2=v2, errors=errors, path=(*prefix, "components"))
    if v2:
        for name, value in (("content", draft.content), ("embeds", draft.embeds)):
            if value:
                errors.add(
                    (*prefix, name),
                    "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2",
                    f"The '{name}' field cannot be used when using MessageFlags.IS_COMPONENTS_V2",
                )
    errors.raise_if_any()

    if not (draft.content or draft.embeds or draft.components or draft.attachments):
        raise APIError(400, 50006, "Cannot send an empty message")
    return draft


def _check_embeds(embeds: Any, errors: FormErrors, path: Path) -> list[dict[str, Any]]:
    if not isinstance(embeds, list):
        errors.add(path, "BASE_TYPE_ARRAY", "Must be an array.")
        return []
    if len(embeds) > MAX_EMBEDS:
        errors.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {MAX_EMBEDS} or fewer in length.")
    total = 0
    for i, embed in enumerate(embeds):
        if not isinstance(embed, dict):
            errors.add(
                (*path, i), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType"
            )
            continue
        for key, limit in _EMBED_LIMITS.items():
            text = str(embed.get(key) or "")
            total += len(text)
            if len(text) > limit:
                errors.add(
                    (*path, i, key), "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length."
                )
        fields = embed.get("fields") or []
        if len(fields) > 25:
            errors.add(
                (*path, i, "fields"), "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length."
            )
        for field_ in fields:
            total += len(str(field_.get("name", ""))) + len(str(field_.get("value", "")))
        total += len(str((embed.get("footer") or {}).get("text", "")))
        total += len(str((embed.get("author") or {}).get("name", "")))
    if total > MAX_EMBED_TOTAL:
        errors.add(
            path,
            "MESSAGE_EMBED_TOTAL_TOO_LARGE",
            f"Embed size exceeds maximum size of {MAX_EMBED_TOTAL}",
        )
    return embeds
