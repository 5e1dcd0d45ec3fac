"""Every number a host or a server may set: its name, host variable, default, bounds and
(for a server's) the name moderators read.

Each setting is written here once, and nowhere else is it listed. The host's settings
(``bot.settings.Settings``), the service's configuration (``bot.config``) and a
server's settings as they apply (``bot.models.GuildSettings``) each hold a ``Values``,
read by the tunable: ``settings[TURN_TIMEOUT]``. The host's environment is parsed by
walking ``HOST``; the service's checks and refusals (``bot.games.servers``) and the
store's columns (``bot.games.server_queries``) walk ``SERVER``. So a host can never choose a
value a server could not (tests/bot/test_settings.py checks both sides, and README's
table of variables). What stays elsewhere is what must: each server setting's column
(migrations/), its option of ``/tictactoe-settings`` with that option's translated name
and description (``bot.servers.cog``, a parameter of the setting's own name), and
its line in the settings' answer.

The ``SERVER`` settings are defaults a server's moderators may change; the others are
the host's alone. ``SWITCHES`` are the servers' on/off settings, which the host does not
set.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from bot.i18n import N_, Message

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
    "PING_GRACE_LONGEST",
    "PUBLIC_ANSWER_COOLDOWN",
    "REVIEW_COOLDOWN",
    "SERVER",
    "SERVER_GAMES",
    "SERVER_POOL_PERCENT",
    "SHUTDOWN_GRACE",
    "SWEEP_INTERVAL",
    "SWITCHES",
    "TURN_TIMEOUT",
    "AnyTunable",
    "Kind",
    "Tunable",
    "Value",
    "Values",
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
    """One setting. ``name`` names it in ``Values``, in a server's stored settings (its
    column) and as the parameter of its option; ``variable`` is the host's environment
    variable. The bounds are inclusive. A default of None means off (or, for
    ``ping_grace``, the rule's own timing): the host turns it off by leaving the variable
    unset or writing 0."""

    name: str
    variable: str
    default: T
    low: float
    high: float
    kind: Kind
    label: Message | None = None
    """The setting's name as moderators read it (the server settings': their refusals
    name it)."""

    @property
    def bounds(self) -> tuple[float, float]:
        return self.low, self.high

    @property
    def whole(self) -> bool:
        return self.kind is Kind.COUNT


# -- what a server's moderators may change (/tictactoe-settings) ---------------------------
TURN_TIMEOUT: Tunable[float] = Tunable(
    name="turn_timeout",
    variable="TURN_TIMEOUT_SECONDS",
    default=300.0,
    low=30,
    high=86_400,
    kind=Kind.SECONDS,
    label=N_("The turn clock"),
)
"""Seconds a player has for a move: half a minute to a day (correspondence games)."""
CHALLENGE_TIMEOUT: Tunable[float] = Tunable(
    name="challenge_timeout",
    variable="CHALLENGE_TIMEOUT_SECONDS",
    default=60.0,
    low=15,
    high=3_600,
    kind=Kind.SECONDS,
    label=N_("The challenge expiry"),
)
"""Seconds a challenge waits for an answer."""
GAMES_PER_MEMBER: Tunable[int] = Tunable(
    name="games_per_member",
    variable="GAMES_PER_MEMBER",
    default=1,
    low=1,
    high=5,
    kind=Kind.COUNT,
    label=N_("Live games per member"),
)
"""Live games a member may be in at once, per server."""
SERVER_GAMES: Tunable[int] = Tunable(
    name="server_games",
    variable="SERVER_GAMES",
    default=25,
    low=1,
    high=100,
    kind=Kind.COUNT,
    label=N_("Live games in the server"),
)
"""Live games a server may have at once."""
CHALLENGE_COOLDOWN: Tunable[float] = Tunable(
    name="challenge_cooldown",
    variable="CHALLENGE_COOLDOWN_SECONDS",
    default=60.0,
    low=0,
    high=3_600,
    kind=Kind.SECONDS,
    label=N_("The challenge cooldown"),
)
"""Seconds between one member's challenges to the same member."""
REVIEW_COOLDOWN: Tunable[float] = Tunable(
    name="review_cooldown",
    variable="REVIEW_COOLDOWN_SECONDS",
    default=30.0,
    low=0,
    high=3_600,
    kind=Kind.SECONDS,
    label=N_("The review cooldown"),
)
"""Seconds between one member's reviews that need a search."""
PING_GRACE: Tunable[float | None] = Tunable(
    name="ping_grace",
    variable="PING_GRACE_SECONDS",
    default=None,
    low=1,
    high=3_600,
    kind=Kind.SECONDS,
    label=N_("The wait before a turn notification"),
)
"""Seconds a turn waits before its player is pinged (None: the shorter of
``PING_GRACE_LONGEST`` and a fifth of the turn, ``bot.pings.service.grace``)."""
PING_GRACE_LONGEST = 30.0
"""The longest a turn waits before its player is pinged while ``PING_GRACE`` is None
(``/tictactoe-settings`` shows it)."""
CHALLENGE_REACH: Tunable[int] = Tunable(
    name="challenge_reach",
    variable="CHALLENGE_REACH",
    default=5,
    low=1,
    high=20,
    kind=Kind.COUNT,
    label=N_("Members one member may challenge in 10 minutes"),
)
"""Different members one member's challenges may ping in 10 minutes."""

