"""An erasure's question as a message: its text, with Erase and Cancel."""

from __future__ import annotations

from discord import ButtonStyle, ui

from bot.games.views import drawing
from bot.i18n import N_, Translator
from bot.ui import ids

__all__ = ["confirm_view"]


def confirm_view(text: str, scope: str, asker_id: int, t: Translator) -> ui.LayoutView:
    """An erasure's question (``scope`` ``ids.ME`` or ``ids.SERVER``), with [Erase]
    (danger) and [Cancel], which only ``asker_id`` may click; in the asker's language."""
    erase: ui.Button[ui.LayoutView] = ui.Button(
        label=t(N_("Erase my data") if scope == ids.ME else N_("Erase this server's data")),
        style=ButtonStyle.danger,
        custom_id=ids.Forget(scope, asker_id).format(),
    )
    cancel: ui.Button[ui.LayoutView] = ui.Button(
        label=t(N_("Cancel")),
        style=ButtonStyle.secondary,
        custom_id=ids.ForgetCancel(asker_id).format(),
    )
    return drawing(ui.TextDisplay(text), ui.ActionRow(erase, cancel))
