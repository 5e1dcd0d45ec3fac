"""The buttons of a proposal to call a game off: Agree and Play on, for the other player."""

from __future__ import annotations

from discord import ButtonStyle, ui

from bot.i18n import N_, translator
from bot.models import Game
from bot.ui import ids

__all__ = ["calloff_view"]


def calloff_view(game: Game, *, closed: bool = False) -> ui.View:
    """The other player's answer to a proposal to call the game off (in the game's locale)."""
    t = translator(game.locale)
    view = ui.View(timeout=None)
    for label, style, answer in (
        (N_("Agree: call it off"), ButtonStyle.success, "yes"),
        (N_("Play on"), ButtonStyle.secondary, "no"),
    ):
        custom_id = ids.CalloffAnswer(answer, game.id).format()
        view.add_item(ui.Button(label=t(label), style=style, disabled=closed, custom_id=custom_id))
    view.stop()
    return view
