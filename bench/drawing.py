"""What drawing a board costs per click, over discord.py's own cost of the same components.

    python -m bench.drawing [--rounds 3000]

A click's answer is the board drawn again (``bot.games.views.board_view``): the game's text
in the server's language, one button per cell with its custom_id, the controls. This
prints the CPU of that per click for a 3x3 and a 5x5 board in German, and of the
translation lookup it starts with (``bot.i18n.translator``), against a baseline run in
the same process: discord.py serialising a view of the same shape (the same number of
buttons, a text of the same length) built without anything of ours. The ratio is the
figure to compare between machines and versions.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from discord import ButtonStyle, PartialEmoji, ui

from bot.games.views import board_view
from bot.i18n import translator
from bot.models import Game, GameStatus
from engine import Board

ROUNDS = 3000
LOCALE = "de"


def per_call(fn: Callable[[], Any], rounds: int = ROUNDS) -> float:
    """CPU seconds per call, the best of three runs (the machine is shared)."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for _ in range(rounds):
            fn()
        best = min(best, (time.process_time() - started) / rounds)
    return best


def game(moves: tuple[int, ...], side: int, k: int) -> Game:
    return Game(
        id=812,
        guild_id=1,
        channel_id=2,
        message_id=3,
        x_id=101,
        o_id=202,
        bot_level=None,
        width=side,
        height=side,
        k=k,
        moves=moves,
        status=GameStatus.ACTIVE,
        result=None,
        winner_id=None,
        winner_mark=None,
        created_at=0.0,
        updated_at=0.0,
        turn_deadline=1_800_000_000.0,
        locale=LOCALE,
    )


CELL = PartialEmoji(name="\U0001f1fd")
"""A cell as the board draws it: one emoji, no label."""


def bare(text: str, side: int) -> dict[str, Any]:
    """discord.py alone: a view of the board's shape, serialised (what any bot pays)."""
    view = ui.LayoutView(timeout=None)
    view.add_item(ui.TextDisplay(text))
    for row in range(side):
        view.add_item(
            ui.ActionRow(
                *(
                    ui.Button(emoji=CELL, style=ButtonStyle.secondary, custom_id=f"c{row}:{col}")
                    for col in range(side)
                )
            )
        )
    view.add_item(ui.ActionRow(ui.Button(label="Forfeit", custom_id="f")))
    view.stop()
    return {"components": view.to_components()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="calls per measure")
    rounds = parser.parse_args().rounds
    print(f"CPU per click (µs), locale {LOCALE!r}; best of 3 x {rounds} calls")
    lookup = per_call(lambda: translator(LOCALE), rounds * 10)
    print(f"  translator({LOCALE!r}): {lookup * 1e6:6.1f}")
    for moves, side, k in (((0, 4), 3, 3), ((0, 6, 12), 5, 4)):
        drawn = game(moves, side, k)
        assert drawn.board == Board.from_moves(moves, side, side, k)
        text = board_view(drawn).to_components()[0]["content"]
        ours = per_call(lambda g=drawn: board_view(g).to_components(), rounds)
        base = per_call(lambda t=text, s=side: bare(t, s), rounds)
        print(
            f"  {side}x{side}: board_view {ours * 1e6:6.1f}  discord.py alone {base * 1e6:6.1f}"
            f"  ratio {ours / base:.2f}"
        )


if __name__ == "__main__":
    main()
