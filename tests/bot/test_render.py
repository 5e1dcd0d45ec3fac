"""Boards, challenges and leaderboards become components within Discord's limits."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

import discord
import pytest
from discord import ButtonStyle, ui

from bot.games import render
from bot.games.views import (
    CELL_EMOJI,
    EMPTY_EMOJI,
    LAST_MOVE_STYLE,
    MARK_STYLE,
    board_view,
    challenge_view,
)
from bot.i18n import translator
from bot.models import (
    DELETED_MEMBER,
    Challenge,
    ChallengeStatus,
    First,
    Game,
    GameStatus,
    LeaderboardEntry,
    LeaderboardPage,
    LevelRecord,
    PlayerStats,
    RatingChange,
    Record,
    Result,
)
from bot.pings.render import turn_ping_text
from bot.stats.render import stats_text
from bot.stats.views import leaderboard_view
from bot.ui import ids
from engine import Board, Mark

ALICE, BOB = 111111111111111111, 222222222222222222
MAX_COMPONENTS = 40
MAX_TEXT = 4000

# Positions reached by real move sequences, per (width, height, k).
WON = {
    (3, 3, 3): (0, 3, 1, 4, 2),  # X takes the top row
    (4, 4, 3): (0, 4, 1, 5, 2),
    (4, 4, 4): (0, 4, 1, 5, 2, 6, 3),
    (5, 5, 3): (0, 5, 1, 6, 2),
    (5, 5, 4): (0, 5, 1, 6, 2, 7, 3),
    (5, 5, 5): (0, 5, 1, 6, 2, 7, 3, 8, 4),
}
DRAW_3X3 = (0, 1, 2, 4, 3, 5, 7, 6, 8)  # X O X / X O O / O X X

EN = translator(None)


def make_game(
    moves: tuple[int, ...] = (),
    *,
    size: tuple[int, int, int] = (3, 3, 3),
    bot_level: str | None = None,
    game_id: int = 812,
    **changes: Any,
) -> Game:
    width, height, k = size
    board = Board.from_moves(moves, width, height, k)
    outcome = board.outcome()
    if outcome is None:
        status, result, winner_mark = GameStatus.ACTIVE, None, None
    else:
        status = GameStatus.FINISHED
        result = Result.DRAW if outcome.winner is None else Result.WIN
        winner_mark = outcome.winner
    o_id = None if bot_level else BOB
    game = Game(
        id=game_id,
        guild_id=1,
        channel_id=2,
        message_id=3,
        x_id=ALICE,
        o_id=o_id,
        bot_level=bot_level,
        width=width,
        height=height,
        k=k,
        moves=moves,
        status=status,
        result=result,
        winner_id=None,
        winner_mark=winner_mark,
        created_at=1_700_000_000.0,
        updated_at=1_700_000_100.0,
        turn_deadline=1_700_000_400.0 if status.is_live else None,
    )
    if winner_mark is not None:
        game = dataclasses.replace(game, winner_id=game.player_of(winner_mark))
    return dataclasses.replace(game, **changes)


def walk(components: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every component depth-first, a section's accessory after its texts."""
    for component in components:
        yield component
        yield from walk(component.get("components", []))
        if "accessory" in component:
            yield component["accessory"]


def custom_ids(view: ui.LayoutView) -> list[str]:
    return [c["custom_id"] for c in walk(view.to_components()) if "custom_id" in c]


def rows(view: ui.LayoutView) -> list[list[dict[str, Any]]]:
    return [c["components"] for c in view.to_components() if c["type"] == 1]


def check_limits(view: ui.LayoutView) -> None:
    """What Discord enforces on a V2 message, checked against discord.py's own counting.

    discord.py's component classes must read the payload back into items that serialise
    to exactly the same payload (what a client sends back with a click).
    """
    payload = view.to_components()
    assert view.has_components_v2()
    rebuilt = discord.ui.LayoutView(timeout=None)
    for component in payload:
        rebuilt.add_item(_item_from_dict(component))
    assert rebuilt.to_components() == payload
    total = sum(1 for _ in walk(payload))
    assert total == rebuilt.total_children_count <= MAX_COMPONENTS
    assert rebuilt.content_length() <= MAX_TEXT
    for row in rows(view):
        assert 1 <= len(row) <= 5
    drawn = custom_ids(view)
    assert len(drawn) == len(set(drawn)), "custom_ids must be unique within a message"
    for custom_id in drawn:
        assert len(custom_id) <= 100
        assert ids.parse(custom_id) is not None, custom_id


def _item_from_dict(data: dict[str, Any]) -> ui.Item[Any]:
    from discord.components import _component_factory

    component = _component_factory(data)  # type: ignore[arg-type]
    assert component is not None
    return ui.view._component_to_item(component)  # type: ignore[attr-defined]


