"""Answers that say what happened: a settings or preferences answer marks each value a
change moved (``old → **new**``) and nothing else; the preferences carry a switch per
choice, for their member; a leaderboard page past the last says so."""

from __future__ import annotations

import dataclasses
from typing import Any

from discord import ButtonStyle

from bot.games.servers import Choices
from bot.i18n import N_, translator
from bot.models import Change, GuildSettings, LeaderboardEntry, LeaderboardPage, Record
from bot.servers.cog import settings_text
from bot.servers.preferences import choices_title, marked, preferences_view
from bot.stats.views import leaderboard_view
from bot.tunables import SERVER, Values
from bot.ui import ids
from tests.bot.test_render import check_limits

EN = translator(None)
ALICE = 111111111111111111
SAVED = N_("Saved. The settings now:")
ARROW = " → "


def changed_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if ARROW in line]


def test_marked_leaves_an_unchanged_value_alone() -> None:
    assert marked("5 min", "5 min") == "5 min"
    assert marked("5 min", "2 min") == "5 min → **2 min**"


def test_settings_mark_only_what_a_change_moved() -> None:
    before = GuildSettings()
    after = dataclasses.replace(before, numbers=Values(SERVER, turn_timeout=90.0), channels=(42,))
    text = settings_text(after, SAVED, EN, before)
    assert changed_lines(text) == [
        "Games can be started in: every channel → **<#42>**",
        "Turn clock: 5 min → **1 min 30 s**",
    ]
    assert text.startswith("**Saved. The settings now:**")
    # Shown without a change (or with one to what already was): no mark at all.
    assert not changed_lines(settings_text(after, SAVED, EN))
    assert not changed_lines(settings_text(after, SAVED, EN, after))
    assert settings_text(after, SAVED, EN, after) == settings_text(after, SAVED, EN)


def test_reset_marks_every_value_it_moved_back() -> None:
    chosen = GuildSettings(
        channels=(7, 8),
        reviews=False,
        turn_pings=False,
        numbers=Values(
            SERVER,
            turn_timeout=86_400.0,
            challenge_timeout=15.0,
            games_per_member=5,
            server_games=100,
            challenge_cooldown=0.0,
            review_cooldown=3_600.0,
            ping_grace=120.0,
            challenge_reach=20,
        ),
    )
    defaults = GuildSettings()
    lines = changed_lines(settings_text(defaults, SAVED, EN, chosen))
    assert lines == [
        "Games can be started in: <#7>, <#8> → **every channel**",
        "Turn clock: 1 d → **5 min**",
        "Challenges expire after: 15 s → **1 min**",
        "Live games per member: 5 → **1**",
        "Live games in the server: 100 → **25**",
        "Cooldown between challenges to the same member: none → **1 min**",
        "Review: not offered → **offered**",
        "Wait between one member's reviews: 1 h → **30 s**",
        "Turn notifications: off → **on** · sent after 2 min → **30 s (or a fifth of the turn"
        " clock if shorter)** without a move",
        "Different members one member may challenge in 10 minutes: 20 → **5**",
    ]


def buttons(view: Any) -> list[dict[str, Any]]:
    """The switches, in order: each a section's accessory beside its line."""
    sections = [c for c in view.to_components() if c["type"] == 9]
    return [section["accessory"] for section in sections]


def texts(view: Any) -> list[str]:
    found = []
    for component in view.to_components():
        if component["type"] == 10:
            found.append(component["content"])
        elif component["type"] == 9:
            found.extend(child["content"] for child in component["components"])
    return found


def test_preferences_show_a_switch_per_choice_for_their_member() -> None:
    now = Choices(turn_pings=True, challenges=False)
    shown = Change(now, now)
    view = preferences_view(shown, ALICE, choices_title(shown, asked=False), EN)
    check_limits(view)
    assert texts(view) == [
        "**Your choices on this server:**",
        "Turn notifications: on",
        "Challenges to you: off",
        "-# Switch them here, or with the options of /tictactoe-preferences.",
    ]
    pings, challenges = buttons(view)
    assert (pings["label"], pings["custom_id"]) == ("Turn off", f"ttt:pref:pings:off:{ALICE}")
    assert (challenges["label"], challenges["custom_id"]) == (
        "Turn on",
        f"ttt:pref:challenges:on:{ALICE}",
    )
    assert challenges["style"] == ButtonStyle.primary.value
    assert ids.parse(pings["custom_id"]) == ids.Preference(ids.PINGS, "off", ALICE)


def test_preferences_after_a_change_mark_it_and_switch_back() -> None:
    change = Change(Choices(True, True), Choices(False, True))
    view = preferences_view(change, ALICE, choices_title(change, asked=True), EN)
    assert texts(view)[:3] == [
        "**Saved. Your choices on this server:**",
        "Turn notifications: on → **off**",
        "Challenges to you: on",
    ]
    assert buttons(view)[0]["custom_id"] == f"ttt:pref:pings:on:{ALICE}"
    same = Change(Choices(False, True), Choices(False, True))
    assert choices_title(same, asked=True).singular.startswith("Nothing changed.")


def test_a_page_past_the_last_says_so() -> None:
    entry = LeaderboardEntry(11, ALICE, 1500.0, Record(1, 0, 0), provisional=True)
    page = LeaderboardPage(entries=(entry,), page=2, pages=2, total_players=11, past=5)
    view = leaderboard_view(page, EN)
    check_limits(view)
    text = view.to_components()[0]["content"]
    head, note = text.splitlines()[:2]
    assert head == "### Leaderboard · page 2/2"
    assert note == "There is no page 5; this is the last page."
    previous, following = view.to_components()[1]["components"]
    assert previous["custom_id"] == "ttt:lb:1" and following.get("disabled")
    plain = dataclasses.replace(page, past=None)
    assert "There is no page" not in leaderboard_view(plain, EN).to_components()[0]["content"]
