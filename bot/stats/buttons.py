"""The clicks that show what games recorded: Review on a finished board (privately), and
the leaderboard's pages."""

from __future__ import annotations

import discord

from bot.app import GameService
from bot.stats.render_review import review_text
from bot.stats.views import leaderboard_view
from bot.ui import ids
from bot.ui.gate import home, send_ephemeral, server_translator, user_translator
from bot.ui.router import Router

__all__ = ["StatsButtons"]


class StatsButtons:
    def __init__(self, service: GameService) -> None:
        self._service = service

    def register(self, router: Router) -> None:
        router.register(ids.Review, self.review)
        router.register(ids.LeaderboardPage, self.leaderboard_page)

    async def review(self, interaction: discord.Interaction, click: ids.Review) -> None:
        """The game's review, privately: at once if stored (or cheap); if it needs a
        search, the answer is deferred (ephemeral "thinking") once the checks passed,
        and the review edited in."""

        async def defer() -> None:
            await interaction.response.defer(ephemeral=True, thinking=True)

        game, review = await self._service.reviews.review(
            click.game, interaction.user.id, home(interaction), on_search=defer
        )
        text = review_text(game, review, user_translator(interaction))
        if interaction.response.is_done():
            mentions = discord.AllowedMentions.none()
            await interaction.edit_original_response(content=text, allowed_mentions=mentions)
        else:
            await send_ephemeral(interaction, text)

    async def leaderboard_page(
        self, interaction: discord.Interaction, click: ids.LeaderboardPage
    ) -> None:
        page = await self._service.stats.leaderboard(home(interaction), click.page)
        await interaction.response.edit_message(
            view=leaderboard_view(page, server_translator(interaction)),
            allowed_mentions=discord.AllowedMentions.none(),
        )
