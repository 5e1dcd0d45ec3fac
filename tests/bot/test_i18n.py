"""The catalogs against the code: every marked text translated everywhere, with the
same placeholders; the choice of catalog for a Discord locale; plural forms."""

from __future__ import annotations

import ast
import string
from pathlib import Path
from typing import Any

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po
from babel.util import pathmatch

from bot import i18n
from bot.app import GameService
from bot.errors import GameError, NotYourTurn, ReviewCooldown, TooManyGames
from bot.games.rules import too_many_games
from bot.models import Challenge, GuildSettings
from bot.tunables import SERVER, Values

from .shown import shown

ROOT = Path(__file__).resolve().parents[2]
CATALOGS = sorted(i18n.available())
MsgId = str | tuple[str, str]


def babel_mapping() -> tuple[Any, Any]:
    """Which files pybabel reads, as babel.cfg says (README's extract command uses it)."""
    with (ROOT / "babel.cfg").open() as config:
        return parse_mapping_cfg(config)


def marked_in_code() -> dict[MsgId, str]:
    """Every text the code marks (N_, Nn_, gettext..., and locale_str for the slash
    commands), as pybabel extract finds it with README's keywords (``i18n.KEYWORDS``)."""
    keywords = {**DEFAULT_KEYWORDS, **i18n.KEYWORDS}
    method_map, options_map = babel_mapping()
    found = extract_from_dir(ROOT, method_map, options_map, keywords=keywords)
    return {message: f"{path}:{line}" for path, line, message, _, _ in found}


def catalog(name: str) -> Catalog:
    with (i18n.LOCALES / name / "LC_MESSAGES" / f"{i18n.DOMAIN}.po").open("rb") as po:
        return read_po(po, locale=name)


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_the_shipped_catalogs_include_english_and_a_non_latin_script() -> None:
    assert {"en_US", "de", "ru", "ja"} <= set(CATALOGS)


def test_the_code_marks_texts() -> None:
    """Guards the extraction itself: were it to find nothing, the next test would pass."""
    marked = marked_in_code()
    assert "It's not your turn." in marked
    assert any(isinstance(message, tuple) for message in marked)  # Nn_ is extracted
    assert "tictactoe-stop" in marked  # and locale_str, the command texts


def test_every_marker_in_the_code_is_extracted() -> None:
    """pybabel skips a marker it cannot read: one inside an f-string (Python 3.11
    tokenizes an f-string as one string) or one whose text is not a literal. Such a text
    would silently stay English; the syntax tree sees every call."""
    method_map, _ = babel_mapping()
    extracted = set(marked_in_code())
    missed = []
    for source in sorted(ROOT.glob("*/**/*.py")):
        relative = source.relative_to(ROOT).as_posix()
        if not any(pathmatch(pattern, relative) for pattern, _ in method_map):
            continue
        for node in ast.walk(ast.parse(source.read_text(), relative)):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            count = {"N_": 1, "Nn_": 2}.get(node.func.id)
            if count is None:
                continue
            texts = node.args[:count]
            if not all(isinstance(arg, ast.Constant) for arg in texts):
                missed.append(f"{relative}:{node.lineno}: not a literal")
                continue
            values = tuple(arg.value for arg in texts)  # type: ignore[attr-defined]
            if (values[0] if count == 1 else values) not in extracted:
                missed.append(f"{relative}:{node.lineno}: {values[0]!r} not extracted")
    assert not missed, "\n".join(missed)


@pytest.mark.parametrize("name", ["bot.pot", *CATALOGS])
def test_no_catalog_keeps_a_text_the_code_no_longer_has(name: str) -> None:
    """A text removed from the code must leave the template and the catalogs too, or
    translators keep translating it (pybabel update marks it obsolete)."""
    if name == "bot.pot":
        with (i18n.LOCALES / name).open("rb") as template:
            entries = read_po(template)
    else:
        entries = catalog(name)
    marked = {m[0] if isinstance(m, tuple) else m for m in marked_in_code()}
    keys = (entry.id[0] if isinstance(entry.id, tuple) else entry.id for entry in entries)
    stale = sorted(key for key in keys if key and key not in marked)
    stale += [f"obsolete: {key!r}" for key in entries.obsolete]
    assert not stale, f"{name}:\n" + "\n".join(stale)


