"""Localized slash commands: every shipped catalog against Discord's rules, the translator's
choices, the sync fingerprint, and what a real sync sends (the bot against the emulator).

The rules are written out here rather than taken from ``bot.ui.commands_i18n.problem``,
so that a mistake there does not hide a catalog that Discord would refuse. Every test
iterates over ``bot.i18n.available()``: a catalog added later is checked the same way.
"""

from __future__ import annotations

import io
import logging
import unicodedata
from typing import Any

import discord
import pytest
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations
from discord import app_commands
from discord.app_commands import TranslationContext, locale_str
from discord.app_commands import TranslationContextLocation as Where

from bot import i18n
from bot.challenges.cog import FIRST_NAMES, Games
from bot.durations import UNITS, parse_duration
from bot.games.cog import Stop
from bot.games.help import Help
from bot.models import First
from bot.privacy.cog import Privacy
from bot.servers.cog import ServerSettings
from bot.stats.cog import Stats
from bot.tunables import CHALLENGE_REACH, SERVER
from bot.ui.client import commands_hash
from bot.ui.commands_i18n import CommandTranslator, own_catalog, problem
from engine.levels import DEFAULT_LEVEL, get_level

CATALOGS = sorted(i18n.available())
DISCORD_LOCALES = {locale.value for locale in discord.Locale}


def discord_locale(catalog: str) -> str:
    return catalog.replace("_", "-")


def command_tree() -> app_commands.CommandTree[Any]:
    """The bot's slash commands in a tree of their own (no service: nothing runs)."""
    tree: app_commands.CommandTree[Any] = app_commands.CommandTree(
        discord.Client(intents=discord.Intents.none())
    )
    games = Games(None, None, None)  # type: ignore[arg-type]
    stop = Stop(None, None)  # type: ignore[arg-type]
    cogs = (games, stop, Stats(None), ServerSettings(None), Privacy(None), Help())  # type: ignore[arg-type]
    for cog in cogs:
        for command in cog.get_app_commands():
            tree.add_command(command)
    tree.add_command(games.menu)
    return tree


def slash_commands() -> list[app_commands.Command[Any, ..., Any]]:
    return [c for c in command_tree().walk_commands() if isinstance(c, app_commands.Command)]


def valid_name(text: str) -> bool:
    """Discord's ``^[-_'\\p{L}\\p{N}\\p{sc=Deva}\\p{sc=Thai}]{1,32}$``, lower case (the
    apostrophe left out: the API refuses it, discord/discord-api-docs#7371)."""

    def allowed(char: str) -> bool:
        scripts = 0x0900 <= ord(char) <= 0x097F or 0x0E00 <= ord(char) <= 0x0E7F
        return char in "-_" or unicodedata.category(char)[0] in "LN" or scripts

    return 1 <= len(text) <= 32 and text == text.lower() and all(map(allowed, text))


def shown(translator: CommandTranslator, text: str, locale: str, where: Where) -> str:
    """What a user of ``locale`` sees: the translation, else the English."""
    return translator.localize(text, locale, where) or text


@pytest.mark.parametrize("name", CATALOGS)
def test_every_catalog_is_a_discord_locale(name: str) -> None:
    """Else its command translations would never be asked for."""
    assert discord_locale(name) in DISCORD_LOCALES


@pytest.mark.parametrize("name", CATALOGS)
def test_every_localized_command_keeps_discords_rules(name: str) -> None:
    locale, translator, wrong = discord_locale(name), CommandTranslator(), []
    for command in slash_commands():
        for text, where in (
            (command.name, Where.command_name),
            (command.description, Where.command_description),
        ):
            seen = shown(translator, text, locale, where)
            if where is Where.command_name and not valid_name(seen):
                wrong.append(f"command name {seen!r}")
            if where is Where.command_description and not 1 <= len(seen) <= 100:
                wrong.append(f"{command.name} description of {len(seen)} characters")
        options = []
        for parameter in command.parameters:
            option = shown(translator, parameter.display_name, locale, Where.parameter_name)
            options.append(option)
            if not valid_name(option):
                wrong.append(f"{command.name}: option name {option!r}")
            about = shown(translator, parameter.description, locale, Where.parameter_description)
            if not 1 <= len(about) <= 100:
                wrong.append(f"{command.name} {option}: description of {len(about)} characters")
            for choice in parameter.choices:
                label = shown(translator, choice.name, locale, Where.choice_name)
                if not 1 <= len(label) <= 100:
                    wrong.append(f"{command.name} {option}: choice {label!r}")
        if len(set(options)) != len(options):
            wrong.append(f"{command.name}: option names repeat: {options}")
    assert not wrong, f"{name}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("name", CATALOGS)
def test_the_time_bounds_survive_translation(name: str) -> None:
    """Each time option's description ends with its bounds as typed ("(30s-1d)") and an
    example in the same form; a translation keeps both, letters included (they are what
    a moderator types, in any language)."""
    # Each server setting is the option of its own name (turn_timeout shows as turn_clock).
    parameters = {p.name: p for c in slash_commands() for p in c.parameters}
    for setting in (setting for setting in SERVER if not setting.whole):
        low, high = (typed(seconds) for seconds in setting.bounds)
        english = parameters[setting.name].description
        assert english.endswith(f"({low}-{high})"), english
        example = english.split("such as ")[1].split(" ")[0].rstrip(",")
        assert parse_duration(example) > 0
        text = shown(
            CommandTranslator(), english, discord_locale(name), Where.parameter_description
        )
        assert f"{low}-{high}" in text and example in text, text
    reach = parameters["challenge_reach"].description
    assert reach.endswith(f"({CHALLENGE_REACH.low:g}-{CHALLENGE_REACH.high:g})"), reach


