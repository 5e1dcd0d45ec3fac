"""Every statement the games' queries (``Store``) run, as module-level constants.

Kept apart from the code that runs them so that tests can ask SQLite for the query plan
of the exact text (``EXPLAIN QUERY PLAN``) on a connection of their own. Statuses that a
partial index depends on are written into the text (``rows.status_is``), never bound.
"""

from __future__ import annotations

from bot.db.rows import (
    CHALLENGE_COLUMNS,
    G_GAME_COLUMNS,
    GAME_COLUMNS,
    IS_ACTIVE,
    IS_BOT_TO_MOVE,
    IS_ENDED,
    IS_LIVE,
    IS_PENDING,
    PING_COLUMNS,
    PLAYER_COLUMNS,
)
from bot.db.shards import owned
from bot.models import Shards

# -- meta --------------------------------------------------------------------------------

GET_META = "SELECT value FROM meta WHERE key = ?"
SET_META = (
    "INSERT INTO meta (key, value) VALUES (?, ?)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)

# -- games -------------------------------------------------------------------------------

GET_GAME = f"SELECT {GAME_COLUMNS} FROM games WHERE id = ?"
GAME_AND_PING = (
    f"SELECT {G_GAME_COLUMNS}, {', '.join('t.' + c for c in PING_COLUMNS.split(', '))}"
    " FROM games AS g LEFT JOIN turn_pings AS t ON t.game_id = g.id WHERE g.id = ?"
)
INSERT_GAME = (
    "INSERT INTO games (guild_id, channel_id, channel_slot, message_id, x_id, o_id,"
    " bot_level, width, height, k, moves, move_no, status, result, winner_id,"
    " winner_mark, created_at, updated_at, turn_deadline, rematch_of, turn_seconds,"
    " guild_slot, locale)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    f" RETURNING {GAME_COLUMNS}"
)
_GAME_STATE = (
    "moves = ?, move_no = ?, status = ?, result = ?, winner_id = ?, winner_mark = ?,"
    " updated_at = ?, turn_deadline = ?"
)
_GUARD = "WHERE id = ? AND move_no = ? AND status = ? RETURNING id"
SAVE_GAME = f"UPDATE games SET {_GAME_STATE} {_GUARD}"
"""The guarded write of a move: nothing happens unless the game is still where the
writer read it (parameters: ``rows.game_state(new)``, then id, move_no, status expected)."""
SET_RATED = (
    "UPDATE games SET rated = ?, x_rating_before = ?, x_rating_after = ?,"
    " o_rating_before = ?, o_rating_after = ? WHERE id = ?"
)
SET_GAME_MESSAGE = "UPDATE games SET message_id = ? WHERE id = ? RETURNING id"

LIVE_GAMES = (
    f"SELECT {GAME_COLUMNS} FROM games WHERE guild_id = ? AND channel_id = ?"
    f" AND {IS_LIVE} ORDER BY id DESC"
)


def games_bot_to_move(shards: Shards | None = None) -> str:
    """Games owing the bot's move, in ``shards``' servers (parameters: ``owned_values``)."""
    return f"SELECT {GAME_COLUMNS} FROM games WHERE {IS_BOT_TO_MOVE}{owned(shards)} ORDER BY id"


def overdue_games(shards: Shards | None = None) -> str:
    """Active games past their deadline (parameters: now, then ``owned_values``)."""
    return (
        f"SELECT {GAME_COLUMNS} FROM games WHERE {IS_ACTIVE}"
        f" AND turn_deadline <= ?{owned(shards)} ORDER BY turn_deadline"
    )


GAMES_BOT_TO_MOVE = games_bot_to_move()
OVERDUE_GAMES = overdue_games()
GUILD_HISTORY = (
    f"SELECT {GAME_COLUMNS} FROM games WHERE guild_id = ? AND {IS_ENDED}"
    " ORDER BY updated_at DESC, id DESC LIMIT ?"
)
MEMBER_HISTORY = (
    f"SELECT {GAME_COLUMNS} FROM games WHERE guild_id = ? AND {IS_ENDED} AND x_id = ?"
    f" UNION SELECT {GAME_COLUMNS} FROM games WHERE guild_id = ? AND {IS_ENDED} AND o_id = ?"
    " ORDER BY updated_at DESC, id DESC LIMIT ?"
)
"""One lookup per mark, each in its partial index (games_ended_by_x/_o), merged in order
(see docs/decisions.md#member-games-found-by-mark)."""

# -- challenges --------------------------------------------------------------------------

GET_CHALLENGE = f"SELECT {CHALLENGE_COLUMNS} FROM challenges WHERE id = ?"
PENDING_CHALLENGES = (
    f"SELECT {CHALLENGE_COLUMNS} FROM challenges WHERE guild_id = ? AND channel_id = ?"
    f" AND {IS_PENDING} AND expires_at > ? ORDER BY id"
)
INSERT_CHALLENGE = (
    "INSERT INTO challenges (guild_id, channel_id, message_id, challenger_id,"
    " opponent_id, width, height, k, first, status, created_at, expires_at,"
    " game_id, rematch_of, pinged, locale)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    f" RETURNING {CHALLENGE_COLUMNS}"
)
SET_CHALLENGE_MESSAGE = (
    "UPDATE challenges SET message_id = ?, expires_at = ? WHERE id = ? RETURNING id"
)
ANSWER_CHALLENGE = (
    f"UPDATE challenges SET status = ? WHERE id = ? AND {IS_PENDING} AND expires_at > ?"
    f" RETURNING {CHALLENGE_COLUMNS}"
)
SET_CHALLENGE_GAME = f"UPDATE challenges SET game_id = ? WHERE id = ? RETURNING {CHALLENGE_COLUMNS}"
"""Links a challenge to the game its acceptance inserted (in the same transaction)."""
PENDING_OF = (
    f"SELECT {CHALLENGE_COLUMNS} FROM challenges WHERE guild_id = ? AND challenger_id = ?"
    f" AND {IS_PENDING}"
)
HAS_REMATCH = "SELECT 1 FROM challenges WHERE rematch_of = ? LIMIT 1"
PENDING_REMATCH = (
    f"SELECT {CHALLENGE_COLUMNS} FROM challenges WHERE rematch_of = ? AND {IS_PENDING}"
)
"""A game's pending rematch (at most one: challenges_pending_per_rematch)."""
"""The challenger's pending challenge in a guild (at most one: a unique partial index)."""


def any_challenge_due(shards: Shards | None = None) -> str:
    """Whether a pending challenge is past expiry (parameters: now, ``owned_values``)."""
    due = f"{IS_PENDING} AND expires_at <= ?{owned(shards)}"
    return f"SELECT 1 FROM challenges WHERE {due} LIMIT 1"


def expire_challenges(shards: Shards | None = None) -> str:
    """Expire those (parameters: the EXPIRED status, now, ``owned_values``)."""
    due = f"{IS_PENDING} AND expires_at <= ?{owned(shards)}"
    return f"UPDATE challenges SET status = ? WHERE {due} RETURNING {CHALLENGE_COLUMNS}"


EXPIRE_CHALLENGE = (
    "UPDATE challenges SET status = 'expired'"
    f" WHERE id = ? AND {IS_PENDING} AND expires_at <= ? RETURNING id"
)
ANY_CHALLENGE_DUE = any_challenge_due()
EXPIRE_CHALLENGES = expire_challenges()

# -- players -----------------------------------------------------------------------------

ADD_BOT_RECORD = (
    "INSERT INTO bot_records (guild_id, user_id, level, wins, losses, draws)"
    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (guild_id, user_id, level) DO UPDATE SET"
    " wins = bot_records.wins + excluded.wins, losses = bot_records.losses + excluded.losses,"
    " draws = bot_records.draws + excluded.draws"
)


def players_of(count: int) -> str:
    """The rows of ``count`` members of one guild (parameters: guild, then the members)."""
    members = ", ".join("?" * count)
    return (
        f"SELECT user_id, {PLAYER_COLUMNS} FROM players"
        f" WHERE guild_id = ? AND user_id IN ({members})"
    )


def write_players(count: int) -> str:
    """Upsert ``count`` players' rows as absolute values, in one statement (parameters per
    row: guild, user, PLAYER_COLUMNS' values, updated_at)."""
    values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * count)
    return (
        f"INSERT INTO players (guild_id, user_id, {PLAYER_COLUMNS}, updated_at) VALUES {values}"
        " ON CONFLICT (guild_id, user_id) DO UPDATE SET rating = excluded.rating,"
        " rated_games = excluded.rated_games, wins = excluded.wins,"
        " losses = excluded.losses, draws = excluded.draws,"
        " current_streak = excluded.current_streak, best_streak = excluded.best_streak,"
        " updated_at = excluded.updated_at"
    )
