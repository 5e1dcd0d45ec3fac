"""The clicks that call a rated game off: Call off on the board (``ids.Calloff``) asks the
other player by a message that pings only them; its Agree and Play on
(``ids.CalloffAnswer``) answer it."""

from __future__ import annotations

import discord

from bot.app import GameService
from bot.games.boards import Boards
from bot.i18n import N_, translator
from bot.pings.notices import Notices
from bot.pings.render import calloff_answer_text, calloff_text
from bot.pings.views import calloff_view
from bot.ui import ids
from bot.ui.gate import home, user_translator
from bot.ui.router import Router

__all__ = ["CallOffButtons"]

_QUIET = discord.AllowedMentions.none()


class CallOffButtons:
    def __init__(self, service: GameService, boards: Boards, notices: Notices) -> None:
        self._service = service
        self._boards = boards
        self._notices = notices

    def register(self, router: Router) -> None:
        router.register(ids.Calloff, self.propose_calloff)
        router.register(ids.CalloffAnswer, self.answer_calloff)

    async def propose_calloff(self, interaction: discord.Interaction, click: ids.Calloff) -> None:
        """Ask the other player, by a new message that pings only them, to call it off."""
        service = self._service
        user = interaction.user.id
        game, lapsed = await service.calloffs.propose(click.game, user, home(interaction))
        if lapsed is not None:  # made at an earlier move: its message goes
            self._notices.lapsed(lapsed, game.channel_id)
        other = game.o_id if user == game.x_id else game.x_id
        assert other is not None  # a member game: only those can be rated
        asked = N_("I asked {member} whether to call the game off.", member=f"<@{other}>")
        t = user_translator(interaction)
        await interaction.response.edit_message(content=t(asked), view=None)
        message = await interaction.followup.send(
            calloff_text(game, user, other, translator(game.locale)),
            view=calloff_view(game),
            allowed_mentions=discord.AllowedMentions(users=[discord.Object(other)]),
            wait=True,
        )
        await service.calloffs.set_message(game.id, user, message.id)

    async def answer_calloff(
        self, interaction: discord.Interaction, click: ids.CalloffAnswer
    ) -> None:
        agree = click.agree
        game = await self._service.calloffs.answer(
            click.game, interaction.user.id, agree, home(interaction)
        )
        text = calloff_answer_text(agree, interaction.user.id, translator(game.locale))
        await interaction.response.edit_message(content=text, view=None, allowed_mentions=_QUIET)
        if agree:
            await self._boards.redraw(game)
            await self._boards.delete_stale_ping(game)
