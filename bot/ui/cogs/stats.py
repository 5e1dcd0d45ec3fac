"""``/leaderboard`` and ``/stats``: read-only views of the server's results; nobody is pinged."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.ext import commands

from bot import render, ui
from bot.errors import GameError

if TYPE_CHECKING:
    from bot.client import TicTacToeBot

_QUIET = discord.AllowedMentions.none()


class Stats(commands.Cog):
    """Rankings and personal records."""

    def __init__(self, bot: TicTacToeBot) -> None:
        self.bot = bot

    @app_commands.command(name="leaderboard", description="This server's tic-tac-toe ranking.")
    @app_commands.guild_only()
    @app_commands.describe(page="Page to show (ten players a page)")
    async def leaderboard(
        self, interaction: discord.Interaction, page: app_commands.Range[int, 1, 100_000] = 1
    ) -> None:
        if (bot := await ui.admit(interaction)) is None:
            return
        async with ui.guarded(interaction):
            assert interaction.guild_id is not None
            result = await bot.service.leaderboard(interaction.guild_id, page)
            await interaction.response.send_message(
                view=ui.leaderboard_view(result), allowed_mentions=_QUIET
            )

    @app_commands.command(name="stats", description="A player's rating, record and recent games.")
    @app_commands.guild_only()
    @app_commands.describe(member="Whose stats to show (default: yours)")
    async def stats(
        self, interaction: discord.Interaction, member: discord.Member | None = None
    ) -> None:
        if (bot := await ui.admit(interaction)) is None:
            return
        async with ui.guarded(interaction):
            assert interaction.guild_id is not None
            target = member or interaction.user
            if target.bot:
                raise GameError("Bots don't keep tic-tac-toe stats; pick a member.")
            stats = await bot.service.player_stats(interaction.guild_id, target.id)
            await interaction.response.send_message(
                view=ui.text_view(render.stats_text(stats)), allowed_mentions=_QUIET
            )


async def setup(bot: TicTacToeBot) -> None:
    await bot.add_cog(Stats(bot))
