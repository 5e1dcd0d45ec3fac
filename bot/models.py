"""Plain data the game service hands to the Discord layer: frozen, no I/O.

A ``None`` player id stands for this bot in games against it. Times are Unix seconds
(floats) from the service's clock.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from bot.tunables import SERVER, Tunable, Values
from engine import Board, Mark

__all__ = [
    "DELETED_MEMBER",
    "CallOff",
    "Challenge",
    "ChallengeStatus",
    "Change",
    "First",
    "Game",
    "GameStatus",
    "GuildData",
    "GuildSettings",
    "LeaderboardEntry",
    "LeaderboardPage",
    "LevelRecord",
    "MemberData",
    "Ping",
    "PlayerRow",
    "PlayerStats",
    "RatingChange",
    "Record",
    "Result",
    "Settlement",
    "Shards",
    "StandingPing",
]

START_RATING = 1500.0
"""Everyone's Elo rating before their first rated game."""

DELETED_MEMBER = 0
"""The player id that replaces a member who erased their data (``/tictactoe-forget-me``)
in the ended games they played: x_id, o_id and winner_id. Discord never gives a user the
id 0, and it is not NULL (which means this bot). Shown as "a deleted member"."""


class GameStatus(enum.StrEnum):
    ACTIVE = "active"  # waiting for a human move
    BOT_TO_MOVE = "bot_to_move"  # the bot owes a move; completed as soon as it runs
    FINISHED = "finished"  # won, drawn, forfeited or timed out (rated if between members)
    ABANDONED = "abandoned"  # stopped, called off or aborted (``rules.is_abort``); unrated

    @property
    def is_live(self) -> bool:
        return self in (GameStatus.ACTIVE, GameStatus.BOT_TO_MOVE)


class Result(enum.StrEnum):
    WIN = "win"
    DRAW = "draw"
    FORFEIT = "forfeit"
    TIMEOUT = "timeout"
    ABANDONED = "abandoned"


class First(enum.StrEnum):
    """Who moves first, from the point of view of the member who started the game."""

    ME = "me"
    OPPONENT = "opponent"
    RANDOM = "random"


