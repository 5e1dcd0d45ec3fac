"""Stored reviews of ended games (computed once)."""

from __future__ import annotations

from bot.store.connection import Database

__all__ = ["ReviewStore"]


class ReviewStore:
    def __init__(self, db: Database) -> None:
        self._db = db
