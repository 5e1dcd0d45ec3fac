"""Leaderboards, a member's stats and history: read-only views of what games recorded."""

from __future__ import annotations

from bot.games.queries import Store
from bot.games.ratings import is_provisional
from bot.models import (
    Game,
    LeaderboardEntry,
    LeaderboardPage,
    LevelRecord,
    PlayerStats,
)
from bot.stats.queries import StatsQueries
from engine.levels import LEVELS

__all__ = ["Stats", "clamp_page", "pages"]

MAX_PER_PAGE = 50
RECENT_GAMES = 5
"""Games /tictactoe-stats lists by default."""
MAX_HISTORY = 100


def pages(total: int, per_page: int) -> int:
    """The leaderboard's pages for ``total`` members: one at least, even empty."""
    return max(1, -(-total // per_page))


def clamp_page(page: int, total: int, per_page: int) -> int:
    """``page`` brought into 1..pages (a click on a page that has since gone)."""
    return min(max(1, page), pages(total, per_page))


class Stats:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._queries = StatsQueries(store.db)

    async def leaderboard(
        self, guild_id: int, page: int = 1, per_page: int = 10
    ) -> LeaderboardPage:
        """Members with rated games by rating, then games, then user id; ``page`` is
        clamped to the pages there are (counted in the same read as the page's rows). A
        page past the last gives the last, with ``past`` set to the page asked for: the
        ranking may have shrunk since a Next button was drawn (an erasure, expired history)."""
        per_page = min(max(1, per_page), MAX_PER_PAGE)

        def offset_for(total: int) -> int:
            return (clamp_page(page, total, per_page) - 1) * per_page

        total, offset, rows = await self._queries.leaderboard(guild_id, per_page, offset_for)
        entries = tuple(
            LeaderboardEntry(
                rank=row.rank or 0,
                user_id=user_id,
                rating=row.rating,
                record=row.record,
                provisional=is_provisional(row.rated_games),
            )
            for user_id, row in rows
        )
        shown, last = offset // per_page + 1, pages(total, per_page)
        return LeaderboardPage(
            entries=entries,
            page=shown,
            pages=last,
            total_players=total,
            past=page if page > last else None,
        )

    async def player_stats(
        self, guild_id: int, user_id: int, recent: int = RECENT_GAMES
    ) -> PlayerStats:
        row = await self._queries.player(guild_id, user_id)
        levels = await self._queries.bot_records(guild_id, user_id)
        order = {name: i for i, name in enumerate(LEVELS)}
        levels.sort(key=lambda lr: (order.get(lr.level, len(order)), lr.level))
        games = await self._store.history(guild_id, user_id, min(max(0, recent), MAX_HISTORY))
        return PlayerStats(
            guild_id=guild_id,
            user_id=user_id,
            rating=row.rating,
            provisional=is_provisional(row.rated_games),
            rank=row.rank,
            versus_members=row.record,
            versus_bot=tuple(LevelRecord(lr.level, lr.record) for lr in levels),
            current_streak=row.current_streak,
            best_streak=row.best_streak,
            recent=tuple(games),
        )

    async def history(
        self, guild_id: int, user_id: int | None = None, limit: int = 10
    ) -> list[Game]:
        """Finished and abandoned games of the guild (or of one member), newest first."""
        return await self._store.history(guild_id, user_id, min(max(1, limit), MAX_HISTORY))
