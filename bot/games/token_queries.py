"""The stored token of each game's or challenge's last interaction, where the bot reaches
it through interactions alone (``bot.reach``): read and written, nothing decided here."""

from __future__ import annotations

from dataclasses import dataclass

from bot.db.backend import Database

__all__ = ["Token", "Tokens"]

PUT = (
    "INSERT INTO reach_tokens (kind, item_id, token, issued_at, user_only, followups)"
    " VALUES (?, ?, ?, ?, ?, 0)"
    " ON CONFLICT (kind, item_id) DO UPDATE SET token = excluded.token,"
    " issued_at = excluded.issued_at, user_only = excluded.user_only, followups = 0"
)
GET = (
    "SELECT token, issued_at, user_only, followups FROM reach_tokens WHERE kind = ? AND item_id = ?"
)
COUNT_FOLLOWUP = (
    "UPDATE reach_tokens SET followups = followups + 1 WHERE kind = ? AND item_id = ? AND token = ?"
)
DROP_OLD = "DELETE FROM reach_tokens WHERE issued_at < ?"


@dataclass(frozen=True, slots=True)
class Token:
    token: str
    issued_at: float
    user_only: bool
    followups: int


class Tokens:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def put(self, kind: str, item_id: int, token: Token) -> None:
        """Keep ``token`` as ``item_id``'s latest (its follow-ups counted from 0)."""
        values = (kind, item_id, token.token, token.issued_at, int(token.user_only))
        await self._db.run_alone(PUT, values)

    async def get(self, kind: str, item_id: int) -> Token | None:
        rows = await self._db.run_alone(GET, (kind, item_id))
        if not rows:
            return None
        token, issued_at, user_only, followups = rows[0]
        return Token(str(token), float(issued_at), bool(user_only), int(followups))

    async def count_followup(self, kind: str, item_id: int, token: str) -> None:
        await self._db.run_alone(COUNT_FOLLOWUP, (kind, item_id, token))

    async def drop_older_than(self, when: float) -> None:
        """Forget tokens issued before ``when``: Discord no longer takes them."""
        await self._db.run_alone(DROP_OLD, (when,))
