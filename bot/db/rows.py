"""Rows and values: the column lists the store selects, and their mapping to the models."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bot.models import (
    Challenge,
    ChallengeStatus,
    First,
    Game,
    GameStatus,
    PlayerRow,
    RatingChange,
    Record,
    Result,
    Settlement,
    StandingPing,
)
from engine import Mark

__all__ = [
    "CHALLENGE_COLUMNS",
    "GAME_COLUMNS",
    "GAME_WIDTH",
    "G_GAME_COLUMNS",
    "IS_ACTIVE",
    "IS_BOT_TO_MOVE",
    "IS_ENDED",
    "IS_LIVE",
    "IS_PENDING",
    "PING_COLUMNS",
    "PLAYER_COLUMNS",
    "Row",
    "challenge_from_row",
    "challenge_values",
    "decode_moves",
    "encode_moves",
    "game_from_row",
    "game_state",
    "new_game_values",
    "player_from_row",
    "player_values",
    "rated_values",
    "standing_from_row",
    "status_is",
]

Row = Sequence[Any]
"""A result row: a tuple of column values."""

GAME_COLUMNS = (
    "id, guild_id, channel_id, message_id, x_id, o_id, bot_level, width, height, k, moves,"
    " status, result, winner_id, winner_mark, created_at, updated_at, turn_deadline, rematch_of,"
    " turn_seconds, locale, x_rating_before, x_rating_after, o_rating_before, o_rating_after"
)
G_GAME_COLUMNS = ", ".join("g." + column.strip() for column in GAME_COLUMNS.split(","))
PING_COLUMNS = "game_id, channel_id, message_id, user_id, move_no, reminder"
"""A turn ping's row (``standing_from_row``), in the turn_pings table."""
"""GAME_COLUMNS of a query that names the games table ``g``."""
GAME_WIDTH = len(GAME_COLUMNS.split(","))
"""How many values GAME_COLUMNS gives: where a game's row ends in a longer one."""
CHALLENGE_COLUMNS = (
    "id, guild_id, channel_id, message_id, challenger_id, opponent_id, width, height, k,"
    " first, status, created_at, expires_at, game_id, rematch_of, pinged, locale"
)
PLAYER_COLUMNS = "rating, rated_games, wins, losses, draws, current_streak, best_streak"


def status_is(*values: str) -> str:
    """A condition on ``status`` with our own constants written out, as the partial
    indexes in migrations/ spell theirs: ``status = 'active'``, ``status IN ('a', 'b')``.

    SQLite uses a partial index only when it can see from the query text that the rows
    qualify (see docs/decisions.md#statuses-written-into-the-sql). tests/bot/test_storage.py
    checks the query plans.
    """
    assert all(v.replace("_", "").isalpha() for v in values)  # constants, never user input
    if len(values) == 1:
        return f"status = '{values[0]}'"
    return "status IN (" + ", ".join(f"'{v}'" for v in values) + ")"


IS_LIVE = status_is(GameStatus.ACTIVE.value, GameStatus.BOT_TO_MOVE.value)
IS_ENDED = status_is(GameStatus.FINISHED.value, GameStatus.ABANDONED.value)
IS_ACTIVE = status_is(GameStatus.ACTIVE.value)
IS_BOT_TO_MOVE = status_is(GameStatus.BOT_TO_MOVE.value)
IS_PENDING = status_is(ChallengeStatus.PENDING.value)


def encode_moves(moves: Iterable[int]) -> str:
    """Cells in the order played, comma-separated (the schema checks move_no against it)."""
    return ",".join(map(str, moves))


def decode_moves(text: str) -> tuple[int, ...]:
    return tuple(int(cell) for cell in text.split(",")) if text else ()


def game_from_row(row: Row) -> Game:
    """A ``Game`` from the values of GAME_COLUMNS, in that order.

    Times go through float(): a RETURNING clause hands back a REAL column's whole number
    as an int (SQLite applies the column's affinity only when it stores the row).
    """
    return Game(
        id=row[0],
        guild_id=row[1],
        channel_id=row[2],
        message_id=row[3],
        x_id=row[4],
        o_id=row[5],
        bot_level=row[6],
        width=row[7],
        height=row[8],
        k=row[9],
        moves=decode_moves(row[10]),
        status=GameStatus(row[11]),
        result=None if row[12] is None else Result(row[12]),
        winner_id=row[13],
        winner_mark=None if row[14] is None else Mark(row[14]),
        created_at=float(row[15]),
        updated_at=float(row[16]),
        turn_deadline=None if row[17] is None else float(row[17]),
        rematch_of=row[18],
        turn_seconds=None if row[19] is None else float(row[19]),
        locale=row[20],
        x_rating=_rating_change(row[21], row[22]),
        o_rating=_rating_change(row[23], row[24]),
    )


