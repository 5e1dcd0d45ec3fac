"""The one place that sends a game's or a challenge's message, however it changes.

A click's answer (``answer``, and ``edit_answer`` after a search), a new board or
challenge (``post``), and the redraws nobody clicked for (the sweep, start-up repair,
``/tictactoe-stop``, a stale click's repair: ``redraw`` and ``refresh``) all draw with
``bot.games.views`` and send through discord.py. Boards and their edits ping nobody (an
edit notifies nobody in Discord anyway); a new challenge pings the challenged member.

A click on another message than the board (the private question Forfeit asks) redraws
the board through the click on the board that asked it, if this process still holds it
(``asked``, ``redraw_for``): an interaction answer, which works where the bot may not
edit the channel's messages (a private thread it is not in); else through the channel.

Every path calls ``delete_stale_ping`` once it has answered or redrawn a game: a member
game's turn notification whose turn is over is deleted (``bot.pings.notices``; the sweep
sends them).
A game or challenge outside servers that added the bot (``bot.reach``) is reached through
interactions alone: each answer keeps the interaction's token (``keep``: its original
message is the board), and a redraw nobody clicked for goes through that token's webhook
while its age says Discord still takes it; with no live token nothing is sent, and the
next click shows the board as it is. No channel route is ever tried there.

Redraws and deletes are not interaction answers: they go through the outbox's pace
(``bot.ui.outbox``); the sweep's and start-up's redraws are queued there
(``queue_redraw``), so a newer redraw of the same message supersedes one still waiting.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol

import discord

from bot.app import GameService
from bot.errors import GameError
from bot.games.service import Moved
from bot.games.token_queries import Token, Tokens
from bot.games.views import board_view, challenge_mentions, challenge_view
from bot.models import Challenge, Game, GameStatus, Ping
from bot.reach import by_channel, token_live
from bot.ui.gate import home
from bot.ui.outbox import UNKNOWN_CHANNEL, UNKNOWN_MESSAGE, Outbox, reachable

__all__ = ["Boards"]

log = logging.getLogger(__name__)

_QUIET = discord.AllowedMentions.none()
TOKEN_SECONDS = 14 * 60.0
"""How long a click's token is used to edit its board: Discord's last 15 minutes."""


def _kind(item: Game | Challenge) -> str:
    return "game" if isinstance(item, Game) else "challenge"


def _view_and_mentions(
    item: Game | Challenge,
) -> tuple[discord.ui.LayoutView, discord.AllowedMentions]:
    """A new board or challenge message: its view, and whom it may notify."""
    if isinstance(item, Game):
        return board_view(item), _QUIET
    return challenge_view(item), challenge_mentions(item)


class StalePings(Protocol):
    """Deleting a turn ping whose turn is over (``bot.pings.notices.Notices``)."""

    async def delete_stale_ping(
        self, game: Game, click: discord.Interaction | None = None
    ) -> None: ...

    def delete_known_ping(
        self, game: Game, click: discord.Interaction | None, stale: Ping | None
    ) -> None: ...


class Boards:
    def __init__(
        self,
        client: discord.Client,
        service: GameService,
        outbox: Outbox,
        pings: StalePings,
    ) -> None:
        self._client = client
        self._service = service
        self._outbox = outbox
        self.outbox = outbox  # the pace of whatever else the bot sends on its own
        self._refreshing: set[int] = set()  # games whose board a refresh is redrawing
        self._asked: dict[tuple[int, int], tuple[discord.Interaction, float]] = {}
        self._pings = pings
        self.tokens: Tokens = service.tokens

    async def keep(self, interaction: discord.Interaction, item: Game | Challenge) -> None:
        """Keep ``interaction``'s token as the way to ``item``'s message, if ``item`` is
        reached through interactions alone (``bot.reach``); its message must be the
        interaction's original (the board or challenge it posted, or the one clicked)."""
        if by_channel(item.guild_id):
            return
        token = Token(
            interaction.token,
            interaction.created_at.timestamp(),
            # The bot's DM may also carry the server install's key; unknown publicly, so
            # a DM's token counts its follow-ups as if capped (no harm).
            user_only=not interaction.is_guild_integration(),
            followups=0,
        )
        await self.tokens.put(_kind(item), item.id, token)

    async def live_token(self, item: Game | Challenge) -> Token | None:
        """``item``'s stored token if its age says Discord still takes it, else None."""
        token = await self.tokens.get(_kind(item), item.id)
        if token is None or not token_live(token.issued_at, time.time()):
            return None
        return token

    def webhook(self, token: Token) -> discord.Webhook:
        """The interaction webhook of ``token`` (its follow-ups, its original's edits)."""
        application_id = self._client.application_id
        assert application_id is not None  # known once logged in
        return discord.Webhook.partial(application_id, token.token, client=self._client)

    async def _redraw_by_token(self, item: Game | Challenge) -> None:
        """Redraw ``item``'s message through its live token's webhook; nothing without one."""
        assert item.message_id is not None
        token = await self.live_token(item)
        if token is None:
            return  # the next click on it shows it as it is
        view = board_view(item) if isinstance(item, Game) else challenge_view(item)
        try:
            await self.webhook(token).edit_message(
                item.message_id, view=view, allowed_mentions=_QUIET
            )
        except discord.HTTPException as exc:
            log.warning("Updating the message of %s %s failed: %s", _kind(item), item.id, exc)

    async def answer(self, interaction: discord.Interaction, game: Game) -> None:
        """Answer a click on the game's message with the game as it is now."""
        await interaction.response.edit_message(view=board_view(game), allowed_mentions=_QUIET)
        await self.keep(interaction, game)

    async def answer_challenge(
        self, interaction: discord.Interaction, challenge: Challenge
    ) -> None:
        """Answer a click on the challenge's message with the challenge as it is now."""
        await interaction.response.edit_message(
            view=challenge_view(challenge), allowed_mentions=_QUIET
        )
        await self.keep(interaction, challenge)

    async def edit_answer(self, interaction: discord.Interaction, game: Game) -> None:
        """Replace an earlier answer (the player's move with "My move…") with ``game``."""
        await interaction.edit_original_response(view=board_view(game), allowed_mentions=_QUIET)
        await self.keep(interaction, game)

    def asked(self, game: Game, user_id: int, click: discord.Interaction) -> None:
        """Hold ``user_id``'s click on ``game``'s board, answered with a deferred update
        (its token edits the board), for ``redraw_for``; drop the ones too old to use."""
        now = time.monotonic()
        self._asked = {k: v for k, v in self._asked.items() if now - v[1] < TOKEN_SECONDS}
        self._asked[(game.id, user_id)] = (click, now)

    async def redraw_for(self, game: Game, user_id: int) -> None:
        """Redraw ``game``'s board after ``user_id`` answered the question their click on
        it asked: through that click if held (``asked``), else through the channel."""
        held = self._asked.pop((game.id, user_id), None)
        if held is not None and time.monotonic() - held[1] < TOKEN_SECONDS:
            try:
                await held[0].edit_original_response(view=board_view(game), allowed_mentions=_QUIET)
                return
            except discord.HTTPException as exc:
                log.warning("Redrawing game %s through its click failed: %s", game.id, exc)
        await self.redraw(game)

    async def post(self, interaction: discord.Interaction, item: Game | Challenge) -> None:
        """Post a new board or challenge as this interaction's answer, and record its
        message. After a deferral (``thinking``) the placeholder becomes the message."""
        view, mentions = _view_and_mentions(item)
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
            await self._service.challenges.set_message(item, message_id)
        await self.keep(interaction, item)

    async def post_in(self, channel: discord.abc.Messageable, item: Game | Challenge) -> int | None:
        """Post a new board or challenge in ``channel`` as the bot's own message (not an
        interaction answer: paced by the outbox), and record it; its id. None if Discord
        refused it: the game or challenge, which nobody can see, is then ended as if its
        channel were gone."""
        view, mentions = _view_and_mentions(item)
        await self._outbox.slot()
        try:
            message = await channel.send(view=view, allowed_mentions=mentions)
        except discord.HTTPException as exc:
            log.warning("Could not post %s %s: %s", type(item).__name__.lower(), item.id, exc)
            await self._service.upkeep.channel_gone(item.guild_id, item.channel_id)
            return None
        if isinstance(item, Game):
            await self._service.set_game_message(item.id, message.id)
        else:
            await self._service.challenges.set_message(item, message.id)
        return message.id

    async def redraw(self, item: Game | Challenge, *, paced: bool = True) -> bool:
        """Edit a game's or challenge's message through its channel (no token needed),
        in the outbox's pace (``paced`` False: the caller took the slot already).
        False if the message or its channel is gone: what it showed was then ended
        (``gone``); in a deleted channel, the turn notifications of the games there are
        forgotten too, so that a ``delete_stale_ping`` after this sends nothing."""
        if item.message_id is None:
            return True
        if not by_channel(item.guild_id):
            await self._redraw_by_token(item)
            return True
        view = board_view(item) if isinstance(item, Game) else challenge_view(item)
        channel = self._client.get_partial_messageable(item.channel_id)
        kind = type(item).__name__.lower()
        if paced:
            await self._outbox.slot()  # not an interaction answer: within the global limit
        if not reachable(self._client, item.guild_id):
            return True  # the bot left the server meanwhile: a request would be refused
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
        service = self._service
        if channel:
            ended = (item.id,) if isinstance(item, Game) else ()
            await service.upkeep.channel_gone(item.guild_id, item.channel_id, ended)
            return
        assert item.message_id is not None
        games, _ = await service.upkeep.message_gone(
            item.guild_id, item.channel_id, item.message_id
        )
        for game in games:
            await self.delete_stale_ping(game)

    async def refresh(self, game_id: int, interaction: discord.Interaction) -> None:
        """Redraw the clicked board from the database, after a click found it out of date.

        Perhaps the answer to an earlier click never reached Discord (an error, a
        timeout, a crash after the commit). Each edit is followed by a fresh read and
        repeated while the game moved on meanwhile, so the message ends at the stored
        state even if another click's answer lands in between: an edit read before a
        move can land after that move's answer. It stops at the game's end, at most one
        edit a move, with no other cap (see docs/decisions.md#a-board-refresh-without-a-cap).
        A game waiting for the bot is left alone: whoever computes that move draws it.
        """
        if interaction.message is None or interaction.channel_id is None:
            return
        if game_id in self._refreshing:
            return  # the refresh under way reads the game again after each edit
        self._refreshing.add(game_id)
        try:
            await self._refresh(game_id, interaction)
        finally:
            self._refreshing.discard(game_id)

    async def _refresh(self, game_id: int, interaction: discord.Interaction) -> None:
        assert interaction.message is not None
        drawn: tuple[int, GameStatus] | None = None
        while True:
            # The slot first, then the read: what is drawn is as fresh as the edit.
            await self._outbox.slot()
            try:
                game = await self._service.get_game(game_id, home(interaction))
            except GameError:
                return
            state = (game.move_no, game.status)
            if state == drawn or game.status is GameStatus.BOT_TO_MOVE:
                return
            if game.message_id != interaction.message.id:
                return  # a click on some other message: leave it alone
            await self.redraw(game, paced=False)
            await self.delete_stale_ping(game)
            drawn = state

    async def delete_stale_ping(self, game: Game, click: discord.Interaction | None = None) -> None:
        """After ``game`` changed (by ``click``, if a click did it): delete its turn
        notification if that turn is over (``bot.pings.notices``; the sweep sends them)."""
        if not game.is_bot_game:
            await self._pings.delete_stale_ping(game, click)

    def delete_moved_ping(self, moved: Moved, click: discord.Interaction) -> None:
        """``delete_stale_ping`` after a move by ``click``, with the stale ping the move read."""
        if not moved.game.is_bot_game:
            self._pings.delete_known_ping(moved.game, click, moved.stale_ping)

    def queue_redraw(self, item: Game | Challenge) -> None:
        """Redraw through the outbox: a later redraw of the same message supersedes it."""
        if item.message_id is None:
            return
        key = ("redraw", type(item).__name__, item.id)

        async def work() -> None:
            await self.redraw(item)

        self._outbox.submit(key, work)
