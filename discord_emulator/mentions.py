"""Allowed mentions: who a message actually pings, by Discord's rules.

Mentions are read from the content and from every Components V2 Text Display, wherever it
sits (top level, in a Container, in a Section): Discord's docs say of the Text Display
that "pingable mentions (@user, @role, etc) present in this component will ping and send
notifications based on the value of the allowed mention object". (Whether a message
notifies at all is the emulator's business: only when posted, never when edited.)

Without an ``allowed_mentions`` object every mention in the text pings (users, roles,
@everyone/@here) and a reply pings the replied-to author. With one, only the kinds listed in
``parse`` and the ids listed in ``users``/``roles`` ping, and a reply pings its author only
when ``replied_user`` is true. Mentioning a role that is not mentionable, or @everyone, also
needs the author's Mention Everyone permission.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .components import ComponentType, walk
from .entities import Guild, Pings
from .errors import FormErrors, Path
from .flags import Permission

__all__ = ["mention_text", "resolve_pings", "validate_allowed_mentions"]

_USER = re.compile(r"<@!?(\d+)>")
_ROLE = re.compile(r"<@&(\d+)>")
_EVERYONE = re.compile(r"@(?:everyone|here)\b")
_PARSE_TYPES = ("users", "roles", "everyone")


def mention_text(content: str, components: list[dict[str, Any]]) -> str:
    """The text whose mentions count: the content and every Text Display's."""
    texts = [
        str(component.get("content", ""))
        for component in walk(components)
        if component.get("type") == ComponentType.TEXT_DISPLAY
    ]
    return "\n".join([content, *texts]) if texts else content


def validate_allowed_mentions(value: Any, errors: FormErrors, path: Path) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        errors.add(path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return
    parse = value.get("parse", [])
    if not isinstance(parse, list) or any(item not in _PARSE_TYPES for item in parse):
        errors.add(
            (*path, "parse"),
            "BASE_TYPE_CHOICES",
            "Value must be one of ('roles', 'users', 'everyone').",
        )
        return
    for kind in ("users", "roles"):
        listed = value.get(kind)
        if listed is None:
            continue
        if not isinstance(listed, list) or len(listed) > 100:
            errors.add((*path, kind), "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")
        elif listed and kind in parse:
            errors.add(
                path,
                "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
                f'parse:["{kind}"] and {kind}: [ids...] are mutually exclusive.',
            )


def resolve_pings(
    content: str,
    allowed: dict[str, Any] | None,
    *,
    guild: Guild | None,
    author_permissions: int,
    user_exists: Callable[[int], bool],
    replied_author: int | None = None,
) -> Pings:
    if allowed is None:
        parse = set(_PARSE_TYPES)
        user_ids: set[int] = set()
        role_ids: set[int] = set()
        replied_user = True
    else:
        parse = set(allowed.get("parse") or [])
        user_ids = {int(uid) for uid in allowed.get("users") or []}
        role_ids = {int(rid) for rid in allowed.get("roles") or []}
        replied_user = bool(allowed.get("replied_user", False))
    can_mention_everyone = bool(author_permissions & Permission.MENTION_EVERYONE)

    users = {
        uid
        for uid in map(int, _USER.findall(content))
        if user_exists(uid) and ("users" in parse or uid in user_ids)
    }
    if replied_author is not None and replied_user:
        users.add(replied_author)

    roles: set[int] = set()
    if guild is not None:
        for rid in map(int, _ROLE.findall(content)):
            role = guild.roles.get(rid)
            if role is None or rid == guild.id:
                continue
            if ("roles" in parse or rid in role_ids) and (role.mentionable or can_mention_everyone):
                roles.add(rid)

    everyone = (
        guild is not None
        and "everyone" in parse
        and can_mention_everyone
        and _EVERYONE.search(content) is not None
    )
    return Pings(users=frozenset(users), roles=frozenset(roles), everyone=everyone)
