"""Discord's locales, and the rules for localized application command names and descriptions.

The list is Discord's reference "Locales" table (32 codes). Command localization follows the
Application Commands docs: dictionaries keyed by a locale on commands, options and choices;
localized names obey the rules of names; values equal to the default are ignored; localized
option names must not clash with their siblings' names; ``GET .../commands`` returns
``name_localized``/``description_localized`` for the requester's locale unless
``with_localizations=true`` asks for the full dictionaries.
"""

from __future__ import annotations

import copy
import unicodedata
from collections.abc import Mapping
from typing import Any, TypeGuard

from .errors import FormErrors, Path

__all__ = [
    "DEFAULT_LOCALE",
    "LOCALES",
    "check_locale",
    "check_localizations",
    "check_sibling_names",
    "is_valid_name",
    "localized",
    "localized_view",
    "stored_localizations",
]

DEFAULT_LOCALE = "en-US"
# Discord's reference table, in its order.
LOCALES: tuple[str, ...] = (
    "id",
    "da",
    "de",
    "en-GB",
    "en-US",
    "es-ES",
    "es-419",
    "fr",
    "hr",
    "it",
    "lt",
    "hu",
    "nl",
    "no",
    "pl",
    "pt-BR",
    "ro",
    "fi",
    "sv-SE",
    "vi",
    "tr",
    "cs",
    "el",
    "bg",
    "ru",
    "uk",
    "hi",
    "th",
    "zh-CN",
    "ja",
    "zh-TW",
    "ko",
)
_KNOWN = frozenset(LOCALES)
# The client shows these when a dictionary lacks the reader's own locale.
_FALLBACK = {"en-US": "en-GB", "en-GB": "en-US", "es-419": "es-ES"}
# Devanagari and Thai blocks: the naming pattern admits their whole scripts, vowel signs
# (combining marks, so neither letters nor numbers) included.
_SCRIPT_RANGES = ((0x0900, 0x097F), (0xA8E0, 0xA8FF), (0x0E00, 0x0E7F))


def check_locale(locale: Any) -> str:
    """``locale`` if it is one of Discord's locale codes; else ValueError (a test's mistake)."""
    if locale not in _KNOWN:
        raise ValueError(f"{locale!r} is not a Discord locale; use one of {', '.join(LOCALES)}")
    return str(locale)


def _name_char(char: str) -> bool:
    if char in "-_'" or unicodedata.category(char)[0] in "LN":
        return True
    return any(low <= ord(char) <= high for low, high in _SCRIPT_RANGES)


def is_valid_name(name: Any) -> TypeGuard[str]:
    """A CHAT_INPUT command or option name: ``^[-_'\\p{L}\\p{N}\\p{sc=Deva}\\p{sc=Thai}]{1,32}$``,
    lowercase wherever a letter has a lowercase form."""
    return (
        isinstance(name, str)
        and 1 <= len(name) <= 32
        and all(_name_char(c) for c in name)
        and name == name.lower()
    )


def _dictionary(node: dict[str, Any], key: str, errors: FormErrors, path: Path) -> dict[str, Any]:
    """The localization dictionary ``node[key]`` (null and absent are empty), keys checked."""
    value = node.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.add((*path, key), "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
        return {}
    for locale in value:
        if locale not in _KNOWN:
            errors.add(
                (*path, key, locale),
                "BASE_TYPE_CHOICES",
                f"Value must be one of {set(LOCALES)}.",
            )
    return {k: v for k, v in value.items() if k in _KNOWN and v is not None}


def check_localizations(
    node: dict[str, Any],
    errors: FormErrors,
    path: Path,
    *,
    chat_input: bool = True,
    choice: bool = False,
) -> None:
    """Check ``name_localizations`` (and ``description_localizations`` unless ``choice``) of a
    command, option or choice as Discord does; ``chat_input`` false for context menu commands,
    whose names may be mixed case with spaces and whose descriptions stay empty."""
    names = _dictionary(node, "name_localizations", errors, path)
    for locale, name in names.items():
        where = (*path, "name_localizations", locale)
        if choice:
            if not isinstance(name, str) or not 1 <= len(name) <= 100:
                errors.add(where, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
        elif not isinstance(name, str) or not 1 <= len(name) <= 32:
            errors.add(where, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 32 in length.")
        elif chat_input and not is_valid_name(name):
            errors.add(where, "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
    if choice:
        return
    descriptions = _dictionary(node, "description_localizations", errors, path)
    for locale, text in descriptions.items():
        where = (*path, "description_localizations", locale)
        if not chat_input:
            errors.add(
                where,
                "APPLICATION_COMMAND_INVALID_DESCRIPTION",
                "Context menu commands cannot have a description",
            )
        elif not isinstance(text, str) or not 1 <= len(text) <= 100:
            errors.add(where, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")


def check_sibling_names(options: list[Any], errors: FormErrors, path: Path) -> None:
    """Localized option names must differ from the other options' default names and from
    each other within a locale."""
    defaults = {o.get("name"): i for i, o in enumerate(options) if isinstance(o, dict)}
    taken: dict[tuple[str, str], int] = {}
    for i, option in enumerate(options):
        if not isinstance(option, dict) or not isinstance(option.get("name_localizations"), dict):
            continue
        for locale, name in option["name_localizations"].items():
            if name is None or name == option.get("name"):
                continue
            clash = defaults.get(name, i) != i or (locale, name) in taken
            taken.setdefault((locale, name), i)
            if clash:
                errors.add(
                    (*path, i, "name_localizations", locale),
                    "APPLICATION_COMMAND_OPTIONS_NAME_ALREADY_EXISTS",
                    "Option names must be unique",
                )


def stored_localizations(node: dict[str, Any], default_key: str) -> dict[str, str] | None:
    """What Discord keeps of ``node[default_key + "_localizations"]``: values equal to the
    default are ignored; None when nothing is left."""
    given = node.get(f"{default_key}_localizations") or {}
    kept = {k: v for k, v in given.items() if v is not None and v != node.get(default_key)}
    return kept or None


def localized(localizations: Mapping[str, str] | None, locale: str | None) -> str | None:
    """The value a reader in ``locale`` sees, with Discord's fallbacks (en-US <-> en-GB,
    es-419 -> es-ES); None means the default."""
    if not localizations or locale is None:
        return None
    found = localizations.get(locale)
    if found is None and locale in _FALLBACK:
        found = localizations.get(_FALLBACK[locale])
    return found


def localized_view(command: dict[str, Any], locale: str) -> dict[str, Any]:
    """A stored command as a batch GET without ``with_localizations`` returns it: the
    dictionaries replaced by ``name_localized``/``description_localized`` for ``locale``."""
    view = copy.deepcopy(command)

    def swap(node: dict[str, Any]) -> None:
        for key in ("name", "description"):
            if f"{key}_localizations" not in node:
                continue
            value = localized(node.pop(f"{key}_localizations"), locale)
            if value is not None:
                node[f"{key}_localized"] = value
        for child in node.get("options") or []:
            swap(child)
        for choice in node.get("choices") or []:
            swap(choice)

    swap(view)
    return view
