"""The board's warning on variants that the first player wins by force.

On 4 x 4 and 5 x 5 with three in a row (``engine.values``: every variant that is not a
draw under perfect play) whoever moves first can always force a win. A live board there
says so under its status line, and who that is: a member, or the bot, which then wins
for sure at a level that plays perfectly and may miss it at the others. The challenge
says the same before anyone accepts (``render.challenge_text``).
"""

from __future__ import annotations

from bot.i18n import N_, Message, Translator
from bot.models import Game
from engine import Mark
from engine.levels import UnknownLevelError, get_level
from engine.values import is_fair

__all__ = ["first_player_lines", "first_player_warning"]


def _plays_perfectly(level: str | None) -> bool:
    try:
        return level is not None and get_level(level).is_perfect
    except UnknownLevelError:  # a retired level's old games still render
        return False


def first_player_warning(game: Game, first: str) -> Message | None:
    """What the live board says about a won variant's first player, named ``first`` if a
    member; None on a variant that is a draw under perfect play, and once it is over."""
    if not game.is_live or is_fair(game.width, game.height, game.k):
        return None
    if game.player_of(Mark.X) is not None:
        return N_(
            "On this board the first player can always force a win: {player} moves first.",
            player=first,
        )
    if _plays_perfectly(game.bot_level):
        return N_(
            "On this board the first player can always force a win: I move first and play"
            " perfectly, so I will win."
        )
    return N_(
        "On this board the first player can always force a win: I move first, but at this"
        " level I can miss it."
    )


def first_player_lines(game: Game, first: str, t: Translator) -> list[str]:
    """``first_player_warning`` as a small line of the board's text, or no line."""
    warning = first_player_warning(game, first)
    return [] if warning is None else ["-# " + t(warning)]
