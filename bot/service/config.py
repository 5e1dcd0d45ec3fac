"""The service's configuration, set from the bot's settings (``bot.settings``)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.models import Shards
from bot.tunables import (
    AI_WORKERS,
    CHALLENGE_COOLDOWN,
    CHALLENGE_REACH,
    CHALLENGE_TIMEOUT,
    GAMES_PER_MEMBER,
    HISTORY_DAYS,
    LEFT_SERVER_DAYS,
    PING_GRACE,
    REVIEW_COOLDOWN,
    SERVER_GAMES,
    SWEEP_INTERVAL,
    TURN_TIMEOUT,
)

__all__ = ["INLINE_CELLS", "ServiceConfig"]

INLINE_CELLS = 9
"""Boards of at most this many cells (3 x 3) get the bot's reply on the event loop, in the
click's own transaction: it is a table lookup of microseconds, while in the pool it could
queue behind 5 x 5 searches and miss Discord's 3 seconds."""


@dataclass(frozen=True)
class ServiceConfig:
    # The defaults of the servers' settings and the host's numbers: bot.tunables.
    turn_timeout: float = TURN_TIMEOUT.default  # seconds a player has for a move
    challenge_timeout: float = CHALLENGE_TIMEOUT.default  # seconds a challenge waits
    one_game_per_channel: bool = True
    ai_workers: int = AI_WORKERS.default  # processes in the search pool
    inline_cells: int = INLINE_CELLS  # 0: every reply goes through the pool (tests)
    # Seconds from asking for a bot move to its reply, for searches that run to a time
    # budget (5x5 at impossible): a move that waited in the pool's queue searches only
    # for what is left (never under ai.MIN_BUDGET), so under load replies get a little
    # weaker instead of later and later.
    reply_seconds: float = 2.0
    # Defaults of the settings a server's moderators may change (bot.service.guilds).
    games_per_member: int = GAMES_PER_MEMBER.default
    server_games: int = SERVER_GAMES.default
    challenge_cooldown: float = CHALLENGE_COOLDOWN.default
    review_cooldown: float = REVIEW_COOLDOWN.default
    ping_grace: float | None = PING_GRACE.default  # None: the rule's timing
    challenge_reach: int = CHALLENGE_REACH.default
    # The shards this process runs, when it runs only some: its sweep, reminders and
    # start-up repairs then touch only their servers (see bot.models.Shards). None: all.
    shards: Shards | None = None
    # Days after which the data of a server the bot was removed from is erased, and
    # (None: kept for good) after which finished games are deleted (ratings stay).
    left_server_days: float = LEFT_SERVER_DAYS.default
    history_days: float | None = HISTORY_DAYS.default
    # Seconds between two sweeps: a reminder due before the next sweep goes in this one.
    sweep_interval: float = SWEEP_INTERVAL.default
