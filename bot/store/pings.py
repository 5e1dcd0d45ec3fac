"""Turn notifications: the one ping message each member game may have standing."""

from __future__ import annotations

from bot.store.connection import Database

__all__ = ["PingStore"]


class PingStore:
    def __init__(self, db: Database) -> None:
        self._db = db