SHAPES = [(3, 3, 3), (4, 4, 3), (4, 4, 4), (5, 5, 3), (5, 5, 4), (5, 5, 5)]


@pytest.mark.parametrize("size", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}k{s[2]}")
@pytest.mark.parametrize("bot_level", [None, "medium"])
def test_live_board_layout(size: tuple[int, int, int], bot_level: str | None) -> None:
    width, height, _ = size
    moves = (0, width + 1) if width > 3 else (4, 0)
    game = make_game(moves, size=size, bot_level=bot_level)
    view = board_view(game)
    check_limits(view)
    payload = view.to_components()
    assert payload[0]["type"] == 10  # the text comes first
    board_rows = rows(view)[:height]
    assert len(rows(view)) == height + 1
    for r, row in enumerate(board_rows):
        assert len(row) == width
        for c, button in enumerate(row):
            cell = r * width + c
            mark = game.board.cell(cell)
            # No button with a mark is disabled (Discord would fade it); its click is
            # answered "already taken" without a move number.
            assert not button.get("disabled", False)
            assert "label" not in button, button  # one emoji: every cell as wide
            if mark is None:
                assert button["custom_id"] == f"ttt:cell:{game.id}:{cell}:{len(moves)}"
                assert button["emoji"]["name"] == EMPTY_EMOJI
                assert button["style"] == ButtonStyle.secondary.value
            else:
                assert button["custom_id"] == f"ttt:taken:{game.id}:{cell}"
                assert button["emoji"]["name"] == CELL_EMOJI[mark]
                last = cell == moves[-1]
                assert button["style"] == (LAST_MOVE_STYLE if last else MARK_STYLE[mark]).value
    control = rows(view)[-1]
    assert [b["custom_id"] for b in control] == [f"ttt:forfeit:{game.id}"]
    text = payload[0]["content"]
    assert f"<@{ALICE}>, your move" in text
    assert "<t:1700000400:R>" in text
    assert "a1" not in text, text  # no button shows a cell's name
    assert "-# The mark on a grey button is the last move." in text
    if bot_level:
        assert text.count("medium") == 1, text  # the level once, no description
        assert "Level" not in text


def test_colours_match_between_header_and_buttons() -> None:
    text = render.game_text(make_game((4,)), EN)
    assert f"{render.MARK_EMOJI[Mark.X]} **X** <@{ALICE}>" in text
    assert f"{render.MARK_EMOJI[Mark.O]} **O** <@{BOB}>" in text
    assert {Mark.X: ButtonStyle.primary, Mark.O: ButtonStyle.danger} == MARK_STYLE
    assert render.MARK_EMOJI == {Mark.X: "🟦", Mark.O: "🟥"}  # blurple X, red O


def test_an_unrated_variant_says_so_on_the_board() -> None:
    assert "unrated" in render.game_text(make_game((0,), size=(4, 4, 3)), EN)
    assert "unrated" not in render.game_text(make_game((0,), size=(4, 4, 4)), EN)
    bot_game = make_game((0,), size=(4, 4, 3), bot_level="easy", o_id=None)
    assert "unrated" not in render.game_text(bot_game, EN)


def finished_cells(view: Any) -> list[dict[str, Any]]:
    """A finished board's cells: marks enabled at full colour, empty cells disabled."""
    cells = [b for row in rows(view)[:-1] for b in row]
    for cell, button in enumerate(cells):
        assert button["custom_id"].startswith("ttt:over:") and button["custom_id"].endswith(
            f":{cell}"
        )
        assert button.get("disabled", False) is (button["emoji"]["name"] == EMPTY_EMOJI), button
    return cells


@pytest.mark.parametrize("size", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}k{s[2]}")
def test_won_board_highlights_the_line_and_disables_everything(size: tuple[int, int, int]) -> None:
    game = make_game(WON[size], size=size)
    outcome = game.board.outcome()
    assert outcome is not None and outcome.winner is Mark.X
    view = board_view(game)
    check_limits(view)
    cells = finished_cells(view)
    green = {i for i, b in enumerate(cells) if b["style"] == ButtonStyle.success.value}
    assert green == set(outcome.line)
    assert len(green) == game.k
    control = [b["custom_id"] for b in rows(view)[-1]]
    assert control == [f"ttt:rematch:{game.id}", f"ttt:review:{game.id}"]
    assert f"<@{ALICE}> won" in view.to_components()[0]["content"]


def test_largest_message_is_34_components() -> None:
    view = board_view(make_game(WON[(5, 5, 5)], size=(5, 5, 5)))
    check_limits(view)
    assert sum(1 for _ in walk(view.to_components())) == 1 + 5 + 25 + 1 + 2


