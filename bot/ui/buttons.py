"""Every button the bot draws, routed by its custom_id from one ``on_interaction`` listener.

The custom_id carries all a click needs (``ttt:cell:{game}:{cell}:{move_no}``,
``ttt:forfeit:{game}``, ``ttt:accept:{challenge}``, ...); the handler loads the rest from
the database, so buttons work across restarts. Why one listener rather than a
``DynamicItem`` per button: discord.py dispatches a dynamic item by first rebuilding the
whole clicked message as a view, which costs as much CPU as drawing the board again
(75 µs on 3x3, 165 µs on 5x5, ``python bench/routing.py``), where a listener costs a
regular-expression match; and it drops, unanswered, a click whose custom_id is no longer
on the message as Discord sent it. Here every click that arrives is answered.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

import discord

from bot.errors import CellTaken, GameError, GameOver, StaleBoard
from bot.i18n import N_, translator
from bot.models import Challenge, ChallengeStatus, GameStatus
from bot.service import GameService
from bot.ui import render
from bot.ui.boards import Boards
from bot.ui.cogs.privacy import ForgetButtons
from bot.ui.gate import (
    Gate,
    answer_error,
    reader,
    send_ephemeral,
    server_locale,
    server_reader,
    thread_parent,
)
from bot.ui.views import calloff_view, leaderboard_view

__all__ = ["PATTERNS", "QUICK_REPLY_SECONDS", "Buttons"]

QUICK_REPLY_SECONDS = 1.0
"""How long a click waits for a bot reply expected to be quick (a small board, a weak
level) before answering with "My move…" anyway: such a reply can still queue behind long
searches in the pool, and Discord allows 3 seconds for the answer."""

_ID = r"[1-9][0-9]{0,17}"  # database ids: positive, at most 18 digits
_USER = r"[1-9][0-9]{0,19}"  # Discord user ids (snowflakes): at most 20 digits
PATTERNS = {
    "cell": re.compile(
        rf"\Attt:cell:(?P<game>{_ID}):(?P<cell>[0-9]{{1,2}}):(?P<move>[0-9]{{1,2}})\Z"
    ),
    # A mark on a live board, and any cell of a finished one (their clicks change nothing).
    "taken": re.compile(rf"\Attt:taken:(?P<game>{_ID}):(?P<cell>[0-9]{{1,2}})\Z"),
    "over": re.compile(rf"\Attt:over:(?P<game>{_ID}):(?P<cell>[0-9]{{1,2}})\Z"),
    "forfeit": re.compile(rf"\Attt:forfeit:(?P<game>{_ID})\Z"),
    "rematch": re.compile(rf"\Attt:rematch:(?P<game>{_ID})\Z"),
    "review": re.compile(rf"\Attt:review:(?P<game>{_ID})\Z"),
    "accept": re.compile(rf"\Attt:accept:(?P<challenge>{_ID})\Z"),
    "decline": re.compile(rf"\Attt:decline:(?P<challenge>{_ID})\Z"),
    "withdraw": re.compile(rf"\Attt:withdraw:(?P<challenge>{_ID})\Z"),
    "lb": re.compile(r"\Attt:lb:(?P<page>[0-9]{1,6})\Z"),
    "quit": re.compile(rf"\Attt:quit:(?P<game>{_ID})\Z"),
    "calloff": re.compile(rf"\Attt:calloff:(?P<game>{_ID})\Z"),
    "calloff_answer": re.compile(rf"\Attt:calloff-(?P<answer>yes|no):(?P<game>{_ID})\Z"),
    # Erasure on request (bot.ui.cogs.privacy): scope, and the member who asked.
    "forget": re.compile(rf"\Attt:forget:(?P<scope>me|server):(?P<user>{_USER})\Z"),
    "forget_cancel": re.compile(rf"\Attt:forget-cancel:(?P<user>{_USER})\Z"),
}
"""Every custom_id the bot draws, by kind (``bot.ui.views`` writes them); matched whole."""
_QUIET = discord.AllowedMentions.none()
_Handler = Callable[[discord.Interaction, "re.Match[str]"], Awaitable[None]]


def _clicked(interaction: discord.Interaction) -> int | None:
    """The id of the message whose button was clicked: the service refuses a click on a
    message that is not the one recorded for the game or challenge in the custom_id."""
    return interaction.message.id if interaction.message is not None else None


class Buttons:
    """Routes ``ttt:`` clicks to their handlers, through the gate."""

    def __init__(self, service: GameService, boards: Boards, gate: Gate) -> None:
        self._service = service
        self._boards = boards
        self._gate = gate
        forget = ForgetButtons(service, boards)
        self._routes: list[tuple[re.Pattern[str], _Handler]] = [
            (PATTERNS["cell"], self.cell),
            (PATTERNS["taken"], self.taken),
            (PATTERNS["over"], self.over),
            (PATTERNS["forfeit"], self.forfeit),
            (PATTERNS["rematch"], self.rematch),
            (PATTERNS["review"], self.review),
            (PATTERNS["accept"], self.accept),
            (PATTERNS["decline"], self.decline),
            (PATTERNS["withdraw"], self.withdraw),
            (PATTERNS["lb"], self.leaderboard_page),
            (PATTERNS["quit"], self.quit),
            (PATTERNS["calloff"], self.propose_calloff),
            (PATTERNS["calloff_answer"], self.answer_calloff),
            (PATTERNS["forget"], forget.confirm),
            (PATTERNS["forget_cancel"], forget.cancel),
        ]

    async def handle(self, interaction: discord.Interaction) -> None:
        """Handle a click. Every component on the bot's messages is its own, so a
        custom_id that matches no pattern (an old version's, a forged one) is answered
        too, never left to fail."""
        data: Any = interaction.data or {}
        custom_id = data.get("custom_id")
        if not await self._gate.admit(interaction):
            return
        try:
            for pattern, handler in self._routes:
                match = pattern.fullmatch(custom_id) if isinstance(custom_id, str) else None
                if match is not None:
                    await handler(interaction, match)
                    return
            raise GameError(N_("This button is no longer in use."))
        except Exception as error:
            await answer_error(interaction, error)

    # -- the board ----------------------------------------------------------------------

    async def cell(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        """Play the cell and answer with the new board.

        The move is checked and stored before anything is sent, so a refused click gets a
        plain ephemeral answer. A bot reply that needs a search is not awaited inside
        Discord's 3 seconds: the answer shows the player's move with "My move…", and the
        board is edited again when the reply is stored. So it is when a reply expected
        to be quick is not there within QUICK_REPLY_SECONDS.
        """
        game_id = int(match["game"])
        service = self._service
        try:
            game = await service.play(
                game_id,
                interaction.user.id,
                int(match["cell"]),
                int(match["move"]),
                guild_id=interaction.guild_id,
                message_id=_clicked(interaction),
                await_reply=False,
            )
        except (StaleBoard, GameOver) as error:
            await answer_error(interaction, error)
            await self._boards.refresh(game_id, interaction)
            return
        if game.status is GameStatus.BOT_TO_MOVE:
            reply = asyncio.ensure_future(service.bot_reply(game))
            if not service.is_slow_search(game):  # usually quick, unless the pool is busy
                await asyncio.wait({reply}, timeout=QUICK_REPLY_SECONDS)
            if not reply.done():
                await self._boards.answer(interaction, game)
                game = await reply
                await self._boards.edit_answer(interaction, game)
                await self._boards.notify(game, interaction)
                return
            game = reply.result()
        await self._boards.answer(interaction, game)
        await self._boards.notify(game, interaction)  # after the answer: the last ping goes

    async def taken(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        """A click on a mark of a live board: "already taken", nothing changes. If the game
        ended meanwhile (the board is out of date), "already over", and the board is
        brought up to date as after any stale click."""
        game_id = int(match["game"])
        game = await self._service.get_game(game_id, interaction.guild_id)
        if game.is_live:
            raise CellTaken()
        await answer_error(interaction, GameOver())
        await self._boards.refresh(game_id, interaction)

    async def over(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        """A click on a finished board: "already over" (or gone, after an erasure)."""
        await self._service.get_game(int(match["game"]), interaction.guild_id)
        raise GameOver()

    async def forfeit(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        game_id = int(match["game"])
        try:
            game = await self._service.forfeit(
                game_id, interaction.user.id, interaction.guild_id, _clicked(interaction)
            )
        except GameOver as error:
            # Perhaps the clock ran out first (settled just now): show how it ended.
            await answer_error(interaction, error)
            await self._boards.refresh(game_id, interaction)
            return
        await self._boards.answer(interaction, game)
        await self._boards.notify(game)

    async def rematch(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        async def defer() -> None:
            await interaction.response.defer(thinking=True)

        new = await self._service.rematch(
            int(match["game"]),
            interaction.user.id,
            interaction.guild_id,
            locale=server_locale(interaction),
            parent_id=thread_parent(interaction),
            on_slow=defer,
        )
        await self._boards.post(interaction, new)

    async def review(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        """The game's review, privately: at once if stored (or cheap); if it needs a
        search, the answer is deferred (ephemeral "thinking") once the checks passed,
        and the review edited in."""

        async def defer() -> None:
            await interaction.response.defer(ephemeral=True, thinking=True)

        assert interaction.guild_id is not None  # the gate refuses DMs
        game, review = await self._service.review(
            int(match["game"]), interaction.user.id, interaction.guild_id, on_search=defer
        )
        text = render.review_text(game, review, reader(interaction))
        if interaction.response.is_done():
            mentions = discord.AllowedMentions.none()
            await interaction.edit_original_response(content=text, allowed_mentions=mentions)
        else:
            await send_ephemeral(interaction, text)

    # -- stopping a rated game (after /tictactoe-stop) ----------------------------------

    async def quit(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        """The player chose to forfeit rather than stop (the ephemeral choice's button)."""
        game = await self._service.forfeit(
            int(match["game"]), interaction.user.id, interaction.guild_id
        )
        done = "🏳️ " + reader(interaction)(N_("You forfeited the game."))
        await interaction.response.edit_message(content=done, view=None)
        await self._boards.redraw(game)
        await self._boards.notify(game)

    async def propose_calloff(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        """Ask the other player, by a new message that pings only them, to call it off."""
        service = self._service
        user = interaction.user.id
        game, lapsed = await service.propose_calloff(int(match["game"]), user, interaction.guild_id)
        if lapsed is not None:  # made at an earlier move: its message goes
            self._boards.notices.lapsed(lapsed, game.channel_id)
        other = game.o_id if user == game.x_id else game.x_id
        assert other is not None  # a member game: only those can be rated
        asked = N_("I asked {member} whether to call the game off.", member=f"<@{other}>")
        await interaction.response.edit_message(content=reader(interaction)(asked), view=None)
        message = await interaction.followup.send(
            render.calloff_text(game, user, other, translator(game.locale)),
            view=calloff_view(game),
            allowed_mentions=discord.AllowedMentions(users=[discord.Object(other)]),
            wait=True,
        )
        await service.set_calloff_message(game.id, user, message.id)

    async def answer_calloff(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        agree = match["answer"] == "yes"
        game = await self._service.answer_calloff(
            int(match["game"]), interaction.user.id, agree, interaction.guild_id
        )
        text = render.calloff_answer_text(agree, interaction.user.id, translator(game.locale))
        await interaction.response.edit_message(content=text, view=None, allowed_mentions=_QUIET)
        if agree:
            await self._boards.redraw(game)
            await self._boards.notify(game)

    # -- challenges and the leaderboard --------------------------------------------------

    async def accept(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        """The challenged member accepts: the challenge message becomes the board."""
        challenge_id = int(match["challenge"])
        try:
            game = await self._service.accept(
                challenge_id, interaction.user.id, interaction.guild_id, _clicked(interaction)
            )
        except GameError as error:
            await self._answer_closed(interaction, challenge_id, error)
            return
        await self._boards.answer(interaction, game)
        if interaction.message is not None and game.message_id != interaction.message.id:
            await self._service.set_game_message(game.id, interaction.message.id)
        await self._boards.notify(game, interaction)
        # Nobody is pinged now: whoever clicked Accept is looking at the board, and the
        # other player is pinged by the sweep only if they let their turn wait.

    async def decline(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        """The challenged member declines (anyone else is refused, privately)."""
        await self._close(interaction, int(match["challenge"]), self._service.decline)

    async def withdraw(self, interaction: discord.Interaction, match: re.Match[str]) -> None:
        """The challenger withdraws (anyone else is refused, privately)."""
        await self._close(interaction, int(match["challenge"]), self._service.withdraw)

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
            challenge = await self._service.get_challenge(
                challenge_id, interaction.guild_id, _clicked(interaction)
            )
        except GameError:
            return
        if challenge.status is not ChallengeStatus.PENDING:
            await self._boards.redraw(challenge)

    async def leaderboard_page(
        self, interaction: discord.Interaction, match: re.Match[str]
    ) -> None:
        assert interaction.guild_id is not None  # the gate refuses DMs
        page = await self._service.leaderboard(interaction.guild_id, int(match["page"]))
        await interaction.response.edit_message(
            view=leaderboard_view(page, server_reader(interaction)),
            allowed_mentions=discord.AllowedMentions.none(),
        )
