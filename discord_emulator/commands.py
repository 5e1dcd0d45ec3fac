"""Application commands as the bot synced them.

The registry validates bulk overwrites as Discord does (names, descriptions, option order,
choices) and keeps command ids stable across re-syncs. What a user's client makes of them
(an invocation's ``data``) is client.py's.
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Callable, Iterable
from enum import IntEnum
from typing import Any

from .errors import FormErrors, Path
from .locales import (
    check_localizations,
    check_sibling_names,
    is_valid_name,
    localized,
    stored_localizations,
)

__all__ = ["MAX_SAFE_INT", "CommandRegistry", "OptionType"]

MAX_SAFE_INT = 2**53


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
    """Commands per scope: ``None`` for global commands, a guild id for guild commands.

    ``install_types`` gives the app's installation contexts, which a command synced without
    ``integration_types`` takes (docs: "Defaults to your app's configured contexts")."""

    def __init__(
        self,
        application_id: int,
        next_id: Callable[[], int],
        install_types: Callable[[], Iterable[int]] = lambda: (0,),
    ) -> None:
        self.application_id = application_id
        self._next_id = next_id
        self._install_types = install_types
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
                "integration_types": command.get("integration_types")
                or sorted(self._install_types()),
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

    def by_id(self, command_id: str | int | None) -> dict[str, Any] | None:
        """The synced command of that id, in any scope."""
        for commands in self.scopes.values():
            for command in commands:
                if command["id"] == str(command_id):
                    return command
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
