"""Slash commands in each user's language: names, descriptions, options and choices.

Discord shows a command in the user's language when the application syncs localizations
with it; discord.py asks the tree's ``app_commands.Translator`` for every ``locale_str``
in every Discord locale while syncing. ``CommandTranslator`` answers from our gettext
catalogs (``bot.i18n``), the msgid being the English text of the decorator.

A locale without a catalog of its own gets no localization (Discord shows the English):
the fallback that suits messages (``es-419`` -> ``es_ES``, ``en-GB`` -> ``en_US``) would
only repeat another locale's texts. A translation equal to the English is not sent either.

Discord rejects the whole sync for one bad localization, so a translation that breaks its
rules (see ``problem``) is dropped with a warning rather than sent; tests check every
catalog against the same rules, so none should reach that point.

Answers depend on the text and its location only, never on ``locale_str`` extras, so
``localizations`` can reproduce what a sync sends from the tree's public attributes (for
the command-sync fingerprint). A choice labelled ``"term — explanation"`` (the difficulty
levels) is translated part by part when the whole label has no entry of its own, and cut
to Discord's 100 characters if the translation is longer.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable
from typing import Any

import discord
from discord import app_commands
from discord.app_commands import TranslationContext, locale_str
from discord.app_commands import TranslationContextLocation as Where

from bot import i18n

__all__ = [
    "LABEL_SEPARATOR",
    "CommandTranslator",
    "localizations",
    "own_catalog",
    "problem",
]

log = logging.getLogger(__name__)

LABEL_SEPARATOR = " — "
"""Between a choice's term and its explanation: ``easy — Plays loosely...``."""
NAMES = frozenset({Where.command_name, Where.group_name, Where.parameter_name})
_SCRIPTS = ((0x0900, 0x097F), (0x0E00, 0x0E7F))
"""Devanagari and Thai, whose vowel signs are marks, not letters, yet allowed in names."""


def _name_character(char: str) -> bool:
    if char in "-_":
        return True
    if unicodedata.category(char)[0] in "LN":
        return True
    return any(low <= ord(char) <= high for low, high in _SCRIPTS)


def problem(text: str, where: Where, *, menu: bool = False) -> str | None:
    """Why Discord would refuse ``text`` at ``where`` (None: it would not); ``menu``: the
    name of a context menu (a user or message command), which is 1 to 32 characters of any
    kind, spaces and capitals included.

    Other names follow Discord's ``^[-_'\\p{L}\\p{N}\\p{sc=Deva}\\p{sc=Thai}]{1,32}$``, in lower
    case where the script has case; the apostrophe is refused too, as the API does
    (discord/discord-api-docs#7371). Descriptions and choice names: 1 to 100 characters.
    """
    if where in NAMES:
        if not 1 <= len(text) <= 32:
            return f"a name has 1 to 32 characters, not {len(text)}"
        if menu:
            return None
        if text != text.lower():
            return "a name is lower case"
        wrong = "".join(sorted({char for char in text if not _name_character(char)}))
        return f"a name may not hold {wrong!r}" if wrong else None
    if not 1 <= len(text) <= 100:
        return f"1 to 100 characters, not {len(text)}"
    return None


def own_catalog(locale: str) -> i18n.Translator | None:
    """The catalog of exactly this Discord locale (``pt-BR`` -> ``pt_BR``), if shipped."""
    name = locale.replace("-", "_")
    return i18n.translator(locale) if name in i18n.available() else None


def _label(text: str, catalog: i18n.Translator) -> str:
    """``term — explanation`` translated part by part; cut at a word, with an ellipsis, to
    Discord's 100 characters."""
    term, separator, explanation = text.partition(LABEL_SEPARATOR)
    if not separator:
        return text
    label = f"{catalog.gettext(term)}{separator}{catalog.gettext(explanation)}"
    if len(label) <= 100:
        return label
    return label[:99].rsplit(" ", 1)[0].rstrip(",;:") + "…"


class CommandTranslator(app_commands.Translator):
    """Command texts from the catalogs; ``catalogs`` maps a Discord locale to its own
    catalog, or None (tests pass catalogs of their own). Each locale's catalog is looked
    up once: a sync asks for every text in every locale."""

    def __init__(self, catalogs: Callable[[str], i18n.Translator | None] = own_catalog) -> None:
        self._catalogs = catalogs
        self._found: dict[str, i18n.Translator | None] = {}

    def _catalog(self, locale: str) -> i18n.Translator | None:
        if locale not in self._found:
            self._found[locale] = self._catalogs(locale)
        return self._found[locale]

    def localize(self, text: str, locale: str, where: Where) -> str | None:
        """The catalog's translation of ``text`` for ``locale``, unchecked; None where the
        locale has no catalog of its own or the translation is the English."""
        catalog = self._catalog(locale)
        if catalog is None:
            return None
        translated = catalog.gettext(text)
        if translated == text and where is Where.choice_name:
            translated = _label(text, catalog)
        return None if translated == text else translated

    async def translate(
        self,
        string: locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        translated = self.localize(string.message, locale.value, context.location)
        if translated is None:
            return None
        menu = isinstance(context.data, app_commands.ContextMenu)
        wrong = problem(translated, context.location, menu=menu)
        if wrong is not None:
            log.warning(
                "Not sending the %s translation %r of %r: %s",
                locale.value,
                translated,
                string.message,
                wrong,
            )
            return None
        return translated


def _texts(
    tree: app_commands.CommandTree[Any],
) -> list[tuple[str, Where, locale_str, Any]]:
    """(where, location, string, context data) for every text of the tree's commands (slash
    commands and context menus), from their public attributes."""
    found: list[tuple[str, Where, locale_str, Any]] = []
    for kind in (discord.AppCommandType.user, discord.AppCommandType.message):
        for menu in tree.get_commands(type=kind):
            found.append(
                (f"{kind.name}:{menu.name}", Where.command_name, locale_str(menu.name), menu)
            )
    for command in tree.walk_commands():
        path = command.qualified_name
        group = isinstance(command, app_commands.Group)
        name_at = Where.group_name if group else Where.command_name
        about_at = Where.group_description if group else Where.command_description
        found.append((path, name_at, locale_str(command.name), command))
        found.append((f"{path}:about", about_at, locale_str(command.description), command))
        if isinstance(command, app_commands.Group):
            continue
        for parameter in command.parameters:
            where = f"{path} {parameter.display_name}"  # as Discord names it
            name = parameter.locale_name or locale_str(parameter.display_name)
            about = parameter.locale_description or locale_str(parameter.description)
            found.append((where, Where.parameter_name, name, parameter))
            found.append((f"{where}:about", Where.parameter_description, about, parameter))
            for choice in parameter.choices:
                label = locale_str(choice.name)
                found.append((f"{where}={choice.value}", Where.choice_name, label, choice))
    return found


async def localizations(
    tree: app_commands.CommandTree[Any], translator: app_commands.Translator
) -> dict[str, dict[str, str]]:
    """Every localized text a sync of ``tree``'s global commands would send, by locale and
    then by place (``"tictactoe opponent:about"``): what the sync fingerprint covers."""
    texts = _texts(tree)
    found: dict[str, dict[str, str]] = {}
    for locale in discord.Locale:
        answers: dict[str, str] = {}
        for where, location, string, data in texts:
            # The overloads pair each literal location with its data's type; _texts pairs
            # them at run time, which no overload can take.
            context: Any = TranslationContext(location=location, data=data)  # type: ignore[call-overload]
            translated = await translator.translate(string, locale, context)
            if translated is not None:
                answers[where] = translated
        if answers:
            found[locale.value] = answers
    return found