def _rating_change(before: float | None, after: float | None) -> RatingChange | None:
    if before is None or after is None:
        return None
    return RatingChange(float(before), float(after))


def rated_values(settlement: Settlement, game_id: int) -> tuple[Any, ...]:
    """The parameters of sql.SET_RATED: whether the game was rated, and each player's
    rating before and after it (NULLs when it was not rated)."""
    changes: tuple[float | None, ...] = (None,) * 4
    if settlement.ratings is not None:
        x, o = settlement.ratings
        changes = (x.before, x.after, o.before, o.after)
    return (int(settlement.rated), *changes, game_id)


def player_values(guild_id: int, players: Sequence[tuple[int, PlayerRow]], now: float) -> list[Any]:
    """The parameters of sql.write_players for ``players``' new rows."""
    return [
        value
        for user, player in players
        for value in (
            guild_id,
            user,
            player.rating,
            player.rated_games,
            player.record.wins,
            player.record.losses,
            player.record.draws,
            player.current_streak,
            player.best_streak,
            now,
        )
    ]


def game_state(game: Game) -> tuple[Any, ...]:
    """What a move or an ending changes: moves, move_no, status, result, winner_id,
    winner_mark, updated_at, turn_deadline (the SET list of the guarded UPDATE)."""
    return (
        encode_moves(game.moves),
        len(game.moves),
        game.status.value,
        None if game.result is None else game.result.value,
        game.winner_id,
        None if game.winner_mark is None else game.winner_mark.value,
        game.updated_at,
        game.turn_deadline,
    )


def save_values(new: Game, expected: Game) -> tuple[Any, ...]:
    """The parameters of sql.SAVE_GAME: ``new``'s state where the game is still as the
    writer read it (``expected``: its id, move number and status)."""
    if new.id != expected.id:
        raise ValueError("a guarded write needs two states of the same game")
    return (*game_state(new), expected.id, len(expected.moves), expected.status.value)


def new_game_values(
    game: Game, channel_slot: int | None, guild_slot: int | None
) -> tuple[Any, ...]:
    """The values of a new game's INSERT (see ``sql.INSERT_GAME``); its id is left out."""
    return (
        game.guild_id,
        game.channel_id,
        channel_slot,
        game.message_id,
        game.x_id,
        game.o_id,
        game.bot_level,
        game.width,
        game.height,
        game.k,
        *game_state(game)[:6],
        game.created_at,
        game.updated_at,
        game.turn_deadline,
        game.rematch_of,
        game.turn_seconds,
        guild_slot,
        game.locale,
    )


def challenge_from_row(row: Row) -> Challenge:
    """A ``Challenge`` from the values of CHALLENGE_COLUMNS, in that order."""
    return Challenge(
        id=row[0],
        guild_id=row[1],
        channel_id=row[2],
        message_id=row[3],
        challenger_id=row[4],
        opponent_id=row[5],
        width=row[6],
        height=row[7],
        k=row[8],
        first=First(row[9]),
        status=ChallengeStatus(row[10]),
        created_at=float(row[11]),
        expires_at=float(row[12]),
        game_id=row[13],
        rematch_of=row[14],
        pinged=bool(row[15]),
        locale=row[16],
    )


def challenge_values(c: Challenge) -> tuple[Any, ...]:
    """The values of a new challenge's INSERT (see ``sql.INSERT_CHALLENGE``)."""
    return (
        c.guild_id,
        c.channel_id,
        c.message_id,
        c.challenger_id,
        c.opponent_id,
        c.width,
        c.height,
        c.k,
        c.first.value,
        c.status.value,
        c.created_at,
        c.expires_at,
        c.game_id,
        c.rematch_of,
        int(c.pinged),
        c.locale,
    )


def player_from_row(row: Row, rank: int | None = None) -> PlayerRow:
    """A ``PlayerRow`` from the values of PLAYER_COLUMNS, in that order."""
    return PlayerRow(float(row[0]), row[1], Record(row[2], row[3], row[4]), row[5], row[6], rank)


def standing_from_row(row: Row) -> StandingPing:
    """A turn ping from its ``PING_COLUMNS``."""
    return StandingPing(row[0], row[1], row[2], row[3], row[4], bool(row[5]))