def test_drawn_board() -> None:
    game = make_game(DRAW_3X3)
    assert game.result is Result.DRAW
    view = board_view(game)
    check_limits(view)
    cells = finished_cells(view)
    assert not any(b["style"] == ButtonStyle.success.value for b in cells)
    assert "draw" in view.to_components()[0]["content"]


@pytest.mark.parametrize(
    ("result", "words"), [(Result.FORFEIT, "forfeited"), (Result.TIMEOUT, "ran out of time")]
)
def test_forfeited_and_timed_out_boards(result: Result, words: str) -> None:
    game = make_game(
        (4, 0, 8),
        status=GameStatus.FINISHED,
        result=result,
        winner_id=BOB,
        winner_mark=Mark.O,
        turn_deadline=None,
    )
    view = board_view(game)
    check_limits(view)
    cells = finished_cells(view)
    assert not any(b["style"] == ButtonStyle.success.value for b in cells)
    text = view.to_components()[0]["content"]
    assert f"<@{ALICE}> {words}" in text and f"<@{BOB}> won" in text
    assert "<t:" not in text


def test_stopped_board_has_rematch_but_no_review_without_moves() -> None:
    game = make_game((), status=GameStatus.ABANDONED, result=Result.ABANDONED, turn_deadline=None)
    view = board_view(game)
    check_limits(view)
    assert [b["custom_id"] for b in rows(view)[-1]] == [f"ttt:rematch:{game.id}"]
    # Before both players moved, however it ended, it was an abort.
    text = view.to_components()[0]["content"]
    assert "Aborted before both players moved: it doesn't count." in text
    assert "stopped" not in text
    stopped = dataclasses.replace(game, moves=(4, 0))
    assert "The game was stopped; it doesn't count." in render.game_text(stopped, EN)


def test_a_rated_boards_end_shows_each_rating_change() -> None:
    won = make_game(
        (0, 3, 1, 4, 2),
        status=GameStatus.FINISHED,
        result=Result.WIN,
        winner_id=ALICE,
        winner_mark=Mark.X,
        turn_deadline=None,
    )
    rated = dataclasses.replace(
        won, x_rating=RatingChange(1500.0, 1520.0), o_rating=RatingChange(1500.4, 1479.6)
    )
    lines = render.game_text(rated, EN).splitlines()
    # Right under the result; the change is the difference of the ratings as shown.
    assert lines[3] == f"📊 <@{ALICE}> 1520 (+20) · <@{BOB}> 1480 (\u221220)"
    assert "📊" not in render.game_text(won, EN)  # unrated, or ended before changes were kept
    even = dataclasses.replace(rated, x_rating=RatingChange(1500.2, 1499.9))
    assert f"<@{ALICE}> 1500 (±0)" in render.game_text(even, EN)
    gone = dataclasses.replace(rated, x_id=DELETED_MEMBER, x_rating=None)  # erased with the id
    assert render.game_text(gone, EN).splitlines()[3] == f"📊 <@{BOB}> 1480 (\u221220)"


def test_bot_to_move_board_is_not_clickable() -> None:
    game = make_game((4,), bot_level="hard", status=GameStatus.BOT_TO_MOVE, o_id=None)
    cells = [b for row in rows(board_view(game))[:3] for b in row]
    # The empty cells wait for the bot's move; the mark stays at full colour.
    assert [bool(b.get("disabled")) for b in cells] == [cell != 4 for cell in range(9)]


def test_the_turn_ping_names_the_player_on_move_and_links_the_board() -> None:
    game = dataclasses.replace(make_game((4,)), message_id=333, turn_deadline=1_800_000_000.5)
    text = turn_ping_text(game, EN)
    assert text.startswith(f"<@{BOB}>, it's your turn against <@{ALICE}> (you play O)")
    assert f"https://discord.com/channels/{game.guild_id}/{game.channel_id}/333" in text
    assert text.endswith("time runs out <t:1800000000:R>")
    reminder = turn_ping_text(game, EN, reminder=True)
    assert reminder.startswith(f"<@{BOB}>, reminder: it's your turn")
    assert re.findall(r"<@!?(\d+)>", reminder) == [str(BOB), str(ALICE)]


def test_cell_ids_round_trip_through_the_pattern() -> None:
    assert ids.parse(ids.Cell(812, 24, 17).format()) == ids.Cell(812, 24, 17)
    assert len(ids.Cell(10**18 - 1, 24, 25).format()) <= 100


