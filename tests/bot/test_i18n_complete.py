"""Every text that reaches Discord goes through the catalogs.

A pseudo-locale (``en-XA``) is made here from the English catalog, every translation
turned into fullwidth letters (``Ｙｏｕｒ ｍｏｖｅ``), its ``{fields}`` kept. Every kind of
message is drawn for a reader of it, through the same ``translator`` lookup as in play;
any run of plain Latin letters left in the result is English that skipped the catalogs.
Refusals are checked where they are raised: every ``GameError`` the code builds carries a
marked text.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import discord
import pytest
from babel.messages.pofile import read_po, write_po
from discord import ui

from bot import errors, i18n
from bot.games import render, render_end
from bot.games.help import Help, help_text
from bot.games.servers import BOUNDS, Choices
from bot.games.views import (
    board_view,
    challenge_view,
    forfeit_view,
    text_view,
)
from bot.i18n import Message, Translator, translator
from bot.models import (
    Change,
    GameStatus,
    GuildData,
    GuildSettings,
    LeaderboardEntry,
    LeaderboardPage,
    LevelRecord,
    MemberData,
    PlayerRow,
    PlayerStats,
    Record,
    Result,
)
from bot.pings.render import calloff_answer_text, calloff_text, turn_ping_text
from bot.pings.views import calloff_view
from bot.privacy.render import guild_done, guild_question, member_done, member_question
from bot.privacy.views import confirm_view
from bot.servers.cog import settings_text
from bot.servers.preferences import choices_title, preferences_view
from bot.stats.render import stats_text
from bot.stats.render_review import review_text
from bot.stats.views import leaderboard_view
from bot.tunables import SERVER, Values
from bot.ui.commands_i18n import CommandTranslator
from bot.ui.refs import for_discord
from engine import Mark
from engine.levels import LEVELS
from tests.bot.samples import (
    ALICE,
    BIG,
    BOB,
    NOW,
    REVIEW_KINDS,
    every_challenge,
    every_game,
    game,
    review_of,
)
from tests.bot.test_command_i18n import command_tree
from tests.bot.test_render import walk

PSEUDO = "en-XA"
ROOT = Path(__file__).resolve().parents[2]
_FULLWIDTH = str.maketrans(
    string.ascii_letters,
    "".join(chr(ord(c) - ord("a") + 0xFF41) for c in string.ascii_lowercase)
    + "".join(chr(ord(c) - ord("A") + 0xFF21) for c in string.ascii_uppercase),
)
_FIELD = re.compile(r"(\{[^{}]*\})")
_ENGLISH = re.compile(r"[A-Za-z]{2,}")
_NOT_PROSE = re.compile(r"https://\S+|<t:\d+:[A-Za-z]>")
"""Links and Discord's timestamps: the reader's client writes those in their language."""


def pseudo(text: str) -> str:
    parts = _FIELD.split(text)
    return "".join(part if i % 2 else part.translate(_FULLWIDTH) for i, part in enumerate(parts))


@pytest.fixture(scope="module")
def t(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Translator]:
    """The pseudo-locale's texts; while the module runs, it is the only catalog shipped."""
    with (i18n.LOCALES / "en_US" / "LC_MESSAGES" / f"{i18n.DOMAIN}.po").open("rb") as po:
        catalog = read_po(po, locale="en_US")
    for message in catalog:
        if message.id:
            forms = message.string if isinstance(message.string, tuple) else (message.string,)
            transformed = tuple(pseudo(form) for form in forms)
            message.string = transformed if isinstance(message.id, tuple) else transformed[0]
    root = tmp_path_factory.mktemp("locales")
    folder = root / PSEUDO.replace("-", "_") / "LC_MESSAGES"
    folder.mkdir(parents=True)
    with (folder / f"{i18n.DOMAIN}.po").open("wb") as po:
        write_po(po, catalog)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(i18n, "LOCALES", root)
        i18n.available.cache_clear()
        i18n.translator.cache_clear()
        try:
            yield translator(PSEUDO)
        finally:
            i18n.available.cache_clear()
            i18n.translator.cache_clear()


def english_in(text: str) -> list[str]:
    return _ENGLISH.findall(_NOT_PROSE.sub("", text))


def check(*texts: str) -> None:
    for text in texts:
        assert text
        assert not english_in(text), f"English left in {text!r}: {english_in(text)}"


