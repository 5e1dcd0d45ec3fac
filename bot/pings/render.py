"""The texts of the pings feature, in the game's language: the turn ping (or its
reminder), and a proposal to call a game off, put to the other player, and what it
becomes once answered."""

from __future__ import annotations

from bot.games.render import mention
from bot.i18n import N_, Translator
from bot.models import Game
from bot.reach import by_channel
from bot.ui.refs import game_link

__all__ = ["calloff_answer_text", "calloff_text", "turn_ping_text"]


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


def turn_ping_text(game: Game, t: Translator, *, reminder: bool = False) -> str:
    """The message that tells the player on move it is their turn (or reminds them)."""
    mark = game.turn
    player = game.player_of(mark)
    opponent = game.player_of(mark.other)
    assert player is not None and opponent is not None, "member games only"
    fields = {"player": mention(player, t), "opponent": mention(opponent, t), "mark": mark.value}
    if reminder:
        head = N_(
            "{player}, reminder: it's your turn against {opponent} (you play {mark}).", **fields
        )
    else:
        head = N_("{player}, it's your turn against {opponent} (you play {mark}).", **fields)
    parts = [t(head)]
    if game.message_id is not None:
        scope = game.guild_id if by_channel(game.guild_id) else "@me"  # bot.reach
        parts.append(f"https://discord.com/channels/{scope}/{game.channel_id}/{game.message_id}")
    if game.turn_deadline is not None:
        parts.append(t(N_("time runs out {when}", when=f"<t:{int(game.turn_deadline)}:R>")))
    return " · ".join(parts)
