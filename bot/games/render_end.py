"""Texts about how a game ends beyond who won: the question before a forfeit, an abort,
and the rating changes a finished board shows. Pure functions, as in ``bot.games.render``
(which draws the board with them).
"""

from __future__ import annotations

from collections.abc import Callable

from bot.games.rules import is_abort, loses_rating
from bot.i18n import N_, Translator
from bot.models import Game
from engine import Mark

__all__ = [
    "aborted_text",
    "forfeit_done_text",
    "forfeit_question_text",
    "lapses_text",
    "rating_line",
]


def aborted_text(t: Translator) -> str:
    """A finished board's status line after an abort (``rules.is_abort``)."""
    return "⏹️ " + t(N_("Aborted before both players moved: it doesn't count."))


def forfeit_question_text(game: Game, until: float, t: Translator) -> str:
    """The private question Forfeit asks: what it would cost, and when the question lapses."""
    if is_abort(game):
        question = N_("End this game? Not both players have moved yet, so it doesn't count.")
    elif loses_rating(game):
        question = N_("Forfeit this game? It counts as a loss, and your rating goes down.")
    else:
        question = N_("Forfeit this game? It counts as a loss.")
    return f"{t(question)}\n{lapses_text(until, t)}"


def lapses_text(until: float, t: Translator) -> str:
    """When the question before a forfeit lapses, in one small line."""
    lapses = N_("This question lapses {when}, or at the next move.", when=f"<t:{int(until)}:R>")
    return "-# " + t(lapses)


def forfeit_done_text(game: Game, t: Translator) -> str:
    """The answer to a confirmed forfeit, in place of the question (``game`` as ended)."""
    if game.winner_mark is None:
        return aborted_text(t)
    return "🏳️ " + t(N_("You forfeited the game."))


def rating_line(game: Game, name: Callable[[int], str]) -> str | None:
    """Each player's rating after a rated game and its change, "@A 1520 (+20) · @B 1480
    (−20)", with ``name`` for a player; None for a game with no rating change kept (not
    rated, or ended before they were kept). An erased member's change went with their id."""
    parts = []
    for mark, change in ((Mark.X, game.x_rating), (Mark.O, game.o_rating)):
        player = game.player_of(mark)
        if change is None or player is None:
            continue
        after, delta = change.shown
        sign = "+" if delta > 0 else "\u2212" if delta < 0 else "±"  # a minus sign
        parts.append(f"{name(player)} {after} ({sign}{abs(delta)})")
    return "📊 " + " · ".join(parts) if parts else None
