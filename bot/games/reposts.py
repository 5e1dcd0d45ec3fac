"""Deleted boards of live games: found by an edit before they matter, and a rated
game's board posted again.

Without message events (the bot asks for none) a deleted board is learned only when an
edit meets Unknown Message; ``Boards.redraw`` then calls ``Boards.gone``, which asks
``repost`` first. ``check_before_timeout`` (the sweep) and ``check`` (a busy channel's
refusal) make that edit when it matters, bounded so neither costs a request per sweep or
per refused command.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

import discord

from bot.app import GameService
from bot.errors import GameError
from bot.games import rules
from bot.games.views import board_view
from bot.models import Game
from bot.ui.outbox import Blocked, Outbox

__all__ = ["CHECK_EVERY", "CHECK_WAIT", "MAX_REPOSTS", "Reposts"]

log = logging.getLogger(__name__)

_QUIET = discord.AllowedMentions.none()
MAX_REPOSTS = 3
"""Times a rated game's deleted board is posted again (in a process) before the game ends
unrated: a board deleted again and again must not keep the bot posting."""
CHECK_EVERY = 60.0
"""Seconds between two checks of the same game's board for a busy channel's refusals."""
CHECK_WAIT = 1.5
"""Seconds a busy channel's refusal waits for its check of the board in the way."""


class Reposts:
    def __init__(
        self,
        client: discord.Client,
        service: GameService,
        outbox: Outbox,
        redraw: Callable[[Game], Coroutine[Any, Any, bool]],
    ) -> None:
        self._client = client
        self._service = service
        self._outbox = outbox
        self._redraw = redraw  # ``Boards.redraw``: False once it found the board gone
        self._reposts: dict[int, int] = {}  # game id: times its board was posted again
        self._checked: dict[int, float] = {}  # game id: when ``check`` last edited its board
        self._timeouts_checked: set[tuple[int, float | None]] = set()  # (game, deadline)
        self._checks: set[asyncio.Task[bool]] = set()  # ``check``s under way

    async def repost(self, game: Game) -> bool:
        """Post a rated game's deleted board again in its channel, as it stands (the bot's
        own message, paced, pinging nobody), and record it; the player on move gets a
        fresh turn clock. At most ``MAX_REPOSTS`` times a game in a process, then the
        game ends unrated like any other whose board is gone. A post Discord refuses
        ends the channel's games as if it were deleted. True if nothing more is to be
        done (posted again, settled meanwhile, or the post refused); False: the game
        must end unrated."""
        try:
            current = await self._service.get_game(game.id, game.guild_id)
        except GameError:
            return True  # erased meanwhile: nothing to end
        if not current.is_live or current.message_id != game.message_id:
            return True  # settled or reposted meanwhile
        if not rules.loses_rating(current):
            return False
        done = self._reposts.get(game.id, 0)
        if done >= MAX_REPOSTS:
            log.info("The board of game %s was deleted again after %d reposts", game.id, done)
            return False
        self._reposts[game.id] = done + 1
        channel = self._client.get_partial_messageable(game.channel_id)
        view = board_view(current)
        try:
            message = await self._outbox.call(
                game.channel_id,
                lambda: channel.send(view=view, allowed_mentions=_QUIET),
                guild_id=game.guild_id,
            )
        except (discord.HTTPException, Blocked) as exc:
            log.warning("Could not post the board of game %s again: %s", game.id, exc)
            await self._service.upkeep.channel_gone(game.guild_id, game.channel_id, (game.id,))
            return True
        if await self._service.reposted(current, message.id) is None:
            return True  # it moved on elsewhere meanwhile: a click's refresh redraws it
        log.info("The board of game %s was deleted: posted again (%d)", game.id, done + 1)
        return True

    async def check_before_timeout(self, games: list[Game]) -> None:
        """Before the sweep settles these overdue games, edit each board once (per game
        and deadline, however many sweeps it stays overdue): nobody loses on time on a
        board that was deleted (``gone``: a rated game's is posted again, with a fresh
        clock; any other game ends unrated)."""
        checked = {(game.id, game.turn_deadline) for game in games}
        for game in games:
            if (game.id, game.turn_deadline) not in self._timeouts_checked:
                await self._redraw(game)
        self._timeouts_checked = checked

    async def check(self, game: Game) -> bool:
        """Whether ``game``'s board was found deleted (and settled: ``gone``) by one paced
        edit; at most once per ``CHECK_EVERY`` seconds a game (else False, no request),
        so that a busy channel's refusals cost no request each. A check that takes more
        than ``CHECK_WAIT`` (a long queue for the pace) goes on alone, and this says
        False: the command it serves must still be answered within Discord's 3 s."""
        now = time.monotonic()
        self._checked = {k: t for k, t in self._checked.items() if now - t < CHECK_EVERY}
        if game.id in self._checked or game.message_id is None:
            return False
        self._checked[game.id] = now
        task = asyncio.create_task(self._redraw(game))
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)
        try:
            return not await asyncio.wait_for(asyncio.shield(task), CHECK_WAIT)
        except TimeoutError:
            return False
