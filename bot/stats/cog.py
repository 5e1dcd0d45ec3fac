"""``/tictactoe-leaderboard`` and ``/tictactoe-stats``: read-only views of the server's
results; nobody is pinged. The leaderboard is the channel's, in the server's language; stats
answer only the asker, in their language, unless they ask for them in public."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot.app import GameService
from bot.errors import ChannelNotAllowed, GameError
from bot.games import rules
from bot.games.views import text_view
from bot.i18n import N_, Message
from bot.refs import Moment
from bot.stats.render import stats_text
from bot.stats.views import leaderboard_view
from bot.tunables import PUBLIC_ANSWER_COOLDOWN
from bot.ui.gate import (
    Pace,
    check_member,
    home,
    may_not_post,
    server_home,
    server_translator,
    slowmode_of,
    thread_parent,
    user_translator,
)
from bot.ui.places import anywhere, server_only
from bot.ui.refs import for_discord

_QUIET = discord.AllowedMentions.none()

PRIVATE = N_("Only you can see this answer.")
CANNOT_POST = N_("You can't send messages in this channel.")
SLOWMODE = N_("This channel is in slowmode.")


class Stats(commands.Cog):
    """Rankings and personal records."""

    def __init__(self, service: GameService) -> None:
        self.service = service
        self._pace = Pace()

    async def _why_private(self, interaction: discord.Interaction) -> Message | None:
        """Why an answer meant for the channel goes to the asker alone (None: it may be
        public): they may not post here, slowmode holds them, the server plays elsewhere
        (its game-channel list), or their last public answer was too recent. Only a
        public answer starts the member's cooldown."""
        assert interaction.channel_id is not None
        if may_not_post(interaction):
            return CANNOT_POST
        if slowmode_of(interaction):
            return SLOWMODE
        settings = await self.service.guilds.get(home(interaction))
        try:
            rules.check_allowed_channel(
                settings, interaction.channel_id, thread_parent(interaction)
            )
        except ChannelNotAllowed as elsewhere:
            return elsewhere.message
        key = (home(interaction), interaction.user.id)
        until = self._pace.take(key, self.service.config[PUBLIC_ANSWER_COOLDOWN])
        if until is None:
            return None
        return N_("You can show one to the channel again {when}.", when=Moment(until))

    @staticmethod
    def _note(interaction: discord.Interaction, why: Message) -> str:
        t = user_translator(interaction)
        return f"-# {t(PRIVATE)} {t(for_discord(why))}"

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
        why = await self._why_private(interaction)
        result = await self.service.stats.leaderboard(server_home(interaction), page)
        if why is None:
            view = leaderboard_view(result, server_translator(interaction))
        else:
            note = self._note(interaction, why)
            view = leaderboard_view(result, user_translator(interaction), note)
        await interaction.response.send_message(
            view=view, ephemeral=why is not None, allowed_mentions=_QUIET
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
        why = await self._why_private(interaction) if public else None
        public = public and why is None
        stats = await self.service.stats.player_stats(home(interaction), target.id)
        # What the channel sees is in the server's language; a private answer in the asker's.
        t = server_translator(interaction) if public else user_translator(interaction)
        text = stats_text(stats, t)
        if why is not None:
            text = f"{self._note(interaction, why)}\n{text}"
        await interaction.response.send_message(
            view=text_view(text), ephemeral=not public, allowed_mentions=_QUIET
        )
