"""``/tictactoe-forget-me`` and ``/tictactoe-forget-server``: erasing data on request.

Each command answers privately with what would be erased and two buttons, Erase and
Cancel (``ttt:forget:{me|server}:{asker}``, ``ttt:forget-cancel:{asker}``, routed by
``bot.ui.buttons`` to ``ForgetButtons``). Only the member who asked may click them, within
``CONFIRM_SECONDS`` of the question. The server's erasure is a command of its own, which
Discord shows only to members with Manage Server (``default_permissions``); since a
server's admins can change who sees a command, and a click carries no such check, the
permission is checked again, from the interaction, when asked and when confirmed.
"""

from __future__ import annotations

import re

import discord
from discord import ButtonStyle, app_commands, ui
from discord.app_commands import locale_str
from discord.ext import commands

from bot.errors import ConfirmationExpired, NotYourConfirmation
from bot.models import GuildData, MemberData
from bot.service import GameService
from bot.service.privacy import CONFIRM_SECONDS
from bot.ui.boards import Boards
from bot.ui.render import record_text
from bot.ui.views import text_view

__all__ = ["ForgetButtons", "Privacy", "confirm_view"]

_QUIET = discord.AllowedMentions.none()
ME, SERVER = "me", "server"


def confirm_view(text: str, scope: str, asker_id: int) -> ui.LayoutView:
    """The question, with [Erase] (danger) and [Cancel]; a view that only draws."""
    erase = ui.Button(
        label="Erase my data" if scope == ME else "Erase this server's data",
        style=ButtonStyle.danger,
        custom_id=f"ttt:forget:{scope}:{asker_id}",
    )
    cancel = ui.Button(
        label="Cancel", style=ButtonStyle.secondary, custom_id=f"ttt:forget-cancel:{asker_id}"
    )
    view = ui.LayoutView(timeout=None)
    view.add_item(ui.TextDisplay(text))
    view.add_item(ui.ActionRow(erase, cancel))
    view.stop()
    return view


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _valid_for() -> str:
    return f"-# These buttons work for {round(CONFIRM_SECONDS / 60)} minutes; only you see them."


def member_question(data: MemberData) -> str:
    player = data.player
    return "\n".join(
        [
            "### Erase your tic-tac-toe data in this server?",
            "This erases, in this server only:",
            f"- your rating ({player.rating:.0f}), your record against members"
            f" ({record_text(player.record)}) and your streaks",
            f"- your records against me ({_plural(data.bot_levels, 'level')})",
            f"- {_plural(data.challenges, 'challenge')} from or to you"
            " (pending ones are withdrawn), your cooldowns and your choice about challenges",
            f"Your {_plural(data.ended_games, 'past game')} stay in the other players' history,"
            " showing you as a deleted member. Other members' ratings don't change."
            " This can't be undone.",
            _valid_for(),
        ]
    )


def member_done(data: MemberData) -> str:
    withdrawn = len(data.withdrawn)
    lines = [
        "🗑️ Done: your rating, records, streaks, cooldowns and challenges in this server are"
        f" erased. Your {_plural(data.ended_games, 'past game')} now show a deleted member.",
    ]
    if withdrawn:
        lines.append(f"{_plural(withdrawn, 'pending challenge')} withdrawn.")
    return "\n".join(lines)


def guild_question(data: GuildData) -> str:
    return "\n".join(
        [
            "### Erase everything I hold about this server?",
            f"- {_plural(data.games, 'game')} (every member's history), "
            f"{_plural(data.challenges, 'challenge')}",
            f"- the ratings and records of {_plural(data.players, 'member')},"
            " their cooldowns and choices about challenges",
            "- this server's settings and allowed channels",
            "Every member's stats start again from nothing. This can't be undone.",
            _valid_for(),
        ]
    )


def guild_done(data: GuildData) -> str:
    return (
        f"🗑️ Done: {_plural(data.games, 'game')}, {_plural(data.challenges, 'challenge')},"
        f" the ratings of {_plural(data.players, 'member')} and this server's settings are"
        " erased."
    )


class Privacy(commands.Cog):
    """The two questions; the answers are ``ForgetButtons``."""

    def __init__(self, service: GameService) -> None:
        self.service = service

    @app_commands.command(
        # TRANSLATORS: command name: lower case, no spaces, at most 32 characters
        name=locale_str("tictactoe-forget-me"),
        description=locale_str("Erase your tic-tac-toe stats, ratings and history in this server."),
    )
    @app_commands.guild_only()
    async def forget_me(self, interaction: discord.Interaction) -> None:
        assert interaction.guild_id is not None
        user_id = interaction.user.id
        data = await self.service.privacy.member_data(interaction.guild_id, user_id)
        await interaction.response.send_message(
            view=confirm_view(member_question(data), ME, user_id),
            ephemeral=True,
            allowed_mentions=_QUIET,
        )

    @app_commands.command(
        # TRANSLATORS: command name: lower case, no spaces, at most 32 characters
        name=locale_str("tictactoe-forget-server"),
        description=locale_str("Erase everything I hold about this server (Manage Server)."),
    )
    @app_commands.guild_only()
    @app_commands.default_permissions(manage_guild=True)
    async def forget_server(self, interaction: discord.Interaction) -> None:
        assert interaction.guild_id is not None
        data = await self.service.privacy.guild_data(
            interaction.guild_id, may_manage=interaction.permissions.manage_guild
        )
        await interaction.response.send_message(
            view=confirm_view(guild_question(data), SERVER, interaction.user.id),
            ephemeral=True,
            allowed_mentions=_QUIET,
        )


class ForgetButtons:
    """The clicks on a question's buttons (routed here by ``bot.ui.buttons``)."""

    def __init__(self, service: GameService, boards: Boards) -> None:
        self._service = service
        self._boards = boards

    def _check(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        """Only the asker, within CONFIRM_SECONDS of the question (on Discord's clock)."""
        message = interaction.message
        if message is None:
            raise ConfirmationExpired()
        self._service.privacy.check_confirmation(
            int(match["user"]),
            interaction.user.id,
            message.created_at.timestamp(),
            interaction.created_at.timestamp(),
        )

    async def confirm(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        """Erase, then say so in place of the question and redraw withdrawn challenges."""
        assert interaction.guild_id is not None  # the gate refuses DMs
        self._check(interaction, match)
        privacy = self._service.privacy
        erased: MemberData | GuildData
        if match["scope"] == ME:
            erased = await privacy.erase_member(interaction.guild_id, interaction.user.id)
            done = member_done(erased)
        else:
            may_manage = interaction.permissions.manage_guild
            erased = await privacy.erase_guild(interaction.guild_id, may_manage=may_manage)
            done = guild_done(erased)
        await interaction.response.edit_message(view=text_view(done), allowed_mentions=_QUIET)
        for challenge in erased.withdrawn:
            await self._boards.redraw(challenge)

    async def cancel(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        """Say so in place of the question; a late Cancel changes nothing either."""
        if int(match["user"]) != interaction.user.id:
            raise NotYourConfirmation()
        await interaction.response.edit_message(
            view=text_view("Cancelled; nothing was erased."), allowed_mentions=_QUIET
        )
