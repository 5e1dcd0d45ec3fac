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

Redraws and deletes are not interaction answers: they go through the outbox's checked
path (``Outbox.call``, ``bot.ui.health``): nothing goes to a channel the bot cannot view
or one backed off after a refusal, or while the invalid-request breaker is open. A board
that could not be redrawn so is recorded, and a click on it (``stale_click``) is answered
through the interaction with the board as it is. The sweep's and start-up's redraws are
queued in the outbox (``queue_redraw``), so a newer redraw of the same message
supersedes one still waiting.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol

import discord

from bot.app import GameService
from bot.errors import GameError
from bot.games.reposts import Reposts
from bot.games.road import TokenRoad
from bot.games.service import Moved
from bot.games.views import board_view, challenge_mentions, message_view, release
from bot.models import Challenge, Game, GameStatus, Ping
from bot.reach import by_channel, token_live
from bot.ui.gate import answer_error, home
from bot.ui.outbox import UNKNOWN_CHANNEL, UNKNOWN_MESSAGE, Blocked, Outbox, reachable

__all__ = ["Boards"]

log = logging.getLogger(__name__)

_QUIET = discord.AllowedMentions.none()


def _view_and_mentions(
    item: Game | Challenge,
) -> tuple[discord.ui.LayoutView, discord.AllowedMentions]:
    """A new board or challenge message: its view, and whom it may notify."""
    return message_view(item), _QUIET if isinstance(item, Game) else challenge_mentions(item)


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
        self.reposts = Reposts(client, service, outbox, self.redraw)
        self.road = TokenRoad(client, service.tokens)  # games outside servers
        self.keep = self.road.keep

    async def answer(self, interaction: discord.Interaction, item: Game | Challenge) -> None:
        """Answer a click on the game's or challenge's message with it as it is now."""
        view = message_view(item)
        try:
            await interaction.response.edit_message(view=view, allowed_mentions=_QUIET)
        finally:
            release(view)
        await self.keep(interaction, item)

    async def edit_answer(self, interaction: discord.Interaction, game: Game) -> None:
        """Replace an earlier answer (the player's move with "My move…") with ``game``."""
        view = board_view(game)
        try:
            await interaction.edit_original_response(view=view, allowed_mentions=_QUIET)
        finally:
            release(view)
        await self.keep(interaction, game)

    def asked(self, game: Game, user_id: int, click: discord.Interaction) -> None:
        """Hold ``user_id``'s click on ``game``'s board, answered with a deferred update
        (its token edits the board), for ``redraw_for``; drop the ones too old to use."""
        now = time.monotonic()
        self._asked = {k: v for k, v in self._asked.items() if token_live(v[1], now)}
        self._asked[(game.id, user_id)] = (click, now)

    async def redraw_for(self, game: Game, user_id: int) -> None:
        """Redraw ``game``'s board after ``user_id`` answered the question their click on
        it asked: through that click if held (``asked``), else through the channel."""
        held = self._asked.pop((game.id, user_id), None)
        if held is not None and token_live(held[1], time.monotonic()):
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
        try:
            if interaction.response.is_done():
                edited = await interaction.edit_original_response(
                    view=view, allowed_mentions=mentions
                )
                message_id = edited.id
            else:
                sent = await interaction.response.send_message(view=view, allowed_mentions=mentions)
                # Discord always says; ask if it did not
                message_id = sent.message_id or (await interaction.original_response()).id
        finally:
            release(view)
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
        try:
            # No server given: a thread just opened may not be in the cache yet, which
            # would read as one the bot cannot see.
            message = await self._outbox.call(
                item.channel_id, lambda: channel.send(view=view, allowed_mentions=mentions)
            )
        except (discord.HTTPException, Blocked) as exc:
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
        through the outbox's checked path (``paced`` False: the caller was admitted
        already). A board not redrawn (refused, or not tried) is recorded as such.
        False if the message or its channel is gone: what it showed was then ended
        (``gone``); in a deleted channel, the turn notifications of the games there are
        forgotten too, so that a ``delete_stale_ping`` after this sends nothing."""
        if item.message_id is None:
            return True
        if not by_channel(item.guild_id):
            await self.road.redraw(item)
            return True
        view = message_view(item)
        channel = self._client.get_partial_messageable(item.channel_id)
        kind = type(item).__name__.lower()
        message = channel.get_partial_message(item.message_id)
        health = self._outbox.health
        drawn: bool | None = False  # None: not this process's to draw
        try:
            if paced:  # not an interaction answer: within the global limit, if allowed
                await self._outbox.admit(
                    item.channel_id, message_id=item.message_id, guild_id=item.guild_id
                )
            if not reachable(self._client, item.guild_id):
                drawn = None  # the bot left the server meanwhile: a request would be refused
                return True
            await self._outbox.call(
                item.channel_id,
                lambda: message.edit(view=view, allowed_mentions=_QUIET),
                message_id=item.message_id,
                admitted=True,
            )
            drawn = True
        except Blocked:
            log.debug("Not redrawing %s %s: its channel is not reachable", kind, item.id)
        except discord.NotFound as exc:
            log.warning("Cannot update the message of %s %s: %s", kind, item.id, exc)
            if exc.code in (UNKNOWN_CHANNEL, UNKNOWN_MESSAGE):
                await self.gone(item, channel=exc.code == UNKNOWN_CHANNEL)
                return False
        except discord.Forbidden as exc:
            log.warning("Cannot update the message of %s %s: %s", kind, item.id, exc)
        except discord.HTTPException as exc:
            log.warning("Updating the message of %s %s failed: %s", kind, item.id, exc)
        finally:
            if drawn:
                health.drawn(item.message_id)
            elif drawn is not None:
                health.unredrawn(item.message_id)
        return True

    async def gone(self, item: Game | Challenge, *, channel: bool) -> None:
        """``item``'s message (``channel``: its whole channel) no longer exists. A live
        game whose end would change ratings gets its board posted again (``_repost``);
        else its live games end unrated and its pending challenges are withdrawn
        (``Upkeep``). A deleted message's standing turn notification is deleted; in a
        deleted channel nothing is."""
        service = self._service
        if channel:
            ended = (item.id,) if isinstance(item, Game) else ()
            await service.upkeep.channel_gone(item.guild_id, item.channel_id, ended)
            return
        if isinstance(item, Game) and await self.reposts.repost(item):
            return
        assert item.message_id is not None
        games, _ = await service.upkeep.message_gone(
            item.guild_id, item.channel_id, item.message_id
        )
        for game in games:
            log.info("The board of game %s was deleted: it ended unrated", game.id)
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
        message_id, channel_id = interaction.message.id, interaction.channel_id
        assert channel_id is not None
        while True:
            # The slot first, then the read: what is drawn is as fresh as the edit.
            try:
                await self._outbox.admit(
                    channel_id, message_id=message_id, guild_id=home(interaction)
                )
            except Blocked:
                self._outbox.health.unredrawn(message_id)
                return
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

    def redrawable(self, interaction: discord.Interaction) -> bool:
        """Whether the clicked message may be redrawn through its channel (``bot.ui.health``):
        if not, the click's own answer must draw it. A message known deleted counts as
        redrawable: there is nothing to draw, through the click either."""
        message, channel_id = interaction.message, interaction.channel_id
        if message is None or channel_id is None:
            return True
        guild_id = home(interaction)
        if not by_channel(guild_id):
            return False  # outside servers (bot.reach) the click itself draws the board
        health = self._outbox.health
        return health.gone(message.id) or health.redrawable(channel_id, message.id, guild_id)

    async def stale_click(
        self, interaction: discord.Interaction, game_id: int, error: GameError
    ) -> None:
        """A click found its board out of date (``error`` says how): tell the clicker, and
        bring the board up to date. Through the channel (``refresh``) when it can be
        redrawn so; else (a channel the bot cannot view or backed off, or a board whose
        last redraw failed) the click's own answer draws the game as it is, and ``error``
        follows privately: no channel call."""
        message = interaction.message
        if message is None or self.redrawable(interaction):
            await answer_error(interaction, error)
            await self.refresh(game_id, interaction)
            return
        try:
            game = await self._service.get_game(game_id, home(interaction))
        except GameError as gone:
            await answer_error(interaction, gone)
            return
        if game.message_id != message.id or game.status is GameStatus.BOT_TO_MOVE:
            await answer_error(interaction, error)  # not its board, or its move is coming
            return
        await self.answer(interaction, game)
        self._outbox.health.drawn(message.id)
        await answer_error(interaction, error)  # a follow-up now: privately
        await self.delete_stale_ping(game, interaction)

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
