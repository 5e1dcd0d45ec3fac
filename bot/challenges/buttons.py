"""The clicks on a challenge's buttons: Accept (its message becomes the board), Decline
and Withdraw; and Rematch on a finished board, which challenges the other player again
(or accepts their rematch, or starts a new game against the bot)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import discord

from bot.app import GameService
from bot.challenges.rematches import Rematched
from bot.errors import GameError
from bot.games.boards import Boards
from bot.models import Challenge, ChallengeStatus
from bot.ui import ids
from bot.ui.gate import answer_error, home, server_locale, thread_parent
from bot.ui.router import Router, clicked_message

__all__ = ["ChallengeButtons"]


class ChallengeButtons:
    def __init__(self, service: GameService, boards: Boards) -> None:
        self._service = service
        self._boards = boards

    def register(self, router: Router) -> None:
        router.register(ids.Accept, self.accept)
        router.register(ids.Decline, self.decline)
        router.register(ids.Withdraw, self.withdraw)
        router.register(ids.Rematch, self.rematch)

    async def accept(self, interaction: discord.Interaction, click: ids.Accept) -> None:
        """The challenged member accepts: the challenge message becomes the board."""
        challenge_id = click.challenge
        try:
            game = await self._service.challenges.accept(
                challenge_id,
                interaction.user.id,
                home(interaction),
                clicked_message(interaction),
            )
        except GameError as error:
            await self._answer_closed(interaction, challenge_id, error)
            return
        await self._boards.answer(interaction, game)
        if interaction.message is not None and game.message_id != interaction.message.id:
            await self._service.set_game_message(game.id, interaction.message.id)
        await self._boards.delete_stale_ping(game, interaction)
        # Nobody is pinged now: whoever clicked Accept is looking at the board, and the
        # other player is pinged by the sweep only if they let their turn wait.

    async def decline(self, interaction: discord.Interaction, click: ids.Decline) -> None:
        """The challenged member declines (anyone else is refused, privately)."""
        await self._close(interaction, click.challenge, self._service.challenges.decline)

    async def withdraw(self, interaction: discord.Interaction, click: ids.Withdraw) -> None:
        """The challenger withdraws (anyone else is refused, privately)."""
        await self._close(interaction, click.challenge, self._service.challenges.withdraw)

    async def _close(
        self,
        interaction: discord.Interaction,
        challenge_id: int,
        close: Callable[[int, int, int | None, int | None], Awaitable[Challenge]],
    ) -> None:
        try:
            challenge = await close(
                challenge_id,
                interaction.user.id,
                home(interaction),
                clicked_message(interaction),
            )
        except GameError as error:
            await self._answer_closed(interaction, challenge_id, error)
            return
        await self._boards.answer(interaction, challenge)

    async def _answer_closed(
        self, interaction: discord.Interaction, challenge_id: int, error: GameError
    ) -> None:
        """Tell the user why the challenge can't be answered, and bring its message up to
        date if it shows a challenge that is no longer open: through its channel, or, where
        that cannot be redrawn (``Boards.redrawable``), through this click's own answer."""
        try:
            challenge = await self._service.challenges.get(
                challenge_id, home(interaction), clicked_message(interaction)
            )
        except GameError:
            await answer_error(interaction, error)
            return
        closed = challenge.status is not ChallengeStatus.PENDING
        if closed and not self._boards.redrawable(interaction):
            await self._boards.answer(interaction, challenge)
            await answer_error(interaction, error)  # a follow-up now: privately
            return
        await answer_error(interaction, error)
        if closed:
            await self._boards.redraw(challenge)

    async def rematch(self, interaction: discord.Interaction, click: ids.Rematch) -> None:
        async def defer() -> None:
            await interaction.response.defer(thinking=True)

        new = await self._service.rematch(
            click.game,
            interaction.user.id,
            home(interaction),
            locale=server_locale(interaction),
            parent_id=thread_parent(interaction),
            on_slow=defer,
        )
        if isinstance(new, Rematched):  # the other player's rematch, accepted: play
            await self._boards.post(interaction, new.game)
            await self._boards.redraw(new.challenge)
            await self._boards.delete_stale_ping(new.game, interaction)
            return
        await self._boards.post(interaction, new)