class ChallengeStatus(enum.StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    EXPIRED = "expired"
    WITHDRAWN = "withdrawn"


@dataclass(frozen=True, slots=True)
class RatingChange:
    """A player's rating before and after a rated game."""

    before: float
    after: float

    @property
    def shown(self) -> tuple[int, int]:
        """The rating after and the change, as whole points: the change is the difference
        of the two ratings as they are shown, so the numbers add up for the reader."""
        after = round(self.after)
        return after, after - round(self.before)


@dataclass(frozen=True)  # no slots: ``board`` is a cached_property
class Game:
    id: int
    guild_id: int
    channel_id: int
    message_id: int | None
    x_id: int | None
    o_id: int | None
    bot_level: str | None
    width: int
    height: int
    k: int
    moves: tuple[int, ...]
    status: GameStatus
    result: Result | None
    winner_id: int | None
    winner_mark: Mark | None
    created_at: float
    updated_at: float
    turn_deadline: float | None
    rematch_of: int | None = None
    turn_seconds: float | None = None  # this game's turn clock (None: the bot's default)
    locale: str | None = None  # the Discord locale of its shared messages (None: English)
    x_rating: RatingChange | None = None  # set once a rated game ended (None before 0008)
    o_rating: RatingChange | None = None
    position: Board | None = field(default=None, repr=False, compare=False)
    """The board after ``moves`` when whoever made this game already had it (``after_move``
    passes it on); None: ``board`` replays ``moves``."""

    @property
    def move_no(self) -> int:
        """Moves made so far; a click must carry this to be accepted."""
        return len(self.moves)

    @functools.cached_property
    def board(self) -> Board:
        """The position after ``moves``: ``position`` if it is that, else replayed, once
        per state (a click reads it a few times)."""
        position = self.position
        if position is not None and position.moves == self.moves:
            return position
        return Board.from_moves(self.moves, self.width, self.height, self.k)

    def after_move(self, board: Board, **changes: Any) -> Game:
        """This game at ``board`` (its position after one more move), with ``changes``."""
        if board.moves[:-1] != self.moves:
            raise ValueError("after_move needs the position one move on from this game's")
        return replace(self, moves=board.moves, position=board, **changes)

    @property
    def cells(self) -> int:
        return self.width * self.height

    @property
    def is_bot_game(self) -> bool:
        return self.bot_level is not None

    @property
    def is_live(self) -> bool:
        return self.status.is_live

    @property
    def turn(self) -> Mark:
        return Mark.X if len(self.moves) % 2 == 0 else Mark.O

    @property
    def current_player_id(self) -> int | None:
        """Whose turn it is (None: the bot's, or nobody's once the game is over)."""
        if not self.is_live:
            return None
        return self.player_of(self.turn)

    def player_of(self, mark: Mark) -> int | None:
        return self.x_id if mark is Mark.X else self.o_id

    def mark_of(self, user_id: int) -> Mark | None:
        if user_id == self.x_id:
            return Mark.X
        if user_id == self.o_id:
            return Mark.O
        return None

    @property
    def human_ids(self) -> tuple[int, ...]:
        return tuple(p for p in (self.x_id, self.o_id) if p is not None)


@dataclass(frozen=True, slots=True)
class Challenge:
    id: int
    guild_id: int
    channel_id: int
    message_id: int | None
    challenger_id: int
    opponent_id: int
    width: int
    height: int
    k: int
    first: First
    status: ChallengeStatus
    created_at: float
    expires_at: float
    game_id: int | None = None
    rematch_of: int | None = None
    pinged: bool = True  # whether its message notified the opponent (see Challenges.create)
    locale: str | None = None  # the Discord locale of its message (None: English)
    turn_seconds: float | None = None  # the server's turn clock when it was made (not stored)


@dataclass(frozen=True, slots=True)
class CallOff:
    """A player's proposal to end a rated game unrated, put to the other player."""

    game_id: int
    proposer_id: int
    move_no: int  # the proposal holds while the game is at this move
    message_id: int | None


@dataclass(frozen=True, slots=True)
class Shards:
    """The shards one of the bot's processes runs: ``ids`` (sorted) of ``count``.

    Discord sends a server's events to shard ``(guild_id >> 22) % count``, so a process
    hears the clicks of its own shards' servers only. The work no click asks for (settling
    timed-out games and expired challenges, reminders, stranded bot moves, start-up
    repairs) must happen once across processes, and each process does it for the servers
    it ``owns``, rather than for all of them under a leader lock: there is no lock to lose
    or to hold while hung; a dead process's servers are also the ones whose clicks nobody
    receives, so nothing players could see waits on it; and each game is settled in a
    guarded transaction of its own, so a process that dies mid-sweep leaves the rest
    overdue for its restarted self's first sweep. (A click settles an overdue game too.)

    No ``Shards`` (None) where the service takes one: the process runs every shard.
    """

    count: int
    ids: tuple[int, ...]

    def __post_init__(self) -> None:
        ids = tuple(sorted(self.ids))
        if self.count < 1 or not ids or len(set(ids)) != len(ids):
            raise ValueError(f"not a set of shards: {self.ids!r} of {self.count}")
        if ids[0] < 0 or ids[-1] >= self.count:
            raise ValueError(f"shard ids must be from 0 to {self.count - 1}: {self.ids!r}")
        object.__setattr__(self, "ids", ids)

    def owns(self, guild_id: int) -> bool:
        """Whether ``guild_id``'s events come to one of these shards."""
        return (guild_id >> 22) % self.count in self.ids


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class GuildSettings:
    """A server's settings as they apply: its moderators' choices, else the bot's defaults."""

    channels: tuple[int, ...] = ()  # where games may start; empty: every channel
    reviews: bool = True  # whether finished games offer Review
    turn_pings: bool = True  # whether members who did not choose get turn notifications
    numbers: Values = field(default_factory=lambda: Values(SERVER))
    """The values of ``bot.tunables.SERVER``: ``settings[TURN_TIMEOUT]`` reads one."""

    def __getitem__(self, tunable: Tunable[T]) -> T:
        return self.numbers[tunable]

    def allows_channel(self, channel_id: int, parent_id: int | None = None) -> bool:
        """Whether games may start in ``channel_id``; a thread (``parent_id``: its
        channel) is allowed where its channel is."""
        if not self.channels or channel_id in self.channels:
            return True
        return parent_id is not None and parent_id in self.channels


@dataclass(frozen=True, slots=True)
class Change(Generic[T]):
    """What a member's request changed: the values in force before it and after it
    (equal when it asked for what already was)."""

    before: T
    after: T

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True, slots=True)
class Record:
    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws


