"""Erasing a member's, or a whole server's, data on request."""

from __future__ import annotations

from bot.store.connection import Database

__all__ = ["PrivacyStore"]


class PrivacyStore:
    def __init__(self, db: Database) -> None:
        self._db = db
