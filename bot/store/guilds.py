"""A server's settings, allowed channels, cooldowns and challenge consent."""

from __future__ import annotations

from bot.store.connection import Database

__all__ = ["GuildStore"]


class GuildStore:
    def __init__(self, db: Database) -> None:
        self._db = db
