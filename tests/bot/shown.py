"""A refusal as the Discord layer shows it: the service hands out references (a member,
a channel, a game's message), which bot/ui renders as mentions and links."""

from __future__ import annotations

from bot.errors import GameError
from bot.i18n import translator
from bot.ui.refs import for_discord


def shown(error: GameError, locale: str | None = None) -> str:
    """``error``'s message for a reader of ``locale`` (None: English), rendered."""
    return translator(locale)(for_discord(error.message))
