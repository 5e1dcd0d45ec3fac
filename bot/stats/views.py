"""The leaderboard as a message: one page, with its previous and next buttons."""

from __future__ import annotations

from discord import ButtonStyle, ui

from bot.games.views import drawing
from bot.i18n import N_, Translator
from bot.models import LeaderboardPage
from bot.stats.render import leaderboard_text
from bot.ui import ids

__all__ = ["leaderboard_view"]


def leaderboard_view(
    page: LeaderboardPage, t: Translator, note: str | None = None
) -> ui.LayoutView:
    """One page of the ranking with previous/next buttons (ids differ: page-1 != page+1),
    in ``t``'s language (the server's, or the asker's when private), under ``note``
    (why a private answer is private) if given."""
    previous: ui.Button[ui.LayoutView] = ui.Button(
        label="◀ " + t(N_("Previous")),
        style=ButtonStyle.secondary,
        disabled=page.page <= 1,
        custom_id=ids.LeaderboardPage(page.page - 1).format(),
    )
    following: ui.Button[ui.LayoutView] = ui.Button(
        label=t(N_("Next")) + " ▶",
        style=ButtonStyle.secondary,
        disabled=page.page >= page.pages,
        custom_id=ids.LeaderboardPage(page.page + 1).format(),
    )
    text: ui.TextDisplay[ui.LayoutView] = ui.TextDisplay(leaderboard_text(page, t))
    if note is None:
        return drawing(text, ui.ActionRow(previous, following))
    return drawing(ui.TextDisplay(note), text, ui.ActionRow(previous, following))