@pytest.mark.parametrize("name", CATALOGS)
def test_every_marked_text_is_translated(name: str) -> None:
    entries = catalog(name)
    missing = []
    for message, where in marked_in_code().items():
        key = message[0] if isinstance(message, tuple) else message
        entry = entries.get(key)
        forms = entry.string if entry is not None else ""
        texts = forms if isinstance(forms, tuple) else (forms,)
        if entry is None or entry.fuzzy or not all(texts):
            missing.append(f"{where}: {key!r}")
        elif isinstance(message, tuple) and entry.id != message:
            missing.append(f"{where}: plural of {key!r} changed; run pybabel update")
    assert not missing, f"{name}:\n" + "\n".join(missing)


@pytest.mark.parametrize("name", CATALOGS)
def test_translations_keep_the_placeholders(name: str) -> None:
    """``{n}`` may be left out of a plural form (German says "eine Partie"); the plural
    test below checks that every count still shows."""
    wrong = []
    for entry in catalog(name):
        if not entry.id or not entry.string:
            continue
        english = entry.id if isinstance(entry.id, tuple) else (entry.id,)
        forms = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        expected = set().union(*(fields(text) for text in english))
        plural = isinstance(entry.id, tuple)
        for form in forms:
            got = fields(form)
            right = got <= expected and expected - {"n"} <= got if plural else got == expected
            if not right:
                wrong.append(f"{entry.id!r}: {form!r} has {sorted(got)}, not {sorted(expected)}")
    assert not wrong, f"{name}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("name", CATALOGS)
def test_every_count_shows_in_every_plural_form(name: str) -> None:
    """The form a catalog picks for any count other than one names that count."""
    reader = i18n.translator(name)
    for message in marked_in_code():
        if not isinstance(message, tuple):
            continue
        for n in range(101):
            text = reader(i18n.Nn_(*message, n, links="L", member="M", command="C"))
            assert n == 1 or str(n) in text, (name, n, text)


@pytest.mark.parametrize(
    ("locale", "have", "chosen"),
    [
        ("pt-BR", {"pt_BR", "pt_PT", "en_US"}, "pt_BR"),  # the exact locale
        ("es-419", {"es_ES", "en_US"}, "es_ES"),  # the same language
        ("es-ES", {"es", "es_419", "en_US"}, "es"),  # the language's own catalog first
        ("zh-TW", {"zh_CN", "en_US"}, "zh_CN"),
        ("en-GB", {"en_US", "de"}, "en_US"),
        ("fi", {"de", "en_US"}, "en_US"),  # none of that language: English
        (None, {"de", "en_US"}, "en_US"),  # nobody known (a background message)
    ],
)
def test_a_locale_falls_back_to_its_language_then_english(
    locale: str | None, have: set[str], chosen: str
) -> None:
    assert i18n.catalog_for(locale, frozenset(have)) == chosen


def test_a_reader_gets_their_language() -> None:
    assert shown(NotYourTurn(), "de") == "Du bist nicht am Zug."
    assert shown(NotYourTurn(), "ja") == "あなたの番ではありません。"
    assert shown(NotYourTurn(), "fi") == "It's not your turn."
    assert str(NotYourTurn()) == "It's not your turn."  # logs stay in English


def test_placeholders_are_filled_after_translation() -> None:
    error = ReviewCooldown(1000.5)
    assert shown(error, "ru") == "Следующий разбор можно запросить <t:1001:R>."
    assert shown(error) == "You can ask for another review <t:1001:R>."


def test_an_unmarked_message_is_shown_as_it_is() -> None:
    """Texts not yet marked for translation stay English rather than disappear."""
    error = TooManyGames("Something not in any catalog {with braces}.")
    assert shown(error, "de") == "Something not in any catalog {with braces}."


