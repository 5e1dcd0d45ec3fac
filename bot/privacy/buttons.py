"""The clicks on an erasure question's buttons, Erase and Cancel (``ids.Forget``,
``ids.ForgetCancel``, routed here by ``bot.ui.router``).

Only the member who asked may click them, within ``CONFIRM_SECONDS`` of the question.
Since a server's admins can change who sees ``/tictactoe-forget-server``, and a click
carries no such check, Manage Server is checked again, from the interaction, when the
server's erasure is confirmed.
"""

from __future__ import annotations

import discord

from bot.app import GameService
from bot.errors import ConfirmationExpired, NotYourConfirmation
from bot.games.boards import Boards
from bot.games.views import text_view
from bot.i18n import N_
from bot.models import GuildData, MemberData
from bot.privacy.render import guild_done, member_done
from bot.ui import ids
from bot.ui.gate import home, user_translator
from bot.ui.router import Router

__all__ = ["ForgetButtons"]

_QUIET = discord.AllowedMentions.none()


class ForgetButtons:
    """The clicks on a question's buttons."""

    def __init__(self, service: GameService, boards: Boards) -> None:
        self._service = service
        self._boards = boards

    def register(self, router: Router) -> None:
        router.register(ids.Forget, self.confirm)
        router.register(ids.ForgetCancel, self.cancel)

    def _check(self, interaction: discord.Interaction, asker_id: int) -> None:
        """Only the asker, within CONFIRM_SECONDS of the question (on Discord's clock)."""
        message = interaction.message
        if message is None:
            raise ConfirmationExpired()
        self._service.privacy.check_confirmation(
            asker_id,
            interaction.user.id,
            message.created_at.timestamp(),
            interaction.created_at.timestamp(),
        )

    async def confirm(self, interaction: discord.Interaction, click: ids.Forget) -> None:
        """Erase, then say so in place of the question and redraw withdrawn challenges."""
        self._check(interaction, click.user)
        privacy = self._service.privacy
        t = user_translator(interaction)
        erased: MemberData | GuildData
        if click.scope == ids.ME:
            erased = await privacy.erase_member(home(interaction), interaction.user.id)
            done = member_done(erased, t)
        else:
            permissions = interaction.permissions
            erased = await privacy.erase_guild(
                home(interaction),
                may_manage=permissions.manage_guild,
                user_id=interaction.user.id,
                is_moderator=permissions.manage_messages,
            )
            done = guild_done(erased, t)
        await interaction.response.edit_message(view=text_view(done), allowed_mentions=_QUIET)
        for challenge in erased.withdrawn:
            await self._boards.redraw(challenge)

    async def cancel(self, interaction: discord.Interaction, click: ids.ForgetCancel) -> None:
        """Say so in place of the question; a late Cancel changes nothing either."""
        if click.user != interaction.user.id:
            raise NotYourConfirmation()
        await interaction.response.edit_message(
            view=text_view(user_translator(interaction)(N_("Cancelled; nothing was erased."))),
            allowed_mentions=_QUIET,
        )
