"""Every kind of message, drawn in every shipped language, fits Discord's limits.

The worst cases: 5 x 5 boards, the longest level description, the longest snowflakes in
every mention, the biggest numbers a field can hold, every status of a game and of a
challenge, full pages. A V2 message holds at most 4000 characters of text and 40
components; a plain message (``content``: reviews, refusals, pings) 2000 characters; a
button's label 80.
"""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Iterator
from typing import Any

import pytest
from babel.messages.pofile import read_po
from discord import ui

from bot import i18n
from bot.games import render, render_end
from bot.games.servers import BOUNDS, MAX_CHANNELS, Choices
from bot.games.views import (
    board_view,
    challenge_view,
    forfeit_view,
    text_view,
)
from bot.i18n import Translator, translator
from bot.models import (
    Change,
    Game,
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
from bot.stats.service import RECENT_GAMES
from bot.stats.views import leaderboard_view
from bot.tunables import SERVER, Values
from engine import Mark
from engine.levels import LEVELS
from tests.bot import samples
from tests.bot.samples import (
    ALICE,
    BIG,
    BOB,
    MANY,
    NOW,
    REVIEW_KINDS,
    every_challenge,
    game,
    review_of,
)
from tests.bot.test_render import MAX_COMPONENTS, MAX_TEXT, check_limits, walk

MAX_CONTENT = 2000
MAX_LABEL = 80
LOCALES = sorted(name.replace("_", "-") for name in i18n.available())


def longest_level() -> str:
    def width(name: str) -> int:
        return max(len(render.level_text(name, translator(locale))) for locale in LOCALES)

    return max(LEVELS, key=width)


def every_game(locale: str) -> Iterator[Game]:
    return samples.every_game(locale, (None, longest_level()))


def labels(view: ui.View | ui.LayoutView) -> list[str]:
    return [c["label"] for c in walk(view.to_components()) if "label" in c]


def check_labels(view: ui.View | ui.LayoutView) -> None:
    for label in labels(view):
        assert 1 <= len(label) <= MAX_LABEL, label


def check_v2(view: ui.LayoutView) -> None:
    check_limits(view)
    check_labels(view)


def check_content(text: str) -> None:
    assert 1 <= len(text) <= MAX_CONTENT, text


@pytest.fixture(params=LOCALES)
def locale(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture()
def t(locale: str) -> Translator:
    return translator(locale)


def test_boards(locale: str, t: Translator) -> None:
    for item in every_game(locale):
        view = board_view(item)
        check_v2(view)
        assert view.content_length() <= MAX_TEXT and view.total_children_count <= MAX_COMPONENTS
        if item.is_live and not item.is_bot_game:
            for reminder in (False, True):
                check_content(turn_ping_text(item, t, reminder=reminder))


def test_challenges(locale: str) -> None:
    for challenge in every_challenge(locale):
        check_v2(challenge_view(challenge))


def test_a_full_leaderboard_page(t: Translator) -> None:
    entries = tuple(
        LeaderboardEntry(
            rank=MANY + i,
            user_id=BIG - i,
            rating=99_999.0,
            record=Record(MANY, MANY, MANY),
            provisional=True,
        )
        for i in range(10)
    )
    last = 99_999  # /leaderboard's page option stops at 100,000
    page = LeaderboardPage(entries=entries, page=last, pages=last, total_players=MANY)
    check_v2(leaderboard_view(page, t))
    check_v2(leaderboard_view(LeaderboardPage((), 1, 1, 0), t))


def test_stats(locale: str, t: Translator) -> None:
    recent = tuple(
        game(locale, status=GameStatus.FINISHED, result=Result.WIN, winner=Mark.O, moves=25)
        for _ in range(RECENT_GAMES)
    )
    stats = PlayerStats(
        guild_id=BIG,
        user_id=BIG,
        rating=99_999.0,
        provisional=True,
        rank=MANY,
        versus_members=Record(MANY, MANY, MANY),
        versus_bot=tuple(LevelRecord(name, Record(MANY, MANY, MANY)) for name in LEVELS),
        current_streak=-MANY,
        best_streak=MANY,
        recent=recent,
    )
    check_v2(text_view(stats_text(stats, t)))


@pytest.mark.parametrize("kind", REVIEW_KINDS)
def test_reviews_of_a_full_5x5_board(kind: str, locale: str, t: Translator) -> None:
    played = game(locale, status=GameStatus.FINISHED, result=Result.DRAW, moves=25)
    review = review_of(played, kind)
    check_content(review_text(played, review, t))


def test_stopping_and_calling_off(locale: str, t: Translator) -> None:
    live = game(locale)
    aborted = dataclasses.replace(live, moves=())
    bot = game(locale, level="easy")
    for asked in (live, aborted, bot):
        check_labels(forfeit_view(asked, NOW, t))
        check_content(render_end.forfeit_question_text(asked, NOW, t))
    check_content(render_end.forfeit_done_text(aborted, t))
    check_content(render_end.lapses_text(NOW, t))
    check_labels(calloff_view(live))
    check_labels(calloff_view(live, closed=True))
    check_content(render.stopped_text(ALICE, t))
    check_content(calloff_text(live, ALICE, BOB, t))
    for agreed in (True, False):
        check_content(calloff_answer_text(agreed, BOB, t))


def test_erasure(t: Translator) -> None:
    player = PlayerRow(99_999.0, MANY, Record(MANY, MANY, MANY), MANY, MANY, MANY)
    member = MemberData(player, bot_levels=len(LEVELS), ended_games=MANY, challenges=MANY)
    server = GuildData(games=MANY, challenges=MANY, players=MANY, settings=MANY)
    for scope, question in (
        ("me", member_question(member, t)),
        ("server", guild_question(server, t)),
    ):
        check_v2(confirm_view(question, scope, BIG, t))
    withdrawn = tuple(range(3))  # only counted
    check_v2(text_view(member_done(dataclasses.replace(member, withdrawn=withdrawn), t)))  # type: ignore[arg-type]
    check_v2(text_view(guild_done(server, t)))


def test_the_settings_answer(t: Translator) -> None:
    longest = {name: high for name, (_, high) in BOUNDS.items()}
    channels = tuple(BIG - i for i in range(MAX_CHANNELS))
    settings = GuildSettings(channels=channels, numbers=Values(SERVER, **longest))
    for title in (i18n.N_("Tic-tac-toe on this server"), i18n.N_("Saved. The settings now:")):
        check_content(settings_text(settings, title, t))
    # A reset after the longest settings: every value marked, old → new.
    check_content(settings_text(GuildSettings(), i18n.N_("Saved. The settings now:"), t, settings))


def test_the_preferences_answer(t: Translator) -> None:
    on, off = Choices(True, True), Choices(False, False)
    for change in (Change(on, off), Change(off, on)):
        check_v2(preferences_view(change, samples.BIG, choices_title(change, True), t))


def fill(text: str) -> str:
    """``text`` with every field filled by 60 characters: more than any value we show."""
    names = {name for _, name, _, _ in string.Formatter().parse(text) if name}
    return text.format(**{name: "x" * 60 for name in names})


@pytest.mark.parametrize("name", sorted(i18n.available()))
def test_every_translation_fits_a_message_once_filled(name: str) -> None:
    """Refusals and other one-line answers are single catalog entries: each, filled with
    long values, must fit a plain message."""
    path = i18n.LOCALES / name / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"
    with path.open("rb") as po:
        entries = [entry for entry in read_po(po, locale=name) if entry.id and entry.string]
    assert entries
    for entry in entries:
        forms: Any = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        for form in filter(None, forms):  # an empty one fails the completeness test
            check_content(fill(form))


def test_every_difficulty_choice_shows_its_whole_description(t: Translator) -> None:
    """A choice's name holds 100 characters; a longer "level — description" is cut."""
    for level in LEVELS:
        assert len(render.level_text(level, t)) <= 100, render.level_text(level, t)