def check_view(view: ui.View | ui.LayoutView) -> None:
    shown = [c.get("content") or c.get("label") for c in walk(view.to_components())]
    check(*(text for text in shown if text))


def test_the_pseudo_locale_is_read_through_the_lookup(t: Translator) -> None:
    assert t.locale == PSEUDO.replace("-", "_")
    assert english_in("It's not your turn.") and not english_in(t(errors.NotYourTurn().message))


def test_the_check_catches_english() -> None:
    with pytest.raises(AssertionError, match="English left"):
        check(pseudo("Your move, {player}.").format(player="<@1>") + " (rated)")


def test_boards_and_turn_pings(t: Translator) -> None:
    for item in every_game(PSEUDO, (None, *LEVELS)):
        check_view(board_view(item))
        if item.is_live and not item.is_bot_game:
            check(turn_ping_text(item, t), turn_ping_text(item, t, reminder=True))


def test_challenges(t: Translator) -> None:
    for challenge in every_challenge(PSEUDO):
        check_view(challenge_view(challenge))


def test_the_leaderboard_and_stats(t: Translator) -> None:
    entry = LeaderboardEntry(1, ALICE, 1500.0, Record(3, 2, 1), provisional=True)
    check_view(leaderboard_view(LeaderboardPage((entry,), 1, 2, 11), t))
    check_view(leaderboard_view(LeaderboardPage((), 1, 1, 0), t))
    check_view(leaderboard_view(LeaderboardPage((entry,), 2, 2, 11, past=5), t))
    recent = (
        game(PSEUDO, status=GameStatus.FINISHED, result=Result.WIN, winner=Mark.O, moves=25),
        game(PSEUDO, level="easy", status=GameStatus.FINISHED, result=Result.DRAW, moves=25),
    )
    for streak in (-2, 0, 3):
        stats = PlayerStats(
            guild_id=BIG,
            user_id=ALICE,
            rating=1500.0,
            provisional=streak == 0,
            rank=None if streak == 0 else 4,
            versus_members=Record(1, 2, 3),
            versus_bot=tuple(LevelRecord(name, Record(1, 0, 2)) for name in LEVELS),
            current_streak=streak,
            best_streak=3,
            recent=recent if streak else (),
        )
        check_view(text_view(stats_text(stats, t)))


@pytest.mark.parametrize("kind", REVIEW_KINDS)
def test_reviews(kind: str, t: Translator) -> None:
    played = game(PSEUDO, status=GameStatus.FINISHED, result=Result.DRAW, moves=25)
    check(review_text(played, review_of(played, kind), t))


def test_stopping_and_calling_off(t: Translator) -> None:
    live = game(PSEUDO)
    aborted = dataclasses.replace(live, moves=())
    bot = game(PSEUDO, level="easy")
    for asked in (live, aborted, bot):
        check_view(forfeit_view(asked, NOW, t))
        check(render_end.forfeit_question_text(asked, NOW, t))
    check(render_end.forfeit_done_text(aborted, t), render_end.lapses_text(NOW, t))
    check_view(calloff_view(live))
    check_view(calloff_view(live, closed=True))
    check(render.stopped_text(ALICE, t), calloff_text(live, ALICE, BOB, t))
    check(calloff_answer_text(True, BOB, t), calloff_answer_text(False, BOB, t))


def test_erasure(t: Translator) -> None:
    player = PlayerRow(1500.0, 2, Record(1, 2, 3), 1, 2, 3)
    member = MemberData(player, bot_levels=2, ended_games=5, challenges=1, withdrawn=())
    server = GuildData(games=5, challenges=1, players=2, settings=1)
    check_view(confirm_view(member_question(member, t), "me", ALICE, t))
    check_view(confirm_view(guild_question(server, t), "server", ALICE, t))
    withdrawn = dataclasses.replace(member, withdrawn=(1, 2))  # type: ignore[arg-type]
    check(member_done(member, t), member_done(withdrawn, t), guild_done(server, t))


