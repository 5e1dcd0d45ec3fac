"""The service's tunables, set from the bot's settings (tests shorten the clocks)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.models import Shards

__all__ = ["INLINE_CELLS", "ServiceConfig"]

INLINE_CELLS = 9
"""Boards of at most this many cells (3 x 3) get the bot's reply on the event loop, in the
click's own transaction: it is a table lookup of microseconds, while in the pool it could
queue behind 5 x 5 searches and miss Discord's 3 seconds."""


@dataclass(frozen=True)
class ServiceConfig:
    turn_timeout: float = 300.0  # seconds a player has for a move
    challenge_timeout: float = 60.0  # seconds a challenge waits for an answer
    one_game_per_channel: bool = True
    ai_workers: int = 1  # processes in the search pool
    inline_cells: int = INLINE_CELLS  # 0: every reply goes through the pool (tests)
    # Seconds from asking for a bot move to its reply, for searches that run to a time
    # budget (5x5 at impossible): a move that waited in the pool's queue searches only
    # for what is left (never under ai.MIN_BUDGET), so under load replies get a little
    # weaker instead of later and later.
    reply_seconds: float = 2.0
    # Defaults of the settings a server's moderators may change (bot.service.guilds).
    games_per_member: int = 1  # live games a member may be in at once, per server
    server_games: int = 25  # live games a server may have at once
    challenge_cooldown: float = 60.0  # seconds between one member's challenges to another
    review_cooldown: float = 30.0  # seconds between one member's reviews that need a search
    ping_grace: float | None = None  # seconds before a turn notification (None: the rule's)
    challenge_reach: int = 5  # different members one member's challenges may ping in 10 min
    # The shards this process runs, when it runs only some: its sweep, reminders and
    # start-up repairs then touch only their servers (see bot.models.Shards). None: all.
    shards: Shards | None = None
    # Days after which the data of a server the bot was removed from is erased, and
    # (None: kept for good) after which finished games are deleted (ratings stay).
    left_server_days: float = 30.0
    history_days: float | None = None
