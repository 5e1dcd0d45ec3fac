"""Turn notifications in member games: who is pinged, when, and which ping outranks which.

Editing a message notifies nobody in Discord, so a player is told it is their turn by a
new message that mentions only them. Players watching the board need none, so it is sent
only once a player has let their turn wait for the grace period (by default the shorter
of ``PING_GRACE_LONGEST`` and a fifth of the turn clock; a server may choose), by the sweep, at most
once per turn. The reminder comes once more before the clock runs out: at most
``REMINDER_LEAD`` seconds (and at most a fifth of the turn) before the deadline, found up
to one sweep interval early so a sweep cannot step over it, never in the turn's first
half. Nobody is pinged for the first turn of a game their own Accept started, a member
who turned notifications off (or, if they never chose, whose server did) is never
pinged, and a turn whose ping the channel refused is not tried again.

A ping is ranked by (its move, whether it is the reminder): a newer move outranks an
older one, and at one move the reminder outranks the first ping. At most one stands per
game: the standing one is deleted before another is sent, and a ping whose turn is over
is deleted, its row forgotten only once Discord confirmed (``stale`` finds the rest).
These are plain functions of the game and the clock (``due``), so tests call them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from bot.config import ServiceConfig
from bot.games.queries import Store
from bot.games.writes import turn_over
from bot.models import Game, GameStatus, Ping, StandingPing
from bot.pings.queries import PingStore, TurnState
from bot.tunables import PING_GRACE, PING_GRACE_LONGEST, SWEEP_INTERVAL

__all__ = [
    "MIN_GRACE",
    "REMINDER_LEAD",
    "Due",
    "Kind",
    "Recorded",
    "TurnPings",
    "due",
    "grace",
    "outranks",
    "reminder_at",
]

MIN_GRACE = PING_GRACE.low
"""The shortest grace a server may choose (and the sweep's first look at a turn)."""
REMINDER_LEAD = 60.0
"""The longest a reminder comes before the deadline (a fifth of the turn if shorter)."""


class Kind(enum.Enum):
    PING = "ping"
    REMINDER = "reminder"


@dataclass(frozen=True, slots=True)
class Recorded:
    """What became of a ping just sent: ``won`` (it is its game's ping now), and the
    ping it replaced (to delete); if it lost (to one of a higher rank, or the game moved
    on), the sender deletes its own."""

    won: bool
    replaced: Ping | None = None


def ping_of(standing: StandingPing | None) -> Ping | None:
    if standing is None:
        return None
    return Ping(standing.game_id, standing.channel_id, standing.message_id)


@dataclass(frozen=True, slots=True)
class Due:
    """A ping to send for ``game``'s turn; ``standing`` (if any) goes first."""

    game: Game
    kind: Kind
    standing: Ping | None

    @property
    def reminder(self) -> bool:
        return self.kind is Kind.REMINDER


def grace(turn: float, chosen: float | None) -> float:
    """Seconds a player may take before being pinged: the server's choice, else the
    shorter of ``PING_GRACE_LONGEST`` and a fifth of the turn."""
    return chosen if chosen is not None else min(PING_GRACE_LONGEST, turn / 5)


def reminder_at(start: float, deadline: float, early: float) -> float:
    """When the sweep sends the reminder of a turn from ``start`` to ``deadline``."""
    turn = deadline - start
    return max(start + turn / 2, deadline - min(REMINDER_LEAD, turn / 5) - early)


def rank(move_no: int, reminder: bool) -> tuple[int, bool]:
    return (move_no, reminder)


def outranks(new: StandingPing, old: StandingPing | None) -> bool:
    """Whether ``new`` may replace ``old``: a newer move, or the reminder of the same."""
    return old is None or rank(old.move_no, old.reminder) < rank(new.move_no, new.reminder)


def wants_pings(state: TurnState, member: int) -> bool:
    """The member's own choice, else their server's, else yes."""
    if member in state.choices:
        return state.choices[member]
    return state.server_default is not False


def due(
    state: TurnState, now: float, early: float, default_grace: float | None = None
) -> Due | None:
    """The ping ``state``'s game is due at ``now`` (``early``: the sweep interval), if any;
    ``default_grace``: the host's, for servers that did not choose."""
    game = state.game
    player = game.current_player_id
    deadline = game.turn_deadline
    if game.status is not GameStatus.ACTIVE or game.is_bot_game or player is None:
        return None
    if deadline is None or now >= deadline or not wants_pings(state, player):
        return None
    if state.refused_move == game.move_no:
        return None  # the channel refused this turn's ping: not again in this turn
    if game.move_no == 0 and player == state.starter:
        return None  # their own click started this turn: they are looking at the board
    standing = state.standing
    this_turn = standing if standing is not None and standing.move_no == game.move_no else None
    start = game.updated_at
    if now >= reminder_at(start, deadline, early):
        if this_turn is None or not this_turn.reminder:
            return Due(game, Kind.REMINDER, ping_of(standing))
        return None
    chosen = state.server_grace if state.server_grace is not None else default_grace
    if this_turn is None and now >= start + grace(deadline - start, chosen):
        return Due(game, Kind.PING, ping_of(standing))
    return None


class TurnPings:
    def __init__(self, store: Store, config: ServiceConfig, clock: Callable[[], float]) -> None:
        self._store = store
        self._ping_store = PingStore(store.db)
        self._config = config
        self._clock = clock

    async def due(self) -> list[Due]:
        """The pings due now in this process's servers (all if the config has no
        ``shards``), oldest turn first."""
        now = self._clock()
        sweep_interval = self._config[SWEEP_INTERVAL]
        # Coarse bounds, to keep the rows few: no grace is under MIN_GRACE, and no
        # reminder comes more than REMINDER_LEAD plus a sweep before its deadline.
        waiting = await self._ping_store.waiting(
            now,
            now - MIN_GRACE,
            now + REMINDER_LEAD + sweep_interval,
            shards=self._config.shards,
        )
        default = self._config[PING_GRACE]
        found = (due(state, now, sweep_interval, default) for state in waiting)
        return [item for item in found if item is not None]

    async def still_due(self, item: Due) -> bool:
        """Whether ``item`` is still worth sending: its game is active at that move."""
        game = await self._store.get_game(item.game.id)
        return (
            game is not None
            and game.status is GameStatus.ACTIVE
            and game.move_no == item.game.move_no
        )

    async def record(self, item: Due, message_id: int) -> Recorded:
        """Record the ping just sent as ``message_id`` for ``item`` (see ``Recorded``)."""
        game = item.game
        player = game.current_player_id
        assert player is not None, "only a member game waiting for a player pings"
        ping = StandingPing(
            game.id, game.channel_id, message_id, player, game.move_no, item.reminder
        )
        claim = await self._ping_store.claim(ping, lambda old: outranks(ping, old))
        return Recorded(claim.won, ping_of(claim.replaced))

    async def standing(self, game: Game) -> Ping | None:
        """``game``'s standing ping if its turn is over (the game moved on or ended)."""
        if game.is_bot_game:
            return None
        return turn_over(game, await self._ping_store.get(game.id))

    async def forget(self, game_id: int, message_id: int) -> None:
        """Forget a ping whose message Discord deleted or no longer knows."""
        await self._ping_store.forget(game_id, message_id)

    async def drop(self, game_id: int) -> None:
        """Forget the game's ping, whatever its message: one the bot can no longer reach
        (its channel was deleted, or the bot left the server), so nothing is sent to
        delete it."""
        await self._ping_store.drop(game_id)

    async def refused(self, game: Game) -> None:
        """The channel refused ``game``'s ping: not again in this turn."""
        await self._ping_store.refuse(game.id, game.move_no)

    async def stale(self) -> list[tuple[int, int, int, int]]:
        """(game, channel, message, guild) of pings whose turn is over, in this
        process's servers: each to delete, then ``forget``."""
        return await self._ping_store.stale(shards=self._config.shards)