def test_the_settings(t: Translator) -> None:
    for channels in ((), (BIG, BIG - 1)):
        settings = GuildSettings(channels=channels)
        for title in (i18n.N_("Tic-tac-toe on this server"), i18n.N_("Saved. The settings now:")):
            check(settings_text(settings, title, t))
    longest = {name: high for name, (_, high) in BOUNDS.items()}
    most = GuildSettings(numbers=Values(SERVER, **longest))
    check(settings_text(most, i18n.N_("Saved. The settings now:"), t))
    # What a change moved, marked; every value the other way too (reviews, notifications).
    least = GuildSettings(
        channels=(BIG,),
        reviews=False,
        turn_pings=False,
        numbers=Values(SERVER, challenge_cooldown=0),
    )
    check(settings_text(most, i18n.N_("Saved. The settings now:"), t, before=least))
    check(settings_text(least, i18n.N_("Nothing changed. The settings now:"), t, before=least))


def test_the_preferences(t: Translator) -> None:
    on, off = Choices(True, True), Choices(False, False)
    for change in (Change(on, on), Change(on, off), Change(off, on)):
        for asked in (False, True):
            check_view(preferences_view(change, ALICE, choices_title(change, asked), t))


def test_the_help(t: Translator) -> None:
    """Command names and descriptions too: the client shows them from the catalog."""
    tree = command_tree()
    names = CommandTranslator()
    commands = tree.get_commands(type=discord.AppCommandType.chat_input)
    text = help_text(commands, PSEUDO, t, names)  # type: ignore[arg-type]
    check(text)
    assert Help  # the cog that sends it


def test_every_message_constant(t: Translator) -> None:
    """Texts kept in module constants (refusals at the gate, the ended-on-time answer)."""
    found = 0
    for path in sorted((ROOT / "bot").rglob("*.py")):
        module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
        for value in vars(module).values():
            if isinstance(value, Message):
                found += 1
                check(t(value.__class__(value.singular, value.plural, value.n, _filled(value))))
    assert found > 10


def _filled(message: Message) -> dict[str, object]:
    names = {name for _, name, _, _ in string.Formatter().parse(message.singular) if name}
    return {name: "1" for name in names} | dict(message.params)


def _game_errors() -> dict[str, type[errors.GameError]]:
    return {
        name: kind
        for name, kind in vars(errors).items()
        if inspect.isclass(kind) and issubclass(kind, errors.GameError)
    }


def test_every_default_refusal(t: Translator) -> None:
    for kind in _game_errors().values():
        if "default_message" in vars(kind):
            check(t(for_discord(kind().message)))
    check(t(for_discord(errors.ReviewCooldown(NOW).message)))


def _marked(node: ast.expr, tree: ast.Module, module: Any) -> bool:
    """Whether ``node`` is a marked text: an ``N_``/``Nn_`` call, or a name bound to one
    (in the module, or to a ``Message`` once imported)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in ("N_", "Nn_")
    if isinstance(node, ast.IfExp):
        return _marked(node.body, tree, module) and _marked(node.orelse, tree, module)
    if isinstance(node, ast.Attribute) and node.attr == "message":
        return True  # another refusal's text, passed on: a GameError's message is marked
    if isinstance(node, ast.Name):
        if isinstance(getattr(module, node.id, None), Message):
            return True
        assigned = [
            a.value
            for a in ast.walk(tree)
            if isinstance(a, ast.Assign)
            and any(isinstance(target, ast.Name) and target.id == node.id for target in a.targets)
        ]
        return bool(assigned) and all(_marked(value, tree, module) for value in assigned)
    return False


def test_every_refusal_raised_carries_a_marked_text() -> None:
    """A ``GameError`` built with a plain string reaches every reader in English."""
    kinds = _game_errors()
    takes_message = {
        name
        for name, kind in kinds.items()
        if "message" in inspect.signature(kind.__init__).parameters
    }
    unmarked, seen = [], 0
    for path in sorted((ROOT / "bot").rglob("*.py")):
        relative = path.relative_to(ROOT)
        tree = ast.parse(path.read_text(), str(relative))
        module = importlib.import_module(".".join(relative.with_suffix("").parts))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name not in takes_message:
                continue
            given = node.args[:1] + [k.value for k in node.keywords if k.arg == "message"]
            for text in given:
                seen += 1
                if not _marked(text, tree, module):
                    unmarked.append(f"{relative}:{node.lineno}: {ast.unparse(text)}")
    assert seen > 20
    assert not unmarked, "\n".join(unmarked)
