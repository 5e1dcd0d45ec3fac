"""``/tictactoe`` (a game against the bot, or a challenge) and the member menu's
"Challenge to tic-tac-toe" (the same challenge with the default options)."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.app_commands import Choice, locale_str
from discord.ext import commands

from bot.app import GameService
from bot.challenges.thread_offer import Threads, offer
from bot.errors import ChannelBusy, GameError, InvalidSettings
from bot.games.boards import Boards
from bot.i18n import N_
from bot.models import First
from bot.refs import Moment
from bot.ui.commands_i18n import LABEL_SEPARATOR
from bot.ui.gate import (
    Pace,
    check_member,
    home,
    may_not_post,
    server_locale,
    slowmode_of,
    thread_parent,
)
from bot.ui.places import anywhere
from engine.levels import LEVELS, get_level

SIZES = {"3x3": 3, "4x4": 4, "5x5": 5}


LEVEL_NAMES = (
    # TRANSLATORS: a difficulty level, shown as "level — its description" in /tictactoe.
    locale_str("easy"),
    locale_str("medium"),
    locale_str("hard"),
    locale_str("impossible"),
)
"""The levels' names as the difficulty choices show them (marked for the catalogs; the
choice's value stays the English name)."""
FIRST_NAMES = {
    # TRANSLATORS: who moves first: the member who runs /tictactoe ("me" is always the bot).
    First.ME: locale_str("you"),
    # TRANSLATORS: who moves first: the other side, the bot itself in a game against it.
    First.OPPONENT: locale_str("your opponent (me, if you play me)"),
    First.RANDOM: locale_str("random"),
}
"""How the choices of who moves first read, spoken to the member who runs the command,
as the bot speaks everywhere ("me" is the bot): the values stay ``First``'s, which are
from that member's point of view."""


def _level_choice(name: str) -> Choice[str]:
    """``name — description``: ``CommandTranslator`` translates the two parts."""
    description = get_level(name).description
    label = f"{name}{LABEL_SEPARATOR}{description}" if description else name
    return Choice(name=locale_str(label if len(label) <= 100 else name), value=name)


def board_side(size: str) -> int:
    """The side of the board the size option names; InvalidSettings if none."""
    side = SIZES.get(size)
    if side is None:
        raise InvalidSettings(
            N_("Unknown board size {size}; pick 3x3, 4x4 or 5x5.", size=repr(size))
        )
    return side