AnyTunable = Tunable[int] | Tunable[float] | Tunable[float | None]
Value = int | float | None
"""What a tunable holds: a whole number, seconds or days, or None (off)."""

SERVER: tuple[AnyTunable, ...] = (
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
AI_WORKERS: Tunable[int] = Tunable(
    name="ai_workers",
    variable="AI_WORKERS",
    default=1,
    low=1,
    high=32,
    kind=Kind.COUNT,
)
"""Processes in the search pool."""
SERVER_POOL_PERCENT: Tunable[int] = Tunable(
    name="server_pool_percent",
    variable="SERVER_POOL_PERCENT",
    default=25,
    low=1,
    high=100,
    kind=Kind.COUNT,
)
"""Percent of the search pool's waiting places (64 moves, 4 reviews) one server may
hold, at least one: the rest stay for the others (bot/games/pool.py)."""
PUBLIC_ANSWER_COOLDOWN: Tunable[float] = Tunable(
    name="public_answer_cooldown",
    variable="PUBLIC_ANSWER_COOLDOWN_SECONDS",
    default=30.0,
    low=0,
    high=3_600,
    kind=Kind.SECONDS,
)
"""Seconds between one member's public answers (leaderboard, public stats) in a server;
within it the answer is private."""
SWEEP_INTERVAL: Tunable[float] = Tunable(
    name="sweep_interval",
    variable="SWEEP_INTERVAL_SECONDS",
    default=5.0,
    low=1,
    high=300,
    kind=Kind.SECONDS,
)
"""Seconds between sweeps for timed-out games, expired challenges and reminders."""
SHUTDOWN_GRACE: Tunable[float] = Tunable(
    name="shutdown_grace",
    variable="SHUTDOWN_GRACE_SECONDS",
    default=10.0,
    low=1,
    high=120,
    kind=Kind.SECONDS,
)
"""Seconds a stopping bot waits for the work in hand."""
LAG_REPORT: Tunable[float | None] = Tunable(
    name="lag_report",
    variable="LAG_REPORT_SECONDS",
    default=None,
    low=1,
    high=3_600,
    kind=Kind.SECONDS,
)
"""How often the event loop's lag is logged (None: never)."""
LEFT_SERVER_DAYS: Tunable[float] = Tunable(
    name="left_server_days",
    variable="LEFT_SERVER_DAYS",
    default=30.0,
    low=1,
    high=36_500,
    kind=Kind.DAYS,
)
"""Days after which the data of a server the bot was removed from is erased."""
HISTORY_DAYS: Tunable[float | None] = Tunable(
    name="history_days",
    variable="HISTORY_DAYS",
    default=None,
    low=1,
    high=36_500,
    kind=Kind.DAYS,
)
"""Days after which finished games are deleted, ratings staying (None: kept for good)."""

SWITCHES = ("reviews", "turn_pings")
"""The servers' on/off settings beside the numbers: whether finished games offer Review,
and whether members who did not choose get turn notifications (both on by default; the
host has no variable for them)."""

HOST: tuple[AnyTunable, ...] = (
    *SERVER,
    AI_WORKERS,
    SERVER_POOL_PERCENT,
    PUBLIC_ANSWER_COOLDOWN,
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


class Values:
    """A value for each of ``tunables``, read by the tunable: ``values[TURN_TIMEOUT]`` is
    a float. Each is its default unless given by name; a name outside ``tunables`` is a
    ValueError. The bounds are not checked here: they bound what a host or a moderator
    types (``bot.settings``, ``bot.games.servers``), while tests may go past them."""

    __slots__ = ("_values",)

    def __init__(self, tunables: Iterable[AnyTunable] = HOST, /, **given: Value) -> None:
        values: dict[str, Value] = {tunable.name: tunable.default for tunable in tunables}
        if unknown := given.keys() - values.keys():
            raise ValueError(f"not a setting here: {sorted(unknown)}")
        self._values = values | given

    def __getitem__(self, tunable: Tunable[T]) -> T:
        return cast(T, self._values[tunable.name])

    def replace(self, **given: Value) -> Values:
        """These values with those ``given`` instead."""
        return Values(self.tunables(), **{**self._values, **given})

    def only(self, tunables: Iterable[AnyTunable]) -> Values:
        """The values of ``tunables`` alone (the servers' from the host's, say)."""
        kept = tuple(tunables)
        return Values(kept, **{tunable.name: self._values[tunable.name] for tunable in kept})

    def tunables(self) -> tuple[AnyTunable, ...]:
        return tuple(BY_NAME[name] for name in self._values)

    def items(self) -> Iterable[tuple[str, Value]]:
        """(name, value) of each, in the order of the tunables."""
        return self._values.items()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Values) and self._values == dict(other.items())

    def __hash__(self) -> int:
        return hash(frozenset(self._values.items()))

    def __repr__(self) -> str:
        return f"Values({', '.join(f'{k}={v!r}' for k, v in self._values.items())})"
