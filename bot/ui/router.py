"""Every click on the bot's buttons, routed by its custom_id from one ``on_interaction``
listener to the handler its feature registered for that kind (``Router.register``).

The custom_id carries all a click needs (``ttt:cell:{game}:{cell}:{move_no}``,
``ttt:forfeit:{game}``, ``ttt:accept:{challenge}``, ...: ``bot.ui.ids``); the handler
loads the rest from the database, so buttons work across restarts. One listener, not a
``DynamicItem`` per button: a click costs a match of its custom_id, not a rebuild of its
message as a view, and every click that arrives is answered, even one whose custom_id is
no longer on the message (see docs/decisions.md#every-button-through-one-listener).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import discord

from bot.errors import GameError
from bot.i18n import N_
from bot.ui import ids
from bot.ui.gate import Gate, answer_error

__all__ = ["NO_LONGER_IN_USE", "Router", "clicked_message", "on_a_question"]

NO_LONGER_IN_USE = N_("This button is no longer in use.")
Kind = TypeVar("Kind", bound=ids.CustomId)
Handler = Callable[[discord.Interaction, Any], Awaitable[None]]


def clicked_message(interaction: discord.Interaction) -> int | None:
    """The id of the message whose button was clicked: the service refuses a click on a
    message that is not the one recorded for the game or challenge in the custom_id."""
    return interaction.message.id if interaction.message is not None else None


def on_a_question(interaction: discord.Interaction) -> None:
    """Refuse an answer to a private question clicked anywhere else (a forged custom_id
    on a board would replace the board with the answer)."""
    message = interaction.message
    if message is None or not message.flags.ephemeral:
        raise GameError(NO_LONGER_IN_USE)


class Router:
    """Routes ``ttt:`` clicks, through the gate, to the handler registered per kind."""

    def __init__(self, gate: Gate) -> None:
        self._gate = gate
        self._routes: dict[type[ids.CustomId], Handler] = {}

    def register(
        self, kind: type[Kind], handler: Callable[[discord.Interaction, Kind], Awaitable[None]]
    ) -> None:
        """Route clicks of ``kind`` to ``handler``: one handler per kind."""
        if kind in self._routes:
            raise ValueError(f"{kind.__name__} clicks are routed already")
        self._routes[kind] = handler

    @property
    def kinds(self) -> frozenset[type[ids.CustomId]]:
        """The kinds routed."""
        return frozenset(self._routes)

    async def handle(self, interaction: discord.Interaction) -> None:
        """Handle a click. Every component on the bot's messages is its own, so a
        custom_id that is no kind of ``bot.ui.ids`` (an old version's, a forged one), or
        a kind nobody routes, is answered too, never left to fail."""
        data: Any = interaction.data or {}
        click = ids.parse(data.get("custom_id"))
        if not await self._gate.admit(interaction):
            return
        try:
            handler = self._routes.get(type(click)) if click is not None else None
            if handler is None:
                raise GameError(NO_LONGER_IN_USE)
            await handler(interaction, click)
        except Exception as error:
            await answer_error(interaction, error)
