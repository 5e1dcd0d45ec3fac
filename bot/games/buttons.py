"""The clicks on a game's board: a cell, a mark, Forfeit (and the private question it
asks: ``ids.Quit``, ``ids.KeepPlaying``). Routed here by ``bot.ui.router``."""

from __future__ import annotations

import asyncio

import discord

from bot.app import GameService
from bot.errors import CellTaken, GameOver, StaleBoard
from bot.games import render_end
from bot.games.boards import Boards
from bot.games.views import forfeit_view
from bot.i18n import N_
from bot.ui import ids
from bot.ui.gate import (
    answer_error,
    home,
    user_translator,
)
from bot.ui.router import Router, clicked_message, on_a_question

__all__ = ["QUICK_REPLY_SECONDS", "BoardButtons"]

QUICK_REPLY_SECONDS = 1.0
"""How long a click waits for a bot reply expected to be quick (a small board, a weak
level) before answering with "My move…" anyway: such a reply can still queue behind long
searches in the pool, and Discord allows 3 seconds for the answer."""

_QUIET = discord.AllowedMentions.none()


class BoardButtons:
    def __init__(self, service: GameService, boards: Boards) -> None:
        self._service = service
        self._boards = boards

    def register(self, router: Router) -> None:
        router.register(ids.Cell, self.cell)
        router.register(ids.Taken, self.taken)
        router.register(ids.Over, self.over)
        router.register(ids.Forfeit, self.forfeit)
        router.register(ids.Quit, self.quit)
        router.register(ids.OldQuit, self.old_quit)
        router.register(ids.KeepPlaying, self.keep_playing)

    # -- the board ----------------------------------------------------------------------

    async def cell(self, interaction: discord.Interaction, click: ids.Cell) -> None:
        """Play the cell and answer with the new board.

        The move is checked and stored before anything is sent, so a refused click gets a
        plain ephemeral answer. A bot reply that needs a search is not awaited inside
        Discord's 3 seconds: the answer shows the player's move with "My move…", and the
        board is edited again when the reply is stored. So it is when a reply expected
        to be quick is not there within QUICK_REPLY_SECONDS.
        """
        game_id = click.game
        service = self._service
        try:
            moved = await service.move(
                game_id,
                interaction.user.id,
                click.cell,
                click.move,
                guild_id=home(interaction),
                message_id=clicked_message(interaction),
                await_reply=False,
            )
        except (StaleBoard, GameOver) as error:
            await self._boards.stale_click(interaction, game_id, error)
            return
        game, plan = moved.game, moved.reply
        if plan is not None:  # the reply is owed, from the pool
            reply = asyncio.ensure_future(service.bot_reply(game, plan))
            if not plan.answer_first:  # usually quick, unless the pool is busy
                await asyncio.wait({reply}, timeout=QUICK_REPLY_SECONDS)
            if not reply.done():
                await self._boards.answer(interaction, game)
                game = await reply
                await self._boards.edit_answer(interaction, game)
                await self._boards.delete_stale_ping(game, interaction)
                return
            game = reply.result()
        await self._boards.answer(interaction, game)
        # After the answer: the last ping goes (known from the move's read; a game
        # against the bot has none).
        self._boards.delete_moved_ping(moved, interaction)

    async def taken(self, interaction: discord.Interaction, click: ids.Taken) -> None:
        """A click on a mark of a live board: "already taken", nothing changes. If the game
        ended meanwhile (the board is out of date), "already over", and the board is
        brought up to date as after any stale click."""
        game_id = click.game
        game = await self._service.get_game(game_id, home(interaction))
        if game.is_live:
            raise CellTaken()
        await self._boards.stale_click(interaction, game_id, GameOver())

    async def over(self, interaction: discord.Interaction, click: ids.Over) -> None:
        """A click on a finished board: "already over" (or gone, after an erasure)."""
        await self._service.get_game(click.game, home(interaction))
        raise GameOver()

    async def forfeit(self, interaction: discord.Interaction, click: ids.Forfeit) -> None:
        """Forfeit on the board asks first, privately: nothing changes until the player
        confirms (``quit``), at this move and within ``FORFEIT_CONFIRM_SECONDS``."""
        game_id = click.game
        try:
            game, until = await self._service.endings.ask_forfeit(
                game_id, interaction.user.id, home(interaction), clicked_message(interaction)
            )
        except GameOver as error:
            # Perhaps the clock ran out first (settled just now): show how it ended.
            await self._boards.stale_click(interaction, game_id, error)
            return
        # The board stays as it is (a deferred update, whose token can redraw it once the
        # player answers), and the question goes to the player alone.
        await interaction.response.defer()
        self._boards.asked(game, interaction.user.id, interaction)
        t = user_translator(interaction)
        await interaction.followup.send(
            render_end.forfeit_question_text(game, until, t),
            view=forfeit_view(game, until, t),
            ephemeral=True,
            allowed_mentions=_QUIET,
        )

    # -- the question before a forfeit (Forfeit, or /tictactoe-stop) -------------------

    async def quit(self, interaction: discord.Interaction, click: ids.Quit) -> None:
        """The player confirmed: the game ends (a forfeit, or an abort before both moved),
        said in place of the question; the board, another message, is redrawn after."""
        on_a_question(interaction)
        try:
            game = await self._service.endings.forfeit(
                click.game,
                interaction.user.id,
                home(interaction),
                move_no=click.move,
                until=click.until,
            )
        except GameOver as error:
            await answer_error(interaction, error)
            if error.game is not None:  # its clock ran out just now: show how it ended
                await self._boards.redraw_for(error.game, interaction.user.id)
                await self._boards.delete_stale_ping(error.game)
            return
        done = render_end.forfeit_done_text(game, user_translator(interaction))
        await interaction.response.edit_message(content=done, view=None, allowed_mentions=_QUIET)
        await self._boards.redraw_for(game, interaction.user.id)
        await self._boards.delete_stale_ping(game)

    async def old_quit(self, interaction: discord.Interaction, click: ids.OldQuit) -> None:
        """An older version's question, which carries no expiry: as if expired, so only a
        fresh question ends a game."""
        user = interaction.user.id
        await self._service.endings.forfeit(click.game, user, home(interaction), until=0.0)

    async def keep_playing(self, interaction: discord.Interaction, click: ids.KeepPlaying) -> None:
        """Cancel: said in place of the question; nothing changes."""
        on_a_question(interaction)
        kept = user_translator(interaction)(N_("Cancelled: the game goes on."))
        await interaction.response.edit_message(content=kept, view=None, allowed_mentions=_QUIET)