@dataclass(frozen=True, slots=True)
class LevelRecord:
    level: str
    record: Record


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    rank: int
    user_id: int
    rating: float
    record: Record
    provisional: bool


@dataclass(frozen=True, slots=True)
class LeaderboardPage:
    entries: tuple[LeaderboardEntry, ...]
    page: int  # 1-based, clamped to the existing pages
    pages: int  # at least 1, even when empty
    total_players: int
    past: int | None = None  # the page asked for, when past the last (``page`` is the last)


@dataclass(frozen=True, slots=True)
class PlayerStats:
    guild_id: int
    user_id: int
    rating: float
    provisional: bool
    rank: int | None  # None until the player has a rated game
    versus_members: Record
    versus_bot: tuple[LevelRecord, ...]
    current_streak: int  # >0: wins in a row, <0: losses in a row, 0: last game drawn / none
    best_streak: int
    recent: tuple[Game, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class PlayerRow:
    """A member's standing in one guild, as stored (defaults until they have a row)."""

    rating: float = START_RATING
    rated_games: int = 0
    record: Record = field(default_factory=Record)
    current_streak: int = 0  # >0: wins in a row, <0: losses in a row
    best_streak: int = 0
    rank: int | None = None  # filled in by leaderboard and player look-ups only


@dataclass(frozen=True, slots=True)
class Settlement:
    """What ending a game writes besides the game row, decided by the service's rules.

    ``players`` holds each member's new row (absolute values; ``rank`` is ignored);
    ``bot_record`` is (member, level, record to add) for a finished game against the bot;
    ``ratings`` is X's and O's rating change in a rated game, kept with the game.
    """

    rated: bool = False
    players: tuple[tuple[int, PlayerRow], ...] = ()
    bot_record: tuple[int, str, Record] | None = None
    ratings: tuple[RatingChange, RatingChange] | None = None


@dataclass(frozen=True, slots=True)
class MemberData:
    """What a server holds about one member: shown before an erasure, and what it erased.

    ``withdrawn`` are their pending challenges, as withdrawn by the erasure (its result
    only), so that their messages can be redrawn.
    """

    player: PlayerRow
    bot_levels: int  # levels with a record against the bot
    ended_games: int  # kept, with the member shown as deleted
    challenges: int  # challenge rows (any status) from or to them
    withdrawn: tuple[Challenge, ...] = ()


@dataclass(frozen=True, slots=True)
class GuildData:
    """What the bot holds about one server (rows per kind); see ``MemberData``."""

    games: int
    challenges: int
    players: int
    settings: int  # guild_settings and game_channels rows
    withdrawn: tuple[Challenge, ...] = ()


@dataclass(frozen=True, slots=True)
class StandingPing:
    """A game's turn ping as stored: its message, whom it pinged, at which move."""

    game_id: int
    channel_id: int
    message_id: int
    user_id: int
    move_no: int
    reminder: bool


@dataclass(frozen=True, slots=True)
class Ping:
    """A ping message standing (or just sent) for a game."""

    game_id: int
    channel_id: int
    message_id: int