def typed(seconds: float) -> str:
    """The largest unit that divides ``seconds``: 30s, 1h, 1d."""
    for letter, size in UNITS:
        if seconds and seconds % size == 0:
            return f"{seconds // size:g}{letter}"
    return "0s"


def test_the_english_texts_name_what_the_code_does() -> None:
    (tictactoe,) = [c for c in slash_commands() if c.name == "tictactoe"]
    parameters = {p.name: p for p in tictactoe.parameters}
    assert f"(default {DEFAULT_LEVEL})" in parameters["difficulty"].description
    assert {choice.value for choice in parameters["first"].choices} == {f.value for f in First}
    assert set(FIRST_NAMES) == set(First)


def test_the_rules_of_the_translator_agree_with_discords() -> None:
    for good in ("größe", "tictactoe-設定", "время_на_ход", "खेल", "เกม", "x" * 32):
        assert problem(good, Where.parameter_name) is None and valid_name(good), good
    for bad in ("Größe", "two words", "x" * 33, "", "isn't", "a/b"):
        assert problem(bad, Where.command_name) is not None and not valid_name(bad), bad
    assert problem("Two Words, fine.", Where.choice_name) is None
    assert problem("x" * 101, Where.command_description) is not None


def test_only_a_locales_own_catalog_answers_and_never_with_the_english() -> None:
    translator = CommandTranslator()
    assert translator.localize("tictactoe-stop", "de", Where.command_name) == "tictactoe-abbrechen"
    leaderboard = "tictactoe-leaderboard"
    assert translator.localize(leaderboard, "ru", Where.command_name) == "tictactoe-таблица-лидеров"
    assert translator.localize("tictactoe-stats", "ja", Where.command_name) == "tictactoe-戦績"
    assert translator.localize("tictactoe", "de", Where.command_name) is None  # the same
    assert translator.localize(leaderboard, "en-US", Where.command_name) is None
    for other in ("en-GB", "de-AT", "fi"):  # no catalog of their own: Discord shows English
        assert own_catalog(other) is None
        assert translator.localize(leaderboard, other, Where.command_name) is None


def test_a_difficulty_choice_is_translated_term_and_description() -> None:
    translator = CommandTranslator()
    description = get_level("easy").description
    label = f"easy — {description}"
    for locale in ("ru", "de", "ja"):
        catalog = i18n.translator(locale)
        expected = f"{catalog.gettext('easy')} — {catalog.gettext(description)}"
        assert translator.localize(label, locale, Where.choice_name) == expected
    # A translation too long for a choice is cut at a word, to Discord's 100 characters.
    wordy = edited("de", {description: "Spielt locker und übersieht viele deiner Drohungen, " * 3})
    cut = CommandTranslator(lambda locale: wordy).localize(label, "de", Where.choice_name)
    assert cut is not None and len(cut) <= 100 and cut.endswith(" viele…"), cut  # at a word


def edited(name: str, changes: dict[str, str]) -> i18n.Translator:
    """The shipped catalog ``name`` with some entries changed, compiled in memory."""
    with (i18n.LOCALES / name / "LC_MESSAGES" / f"{i18n.DOMAIN}.po").open("rb") as po:
        catalog = read_po(po, locale=name)
    for msgid, text in changes.items():
        entry = catalog.get(msgid)
        assert entry is not None, msgid
        entry.string = text
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return i18n.Translator(name, Translations(compiled, domain=i18n.DOMAIN))


def translator_with(name: str, changes: dict[str, str]) -> CommandTranslator:
    catalog = edited(name, changes)
    locale = discord_locale(name)
    return CommandTranslator(lambda asked: catalog if asked == locale else own_catalog(asked))


async def test_a_translation_that_breaks_the_rules_is_not_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    translator = translator_with("de", {"size": "Brett Größe"})
    context: Any = TranslationContext(location=Where.parameter_name, data=None)
    with caplog.at_level(logging.WARNING, logger="bot.ui.commands_i18n"):
        sent = await translator.translate(locale_str("size"), discord.Locale.german, context)
    assert sent is None
    assert "'Brett Größe'" in caplog.text and "lower case" in caplog.text


async def digest(translator: app_commands.Translator | None) -> str:
    tree = command_tree()
    await tree.set_translator(translator)
    return await commands_hash(tree, 1234)


async def test_the_sync_fingerprint_follows_the_translations_and_nothing_else() -> None:
    shipped = await digest(CommandTranslator())
    assert await digest(CommandTranslator()) == shipped  # a new tree, a new translator
    assert await digest(translator_with("de", {})) == shipped  # the same catalog, rebuilt
    description = "Stop the game in this channel (players or moderators)."
    changed = translator_with("de", {description: "Beendet die Partie in diesem Kanal."})
    assert await digest(changed) != shipped
    renamed = await digest(translator_with("ja", {"member": "だれ"}))
    assert renamed not in (shipped, await digest(changed))
    assert await digest(None) != shipped  # no translations at all
    menu = await digest(translator_with("ru", {"Challenge to tic-tac-toe": "Вызвать на партию"}))
    assert menu != shipped  # the member menu's name is covered too


@pytest.mark.parametrize("name", CATALOGS)
def test_the_member_menu_keeps_discords_rules(name: str) -> None:
    """A context menu's name is 1 to 32 characters of any kind (spaces and capitals too)."""
    (menu,) = command_tree().get_commands(type=discord.AppCommandType.user)
    seen = shown(CommandTranslator(), menu.name, discord_locale(name), Where.command_name)
    assert 1 <= len(seen) <= 32, seen
    assert problem(seen, Where.command_name, menu=True) is None
