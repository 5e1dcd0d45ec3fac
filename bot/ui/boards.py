"""The one place that sends a game's or a challenge's message, however it changes.

A click's answer (``answer``, and ``edit_answer`` after a search), a new board or
challenge (``post``), and the redraws nobody clicked for (the sweep, start-up repair,
``/tictactoe-stop``, a stale click's repair: ``redraw`` and ``refresh``) all draw with
``bot.ui.views`` and send through discord.py. Boards and their edits ping nobody (an
edit notifies nobody in Discord anyway); a new challenge pings the challenged member.

Turn notifications (``notify``, called by every path once it has answered or redrawn a
game): in member games the player to move is told by a new plain message that mentions
only them; it replaces the game's previous one, and the game's end deletes the last
(the rules in ``bot.service.pings``). It is sent after the click's answer, never before.
"""

from __future__ import annotations

import logging

import discord

from bot.errors import GameError
from bot.i18n import translator
from bot.models import Challenge, Game, GameStatus
from bot.service import GameService
from bot.service.locks import KeyedLocks
from bot.ui import render
from bot.ui.views import board_view, challenge_mentions, challenge_view

__all__ = ["Boards"]

log = logging.getLogger(__name__)

UNKNOWN_CHANNEL = 10003
UNKNOWN_MESSAGE = 10008
"""Discord's JSON error codes for a channel or message that does not exist (any more)."""

_QUIET = discord.AllowedMentions.none()


def _drawn(item: Game | Challenge) -> tuple[discord.ui.LayoutView, discord.AllowedMentions]:
    if isinstance(item, Game):
        return board_view(item), _QUIET
    return challenge_view(item), challenge_mentions(item)


def _only(user_id: int) -> discord.AllowedMentions:
    return discord.AllowedMentions(
        everyone=False, roles=False, replied_user=False, users=[discord.Object(user_id)]
    )


