"""Application commands: what the bot synced, and checking a user's invocation against it.

The registry validates bulk overwrites as Discord does (names, descriptions, option order,
choices) and keeps command ids stable across re-syncs. :func:`build_command_data` plays the
Discord client: it refuses what the client would not send and fills ``resolved``.
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from .errors import FormErrors, Path, UserActionError
from .locales import (
    check_localizations,
    check_sibling_names,
    is_valid_name,
    localized,
    stored_localizations,
)
from .world import ALL_PERMISSIONS, Channel, Guild, Member, Permission, Role, User

__all__ = ["CommandRegistry", "OptionType", "build_command_data"]

_MAX_SAFE_INT = 2**53


class OptionType(IntEnum):
    SUB_COMMAND = 1
    SUB_COMMAND_GROUP = 2
    STRING = 3
    INTEGER = 4
    BOOLEAN = 5
    USER = 6
    CHANNEL = 7
    ROLE = 8
    MENTIONABLE = 9
    NUMBER = 10
    ATTACHMENT = 11


class CommandRegistry:
    """Commands per scope: ``None`` for global commands, a guild id for guild commands."""

    def __init__(self, application_id: int, next_id: Callable[[], int]) -> None:
        self.application_id = application_id
        self._next_id = next_id
        self.scopes: dict[int | None, list[dict[str, Any]]] = {}

    def list(self, guild_id: int | None) -> list[dict[str, Any]]:
        return copy.deepcopy(self.scopes.get(guild_id, []))

    # ``builtins.list``: in the class body ``list`` is the method above.
    def overwrite(self, guild_id: int | None, payload: Any) -> builtins.list[dict[str, Any]]:
        """Replace every command of a scope (``PUT .../commands``); raises 50035 on bad input."""
        errors = FormErrors()
        if not isinstance(payload, list):
            errors.add((), "BASE_TYPE_ARRAY", "Must be an array.")
            errors.raise_if_any()
        seen: set[tuple[int, str]] = set()
        for i, command in enumerate(payload):
            _check_command(command, errors, (i,))
            if isinstance(command, dict):
                key = (int(command.get("type") or 1), str(command.get("name")))
                if key in seen:
                    errors.add(
                        (i, "name"),
                        "APPLICATION_COMMANDS_DUPLICATE_NAME",
                        "Application command names must be unique",
                    )
                seen.add(key)
        if sum(1 for c in payload if isinstance(c, dict) and (c.get("type") or 1) == 1) > 100:
            errors.add((), "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")
        errors.raise_if_any()

        previous = {(c["type"], c["name"]): c for c in self.scopes.get(guild_id, [])}
        stored: list[dict[str, Any]] = []
        for command in payload:
            kind = int(command.get("type") or 1)
            old = previous.get((kind, command["name"]))
            entry: dict[str, Any] = {
                "id": old["id"] if old else str(self._next_id()),
                "application_id": str(self.application_id),
                "version": str(self._next_id()),
                "type": kind,
                "name": command["name"],
                "name_localizations": stored_localizations(command, "name"),
                "description": command.get("description") or "",
                "description_localizations": stored_localizations(command, "description"),
                "options": [_stored_option(o) for o in command.get("options") or []],
                "default_member_permissions": command.get("default_member_permissions"),
                "dm_permission": command.get("dm_permission"),
                "contexts": command.get("contexts"),
                "integration_types": command.get("integration_types") or [0],
                "nsfw": bool(command.get("nsfw", False)),
            }
            if guild_id is not None:
                entry["guild_id"] = str(guild_id)
            stored.append(entry)
        self.scopes[guild_id] = stored
        return copy.deepcopy(stored)

    def default_name_of(self, name: str, guild_id: int | None, locale: str) -> str | None:
        """The default name of the chat command a reader in ``locale`` sees as ``/name``, if
        ``name`` is a localized name and not a default one."""
        scopes: list[int | None] = [guild_id, None] if guild_id is not None else [None]
        for scope in scopes:
            for command in self.scopes.get(scope, []):
                seen = localized(command["name_localizations"], locale)
                if command["type"] == 1 and seen == name:
                    return str(command["name"])
        return None

    def find(self, name: str, guild_id: int | None, kind: int = 1) -> dict[str, Any] | None:
        """The command a user in ``guild_id`` (None: a DM) would see under ``name``."""
        scopes: list[int | None] = [guild_id, None] if guild_id is not None else [None]
        for scope in scopes:
            for command in self.scopes.get(scope, []):
                if command["name"] == name and command["type"] == kind:
                    return command
        return None


def _check_command(command: Any, errors: FormErrors, path: Path) -> None:
    if not isinstance(command, dict):
        errors.add(path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return
    kind = command.get("type") or 1
    if kind not in (1, 2, 3, 4):
        errors.add((*path, "type"), "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3, 4}.")
        return
    name = command.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 32:
        errors.add((*path, "name"), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 32 in length.")
    elif kind == 1 and not is_valid_name(name):
        errors.add((*path, "name"), "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
    check_localizations(command, errors, path, chat_input=kind == 1)
    description = command.get("description") or ""
    if kind == 1 and not 1 <= len(description) <= 100:
        errors.add(
            (*path, "description"), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length."
        )
    if kind in (2, 3) and description:
        errors.add(
            (*path, "description"),
            "APPLICATION_COMMAND_INVALID_DESCRIPTION",
            "Context menu commands cannot have a description",
        )
    _check_options(command.get("options") or [], errors, (*path, "options"), depth=0)


def _check_options(options: Any, errors: FormErrors, path: Path, *, depth: int) -> None:
    if not isinstance(options, list):
        errors.add(path, "BASE_TYPE_ARRAY", "Must be an array.")
        return
    if len(options) > 25:
        errors.add(path, "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
    names: set[str] = set()
    optional_seen = False
    check_sibling_names(options, errors, path)
    for i, option in enumerate(options):
        where = (*path, i)
        if not isinstance(option, dict):
            errors.add(where, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
            continue
        kind = option.get("type")
        name = option.get("name")
        if kind not in set(OptionType):
            errors.add((*where, "type"), "BASE_TYPE_CHOICES", "Value must be one of {1, ..., 11}.")
            continue
        if not is_valid_name(name):
            errors.add(
                (*where, "name"), "APPLICATION_COMMAND_INVALID_NAME", "Option name is invalid"
            )
        elif name in names:
            errors.add(
                (*where, "name"),
                "APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS",
                "Option names must be unique",
            )
        else:
            names.add(name)
        if not 1 <= len(option.get("description") or "") <= 100:
            errors.add(
                (*where, "description"),
                "BASE_TYPE_BAD_LENGTH",
                "Must be between 1 and 100 in length.",
            )
        check_localizations(option, errors, where)
        if kind in (OptionType.SUB_COMMAND, OptionType.SUB_COMMAND_GROUP):
            children = option.get("options") or []
            if kind == OptionType.SUB_COMMAND_GROUP:
                if depth > 0 or any(isinstance(c, dict) and c.get("type") != 1 for c in children):
                    errors.add(
                        where,
                        "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
                        "Groups can only hold subcommands",
                    )
            elif depth > 1:
                errors.add(
                    where,
                    "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
                    "Subcommands are nested too deeply",
                )
            _check_options(children, errors, (*where, "options"), depth=depth + 1)
            continue
        if option.get("required"):
            if optional_seen:
                errors.add(
                    (*where, "required"),
                    "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                    "Required options must be placed before non-required options",
                )
        else:
            optional_seen = True
        choices = option.get("choices")
        if choices is not None:
            if not isinstance(choices, list) or len(choices) > 25:
                errors.add(
                    (*where, "choices"), "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length."
                )
            else:
                for j, choice in enumerate(choices):
                    _check_choice_name(choice, errors, (*where, "choices", j))
                    if not _value_matches(
                        kind, choice.get("value") if isinstance(choice, dict) else None
                    ):
                        errors.add(
                            (*where, "choices", j, "value"),
                            "APPLICATION_COMMAND_OPTION_CHOICE_INVALID",
                            "Choice value does not match the option type",
                        )


def _check_choice_name(choice: Any, errors: FormErrors, path: Path) -> None:
    if not isinstance(choice, dict):
        return
    name = choice.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 100:
        errors.add((*path, "name"), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
    check_localizations(choice, errors, path, choice=True)


def _stored_option(option: dict[str, Any]) -> dict[str, Any]:
    """An option (its choices and sub-options too) with its localizations as Discord keeps
    them."""
    stored = copy.deepcopy(option)
    stored["name_localizations"] = stored_localizations(option, "name")
    stored["description_localizations"] = stored_localizations(option, "description")
    if option.get("choices") is not None:
        stored["choices"] = [
            {**copy.deepcopy(c), "name_localizations": stored_localizations(c, "name")}
            for c in option["choices"]
        ]
    if option.get("options") is not None:
        stored["options"] = [_stored_option(o) for o in option["options"]]
    return stored


def _value_matches(kind: int, value: Any) -> bool:
    if kind == OptionType.STRING:
        return isinstance(value, str) and len(value) <= 100
    if kind == OptionType.INTEGER:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == OptionType.NUMBER:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return False


@dataclass
class _Resolver:
    guild: Guild | None
    resolved: dict[str, dict[str, Any]]

    def user(self, user: User) -> None:
        self.resolved.setdefault("users", {})[str(user.id)] = user.to_payload()
        member = self.guild.member(user) if self.guild else None
        if member is not None:
            self.resolved.setdefault("members", {})[str(user.id)] = member.to_payload(
                with_user=False, with_permissions=True
            )

    def role(self, role: Role) -> None:
        self.resolved.setdefault("roles", {})[str(role.id)] = role.to_payload()

    def channel(self, channel: Channel) -> None:
        payload = channel.to_payload()
        payload["permissions"] = str(ALL_PERMISSIONS)
        self.resolved.setdefault("channels", {})[str(channel.id)] = payload


def build_command_data(
    command: dict[str, Any],
    path: list[str],
    values: dict[str, Any],
    *,
    guild: Guild | None,
) -> dict[str, Any]:
    """The ``data`` of an APPLICATION_COMMAND interaction for ``/name path... option=value``.

    Raises :class:`UserActionError` for what the Discord client would refuse.
    """
    resolver = _Resolver(guild=guild, resolved={})
    options = command.get("options") or []
    top: list[dict[str, Any]] = []
    holder = top
    walked = [command["name"]]
    for part in path:
        sub = next(
            (o for o in options if o["name"] == part and o["type"] in (1, 2)),
            None,
        )
        if sub is None:
            raise UserActionError(f"/{' '.join(walked)} has no subcommand {part!r}")
        entry: dict[str, Any] = {"type": sub["type"], "name": part, "options": []}
        holder.append(entry)
        holder = entry["options"]
        options = sub.get("options") or []
        walked.append(part)
    if any(o["type"] in (1, 2) for o in options):
        names = ", ".join(o["name"] for o in options)
        raise UserActionError(f"/{' '.join(walked)} needs a subcommand: one of {names}")

    known = {o["name"]: o for o in options}
    for name in values:
        if name not in known:
            raise UserActionError(f"/{' '.join(walked)} has no option {name!r}")
    for option in options:
        name = option["name"]
        if name not in values or values[name] is None:
            if option.get("required"):
                raise UserActionError(f"/{' '.join(walked)}: option {name!r} is required")
            continue
        holder.append(
            {
                "type": option["type"],
                "name": name,
                "value": _convert(option, values[name], resolver),
            }
        )

    data: dict[str, Any] = {"id": command["id"], "name": command["name"], "type": command["type"]}
    if top:
        data["options"] = top
    if resolver.resolved:
        data["resolved"] = resolver.resolved
    if "guild_id" in command:
        data["guild_id"] = command["guild_id"]
    return data


def _convert(option: dict[str, Any], value: Any, resolver: _Resolver) -> Any:
    kind = option["type"]
    name = option["name"]

    def refuse(reason: str) -> UserActionError:
        return UserActionError(f"option {name!r}: {reason}")

    if kind == OptionType.STRING:
        if not isinstance(value, str):
            raise refuse(f"expected text, got {value!r}")
        shortest, longest = option.get("min_length", 0), option.get("max_length", 6000)
        if not shortest <= len(value) <= longest:
            raise refuse(f"length {len(value)} is outside {shortest}..{longest}")
    elif kind in (OptionType.INTEGER, OptionType.NUMBER):
        numeric = (int,) if kind == OptionType.INTEGER else (int, float)
        if isinstance(value, bool) or not isinstance(value, numeric):
            wanted = "an integer" if kind == OptionType.INTEGER else "a number"
            raise refuse(f"expected {wanted}, got {value!r}")
        if abs(value) > _MAX_SAFE_INT:
            raise refuse("number out of range")
        low, high = option.get("min_value"), option.get("max_value")
        if (low is not None and value < low) or (high is not None and value > high):
            raise refuse(f"{value} is outside {low}..{high}")
    elif kind == OptionType.BOOLEAN:
        if not isinstance(value, bool):
            raise refuse(f"expected True/False, got {value!r}")
    elif kind == OptionType.USER:
        user = value.user if isinstance(value, Member) else value
        if not isinstance(user, User):
            raise refuse(f"expected a user, got {value!r}")
        resolver.user(user)
        return str(user.id)
    elif kind == OptionType.CHANNEL:
        if not isinstance(value, Channel):
            raise refuse(f"expected a channel, got {value!r}")
        allowed_types = option.get("channel_types")
        if allowed_types and int(value.type) not in allowed_types:
            raise refuse(f"channel type {int(value.type)} is not one of {allowed_types}")
        resolver.channel(value)
        return str(value.id)
    elif kind == OptionType.ROLE:
        if not isinstance(value, Role):
            raise refuse(f"expected a role, got {value!r}")
        resolver.role(value)
        return str(value.id)
    elif kind == OptionType.MENTIONABLE:
        target = value.user if isinstance(value, Member) else value
        if isinstance(target, User):
            resolver.user(target)
        elif isinstance(target, Role):
            resolver.role(target)
        else:
            raise refuse(f"expected a user or a role, got {value!r}")
        return str(target.id)
    else:
        raise refuse("attachment options are not supported by the emulator")

    choices = option.get("choices")
    if choices and value not in [choice["value"] for choice in choices]:
        listed = ", ".join(repr(choice["value"]) for choice in choices)
        raise refuse(f"{value!r} is not one of the choices ({listed})")
    return value


def build_user_command_data(
    command: dict[str, Any], target: User, *, guild: Guild | None
) -> dict[str, Any]:
    """The ``data`` of a user command (a member's Apps menu): the target in ``target_id``
    and ``resolved`` (its user, and its member in a guild), as the client sends it."""
    resolver = _Resolver(guild=guild, resolved={})
    resolver.user(target)
    return {
        "id": command["id"],
        "name": command["name"],
        "type": command["type"],
        "target_id": str(target.id),
        "resolved": resolver.resolved,
    }


def check_command_access(command: dict[str, Any], *, guild: Guild | None, user: User) -> None:
    """Refuse commands the user could not see: DM/guild contexts, default member permissions."""
    contexts = command.get("contexts")
    if guild is None:
        if command.get("dm_permission") is False or (contexts is not None and 1 not in contexts):
            raise UserActionError(f"/{command['name']} cannot be used in DMs")
        return
    if contexts is not None and 0 not in contexts:
        raise UserActionError(f"/{command['name']} cannot be used in a guild")
    required = command.get("default_member_permissions")
    if required is not None:
        needed = int(required)
        have = guild.permissions_of(user)
        if (needed == 0 and have != ALL_PERMISSIONS) or (have & needed) != needed:
            raise UserActionError(f"{user.name} lacks the permissions /{command['name']} requires")
    if not guild.permissions_of(user) & Permission.USE_APPLICATION_COMMANDS:
        raise UserActionError(f"{user.name} may not use application commands here")
