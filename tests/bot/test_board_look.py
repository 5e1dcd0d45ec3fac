"""A board reads at a glance: every cell is one emoji of one size, the last move is its
mark on grey, the winning line green, and the text names nothing the buttons don't show."""

from __future__ import annotations

from typing import Any

import pytest
from discord import ButtonStyle

from bot.games import render
from bot.games.views import CELL_EMOJI, EMPTY_EMOJI, LAST_MOVE_STYLE, MARK_STYLE, board_view
from bot.i18n import N_, translator
from bot.models import GameStatus, Result
from discord_emulator.components import validate_components
from discord_emulator.errors import FormErrors
from engine import Mark
from tests.bot.test_render import BOB, DRAW_3X3, EN, SHAPES, WON, make_game

HINT = N_("The mark on a grey button is the last move.")
OPENINGS = {3: (4, 0, 8, 2), 4: (5, 0, 10, 15, 6), 5: (12, 0, 7, 24, 16, 4)}
"""A few moves on each board size, nobody winning."""


def cells(game: Any) -> list[dict[str, Any]]:
    """The board's cell buttons, row by row, after Discord's own checks (the emulator's)."""
    payload = board_view(game).to_components()
    errors = FormErrors()
    validate_components(payload, v2=True, errors=errors)
    assert not errors, errors.codes()
    rows = [c["components"] for c in payload if c["type"] == 1][: game.height]
    return [button for row in rows for button in row]


def grey_marks(found: list[dict[str, Any]]) -> list[int]:
    return [
        i
        for i, b in enumerate(found)
        if b["emoji"]["name"] != EMPTY_EMOJI and b["style"] == LAST_MOVE_STYLE.value
    ]


def games() -> list[Any]:
    """Live, bot-to-move, won, drawn and forfeited boards of every size."""
    found = []
    for size in SHAPES:
        opening = OPENINGS[size[0]]
        found.append(make_game(opening, size=size))
        # Against the bot: on 3x3 and 5x5 its turn (empty cells locked), on 4x4 Alice's.
        found.append(make_game(opening[:-1], size=size, bot_level="easy"))
        found.append(make_game(WON[size], size=size))
        found.append(
            make_game(
                opening,
                size=size,
                status=GameStatus.FINISHED,
                result=Result.FORFEIT,
                winner_id=BOB,
                winner_mark=Mark.O,
                turn_deadline=None,
            )
        )
    found.append(make_game(DRAW_3X3))
    return found


@pytest.mark.parametrize("game", games(), ids=lambda g: f"{g.width}x{g.height}k{g.k}-{g.status}")
def test_every_cell_is_one_emoji_of_one_kind(game: Any) -> None:
    """No label anywhere: Discord draws an emoji at one size, so all cells are as wide."""
    found = cells(game)
    assert len(found) == game.width * game.height
    for cell, button in enumerate(found):
        assert "label" not in button, button
        assert button["emoji"] == {"id": None, "name": button["emoji"]["name"]}, button
        mark = game.board.cell(cell)
        assert button["emoji"]["name"] == (EMPTY_EMOJI if mark is None else CELL_EMOJI[mark])
        # Discord fades disabled buttons: a mark never is one, an empty cell only when
        # nobody may play it (the game is over, or the bot is to move).
        locked = not game.is_live or game.current_player_id is None
        assert button.get("disabled", False) is (mark is None and locked), button
    assert {b["emoji"]["name"] for b in found} <= {EMPTY_EMOJI, *CELL_EMOJI.values()}


@pytest.mark.parametrize("side", [3, 4, 5])
def test_the_last_move_is_its_mark_on_grey_and_moves_on(side: int) -> None:
    size = next(s for s in SHAPES if s[0] == side)
    opening = OPENINGS[side]
    for played in range(1, len(opening) + 1):
        moves = opening[:played]
        game = make_game(moves, size=size)
        found = cells(game)
        assert grey_marks(found) == [moves[-1]]
        mover = Mark.X if played % 2 else Mark.O
        assert found[moves[-1]]["emoji"]["name"] == CELL_EMOJI[mover]
        for earlier in moves[:-1]:  # every other mark in its player's colour
            mark = game.board.cell(earlier)
            assert mark is not None and found[earlier]["style"] == MARK_STYLE[mark].value
        assert render.game_text(game, EN).endswith("\n-# " + EN(HINT))
    assert grey_marks(cells(make_game((), size=size))) == []
    assert EN(HINT) not in render.game_text(make_game((), size=size), EN)


@pytest.mark.parametrize("size", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}k{s[2]}")
def test_the_winning_line_stays_green_and_holds_the_last_move(size: tuple[int, int, int]) -> None:
    game = make_game(WON[size], size=size)
    outcome = game.board.outcome()
    assert outcome is not None and game.moves[-1] in outcome.line
    found = cells(game)
    green = {i for i, b in enumerate(found) if b["style"] == ButtonStyle.success.value}
    assert green == set(outcome.line)
    assert all(found[i]["emoji"]["name"] == CELL_EMOJI[Mark.X] for i in green)  # whose line
    assert grey_marks(found) == [] and render.last_move_cell(game) is None
    assert EN(HINT) not in render.game_text(game, EN)


def test_a_finished_board_without_a_line_keeps_its_last_move() -> None:
    drawn = make_game(DRAW_3X3)
    assert grey_marks(cells(drawn)) == [DRAW_3X3[-1]]
    forfeited = make_game(
        (4, 0, 8),
        status=GameStatus.FINISHED,
        result=Result.FORFEIT,
        winner_id=BOB,
        winner_mark=Mark.O,
        turn_deadline=None,
    )
    assert grey_marks(cells(forfeited)) == [8]
    assert EN(HINT) in render.game_text(forfeited, EN)


@pytest.mark.parametrize("locale", ["en-US", "ja", "de", "zh-CN"])
def test_the_text_names_no_cell(locale: str) -> None:
    """The buttons show marks, not names: the board's text names no cell, and its one
    line about the buttons says what the grey one is, in the board's language."""
    t = translator(locale)
    for side in (3, 4, 5):
        size = next(s for s in SHAPES if s[0] == side)
        text = render.game_text(make_game(OPENINGS[side], size=size, locale=locale), t)
        names = [render.cell_name(cell, side) for cell in range(side * side)]
        assert not [name for name in names if name in text], text
        assert text.splitlines()[-1] == "-# " + t(HINT)
    assert locale == "en-US" or t(HINT) != EN(HINT), "translated"