class Boards:
    def __init__(self, client: discord.Client, service: GameService) -> None:
        self._client = client
        self._service = service
        # One notification of a game at a time here: the next waits until the last is
        # recorded, so it replaces that one instead of standing beside it for a moment.
        self._notifying = KeyedLocks()

    async def answer(self, interaction: discord.Interaction, game: Game) -> None:
        """Answer a click on the game's message with the game as it is now."""
        await interaction.response.edit_message(view=board_view(game), allowed_mentions=_QUIET)

    async def answer_challenge(
        self, interaction: discord.Interaction, challenge: Challenge
    ) -> None:
        """Answer a click on the challenge's message with the challenge as it is now."""
        await interaction.response.edit_message(
            view=challenge_view(challenge), allowed_mentions=_QUIET
        )

    async def edit_answer(self, interaction: discord.Interaction, game: Game) -> None:
        """Replace an earlier answer (the player's move with "My move…") with ``game``."""
        await interaction.edit_original_response(view=board_view(game), allowed_mentions=_QUIET)

    async def post(self, interaction: discord.Interaction, item: Game | Challenge) -> None:
        """Post a new board or challenge as this interaction's answer, and record its
        message. After a deferral (``thinking``) the placeholder becomes the message."""
        view, mentions = _drawn(item)
        if interaction.response.is_done():
            message = await interaction.edit_original_response(view=view, allowed_mentions=mentions)
            message_id = message.id
        else:
            sent = await interaction.response.send_message(view=view, allowed_mentions=mentions)
            if sent.message_id is None:  # Discord always says; ask if it did not
                message_id = (await interaction.original_response()).id
            else:
                message_id = sent.message_id
        if isinstance(item, Game):
            await self._service.set_game_message(item.id, message_id)
        else:
            await self._service.challenges.set_message(item.id, message_id)

    async def redraw(self, item: Game | Challenge) -> bool:
        """Edit a game's or challenge's message through its channel (no token needed).
        False if the message or its channel is gone: what it showed was then ended
        (``gone``); in a deleted channel, the turn notifications of the games there are
        forgotten too, so that a ``notify`` after this sends nothing."""
        if item.message_id is None:
            return True
        view = board_view(item) if isinstance(item, Game) else challenge_view(item)
        channel = self._client.get_partial_messageable(item.channel_id)
        kind = type(item).__name__.lower()
        try:
            await channel.get_partial_message(item.message_id).edit(
                view=view, allowed_mentions=_QUIET
            )
        except discord.NotFound as exc:
            log.warning("Cannot update the message of %s %s: %s", kind, item.id, exc)
            if exc.code in (UNKNOWN_CHANNEL, UNKNOWN_MESSAGE):
                await self.gone(item, channel=exc.code == UNKNOWN_CHANNEL)
                return False
        except discord.Forbidden as exc:
            log.warning("Cannot update the message of %s %s: %s", kind, item.id, exc)
        except discord.HTTPException as exc:
            log.warning("Updating the message of %s %s failed: %s", kind, item.id, exc)
        return True

    async def gone(self, item: Game | Challenge, *, channel: bool) -> None:
        """``item``'s message (``channel``: its whole channel) no longer exists: end its
        live games unrated and withdraw its pending challenges (``Upkeep``). A deleted
        message's standing turn notification is deleted; in a deleted channel nothing is."""
        upkeep = self._service.upkeep
        if channel:
            ended = (item.id,) if isinstance(item, Game) else ()
            await upkeep.channel_gone(item.guild_id, item.channel_id, ended)
            return
        assert item.message_id is not None
        games, _ = await upkeep.message_gone(item.guild_id, item.channel_id, item.message_id)
        for game in games:
            await self.notify(game)

    async def refresh(self, game_id: int, interaction: discord.Interaction) -> None:
        """Redraw the clicked board from the database, after a click found it out of date.

        Perhaps the answer to an earlier click never reached Discord (an error, a
        timeout, a crash after the commit). Each edit is followed by a fresh read and
        repeated (a few times at most) if the game moved on meanwhile, so the message
        ends at the stored state even if another click's answer lands in between. A
        game waiting for the bot is left alone: whoever computes that move draws it.
        """
        if interaction.message is None or interaction.channel_id is None:
            return
        drawn: tuple[int, GameStatus] | None = None
        for _attempt in range(3):
            try:
                game = await self._service.get_game(game_id, interaction.guild_id)
            except GameError:
                return
            state = (game.move_no, game.status)
            if state == drawn or game.status is GameStatus.BOT_TO_MOVE:
                return
            if game.message_id != interaction.message.id:
                return  # a click on some other message: leave it alone
            await self.redraw(game)
            await self.notify(game)
            drawn = state

    async def notify(self, game: Game, *, reminder: bool = False) -> None:
        """Tell the player on move of a member game it is their turn (``reminder``: again,
        before the clock runs out), replacing the game's standing ping; or delete it once
        the game has ended. Nothing for games against the bot, or if a ping for this turn
        stands already. Discord's refusals are logged, never raised."""
        if game.is_bot_game:
            return
        async with self._notifying[game.id]:
            await self._notify(game, reminder)

    async def _notify(self, game: Game, reminder: bool) -> None:
        pings = self._service.pings
        try:
            if not game.is_live:
                gone = await pings.clear(game)
                if gone is not None:
                    await self._delete(*gone)
                return
            player = game.current_player_id
            news, standing = await pings.news(game, reminder=reminder)
            if player is None or not news:
                return
            if standing is not None:  # first, so that two never stand together
                await self._delete(standing.channel_id, standing.message_id)
            channel = self._client.get_partial_messageable(game.channel_id)
            sent = await channel.send(
                render.turn_ping_text(game, translator(game.locale), reminder=reminder),
                allowed_mentions=_only(player),
            )
            claim = await pings.record(game, sent.id, reminder=reminder)
            if not claim.won:
                await self._delete(game.channel_id, sent.id)  # outranked meanwhile
            elif claim.replaced is not None and claim.replaced != standing:
                # Sent by a racing answer after our look: it is ours to delete now.
                await self._delete(claim.replaced.channel_id, claim.replaced.message_id)
        except discord.NotFound as exc:
            log.warning("The turn notification of game %s failed: %s", game.id, exc)
            if exc.code == UNKNOWN_CHANNEL:
                await self._service.upkeep.channel_gone(game.guild_id, game.channel_id)
        except discord.HTTPException as exc:
            log.warning("The turn notification of game %s failed: %s", game.id, exc)

    async def _delete(self, channel_id: int, message_id: int) -> None:
        """Delete a ping message; one already gone is fine."""
        channel = self._client.get_partial_messageable(channel_id)
        try:
            await channel.get_partial_message(message_id).delete()
        except discord.NotFound:
            log.info("The turn notification %s was already deleted", message_id)
        except discord.HTTPException as exc:
            log.warning("Cannot delete the turn notification %s: %s", message_id, exc)