@pytest.mark.parametrize(
    ("n", "word"), [(1, "партию"), (2, "партии"), (5, "партий"), (11, "партий"), (21, "партию")]
)
def test_russian_has_its_three_plural_forms(n: int, word: str) -> None:
    error = too_many_games(7, 7, [], GuildSettings(numbers=Values(SERVER, games_per_member=n)))
    assert shown(error, "ru") == (
        f"Вы уже играете {n} {word} на этом сервере — больше здесь нельзя: ."
    )


def test_english_says_a_game_for_one() -> None:
    one = too_many_games(7, 7, [], GuildSettings(numbers=Values(SERVER, games_per_member=1)))
    three = too_many_games(8, 7, [], GuildSettings(numbers=Values(SERVER, games_per_member=3)))
    assert shown(one) == "You're already in a game on this server: ."
    assert shown(three, "en-US").startswith("<@8> is already in 3 games")


def test_a_setting_name_inside_a_refusal_is_translated_too() -> None:
    """A field holding a Message (the setting's name) follows the reader's language."""
    from bot.errors import InvalidSettings
    from bot.games.servers import label

    error = InvalidSettings(i18n.N_("{setting} must be a number.", setting=label("turn_timeout")))
    assert str(error) == "The turn clock must be a number."
    assert shown(error, "de") == "Die Zugzeit: Das muss eine Zahl sein."
    assert shown(error, "ja") == "持ち時間は数値で指定してください。"


def test_service_refusals_follow_the_reader() -> None:
    from bot.errors import AlreadyPlaying
    from bot.games import rules
    from bot.refs import Place

    with pytest.raises(GameError) as caught:
        rules.validate_options(9, 3, 3)
    assert str(caught.value) == "The board width must be from 3 to 5, not 9."
    assert shown(caught.value, "ru") == "Ширина доски должна быть от 3 до 5, а не 9."
    busy = AlreadyPlaying.in_game(5, 7, Place(1, 2, 3))
    assert shown(busy, "de") == (
        "<@5> spielt in diesem Kanal schon eine Partie: https://discord.com/channels/1/2/3"
    )


def test_the_settings_answer_is_in_the_askers_language() -> None:
    from bot.servers.cog import settings_text

    settings = GuildSettings(reviews=False, numbers=Values(SERVER, turn_timeout=90.0))
    title = i18n.N_("Tic-tac-toe on this server")
    english = settings_text(settings, title, i18n.translator("en-US"))
    assert "Turn clock: 1 min 30 s" in english and "Review: not offered" in english
    russian = settings_text(settings, title, i18n.translator("ru"))
    assert "Время на ход: 1 мин 30 с" in russian and "Разбор: выключен" in russian
    assert russian.startswith("**Крестики-нолики на этом сервере**")


async def test_a_game_keeps_its_servers_locale(service: GameService) -> None:
    """Shared messages are drawn from the stored locale: the sweep and the turn pings have
    no interaction to ask. An accepted challenge passes its locale on; a rematch takes
    the one its click came with, else the old game's."""
    guild, channel, alice, bob = 1, 2, 10, 20
    challenge = await service.challenges.create(guild, channel, alice, bob, locale="ja")
    assert (await service.challenges.get(challenge.id)).locale == "ja"
    game = await service.challenges.accept(challenge.id, bob)
    assert game.locale == "ja" and (await service.get_game(game.id)).locale == "ja"
    ended = await service.endings.forfeit(game.id, alice)
    rematch = await service.rematch(ended.id, alice)
    assert isinstance(rematch, Challenge) and rematch.locale == "ja"
    await service.challenges.decline(rematch.id, bob)
    again = await service.rematch(ended.id, bob, locale="pt-BR")
    assert isinstance(again, Challenge) and again.locale == "pt-BR"
    await service.challenges.withdraw(again.id, bob)
    solo = await service.start_bot_game(guild, channel, alice, level="easy", locale="uk")
    assert (await service.get_game(solo.id)).locale == "uk"


def test_a_catalog_is_found_and_loaded_once_per_locale() -> None:
    """Every message drawn starts with a lookup: it must not search or read the disk."""
    assert i18n.translator("de") is i18n.translator("de")
    assert i18n.translator("pt-BR").translations is i18n.translator("pt-BR").translations
    assert i18n.available() is i18n.available()
