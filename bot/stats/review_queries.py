"""Stored reviews of ended games (computed once), and the members' review cooldowns.

Both hold across processes sharing the file: the first review stored for a game wins
(``INSERT ... ON CONFLICT DO NOTHING``); a review the service no longer reads (an older
version's) is replaced by compare-and-set on its text, so the first replacement wins the
same way; and a cooldown is claimed by one statement that writes only if the previous one
has run out.
"""

from __future__ import annotations

from bot.db.backend import Database
from bot.games.server_queries import CLAIM_COOLDOWN, COOLDOWN_UNTIL

__all__ = ["REVIEW_ACTION", "ReviewStore"]

REVIEW_ACTION = "review"
"""The ``cooldowns.action`` of a review (it has no target: ``target`` 0)."""

GET_REVIEW = "SELECT review FROM reviews WHERE game_id = ?"
PUT_REVIEW = "INSERT INTO reviews (game_id, review) VALUES (?, ?) ON CONFLICT (game_id) DO NOTHING"
REPLACE_REVIEW = "UPDATE reviews SET review = ? WHERE game_id = ? AND review = ?"
RELEASE_COOLDOWN = """
UPDATE cooldowns SET until = ?
WHERE guild_id = ? AND user_id = ? AND action = ? AND target = 0 AND until = ?
"""


class ReviewStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, game_id: int) -> str | None:
        """The stored review of ``game_id`` (JSON), or None."""
        rows = await self._db.run_alone(GET_REVIEW, (game_id,))
        return str(rows[0][0]) if rows else None

    async def put(self, game_id: int, review: str, *, replacing: str | None = None) -> str:
        """Store ``review`` unless one is stored already, or in place of ``replacing`` if
        that is still the one stored; return the one stored."""
        if replacing is not None:
            await self._db.run_alone(REPLACE_REVIEW, (review, game_id, replacing))
        await self._db.run_alone(PUT_REVIEW, (game_id, review))
        stored = await self.get(game_id)
        assert stored is not None, "a stored review is deleted only with its game"
        return stored

    async def claim_cooldown(
        self, guild_id: int, user_id: int, now: float, until: float
    ) -> float | None:
        """Start the member's review cooldown (to ``until``) if the last one ran out by
        ``now``, atomically: None if claimed, else when the running one ends."""
        key = (guild_id, user_id, REVIEW_ACTION, 0)
        for _attempt in range(2):
            if await self._db.run_alone(CLAIM_COOLDOWN, (*key, until, now)):
                return None
            rows = await self._db.run_alone(COOLDOWN_UNTIL, key)
            if rows:
                return float(rows[0][0])
        return until  # erased and claimed again in between, twice: as if refused

    async def release_cooldown(self, guild_id: int, user_id: int, until: float, now: float) -> None:
        """End the cooldown claimed up to ``until`` at ``now`` (the review did not run);
        a newer claim is left alone."""
        parameters = (now, guild_id, user_id, REVIEW_ACTION, until)
        await self._db.run_alone(RELEASE_COOLDOWN, parameters)
