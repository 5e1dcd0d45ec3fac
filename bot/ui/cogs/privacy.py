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

import discord
from discord import ButtonStyle, app_commands, ui
from discord.app_commands import locale_str
from discord.ext import commands

from bot.errors import ConfirmationExpired, NotYourConfirmation
from bot.i18n import N_, Nn_, Translator
from bot.models import GuildData, MemberData
from bot.service import GameService
from bot.service.privacy import CONFIRM_SECONDS
from bot.ui import ids
from bot.ui.boards import Boards
from bot.ui.gate import reader
from bot.ui.render import record_text
from bot.ui.views import text_view

__all__ = ["ForgetButtons", "Privacy", "confirm_view"]

_QUIET = discord.AllowedMentions.none()
ME, SERVER = "me", "server"


def confirm_view(text: str, scope: str, asker_id: int, t: Translator) -> ui.LayoutView:
    """The question, with [Erase] (danger) and [Cancel]; a view that only draws."""
    erase = ui.Button(
        label=t(N_("Erase my data") if scope == ME else N_("Erase this server's data")),
        style=ButtonStyle.danger,
        custom_id=ids.Forget(scope, asker_id).format(),
    )
    cancel = ui.Button(
        label=t(N_("Cancel")),
        style=ButtonStyle.secondary,
        custom_id=ids.ForgetCancel(asker_id).format(),
    )
    view = ui.LayoutView(timeout=None)
    view.add_item(ui.TextDisplay(text))
    view.add_item(ui.ActionRow(erase, cancel))
    view.stop()
    return view


def _valid_for(t: Translator) -> str:
    minutes = round(CONFIRM_SECONDS / 60)
    return "-# " + t(
        Nn_(
            "These buttons work for {n} minute; only you see them.",
            "These buttons work for {n} minutes; only you see them.",
            minutes,
        )
    )


def member_question(data: MemberData, t: Translator) -> str:
    player = data.player
    return "\n".join(
        [
            "### " + t(N_("Erase your tic-tac-toe data in this server?")),
            t(N_("This erases, in this server only:")),
            "- "
            + t(
                N_(
                    "your rating ({rating}), your record against members ({record}) and your"
                    " streaks",
                    rating=f"{player.rating:.0f}",
                    record=record_text(player.record, t),
                )
            ),
            "- "
            + t(
                Nn_(
                    "your records against me ({n} level)",
                    "your records against me ({n} levels)",
                    data.bot_levels,
                )
            ),
            "- "
            + t(
                Nn_(
                    "{n} challenge from or to you (pending ones are withdrawn), your cooldowns"
                    " and your choice about challenges",
                    "{n} challenges from or to you (pending ones are withdrawn), your cooldowns"
                    " and your choice about challenges",
                    data.challenges,
                )
            ),
            t(
                Nn_(
                    "Your {n} past game stays in the other players' history, showing you as a"
                    " deleted member. Other members' ratings don't change. This can't be undone.",
                    "Your {n} past games stay in the other players' history, showing you as a"
                    " deleted member. Other members' ratings don't change. This can't be undone.",
                    data.ended_games,
                )
            ),
            _valid_for(t),
        ]
    )


def member_done(data: MemberData, t: Translator) -> str:
    withdrawn = len(data.withdrawn)
    lines = [
        "🗑️ "
        + t(
            Nn_(
                "Done: your rating, records, streaks, cooldowns and challenges in this server"
                " are erased. Your {n} past game now shows a deleted member.",
                "Done: your rating, records, streaks, cooldowns and challenges in this server"
                " are erased. Your {n} past games now show a deleted member.",
                data.ended_games,
            )
        ),
    ]
    if withdrawn:
        lines.append(
            t(
                Nn_(
                    "{n} pending challenge withdrawn.",
                    "{n} pending challenges withdrawn.",
                    withdrawn,
                )
            )
        )
    return "\n".join(lines)


def _guild_counts(data: GuildData, t: Translator) -> dict[str, str]:
    return {
        "games": t(Nn_("{n} game", "{n} games", data.games)),
        "challenges": t(Nn_("{n} challenge", "{n} challenges", data.challenges)),
        "members": t(Nn_("{n} member", "{n} members", data.players)),
    }


def guild_question(data: GuildData, t: Translator) -> str:
    counts = _guild_counts(data, t)
    return "\n".join(
        [
            "### " + t(N_("Erase everything I hold about this server?")),
            "- "
            + t(
                N_(
                    "{games} (every member's history), {challenges}",
                    games=counts["games"],
                    challenges=counts["challenges"],
                )
            ),
            "- "
            + t(
                N_(
                    "the ratings and records of {members}, their cooldowns and choices about"
                    " challenges",
                    members=counts["members"],
                )
            ),
            "- " + t(N_("this server's settings and allowed channels")),
            t(N_("Every member's stats start again from nothing. This can't be undone.")),
            _valid_for(t),
        ]
    )


def guild_done(data: GuildData, t: Translator) -> str:
    done = N_(
        "Done: {games}, {challenges}, the ratings of {members} and this server's settings"
        " are erased.",
        **_guild_counts(data, t),
    )
    return "🗑️ " + t(done)


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
        t = reader(interaction)
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
    @app_commands.guild_only()
    @app_commands.default_permissions(manage_guild=True)
    async def forget_server(self, interaction: discord.Interaction) -> None:
        assert interaction.guild_id is not None
        data = await self.service.privacy.guild_data(
            interaction.guild_id, may_manage=interaction.permissions.manage_guild
        )
        t = reader(interaction)
        await interaction.response.send_message(
            view=confirm_view(guild_question(data, t), SERVER, interaction.user.id, t),
            ephemeral=True,
            allowed_mentions=_QUIET,
        )


class ForgetButtons:
    """The clicks on a question's buttons (routed here by ``bot.ui.buttons``)."""

    def __init__(self, service: GameService, boards: Boards) -> None:
        self._service = service
        self._boards = boards

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
        assert interaction.guild_id is not None  # the gate refuses DMs
        self._check(interaction, click.user)
        privacy = self._service.privacy
        t = reader(interaction)
        erased: MemberData | GuildData
        if click.scope == ME:
            erased = await privacy.erase_member(interaction.guild_id, interaction.user.id)
            done = member_done(erased, t)
        else:
            may_manage = interaction.permissions.manage_guild
            erased = await privacy.erase_guild(interaction.guild_id, may_manage=may_manage)
            done = guild_done(erased, t)
        await interaction.response.edit_message(view=text_view(done), allowed_mentions=_QUIET)
        for challenge in erased.withdrawn:
            await self._boards.redraw(challenge)

    async def cancel(self, interaction: discord.Interaction, click: ids.ForgetCancel) -> None:
        """Say so in place of the question; a late Cancel changes nothing either."""
        if click.user != interaction.user.id:
            raise NotYourConfirmation()
        await interaction.response.edit_message(
            view=text_view(reader(interaction)(N_("Cancelled; nothing was erased."))),
            allowed_mentions=_QUIET,
        )
