"""The service's configuration, set from the bot's settings (``bot.settings``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from bot.models import Shards
from bot.tunables import Tunable, Values

__all__ = ["INLINE_CELLS", "ServiceConfig"]

T = TypeVar("T")

INLINE_CELLS = 9
"""Boards of at most this many cells (3 x 3) get the bot's reply on the event loop, in the
click's own transaction: it is a table lookup of microseconds, while in the pool it could
queue behind 5 x 5 searches and miss Discord's 3 seconds."""


@dataclass(frozen=True)
class ServiceConfig:
    numbers: Values = field(default_factory=Values)
    """The host's numbers (``bot.tunables.HOST``), the servers' defaults among them:
    ``config[TURN_TIMEOUT]`` reads one."""
    one_game_per_channel: bool = True
    inline_cells: int = INLINE_CELLS  # 0: every reply goes through the pool (tests)
    # Seconds from asking for a bot move to its reply, for searches that run to a time
    # budget (5x5 at impossible): a move that waited in the pool's queue searches only
    # for what is left (never under ai.MIN_BUDGET), so under load replies get a little
    # weaker instead of later and later.
    reply_seconds: float = 2.0
    # The shards this process runs, when it runs only some: its sweep, reminders and
    # start-up repairs then touch only their servers (see bot.models.Shards). None: all.
    shards: Shards | None = None

    def __getitem__(self, tunable: Tunable[T]) -> T:
        return self.numbers[tunable]
