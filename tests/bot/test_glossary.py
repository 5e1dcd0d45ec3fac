"""Each catalog's glossary (its header comment) and what it promises.

A glossary gives the one term for game, move, rating, leaderboard, rated, forfeit, draw
and challenge (``# rating = рейтинг``), notes for translators, and words to avoid
(``# Avoid: pontuação``). A command's localized name must not use a term the glossary
gives to something else (the Russian leaderboard command once read "рейтинг", a player's
rating), and no text may use a word to avoid.
"""

from __future__ import annotations

import re
from typing import Any

import discord
import pytest
from babel.messages.pofile import read_po
from discord.app_commands import TranslationContextLocation as Where

from bot import i18n
from bot.ui.commands_i18n import CommandTranslator
from tests.bot.test_command_i18n import CATALOGS, command_tree, discord_locale

CONCEPTS = ("game", "move", "rating", "leaderboard", "rated", "forfeit", "draw", "challenge")
ENTRY = re.compile(r"^# (?P<concept>[a-z]+) = (?P<term>\S.*)$")
AVOID = re.compile(r"^# Avoid: (?P<word>\S.*)$")
OWN_CONCEPT = {"tictactoe-leaderboard": "leaderboard", "Challenge to tic-tac-toe": "challenge"}
"""What a command is about: its name may use that concept's term (and only that one)."""


def header(name: str) -> tuple[dict[str, str], list[str], Any]:
    """The glossary, the words to avoid and the catalog of ``name``."""
    with (i18n.LOCALES / name / "LC_MESSAGES" / f"{i18n.DOMAIN}.po").open("rb") as po:
        catalog = read_po(po, locale=name)
    lines = catalog.header_comment.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# Glossary"))
    glossary, avoid = {}, []
    for line in lines[start + 1 :]:
        if found := ENTRY.match(line):
            glossary[found["concept"]] = found["term"].strip()
        elif found := AVOID.match(line):
            avoid.append(found["word"].strip())
    return glossary, avoid, catalog


def command_names(locale: str) -> dict[str, str]:
    """Every command's name (slash commands and the member menu) as ``locale`` shows it."""
    tree = command_tree()
    translator = CommandTranslator()
    names = {}
    for command in tree.get_commands(type=None):
        name = command.name
        names[name] = translator.localize(name, locale, Where.command_name) or name
    return names


def misused_terms(names: dict[str, str], glossary: dict[str, str]) -> list[str]:
    """Command names holding a term the glossary gives to another concept than theirs."""
    wrong = []
    for command, shown in names.items():
        seen = shown.lower().replace(" ", "-")
        for concept, term in glossary.items():
            if concept == OWN_CONCEPT.get(command):
                continue
            if term.lower().replace(" ", "-") in seen:
                wrong.append(f"{shown!r} ({command}) uses {term!r}, the term for {concept}")
    return wrong


@pytest.mark.parametrize("name", CATALOGS)
def test_every_catalog_has_a_glossary(name: str) -> None:
    glossary, _, _ = header(name)
    assert tuple(glossary) == CONCEPTS, glossary
    assert all(glossary.values())


@pytest.mark.parametrize("name", CATALOGS)
def test_command_names_keep_to_the_glossary(name: str) -> None:
    glossary, _, _ = header(name)
    names = command_names(discord_locale(name))
    assert set(OWN_CONCEPT) <= set(names)
    assert not misused_terms(names, glossary)


@pytest.mark.parametrize("name", CATALOGS)
def test_no_text_uses_a_word_to_avoid(name: str) -> None:
    _, avoid, catalog = header(name)
    found = []
    for entry in catalog:
        texts = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        for text in texts:
            found += [f"{word!r} in {text!r}" for word in avoid if word.lower() in text.lower()]
    assert not found


def test_the_check_catches_a_leaderboard_named_rating() -> None:
    """The Russian names as they were: the leaderboard command read "рейтинг"."""
    glossary, _, _ = header("ru")
    before = {"leaderboard": "рейтинг", "stats": "статистика"}
    assert misused_terms(before, glossary) == [
        "'рейтинг' (leaderboard) uses 'рейтинг', the term for rating"
    ]
    assert not misused_terms(command_names(discord.Locale.russian.value), glossary)
