"""The bot's replies: where each is computed (on the event loop or in the pool), and
whether a click should be answered before it arrives.

This is the one place that knows how long a reply may take. 3 x 3 replies are table
lookups, made on the spot (``ServiceConfig.inline_cells``), and so are the replies the
engine has without a search (``engine.levels.instant_move``: ``impossible``'s book on
4 x 4 and 5 x 5, a few milliseconds at most); everything else goes to the search pool,
and the Discord layer asks ``is_slow`` whether to show the player's move with "My move…"
first and edit the reply in when it comes.
"""

from __future__ import annotations

import time

from bot.errors import Busy
from bot.models import Game
from bot.service import ai
from bot.service.config import INLINE_CELLS
from bot.service.pool import Cost, SearchPool
from engine.levels import EXACT_CELLS, LEVELS, instant_move

__all__ = ["BotReplies"]


class BotReplies:
    def __init__(self, pool: SearchPool, *, inline_cells: int, reply_seconds: float) -> None:
        self._pool = pool
        self._inline_cells = inline_cells
        self._reply_seconds = reply_seconds
        self._instant: dict[tuple[object, ...], int | None] = {}

    def _instant_move(self, game: Game) -> int | None:
        """The engine's reply without a search, if it has one (remembered for the
        position, since the checks before writing and the write both ask)."""
        if self._inline_cells <= 0 or game.bot_level not in LEVELS or not game.is_bot_game:
            return None
        key = (game.bot_level, game.width, game.height, game.k, tuple(game.moves))
        if key not in self._instant:
            if len(self._instant) >= 256:
                self._instant.clear()
            self._instant[key] = instant_move(game.board, game.bot_level)
        return self._instant[key]

    def is_inline(self, game: Game) -> bool:
        """Whether the bot's reply in ``game`` is computed on the event loop, at once."""
        return game.cells <= self._inline_cells or self._instant_move(game) is not None

    def may_be_slow(self, width: int, height: int) -> bool:
        """Whether the bot's first move on such a board might outlast Discord's 3 seconds
        (a new game or rematch then defers its answer)."""
        return width * height > INLINE_CELLS

    def is_slow(self, game: Game) -> bool:
        """Whether the reply owed in ``game`` may take long enough that the click is
        answered before it, and the reply edited in.

        3 x 3 replies are instant (tables), wherever they are computed. Above 16 cells
        every level but the weakest searches deeply; 4x4-sized boards are slow only for
        the stronger half of the levels (weakest first in LEVELS), which lean on the
        exact solver.
        """
        if not game.is_bot_game or not game.is_live or game.cells <= INLINE_CELLS:
            return False
        if self._instant_move(game) is not None:
            return False
        strength = LEVELS.index(game.bot_level) if game.bot_level in LEVELS else len(LEVELS)
        if game.cells > EXACT_CELLS:
            return strength > 0
        return strength >= len(LEVELS) // 2

    def _cost(self, game: Game) -> Cost:
        if not self.is_slow(game):
            return Cost.QUICK
        budgeted = game.cells > EXACT_CELLS and game.bot_level == LEVELS[-1]
        return Cost.BUDGETED if budgeted else Cost.BOUNDED

    def inline(self, game: Game) -> int:
        """The owed reply, computed here; the move ``ai.compute_move`` would give."""
        assert game.bot_level is not None
        if game.cells > self._inline_cells:
            cell = self._instant_move(game)
            assert cell is not None, "inline() is only for replies is_inline() accepts"
            return cell
        return ai.compute_move_on(game.board, game.bot_level, ai.move_seed(game.id, game.move_no))

    async def compute(self, game: Game) -> int:
        """The owed reply: inline if cheap, else in the pool (its budget counts from now)."""
        if self.is_inline(game):
            return self.inline(game)
        assert game.bot_level is not None
        deadline = time.monotonic() + self._reply_seconds
        seed = ai.move_seed(game.id, game.move_no)
        args = (game.width, game.height, game.k, game.moves, game.bot_level, seed, deadline)
        return await self._pool.run(
            self._cost(game), ai.compute_move, *args, guild_id=game.guild_id, game_id=game.id
        )

    def promise(self, game: Game) -> None:
        """Keep a place in the pool for the reply owed in ``game`` (about to be written),
        if it needs the pool; Busy if the pool is full. See ``SearchPool.promise``."""
        if not self.is_inline(game):
            self._pool.promise(game.id)

    def check_room(self, game: Game) -> None:
        """Busy if the reply owed in ``game`` (not yet written) would find the pool full.
        Unlike ``promise`` nothing is kept: for a game not yet in the database."""
        if not self.is_inline(game) and not self._pool.has_room(Cost.QUICK):
            raise Busy()

    def withdraw(self, game: Game) -> None:
        """Give back the place ``promise`` kept (the move was not written)."""
        self._pool.withdraw(game.id)