class Games(commands.Cog):
    """Starting games: against the bot, or a challenge. Errors reach the user through the
    command tree's ``on_error``; admission is the tree's ``interaction_check``."""

    def __init__(self, service: GameService, boards: Boards, threads: Threads) -> None:
        self.service = service
        self.boards = boards
        self.threads = threads
        self._slowmode = Pace()  # (channel, member) -> when their slowmode lets them start
        # discord.py's context menus cannot be cog methods: the bot adds this one to its tree.
        self.menu = anywhere(
            app_commands.ContextMenu(
                # TRANSLATORS: a member menu's Apps entry: 1 to 32 characters, spaces allowed
                name=locale_str("Challenge to tic-tac-toe"),
                callback=self.challenge_member,
            )
        )

    @app_commands.command(
        # TRANSLATORS: command name: lower case, no spaces, at most 32 characters
        name=locale_str("tictactoe"),
        description=locale_str("Play tic-tac-toe against me, or challenge a member."),
    )
    @anywhere
    @app_commands.rename(
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        opponent=locale_str("opponent"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        difficulty=locale_str("difficulty"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        size=locale_str("size"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        win_length=locale_str("win_length"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        first=locale_str("first"),
    )
    @app_commands.describe(
        opponent=locale_str("A member to challenge; leave out to play against me"),
        difficulty=locale_str("How well I play (default medium); only for games against me"),
        size=locale_str("Board size (default 3x3)"),
        win_length=locale_str("Marks in a row to win (default 3 on 3x3, 4 on larger boards)"),
        first=locale_str("Who moves first: you or your opponent (default random)"),
    )
    @app_commands.choices(
        difficulty=[_level_choice(name) for name in LEVELS],
        size=[Choice(name=name, value=name) for name in SIZES],
        first=[Choice(name=label, value=first.value) for first, label in FIRST_NAMES.items()],
    )
    async def tictactoe(
        self,
        interaction: discord.Interaction,
        opponent: discord.Member | discord.User | None = None,
        difficulty: str | None = None,
        size: str = "3x3",
        win_length: app_commands.Range[int, 3, 5] | None = None,
        first: str = First.RANDOM.value,
    ) -> None:
        await self._start(interaction, opponent, difficulty, size, win_length, first)

    async def challenge_member(
        self, interaction: discord.Interaction, member: discord.Member | discord.User
    ) -> None:
        """The member menu's Apps > "Challenge to tic-tac-toe": ``/tictactoe`` naming them."""
        await self._start(interaction, member, None, "3x3", None, First.RANDOM.value)

    async def _start(
        self,
        interaction: discord.Interaction,
        opponent: discord.Member | discord.User | None,
        difficulty: str | None,
        size: str,
        win_length: int | None,
        first: str,
    ) -> None:
        """Start a game or challenge from ``/tictactoe`` or the member menu, where the
        member may post (a refusal otherwise, private as every refusal)."""
        assert interaction.channel_id is not None
        check_member(interaction, opponent)
        side = board_side(size)
        # The board is the member's message in the channel: it keeps the channel's rules.
        if may_not_post(interaction):
            raise GameError(
                N_("You can't send messages in this channel, so you can't start a game here.")
            )
        paced = (interaction.channel_id, interaction.user.id)
        if (until := self._slowmode.take(paced, slowmode_of(interaction))) is not None:
            raise GameError(
                N_(
                    "This channel is in slowmode: you can start a game here again {when}.",
                    when=Moment(until),
                )
            )
        posted = False
        try:
            posted = await self._start_game(
                interaction, opponent, difficulty, side, win_length, first
            )
        finally:
            if not posted:
                self._slowmode.give_back(paced)

    async def _start_game(
        self,
        interaction: discord.Interaction,
        opponent: discord.Member | discord.User | None,
        difficulty: str | None,
        side: int,
        win_length: int | None,
        first: str,
        *,
        checked: bool = False,
    ) -> bool:
        """Whether a board or challenge was posted (not a private refusal). Refused
        because of a live game, that game's board is checked first (``Reposts.check``,
        once: ``checked``): if it was deleted, whatever that settles is done and the
        command tries again."""
        assert interaction.channel_id is not None

        async def defer() -> None:
            await interaction.response.defer(thinking=True)

        me = interaction.client.user
        against_bot = opponent is None or (me is not None and opponent.id == me.id)
        try:
            if against_bot:
                game = await self.service.start_bot_game(
                    home(interaction),
                    interaction.channel_id,
                    interaction.user.id,
                    level=difficulty,
                    width=side,
                    height=side,
                    k=win_length,
                    first=first,
                    locale=server_locale(interaction),
                    parent_id=thread_parent(interaction),
                    on_slow=defer,
                )
                await self.boards.post(interaction, game)
                return True
            assert opponent is not None
            challenge = await self.service.challenges.create(
                home(interaction),
                interaction.channel_id,
                interaction.user.id,
                opponent.id,
                opponent_is_bot=opponent.bot,
                level=difficulty,  # refused: a difficulty is for games against me
                width=side,
                height=side,
                k=win_length,
                first=first,
                locale=server_locale(interaction),
                parent_id=thread_parent(interaction),
            )
        except ChannelBusy as busy:
            if not checked and busy.game is not None and await self.boards.reposts.check(busy.game):
                args = (interaction, opponent, difficulty, side, win_length, first)
                return await self._start_game(*args, checked=True)
            rival = None if against_bot or opponent is None else opponent.id
            choice = offer(rival, difficulty, side, win_length, first)
            await self.threads.refuse(interaction, busy, choice)
            return False
        await self.boards.post(interaction, challenge)
        return True
