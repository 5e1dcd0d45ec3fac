"""Every number a host or a server may set: its name, host variable, default and bounds.

Each setting is written here once. The host's environment (``bot.settings``), the
service's defaults (``bot.service.config``) and checks (``bot.service.guilds``), a
server's settings as they apply (``bot.models.GuildSettings``) and the options of
``/tictactoe-settings`` (``bot.ui.cogs.settings``) all read these definitions, so a host
can never choose a value a server could not (tests/bot/test_settings.py checks that both
use the same bounds).

The ``SERVER`` settings are defaults a server's moderators may change; the others are
the host's alone.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = [
    "AI_WORKERS",
    "BOUNDS",
    "BY_NAME",
    "CHALLENGE_COOLDOWN",
    "CHALLENGE_REACH",
    "CHALLENGE_TIMEOUT",
    "GAMES_PER_MEMBER",
    "HISTORY_DAYS",
    "HOST",
    "LAG_REPORT",
    "LEFT_SERVER_DAYS",
    "PING_GRACE",
    "REVIEW_COOLDOWN",
    "SERVER",
    "SERVER_GAMES",
    "SHUTDOWN_GRACE",
    "SWEEP_INTERVAL",
    "TURN_TIMEOUT",
    "Kind",
    "Tunable",
]

T = TypeVar("T")


class Kind(enum.Enum):
    """How a value is written: a duration (``90``, ``5m``, ``1h30m``), a whole number,
    or a number of days."""

    SECONDS = "seconds"
    COUNT = "count"
    DAYS = "days"


@dataclass(frozen=True, slots=True)
class Tunable(Generic[T]):
    """One setting. ``name`` is its attribute on ``Settings``, ``ServiceConfig`` and (for
    the server settings) ``GuildSettings``; ``variable`` is the host's environment
    variable. The bounds are inclusive. A default of None means off (or, for
    ``ping_grace``, the rule's own timing): the host turns it off by leaving the variable
    unset or writing 0."""

    name: str
    variable: str
    default: T
    low: float
    high: float
    kind: Kind

    @property
    def bounds(self) -> tuple[float, float]:
        return self.low, self.high

    @property
    def whole(self) -> bool:
        return self.kind is Kind.COUNT


# -- what a server's moderators may change (/tictactoe-settings) ---------------------------
TURN_TIMEOUT: Tunable[float] = Tunable(
    "turn_timeout", "TURN_TIMEOUT_SECONDS", 300.0, 30, 86_400, Kind.SECONDS
)
"""Seconds a player has for a move: half a minute to a day (correspondence games)."""
CHALLENGE_TIMEOUT: Tunable[float] = Tunable(
    "challenge_timeout", "CHALLENGE_TIMEOUT_SECONDS", 60.0, 15, 3_600, Kind.SECONDS
)
"""Seconds a challenge waits for an answer."""
GAMES_PER_MEMBER: Tunable[int] = Tunable(
    "games_per_member", "GAMES_PER_MEMBER", 1, 1, 5, Kind.COUNT
)
"""Live games a member may be in at once, per server."""
SERVER_GAMES: Tunable[int] = Tunable("server_games", "SERVER_GAMES", 25, 1, 100, Kind.COUNT)
"""Live games a server may have at once."""
CHALLENGE_COOLDOWN: Tunable[float] = Tunable(
    "challenge_cooldown", "CHALLENGE_COOLDOWN_SECONDS", 60.0, 0, 3_600, Kind.SECONDS
)
"""Seconds between one member's challenges to the same member."""
REVIEW_COOLDOWN: Tunable[float] = Tunable(
    "review_cooldown", "REVIEW_COOLDOWN_SECONDS", 30.0, 0, 3_600, Kind.SECONDS
)
"""Seconds between one member's reviews that need a search."""
PING_GRACE: Tunable[float | None] = Tunable(
    "ping_grace", "PING_GRACE_SECONDS", None, 1, 3_600, Kind.SECONDS
)
"""Seconds a turn waits before its player is pinged (None: min(30 s, a fifth of the turn);
the lower bound is ``bot.service.pings.MIN_GRACE``)."""
CHALLENGE_REACH: Tunable[int] = Tunable("challenge_reach", "CHALLENGE_REACH", 5, 1, 20, Kind.COUNT)
"""Different members one member's challenges may ping in 10 minutes."""

SERVER: tuple[Tunable[int] | Tunable[float] | Tunable[float | None], ...] = (
    TURN_TIMEOUT,
    CHALLENGE_TIMEOUT,
    GAMES_PER_MEMBER,
    SERVER_GAMES,
    CHALLENGE_COOLDOWN,
    REVIEW_COOLDOWN,
    PING_GRACE,
    CHALLENGE_REACH,
)

# -- the host's alone ---------------------------------------------------------------------
AI_WORKERS: Tunable[int] = Tunable("ai_workers", "AI_WORKERS", 1, 1, 32, Kind.COUNT)
"""Processes in the search pool."""
SWEEP_INTERVAL: Tunable[float] = Tunable(
    "sweep_interval", "SWEEP_INTERVAL_SECONDS", 5.0, 1, 300, Kind.SECONDS
)
"""Seconds between sweeps for timed-out games, expired challenges and reminders."""
SHUTDOWN_GRACE: Tunable[float] = Tunable(
    "shutdown_grace", "SHUTDOWN_GRACE_SECONDS", 10.0, 1, 120, Kind.SECONDS
)
"""Seconds a stopping bot waits for the work in hand."""
LAG_REPORT: Tunable[float | None] = Tunable(
    "lag_report", "LAG_REPORT_SECONDS", None, 1, 3_600, Kind.SECONDS
)
"""How often the event loop's lag is logged (None: never)."""
LEFT_SERVER_DAYS: Tunable[float] = Tunable(
    "left_server_days", "LEFT_SERVER_DAYS", 30.0, 1, 36_500, Kind.DAYS
)
"""Days after which the data of a server the bot was removed from is erased."""
HISTORY_DAYS: Tunable[float | None] = Tunable(
    "history_days", "HISTORY_DAYS", None, 1, 36_500, Kind.DAYS
)
"""Days after which finished games are deleted, ratings staying (None: kept for good)."""

HOST: tuple[Tunable[int] | Tunable[float] | Tunable[float | None], ...] = (
    *SERVER,
    AI_WORKERS,
    SWEEP_INTERVAL,
    SHUTDOWN_GRACE,
    LAG_REPORT,
    LEFT_SERVER_DAYS,
    HISTORY_DAYS,
)
"""Every number the host sets from its environment: the servers' defaults and its own."""

BY_NAME = {tunable.name: tunable for tunable in HOST}
BOUNDS: dict[str, tuple[float, float]] = {tunable.name: tunable.bounds for tunable in SERVER}
"""What a moderator may choose for each server setting (inclusive), in seconds or games."""
