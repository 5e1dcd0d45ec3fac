"""``/tictactoe-forget-me`` and ``/tictactoe-forget-server``: erasing data on request.

Each command answers privately with what would be erased (``bot.privacy.render``)
and two buttons, Erase and Cancel (``bot.privacy.views.confirm_view``), whose clicks
``bot.ui.router`` routes to ``bot.privacy.buttons``. Only the member who asked may
click them, within ``CONFIRM_SECONDS`` of the question. The server's erasure is a
command of its own, which Discord shows only to members with Manage Server
(``default_permissions``); since a server's admins can change who sees a command, and a
click carries no such check, the permission is checked again, from the interaction, when
asked and when confirmed.
"""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot.app import GameService
from bot.privacy.render import guild_question, member_question
from bot.privacy.views import confirm_view
from bot.ui.gate import home, server_home, user_translator
from bot.ui.ids import ME, SERVER
from bot.ui.places import anywhere, server_only

__all__ = ["Privacy"]

_QUIET = discord.AllowedMentions.none()


class Privacy(commands.Cog):
    """The two questions; their buttons are answered by ``bot.privacy.buttons``."""

    def __init__(self, service: GameService) -> None:
        self.service = service

    @app_commands.command(
        # TRANSLATORS: command name: lower case, no spaces, at most 32 characters
        name=locale_str("tictactoe-forget-me"),
        description=locale_str("Erase your tic-tac-toe stats, ratings and history in this server."),
    )
    @anywhere
    async def forget_me(self, interaction: discord.Interaction) -> None:
        user_id = interaction.user.id
        data = await self.service.privacy.member_data(home(interaction), user_id)
        t = user_translator(interaction)
        await interaction.response.send_message(
            view=confirm_view(member_question(data, t), ME, user_id, t),
            ephemeral=True,
            allowed_mentions=_QUIET,
        )

    @app_commands.command(
        # TRANSLATORS: command name: lower case, no spaces, at most 32 characters
        name=locale_str("tictactoe-forget-server"),
        description=locale_str("Erase everything I hold about this server (Manage Server)."),
    )
    @server_only
    @app_commands.default_permissions(manage_guild=True)
    async def forget_server(self, interaction: discord.Interaction) -> None:
        permissions = interaction.permissions
        data = await self.service.privacy.guild_data(
            server_home(interaction),
            may_manage=permissions.manage_guild,
            user_id=interaction.user.id,
            is_moderator=permissions.manage_messages,
        )
        t = user_translator(interaction)
        await interaction.response.send_message(
            view=confirm_view(guild_question(data, t), SERVER, interaction.user.id, t),
            ephemeral=True,
            allowed_mentions=_QUIET,
        )
