"""``/tictactoe-leaderboard`` and ``/tictactoe-stats``: read-only views of the server's
results; nobody is pinged. The leaderboard is the channel's, in the server's language; stats
answer only the asker, in their language, unless they ask for them in public."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot.app import GameService
from bot.errors import GameError
from bot.games.views import text_view
from bot.i18n import N_
from bot.stats.render import stats_text
from bot.stats.views import leaderboard_view
from bot.ui.gate import check_member, home, server_home, server_translator, user_translator
from bot.ui.places import anywhere, server_only

_QUIET = discord.AllowedMentions.none()


class Stats(commands.Cog):
    """Rankings and personal records."""

    def __init__(self, service: GameService) -> None:
        self.service = service

    @app_commands.command(
        # TRANSLATORS: command name: lower case, no spaces, at most 32 characters
        name=locale_str("tictactoe-leaderboard"),
        description=locale_str("This server's tic-tac-toe ranking."),
    )
    @server_only
    # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
    @app_commands.rename(page=locale_str("page"))
    @app_commands.describe(page=locale_str("Page to show (ten players a page)"))
    async def leaderboard(
        self, interaction: discord.Interaction, page: app_commands.Range[int, 1, 100_000] = 1
    ) -> None:
        result = await self.service.stats.leaderboard(server_home(interaction), page)
        await interaction.response.send_message(
            view=leaderboard_view(result, server_translator(interaction)), allowed_mentions=_QUIET
        )

    @app_commands.command(
        # TRANSLATORS: command name: lower case, no spaces, at most 32 characters
        name=locale_str("tictactoe-stats"),
        description=locale_str("A player's rating, record and recent games."),
    )
    @anywhere
    # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
    @app_commands.rename(
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        member=locale_str("member"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        public=locale_str("public"),
    )
    @app_commands.describe(
        member=locale_str("Whose stats to show (default: yours)"),
        public=locale_str("Show them to the whole channel (default: only to you)"),
    )
    async def stats(
        self,
        interaction: discord.Interaction,
        member: discord.Member | discord.User | None = None,
        public: bool = False,
    ) -> None:
        check_member(interaction, member)
        target = member or interaction.user
        if target.bot:
            raise GameError(N_("Bots don't keep tic-tac-toe stats; pick a member."))
        stats = await self.service.stats.player_stats(home(interaction), target.id)
        # What the channel sees is in the server's language; a private answer in the asker's.
        t = server_translator(interaction) if public else user_translator(interaction)
        await interaction.response.send_message(
            view=text_view(stats_text(stats, t)),
            ephemeral=not public,
            allowed_mentions=_QUIET,
        )
