"""The review as a player reads it: real engine reviews, drawn in English."""

from __future__ import annotations

import dataclasses

from bot.games import render
from bot.models import GameStatus, Result
from bot.stats.render_review import review_text
from engine import Mark
from engine.reviewing import review

from .test_render import ALICE, BOB, EN, make_game

ISSUE = (5, 2, 3, 8, 4)
"""X c2, O c1, X a2, O c3, X b2 (issue 34): X a2 gave O a win, O c3 missed it."""


def parts(text: str) -> tuple[str, list[str], list[str]]:
    """(title, grid lines, the lines after the grid)."""
    head, rest = text.split("\n", 1)
    grid, after = rest.removeprefix("```\n").split("\n```\n", 1)
    return head, grid.splitlines(), after.splitlines()


def test_the_issues_game_names_o_c3_and_the_win_it_missed() -> None:
    game = make_game(ISSUE)
    text = review_text(game, review(ISSUE), EN)
    head, grid, after = parts(text)
    assert head == f"### Review: <@{ALICE}> vs <@{BOB}>, <t:{int(game.updated_at)}:D>"
    assert grid[0] == "   a  b  c "
    assert grid[1:] == ["1  ·  ·  O ", "2  X  X  X ", "3  ·  · [O]"]
    assert after[:2] == [
        "Move 4 (O c3) decided the game: the win became a loss.",
        "O c3 missed the win at b2.",
    ]
    assert after[2:] == [
        "` 1.` 🟦 X c2",
        "` 2.` 🟥 O c1",
        "` 3.` 🟦 X a2  ← the draw became a loss",
        "` 4.` 🟥 O c3  ← this decided it · missed the block at b2",
        "` 5.` 🟦 X b2",
    ]


def test_a_lost_draw_names_up_to_three_moves_that_held() -> None:
    moves = (4, 1, 0, 8, 6, 2, 3)  # O's edge reply b1 loses; a corner held
    text = review_text(make_game(moves), review(moves), EN)
    _, grid, after = parts(text)
    assert grid[1] == "1  X [O] O "
    assert after[:2] == [
        "Move 2 (O b1) decided the game: the draw became a loss.",
        "Any of a1, c1, a3 would have held the draw.",
    ]
    assert after[3] == "` 2.` 🟥 O b1  ← this decided it · better: a1, c1, a3"


def test_a_game_without_a_mistake_says_so() -> None:
    moves = (4, 0, 8, 2, 1, 7, 6, 3, 5)  # best play all the way
    _, grid, after = parts(review_text(make_game(moves), review(moves), EN))
    assert not any("[" in line for line in grid)
    assert after[0] == "No move changed the result: a draw with best play, and a draw it stayed."
    assert all("←" not in line for line in after[1:])


def test_a_5x5_review_says_how_far_it_could_see() -> None:
    moves = (18, 9, 0, 7, 6, 16, 24, 4, 2, 10, 8, 15, 12)
    game = make_game(moves, size=(5, 5, 4))
    found = review(moves, 5, 5, 4)
    text = review_text(game, found, EN)
    _, _, after = parts(text)
    assert after[0] == "Move 10 (O a3) decided the game: the win became a loss."
    assert after[1] == "O a3 missed the win at c3."
    unsettled = [i + 1 for i in range(len(moves)) if not found.settled(i)]
    assert unsettled and unsettled == list(range(1, unsettled[-1] + 1))
    assert after[2] == (
        f"Beyond the review's reach (about a second of search): moves 1–{unsettled[-1]}."
    )
    assert after[3 + 9].endswith("O a3  ← this decided it · missed the block at c3")
    # Nothing settled: no verdict, and why.
    bare = dataclasses.replace(found, values=("draw",) + ("unknown",) * 13, decider=None)
    _, _, after = parts(review_text(game, bare, EN))
    assert after[0] == (
        "No verdict: on this 5×5 board not one move could be settled within the review's"
        " budget of about a second of search."
    )
    # Only the end settled, without a change there.
    late = dataclasses.replace(
        found, values=("unknown",) * 10 + ("X wins",) * 4, decider=None, better=()
    )
    _, _, after = parts(review_text(game, late, EN))
    assert after[:2] == [
        "No move from move 11 on changed the result: X had a forced win from there.",
        "Beyond the review's reach (about a second of search): moves 1–10.",
    ]
    assert render.cell_name(12, 5) == "c3"


def test_a_forfeit_is_not_read_as_the_boards_result() -> None:
    """The screenshot's game: five moves that kept the draw, then O forfeited. The
    verdict speaks of the position's value and says how the game really ended."""
    moves = (4, 0, 2, 6, 3)
    game = make_game(moves, status=GameStatus.FINISHED, result=Result.FORFEIT, winner_mark=Mark.X)
    _, _, after = parts(review_text(game, review(moves), EN))
    assert after[:2] == [
        "No move changed the position's value: a draw with best play.",
        f"Then <@{BOB}> forfeited, before the game was played out.",
    ]
    assert not any("a draw it stayed" in line for line in after)


def test_a_time_out_after_a_decisive_mistake_says_both() -> None:
    moves = (4, 1, 0)  # O's edge reply b1 loses; then O runs out of time
    game = make_game(moves, status=GameStatus.FINISHED, result=Result.TIMEOUT, winner_mark=Mark.X)
    _, _, after = parts(review_text(game, review(moves), EN))
    assert after[0] == "Move 2 (O b1) decided the game: the draw became a loss."
    assert f"Then <@{BOB}> ran out of time, before the game was played out." in after
