"""``/tictactoe-stop``: a player or a moderator ends the game in this channel (a player of
a rated game both have moved in is asked to forfeit or call it off instead)."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot.app import GameService
from bot.errors import GameOver, RatedStop
from bot.games import render
from bot.games.boards import Boards
from bot.games.render_end import lapses_text
from bot.games.views import forfeit_view
from bot.i18n import translator
from bot.ui.gate import answer_error, home, user_translator
from bot.ui.places import anywhere
from bot.ui.refs import for_discord

__all__ = ["Stop"]


class Stop(commands.Cog):
    """Stopping games. Errors reach the user through the command tree's ``on_error``;
    admission is the tree's ``interaction_check``."""

    def __init__(self, service: GameService, boards: Boards) -> None:
        self.service = service
        self.boards = boards

    @app_commands.command(
        # TRANSLATORS: command name: lower case, no spaces, at most 32 characters
        name=locale_str("tictactoe-stop"),
        description=locale_str("Stop the game in this channel (players or moderators)."),
    )
    @anywhere
    async def tictactoe_stop(self, interaction: discord.Interaction) -> None:
        assert interaction.channel_id is not None
        try:
            game = await self.service.endings.stop(
                home(interaction),
                interaction.channel_id,
                interaction.user.id,
                is_moderator=interaction.permissions.manage_messages,
            )
        except GameOver as error:
            # The clock ran out before the stop: the game was just lost on time.
            await answer_error(interaction, error)
            if error.game is not None:
                await self.boards.redraw(error.game)
                await self.boards.delete_stale_ping(error.game)
            return
        except RatedStop as refusal:
            # Nothing changed: the player chooses between losing and asking.
            t = user_translator(interaction)
            await interaction.response.send_message(
                t(for_discord(refusal.message)) + "\n" + lapses_text(refusal.until, t),
                view=forfeit_view(refusal.game, refusal.until, t),
                ephemeral=True,
                allowed_mentions=discord.AllowedMentions.none(),
            )
            return
        await interaction.response.send_message(
            render.stopped_text(interaction.user.id, translator(game.locale)),
            allowed_mentions=discord.AllowedMentions.none(),
        )
        await self.boards.redraw(game)
        await self.boards.delete_stale_ping(game)
