"""A member's choices in a server, as ``/tictactoe-preferences`` answers them: each with a
button beside it that switches it (``ids.Preference``), and the clicks on those buttons
(routed here by ``bot.ui.router``).

The answer is ephemeral, so only its member sees it; its buttons carry their id all the
same, like an erasure's, and a click by anyone else (a forged one) is refused privately.
A click edits the same message through the interaction's answer, with no other call to
Discord. Any answer after a change marks what changed (``marked``), as the server
settings do.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import ButtonStyle, ui

from bot.app import GameService
from bot.errors import GameError
from bot.games.servers import Choices
from bot.games.views import sections_view
from bot.i18n import N_, Message, Translator
from bot.models import Change
from bot.ui import ids
from bot.ui.gate import home, user_translator
from bot.ui.router import Router

__all__ = [
    "PREFERENCES",
    "PreferenceButtons",
    "choices_title",
    "marked",
    "on_off",
    "preferences_view",
]

PREFERENCES = N_("tictactoe-preferences")
"""The command, by its name in the reader's language (a catalog entry like every name)."""
_QUIET = discord.AllowedMentions.none()


def marked(was: str, now: str) -> str:
    """A value as shown after a change: as it is if the change left it, else
    ``was → **now**`` (the one way every settings answer marks what changed)."""
    return now if was == now else f"{was} → **{now}**"


def on_off(on: bool, t: Translator) -> str:
    return t(N_("on")) if on else t(N_("off"))


def choices_title(change: Change[Choices], asked: bool) -> Message:
    """The answer's heading: what the member asked for (``asked``) saved, or nothing to do."""
    if not asked:
        return N_("Your choices on this server:")
    if change.changed:
        return N_("Saved. Your choices on this server:")
    return N_("Nothing changed. Your choices on this server:")


def _switch(choice: str, now: bool, user_id: int, t: Translator) -> ui.Button[Any]:
    """The button that turns ``choice`` the other way."""
    return ui.Button(
        label=t(N_("Turn off")) if now else t(N_("Turn on")),
        style=ButtonStyle.secondary if now else ButtonStyle.primary,
        custom_id=ids.Preference(choice, "off" if now else "on", user_id).format(),
    )


def preferences_view(
    change: Change[Choices], user_id: int, heading: Message, t: Translator
) -> ui.LayoutView:
    """The member's choices (what changed marked), each with its switch, in ``t``'s
    language (the member's)."""
    before, after = change.before, change.after
    pings = marked(on_off(before.turn_pings, t), on_off(after.turn_pings, t))
    challenges = marked(on_off(before.challenges, t), on_off(after.challenges, t))
    rows = [
        (
            t(N_("Turn notifications: {state}", state=pings)),
            _switch(ids.PINGS, after.turn_pings, user_id, t),
        ),
        (
            t(N_("Challenges to you: {state}", state=challenges)),
            _switch(ids.CHALLENGES, after.challenges, user_id, t),
        ),
    ]
    foot = t(N_("-# Switch them here, or with the options of /{command}.", command=PREFERENCES))
    return sections_view(f"**{t(heading)}**", rows, foot)


class PreferenceButtons:
    """The clicks on the switches."""

    def __init__(self, service: GameService) -> None:
        self._service = service

    def register(self, router: Router) -> None:
        router.register(ids.Preference, self.switch)

    async def switch(self, interaction: discord.Interaction, click: ids.Preference) -> None:
        """Set the choice as the button says, in the clicked message's server, and redraw
        that message with the change marked."""
        if click.user != interaction.user.id:
            raise GameError(N_("These are another member's choices; nothing was changed."))
        if click.choice == ids.PINGS:
            change = await self._service.guilds.choices(
                home(interaction), click.user, turn_pings=click.on
            )
        else:
            change = await self._service.guilds.choices(
                home(interaction), click.user, challenges=click.on
            )
        view = preferences_view(
            change, click.user, choices_title(change, True), user_translator(interaction)
        )
        await interaction.response.edit_message(view=view, allowed_mentions=_QUIET)
