"""Every button the bot draws, routed by its custom_id from one ``on_interaction`` listener.

The custom_id carries all a click needs (``ttt:cell:{game}:{cell}:{move_no}``,
``ttt:forfeit:{game}``, ``ttt:accept:{challenge}``, ...); the handler loads the rest from
the database, so buttons work across restarts. Why one listener rather than a
``DynamicItem`` per button: discord.py dispatches a dynamic item by first rebuilding the
whole clicked message as a view, which costs as much CPU as drawing the board again
(75 µs on 3x3, 165 µs on 5x5, ``python -m bench.routing``), where a listener costs a
regular-expression match (``bot.ui.ids``); and it drops, unanswered, a click whose
custom_id is no longer on the message as Discord sent it. Here every click that arrives
is answered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import discord

from bot.errors import CellTaken, GameError, GameOver, StaleBoard
from bot.i18n import N_, translator
from bot.models import Challenge, ChallengeStatus, GameStatus
from bot.service import GameService, Rematched
from bot.ui import ids, render, render_end
from bot.ui.boards import Boards
from bot.ui.gate import (
    Gate,
    answer_error,
    send_ephemeral,
    server_locale,
    server_translator,
    thread_parent,
    user_translator,
)
from bot.ui.preferences import PreferenceButtons
from bot.ui.privacy_buttons import ForgetButtons
from bot.ui.render_review import review_text
from bot.ui.threads import Threads
from bot.ui.views import calloff_view, forfeit_view, leaderboard_view

__all__ = ["QUICK_REPLY_SECONDS", "Buttons"]

QUICK_REPLY_SECONDS = 1.0
"""How long a click waits for a bot reply expected to be quick (a small board, a weak
level) before answering with "My move…" anyway: such a reply can still queue behind long
searches in the pool, and Discord allows 3 seconds for the answer."""

_QUIET = discord.AllowedMentions.none()
NO_LONGER_IN_USE = N_("This button is no longer in use.")
_Handler = Callable[[discord.Interaction, Any], Awaitable[None]]


def _clicked(interaction: discord.Interaction) -> int | None:
    """The id of the message whose button was clicked: the service refuses a click on a
    message that is not the one recorded for the game or challenge in the custom_id."""
    return interaction.message.id if interaction.message is not None else None


def _on_a_question(interaction: discord.Interaction) -> None:
    """Refuse an answer to a private question clicked anywhere else (a forged custom_id
    on a board would replace the board with the answer)."""
    message = interaction.message
    if message is None or not message.flags.ephemeral:
        raise GameError(NO_LONGER_IN_USE)


class Buttons:
    """Routes ``ttt:`` clicks to their handlers, through the gate."""

    def __init__(self, service: GameService, boards: Boards, gate: Gate) -> None:
        self._service = service
        self._boards = boards
        self._gate = gate
        forget = ForgetButtons(service, boards)
        self.threads = Threads(service, boards)  # the cog's busy refusals offer its button
        self._routes: dict[type[ids.CustomId], _Handler] = {
            ids.Cell: self.cell,
            ids.Taken: self.taken,
            ids.Over: self.over,
            ids.Forfeit: self.forfeit,
            ids.Rematch: self.rematch,
            ids.Review: self.review,
            ids.Accept: self.accept,
            ids.Decline: self.decline,
            ids.Withdraw: self.withdraw,
            ids.LeaderboardPage: self.leaderboard_page,
            ids.Quit: self.quit,
            ids.OldQuit: self.old_quit,
            ids.KeepPlaying: self.keep_playing,
            ids.Calloff: self.propose_calloff,
            ids.CalloffAnswer: self.answer_calloff,
            ids.ThreadBot: self.threads.open,
            ids.ThreadChallenge: self.threads.open,
            ids.Forget: forget.confirm,
            ids.ForgetCancel: forget.cancel,
            ids.Preference: PreferenceButtons(service).switch,
        }

    async def handle(self, interaction: discord.Interaction) -> None:
        """Handle a click. Every component on the bot's messages is its own, so a
        custom_id that is no kind of ``bot.ui.ids`` (an old version's, a forged one) is
        answered too, never left to fail."""
        data: Any = interaction.data or {}
        click = ids.parse(data.get("custom_id"))
        if not await self._gate.admit(interaction):
            return
        try:
            if click is None:
                raise GameError(NO_LONGER_IN_USE)
            await self._routes[type(click)](interaction, click)
        except Exception as error:
            await answer_error(interaction, error)

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
                guild_id=interaction.guild_id,
                message_id=_clicked(interaction),
                await_reply=False,
            )
        except (StaleBoard, GameOver) as error:
            await answer_error(interaction, error)
            await self._boards.refresh(game_id, interaction)
            return
        game = moved.game
        if game.status is GameStatus.BOT_TO_MOVE:
            reply = asyncio.ensure_future(service.bot_reply(game))
            if not service.is_slow_search(game):  # usually quick, unless the pool is busy
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
        game = await self._service.get_game(game_id, interaction.guild_id)
        if game.is_live:
            raise CellTaken()
        await answer_error(interaction, GameOver())
        await self._boards.refresh(game_id, interaction)

    async def over(self, interaction: discord.Interaction, click: ids.Over) -> None:
        """A click on a finished board: "already over" (or gone, after an erasure)."""
        await self._service.get_game(click.game, interaction.guild_id)
        raise GameOver()

    async def forfeit(self, interaction: discord.Interaction, click: ids.Forfeit) -> None:
        """Forfeit on the board asks first, privately: nothing changes until the player
        confirms (``quit``), at this move and within ``FORFEIT_CONFIRM_SECONDS``."""
        game_id = click.game
        try:
            game, until = await self._service.endings.ask_forfeit(
                game_id, interaction.user.id, interaction.guild_id, _clicked(interaction)
            )
        except GameOver as error:
            # Perhaps the clock ran out first (settled just now): show how it ended.
            await answer_error(interaction, error)
            await self._boards.refresh(game_id, interaction)
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

    async def rematch(self, interaction: discord.Interaction, click: ids.Rematch) -> None:
        async def defer() -> None:
            await interaction.response.defer(thinking=True)

        new = await self._service.rematch(
            click.game,
            interaction.user.id,
            interaction.guild_id,
            locale=server_locale(interaction),
            parent_id=thread_parent(interaction),
            on_slow=defer,
        )
        if isinstance(new, Rematched):  # the other player's rematch, accepted: play
            await self._boards.post(interaction, new.game)
            await self._boards.redraw(new.challenge)
            await self._boards.delete_stale_ping(new.game, interaction)
            return
        await self._boards.post(interaction, new)

    async def review(self, interaction: discord.Interaction, click: ids.Review) -> None:
        """The game's review, privately: at once if stored (or cheap); if it needs a
        search, the answer is deferred (ephemeral "thinking") once the checks passed,
        and the review edited in."""

        async def defer() -> None:
            await interaction.response.defer(ephemeral=True, thinking=True)

        assert interaction.guild_id is not None  # the gate refuses DMs
        game, review = await self._service.reviews.review(
            click.game, interaction.user.id, interaction.guild_id, on_search=defer
        )
        text = review_text(game, review, user_translator(interaction))
        if interaction.response.is_done():
            mentions = discord.AllowedMentions.none()
            await interaction.edit_original_response(content=text, allowed_mentions=mentions)
        else:
            await send_ephemeral(interaction, text)

    # -- the question before a forfeit (Forfeit, or /tictactoe-stop) -------------------

    async def quit(self, interaction: discord.Interaction, click: ids.Quit) -> None:
        """The player confirmed: the game ends (a forfeit, or an abort before both moved),
        said in place of the question; the board, another message, is redrawn after."""
        _on_a_question(interaction)
        try:
            game = await self._service.endings.forfeit(
                click.game,
                interaction.user.id,
                interaction.guild_id,
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
        await self._service.endings.forfeit(click.game, user, interaction.guild_id, until=0.0)

    async def keep_playing(self, interaction: discord.Interaction, click: ids.KeepPlaying) -> None:
        """Cancel: said in place of the question; nothing changes."""
        _on_a_question(interaction)
        kept = user_translator(interaction)(N_("Cancelled: the game goes on."))
        await interaction.response.edit_message(content=kept, view=None, allowed_mentions=_QUIET)

    async def propose_calloff(self, interaction: discord.Interaction, click: ids.Calloff) -> None:
        """Ask the other player, by a new message that pings only them, to call it off."""
        service = self._service
        user = interaction.user.id
        game, lapsed = await service.calloffs.propose(click.game, user, interaction.guild_id)
        if lapsed is not None:  # made at an earlier move: its message goes
            self._boards.notices.lapsed(lapsed, game.channel_id)
        other = game.o_id if user == game.x_id else game.x_id
        assert other is not None  # a member game: only those can be rated
        asked = N_("I asked {member} whether to call the game off.", member=f"<@{other}>")
        t = user_translator(interaction)
        await interaction.response.edit_message(content=t(asked), view=None)
        message = await interaction.followup.send(
            render.calloff_text(game, user, other, translator(game.locale)),
            view=calloff_view(game),
            allowed_mentions=discord.AllowedMentions(users=[discord.Object(other)]),
            wait=True,
        )
        await service.calloffs.set_message(game.id, user, message.id)

    async def answer_calloff(
        self, interaction: discord.Interaction, click: ids.CalloffAnswer
    ) -> None:
        agree = click.agree
        game = await self._service.calloffs.answer(
            click.game, interaction.user.id, agree, interaction.guild_id
        )
        text = render.calloff_answer_text(agree, interaction.user.id, translator(game.locale))
        await interaction.response.edit_message(content=text, view=None, allowed_mentions=_QUIET)
        if agree:
            await self._boards.redraw(game)
            await self._boards.delete_stale_ping(game)

    # -- challenges and the leaderboard --------------------------------------------------

    async def accept(self, interaction: discord.Interaction, click: ids.Accept) -> None:
        """The challenged member accepts: the challenge message becomes the board."""
        challenge_id = click.challenge
        try:
            game = await self._service.challenges.accept(
                challenge_id, interaction.user.id, interaction.guild_id, _clicked(interaction)
            )
        except GameError as error:
            await self._answer_closed(interaction, challenge_id, error)
            return
        await self._boards.answer(interaction, game)
        if interaction.message is not None and game.message_id != interaction.message.id:
            await self._service.set_game_message(game.id, interaction.message.id)
        await self._boards.delete_stale_ping(game, interaction)
        # Nobody is pinged now: whoever clicked Accept is looking at the board, and the
        # other player is pinged by the sweep only if they let their turn wait.

    async def decline(self, interaction: discord.Interaction, click: ids.Decline) -> None:
        """The challenged member declines (anyone else is refused, privately)."""
        await self._close(interaction, click.challenge, self._service.challenges.decline)

    async def withdraw(self, interaction: discord.Interaction, click: ids.Withdraw) -> None:
        """The challenger withdraws (anyone else is refused, privately)."""
        await self._close(interaction, click.challenge, self._service.challenges.withdraw)

    async def _close(
        self,
        interaction: discord.Interaction,
        challenge_id: int,
        close: Callable[[int, int, int | None, int | None], Awaitable[Challenge]],
    ) -> None:
        try:
            challenge = await close(
                challenge_id, interaction.user.id, interaction.guild_id, _clicked(interaction)
            )
        except GameError as error:
            await self._answer_closed(interaction, challenge_id, error)
            return
        await self._boards.answer_challenge(interaction, challenge)

    async def _answer_closed(
        self, interaction: discord.Interaction, challenge_id: int, error: GameError
    ) -> None:
        """Tell the user why the challenge can't be answered, and bring its message up to
        date if it shows a challenge that is no longer open."""
        await answer_error(interaction, error)
        try:
            challenge = await self._service.challenges.get(
                challenge_id, interaction.guild_id, _clicked(interaction)
            )
        except GameError:
            return
        if challenge.status is not ChallengeStatus.PENDING:
            await self._boards.redraw(challenge)

    async def leaderboard_page(
        self, interaction: discord.Interaction, click: ids.LeaderboardPage
    ) -> None:
        assert interaction.guild_id is not None  # the gate refuses DMs
        page = await self._service.stats.leaderboard(interaction.guild_id, click.page)
        await interaction.response.edit_message(
            view=leaderboard_view(page, server_translator(interaction)),
            allowed_mentions=discord.AllowedMentions.none(),
        )
