"""The texts of a proposal to call a game off: the question put to the other player, and
what it becomes once answered; in the game's language."""

from __future__ import annotations

from bot.games.render import mention
from bot.i18n import N_, Translator
from bot.models import Game
from bot.ui.refs import game_link

__all__ = ["calloff_answer_text", "calloff_text"]


def calloff_text(game: Game, proposer_id: int, other_id: int, t: Translator) -> str:
    """The proposal to call ``game`` off, addressed to ``other_id``."""
    return t(
        N_(
            "{member}, {player} proposes calling off your game ({game}): it would end without"
            " a result. Do you agree? (This holds until the next move.)",
            member=mention(other_id, t),
            player=mention(proposer_id, t),
            game=game_link(game),
        )
    )


def calloff_answer_text(agreed: bool, member_id: int, t: Translator) -> str:
    """What the proposal becomes once answered."""
    if agreed:
        return "🤝 " + t(N_("Called off by agreement: the game ends without a result."))
    return t(N_("{member} wants to play on.", member=mention(member_id, t)))
