"""The stats' queries: a leaderboard page and a member's row and records, read from the
players and bot_records tables that a game's end writes (``bot.games.queries``)."""

from __future__ import annotations

from collections.abc import Callable

from bot.db.backend import Database
from bot.db.rows import PLAYER_COLUMNS, Row, player_from_row
from bot.models import LevelRecord, PlayerRow, Record

__all__ = ["StatsQueries"]

RANKED_PLAYERS = "SELECT COUNT(*) FROM players WHERE guild_id = ? AND rated_games > 0"
LEADERBOARD_PAGE = (
    f"SELECT user_id, {PLAYER_COLUMNS} FROM players WHERE guild_id = ? AND rated_games > 0"
    " ORDER BY rating DESC, rated_games DESC, user_id LIMIT ? OFFSET ?"
)
PLAYER = (
    f"SELECT {PLAYER_COLUMNS}, CASE WHEN p.rated_games > 0 THEN 1 + (SELECT COUNT(*)"
    " FROM players AS o WHERE o.guild_id = p.guild_id AND o.rated_games > 0"
    " AND (o.rating > p.rating OR (o.rating = p.rating AND (o.rated_games > p.rated_games"
    " OR (o.rated_games = p.rated_games AND o.user_id < p.user_id))))) END"
    " FROM players AS p WHERE guild_id = ? AND user_id = ?"
)
"""A member's row and leaderboard rank (NULL without a rated game) in one statement, so
one snapshot: the order is LEADERBOARD_PAGE's."""
BOT_RECORDS = (
    "SELECT level, wins, losses, draws FROM bot_records"
    " WHERE guild_id = ? AND user_id = ? ORDER BY level"
)


class StatsQueries:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def leaderboard(
        self, guild_id: int, per_page: int, offset_for: Callable[[int], int]
    ) -> tuple[int, int, list[tuple[int, PlayerRow]]]:
        """(members with a rated game, the offset ``offset_for(that count)`` chose, the
        ``per_page`` rows from there), as of one moment (one read snapshot).

        Rows are (user id, row with rank), by rating desc, rated games desc, user id.
        """

        async def body(opened: list[list[Row]]) -> tuple[int, int, list[tuple[int, PlayerRow]]]:
            ((total,),) = opened[0]
            offset = offset_for(total)
            rows = await self.db.run(LEADERBOARD_PAGE, (guild_id, per_page, offset))
            entries = [(r[0], player_from_row(r[1:], offset + i + 1)) for i, r in enumerate(rows)]
            return total, offset, entries

        first = [(RANKED_PLAYERS, (guild_id,))]
        return await self.db.transaction(body, first=first, snapshot=True)

    async def player(self, guild_id: int, user_id: int) -> PlayerRow:
        """A member's row with their leaderboard rank (defaults if they never played)."""
        rows = await self.db.run_alone(PLAYER, (guild_id, user_id))
        return player_from_row(rows[0], rows[0][7]) if rows else PlayerRow()

    async def bot_records(self, guild_id: int, user_id: int) -> list[LevelRecord]:
        """A member's results against each bot level they played, by level name."""
        rows = await self.db.run_alone(BOT_RECORDS, (guild_id, user_id))
        return [LevelRecord(r[0], Record(r[1], r[2], r[3])) for r in rows]
