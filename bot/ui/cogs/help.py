"""``/tictactoe-help``: what each command does and how a game goes, for the reader alone.

The commands are listed from the tree itself, each by the name and description the
reader's Discord client shows (``CommandTranslator``'s answers: their own catalog's, else
the English), so the help never drifts from the commands.
"""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import TranslationContextLocation as Where
from discord.app_commands import locale_str
from discord.ext import commands

from bot.i18n import N_
from bot.ui.commands_i18n import CommandTranslator
from bot.ui.gate import reader, send_ephemeral

PLAY = N_("tictactoe")
MENU = N_("Challenge to tic-tac-toe")


class Help(commands.Cog):
    """The help, in the reader's language."""

    def __init__(self) -> None:
        self.names = CommandTranslator()

    def _shown(self, text: str, locale: str, where: Where) -> str:
        """``text`` as the reader's client shows it."""
        return self.names.localize(text, locale, where) or text

    @app_commands.command(
        # TRANSLATORS: command name: lower case, no spaces, at most 32 characters
        name=locale_str("tictactoe-help"),
        description=locale_str("How to play, and what each command does."),
    )
    @app_commands.guild_only()
    async def tictactoe_help(self, interaction: discord.Interaction) -> None:
        t = reader(interaction)
        locale = interaction.locale.value
        tree = interaction.client.tree  # type: ignore[attr-defined]
        title = t(N_("Tic-tac-toe commands"))
        lines = [f"**{title}**"]
        for command in tree.get_commands(type=discord.AppCommandType.chat_input):
            name = self._shown(command.name, locale, Where.command_name)
            about = self._shown(command.description, locale, Where.command_description)
            lines.append(f"`/{name}` — {about}")
        menu = self._shown(MENU.singular, locale, Where.command_name)
        lines.append(
            t(
                N_(
                    "Right-click a member (on a phone, tap and hold) > Apps > {menu}: a"
                    " challenge with the default options.",
                    menu=menu,
                )
            )
        )
        play = self._shown(PLAY.singular, locale, Where.command_name)
        heading = t(N_("How a game goes"))
        lines += [
            "",
            f"**{heading}**",
            t(
                N_(
                    "Start with /{command}: play against me at the level you pick, or name a"
                    " member to challenge, who accepts or declines. Players take turns clicking"
                    " an empty cell; whoever first fills a line of the chosen length (across,"
                    " down or diagonally) wins, and a full board without one is a draw. Each"
                    " move has a time limit: a player who runs out of time loses. Rated games"
                    " between members change the players' ratings and the server's leaderboard.",
                    command=play,
                )
            ),
        ]
        await send_ephemeral(interaction, "\n".join(lines))
