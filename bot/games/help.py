"""``/tictactoe-help``: what each command does and how a game goes, for the reader alone.

The commands are listed from the tree itself, each by the name and description the
reader's Discord client shows (``CommandTranslator``'s answers: their own catalog's, else
the English), so the help never drifts from the commands.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands
from discord.app_commands import TranslationContextLocation as Where
from discord.app_commands import locale_str
from discord.ext import commands

from bot.games.render import level_name
from bot.i18n import N_, Translator
from bot.ui.commands_i18n import CommandTranslator
from bot.ui.gate import send_ephemeral, user_translator
from bot.ui.places import anywhere

PLAY = N_("tictactoe")
MENU = N_("Challenge to tic-tac-toe")


def help_text(
    commands: list[app_commands.Command[Any, ..., Any] | app_commands.Group],
    locale: str,
    t: Translator,
    names: CommandTranslator,
) -> str:
    """The help for a reader whose client shows ``locale``: ``commands`` by the names and
    descriptions it shows them (``names``), then how a game goes, in ``t``'s language."""

    def shown(text: str, where: Where) -> str:
        return names.localize(text, locale, where) or text

    title = t(N_("Tic-tac-toe commands"))
    lines = [f"**{title}**"]
    for command in commands:
        name = shown(command.name, Where.command_name)
        about = shown(command.description, Where.command_description)
        lines.append(f"`/{name}` — {about}")
    menu = shown(MENU.singular, Where.command_name)
    lines.append(
        t(
            N_(
                "Right-click a member (on a phone, tap and hold) > Apps > {menu}: a"
                " challenge with the default options.",
                menu=menu,
            )
        )
    )
    play = shown(PLAY.singular, Where.command_name)
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
        t(
            N_(
                "With three in a row on 4×4 or 5×5, the first player can always force a win:"
                " games between members there are unrated, and at {level} I win whenever I"
                " move first.",
                level=level_name("impossible", t),
            )
        ),
    ]
    lines.append(
        t(
            N_(
                "Forfeit asks you first. A game between members that ends before both"
                " players have moved is aborted: it doesn't count, however it ends."
            )
        )
    )
    return "\n".join(lines)


class Help(commands.Cog):
    """The help, in the reader's language."""

    def __init__(self) -> None:
        self.names = CommandTranslator()

    @app_commands.command(
        # TRANSLATORS: command name: lower case, no spaces, at most 32 characters
        name=locale_str("tictactoe-help"),
        description=locale_str("How to play, and what each command does."),
    )
    @anywhere
    async def tictactoe_help(self, interaction: discord.Interaction) -> None:
        tree = interaction.client.tree  # type: ignore[attr-defined]
        commands = tree.get_commands(type=discord.AppCommandType.chat_input)
        t = user_translator(interaction)
        text = help_text(commands, interaction.locale.value, t, self.names)
        await send_ephemeral(interaction, text)