@pytest.mark.parametrize(
    "custom_id",
    [
        "ttt:cell:0:1:2",
        "ttt:cell:1:100:2",
        "ttt:cell:1:1:100",
        "ttt:cell:1:1:1\n",
        "ttt:cell:1:1:1:1",
        "xttt:cell:1:1:1",
        "ttt:cell:1234567890123456789:1:1",
        "ttt:cell:-1:1:1",
        "ttt:forfeit:",
        "ttt:lb:1234567",
        "ttt:accept:1 ",
    ],
)
def test_malformed_ids_match_no_route(custom_id: str) -> None:
    assert ids.parse(custom_id) is None


def make_challenge(status: ChallengeStatus) -> Challenge:
    return Challenge(
        id=77,
        guild_id=1,
        channel_id=2,
        message_id=None,
        challenger_id=ALICE,
        opponent_id=BOB,
        width=4,
        height=4,
        k=4,
        first=First.RANDOM,
        status=status,
        created_at=1_700_000_000.0,
        expires_at=1_700_000_060.0,
    )


@pytest.mark.parametrize("status", list(ChallengeStatus))
def test_challenge_view(status: ChallengeStatus) -> None:
    view = challenge_view(make_challenge(status))
    check_limits(view)
    buttons = rows(view)[0]
    assert [b["custom_id"] for b in buttons] == [
        "ttt:accept:77",
        "ttt:decline:77",
        "ttt:withdraw:77",
    ]
    assert [b["label"] for b in buttons] == ["Accept", "Decline", "Withdraw"]
    closed = status is not ChallengeStatus.PENDING
    assert all(b.get("disabled", False) is closed for b in buttons)
    text = view.to_components()[0]["content"]
    assert f"<@{BOB}>" in text and f"<@{ALICE}>" in text
    if status is ChallengeStatus.PENDING:
        assert "<t:1700000060:R>" in text
        assert "4×4, 4 in a row" in text and "Rated:" in text
        assert "Who moves first is drawn at random." in text
    if status is ChallengeStatus.EXPIRED:
        assert "expired" in text


@pytest.mark.parametrize(("page", "pages"), [(1, 1), (1, 3), (2, 3), (3, 3)])
def test_leaderboard_view(page: int, pages: int) -> None:
    entries = tuple(
        LeaderboardEntry(
            rank=(page - 1) * 10 + i + 1,
            user_id=10**17 + i,
            rating=1500.0 - i,
            record=Record(3, 2, 1),
            provisional=i % 2 == 0,
        )
        for i in range(10)
    )
    view = leaderboard_view(
        LeaderboardPage(entries=entries, page=page, pages=pages, total_players=pages * 10), EN
    )
    check_limits(view)
    previous, following = rows(view)[0]
    assert previous["custom_id"] == f"ttt:lb:{page - 1}"
    assert following["custom_id"] == f"ttt:lb:{page + 1}"
    assert previous.get("disabled", False) is (page == 1)
    assert following.get("disabled", False) is (page == pages)
    text = view.to_components()[0]["content"]
    assert text.count("\n") >= 10
    assert "**1500**?" in text and "3W 2L 1D" in text


def test_empty_leaderboard() -> None:
    view = leaderboard_view(LeaderboardPage(entries=(), page=1, pages=1, total_players=0), EN)
    check_limits(view)
    assert "No rated games yet" in view.to_components()[0]["content"]


def test_stats_text() -> None:
    stats = PlayerStats(
        guild_id=1,
        user_id=ALICE,
        rating=1534.4,
        provisional=True,
        rank=2,
        versus_members=Record(4, 1, 2),
        versus_bot=(LevelRecord("easy", Record(5, 0, 0)), LevelRecord("perfect", Record(0, 3, 4))),
        current_streak=-2,
        best_streak=4,
        recent=(make_game(WON[(3, 3, 3)]), make_game(DRAW_3X3, bot_level="perfect")),
    )
    text = stats_text(stats, EN)
    assert "1534 (provisional)" in text and "#2" in text
    assert "4W 1L 2D" in text and "perfect): 0W 3L 4D" in text
    assert "2 losses" in text and "best: 4" in text
    assert "- won against" in text and "- drew with" in text


def test_challenge_says_who_moves_first_rated_or_not_and_the_clock() -> None:
    pending = dataclasses.replace(
        make_challenge(ChallengeStatus.PENDING), k=3, first=First.ME, turn_seconds=90.0
    )
    text = render.challenge_text(pending, EN)
    assert f"<@{ALICE}> moves first." in text
    assert "Unrated: on this board the first player can always force a win" in text
    assert "Turn clock: 1 min 30 s per move." in text
    theirs = render.challenge_text(dataclasses.replace(pending, first=First.OPPONENT), EN)
    assert f"<@{BOB}> moves first." in theirs
