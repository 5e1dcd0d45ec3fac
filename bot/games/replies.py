"""The bot's replies: how each is made, decided once per owed move (``plan_reply``), and
made (``BotReplies``).

A reply is either instant, made on the event loop (after a click, in the same write as
the player's move), or computed in the search pool at a ``Cost``:

- Instant: on boards of at most ``ServiceConfig.inline_cells`` cells (3 x 3: table
  lookups of microseconds, which in the pool could queue behind 5 x 5 searches and miss
  Discord's 3 seconds), and where the engine has the move without a search
  (``engine.levels.instant_move``: ``impossible``'s book on 4 x 4 and 5 x 5, a few
  milliseconds at most). ``inline_cells`` 0 sends every reply to the pool.
- QUICK: the weaker levels, whose moves take milliseconds even in the pool.
- BOUNDED: a search that may take a while but has a fixed size: up to 16 cells
  (``EXACT_CELLS``) the stronger half of the levels (weakest first in ``LEVELS``), which
  lean on the exact solver; above it every level but the weakest, to a fixed depth.
- BUDGETED: the strongest level above 16 cells, which searches to a time budget
  (``ServiceConfig.reply_seconds`` from when the reply is asked for).

A bounded or budgeted reply may outlast Discord's 3 seconds: a click is answered first,
with the player's move and "My move…", and the reply is edited in. A new game whose first
move comes from the pool defers its answer, as even a quick one may queue.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from bot.config import ServiceConfig
from bot.errors import Busy
from bot.games import ai
from bot.games.pool import Cost, SearchPool
from bot.models import Game
from engine.levels import EXACT_CELLS, LEVELS, instant_move

__all__ = ["BotReplies", "ReplyPlan", "plan_reply", "pool_key"]


@dataclass(frozen=True, slots=True)
class ReplyPlan:
    """How the bot's reply owed in one position is made (``plan_reply``)."""

    cost: Cost | None
    """Its cost in the search pool; None for an instant reply."""
    cell: int | None = None
    """The instant reply, when planning had to find it (``instant_move``); a table
    lookup is made when the reply is, since its seed needs the game's id."""

    @property
    def instant(self) -> bool:
        """Made on the event loop, with no place in the pool."""
        return self.cost is None

    @property
    def answer_first(self) -> bool:
        """A search that may outlast Discord's 3 seconds: a click is answered before it."""
        return self.cost is Cost.BOUNDED or self.cost is Cost.BUDGETED


def plan_reply(game: Game, config: ServiceConfig) -> ReplyPlan:
    """How the bot's reply owed in ``game`` (at BOT_TO_MOVE) is made."""
    level = game.bot_level
    if config.inline_cells > 0:
        if game.cells <= config.inline_cells:
            return ReplyPlan(None)
        if level in LEVELS and (cell := instant_move(game.board, level)) is not None:
            return ReplyPlan(None, cell)
    strength = LEVELS.index(level) if level in LEVELS else len(LEVELS)
    if game.cells <= EXACT_CELLS:
        return ReplyPlan(Cost.BOUNDED if strength >= len(LEVELS) // 2 else Cost.QUICK)
    if strength == 0:
        return ReplyPlan(Cost.QUICK)
    return ReplyPlan(Cost.BUDGETED if level == LEVELS[-1] else Cost.BOUNDED)


def pool_key(game: Game) -> int:
    """Whose share of the search pool ``game``'s searches use: its server's, or its
    channel's when it has no server (a game outside any server the bot is in)."""
    return game.guild_id or game.channel_id


class BotReplies:
    """Makes replies as their ``ReplyPlan`` says, and keeps their places in the pool."""

    def __init__(self, pool: SearchPool, *, reply_seconds: float) -> None:
        self._pool = pool
        self._reply_seconds = reply_seconds

    def check_room(self, game: Game, plan: ReplyPlan) -> None:
        """Busy if the reply (of ``game``, not yet written) would find no room in the pool
        (its server's share used, or the pool full). Unlike ``promise`` nothing is kept."""
        if not plan.instant and not self._pool.has_room(Cost.QUICK, pool_key(game)):
            raise Busy()

    def promise(self, game: Game, plan: ReplyPlan) -> None:
        """Keep a place in the pool for the reply owed in ``game`` (about to be written),
        if it needs the pool; Busy if the pool is full. See ``SearchPool.promise``."""
        if not plan.instant:
            self._pool.promise(game.id, pool_key(game))

    def withdraw(self, game: Game) -> None:
        """Give back the place ``promise`` kept (the move was not written)."""
        self._pool.withdraw(game.id)

    def instant(self, game: Game, plan: ReplyPlan) -> int:
        """The instant reply owed in ``game``: the move ``ai.compute_move`` would give."""
        assert plan.instant and game.bot_level is not None
        if plan.cell is not None:
            return plan.cell
        return ai.compute_move_on(game.board, game.bot_level, ai.move_seed(game.id, game.move_no))

    async def compute(self, game: Game, plan: ReplyPlan) -> int:
        """The reply owed in ``game``: instant, or from the pool (its budget counts from now)."""
        if plan.cost is None:
            return self.instant(game, plan)
        assert game.bot_level is not None
        deadline = time.monotonic() + self._reply_seconds
        seed = ai.move_seed(game.id, game.move_no)
        args = (game.width, game.height, game.k, game.moves, game.bot_level, seed, deadline)
        return await self._pool.run(
            plan.cost, ai.compute_move, *args, server=pool_key(game), game_id=game.id
        )
