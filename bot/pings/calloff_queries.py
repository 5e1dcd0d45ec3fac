"""Proposals to call a rated game off (end it unrated), one per game at most."""

from __future__ import annotations

from bot.db.backend import Database
from bot.db.rows import IS_LIVE, Row
from bot.models import CallOff

__all__ = ["CallOff", "CallOffStore"]

GET = "SELECT proposer_id, move_no, message_id FROM calloffs WHERE game_id = ?"
PUT = (
    "INSERT INTO calloffs (game_id, proposer_id, move_no, message_id, created_at)"
    " VALUES (?, ?, ?, NULL, ?) ON CONFLICT (game_id) DO UPDATE SET"
    " proposer_id = excluded.proposer_id, move_no = excluded.move_no, message_id = NULL,"
    " created_at = excluded.created_at WHERE calloffs.move_no <> excluded.move_no"
    " RETURNING game_id"
)
SET_MESSAGE = "UPDATE calloffs SET message_id = ? WHERE game_id = ? AND proposer_id = ?"
DROP = "DELETE FROM calloffs WHERE game_id = ? RETURNING proposer_id, move_no, message_id"
DROP_EXACT = "DELETE FROM calloffs WHERE game_id = ? AND proposer_id = ? AND move_no = ?"
LAPSED = (
    "SELECT c.game_id, c.proposer_id, c.move_no, c.message_id, g.channel_id FROM calloffs AS c"
    " JOIN games AS g ON g.id = c.game_id"
    f" WHERE c.move_no <> g.move_no OR NOT g.{IS_LIVE} LIMIT ?"
)


DECLINED = (
    "INSERT INTO calloff_declines (game_id, proposer_id, again_at) VALUES (?, ?, ?)"
    " ON CONFLICT (game_id) DO UPDATE SET proposer_id = excluded.proposer_id,"
    " again_at = excluded.again_at"
)
AGAIN_AT = "SELECT again_at FROM calloff_declines WHERE game_id = ? AND proposer_id = ?"


class CallOffStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, game_id: int) -> CallOff | None:
        rows = await self._db.run_alone(GET, (game_id,))
        return CallOff(game_id, *rows[0]) if rows else None

    async def propose(self, game_id: int, proposer_id: int, move_no: int, now: float) -> bool:
        """Record the proposal, replacing one made at an earlier move; False (nothing
        written) if one made at this move stands."""
        return bool(await self._db.run_alone(PUT, (game_id, proposer_id, move_no, now)))

    async def set_message(self, game_id: int, proposer_id: int, message_id: int) -> None:
        await self._db.run_alone(SET_MESSAGE, (message_id, game_id, proposer_id))

    async def drop(self, game_id: int) -> CallOff | None:
        """Remove the game's proposal and return it (None if there was none)."""
        rows = await self._db.run_alone(DROP, (game_id,))
        return CallOff(game_id, *rows[0]) if rows else None

    async def lapsed(self, limit: int = 100) -> list[tuple[CallOff, int]]:
        """Proposals whose game moved on or ended, each with its channel's id."""
        rows = await self._db.run_alone(LAPSED, (limit,))
        return [(CallOff(row[0], row[1], row[2], row[3]), row[4]) for row in rows]

    async def declined(self, proposal: CallOff, again_at: int) -> None:
        """Remove the declined ``proposal``, and keep its proposer from proposing again in
        that game before move ``again_at``."""
        statements = [
            (DROP_EXACT, (proposal.game_id, proposal.proposer_id, proposal.move_no)),
            (DECLINED, (proposal.game_id, proposal.proposer_id, again_at)),
        ]

        async def body(_opened: list[list[Row]]) -> None:
            return None

        await self._db.transaction(body, first=statements)

    async def again_at(self, game_id: int, proposer_id: int) -> int | None:
        """The move from which ``proposer_id`` may propose again after a decline, if any."""
        rows = await self._db.run_alone(AGAIN_AT, (game_id, proposer_id))
        return int(rows[0][0]) if rows else None

    async def drop_exact(self, proposal: CallOff) -> None:
        """Remove ``proposal`` if it is still the game's (not a newer one)."""
        await self._db.run_alone(
            DROP_EXACT, (proposal.game_id, proposal.proposer_id, proposal.move_no)
        )
