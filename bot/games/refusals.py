"""Why the store refused a write: exceptions the service turns into answers for users.

Each one means nothing was written. They are raised from the database's own checks
(unique keys, guarded statements) inside the writing transaction, so they hold across
processes sharing the database.
"""

from __future__ import annotations

from bot.games.limits import LimitReached
from bot.models import Challenge

__all__ = [
    "CHALLENGE_ACTION",
    "ChannelTaken",
    "CoolingDown",
    "LimitReached",
    "PendingTaken",
    "RematchTaken",
]

CHALLENGE_ACTION = "challenge"
"""The cooldowns row of a challenge: challenger -> opponent (the target)."""


class ChannelTaken(Exception):
    """Inserting a game hit the one-live-game-per-channel index."""


class CoolingDown(Exception):
    """The challenger's cooldown towards this opponent runs until ``until``."""

    def __init__(self, until: float) -> None:
        super().__init__(f"cooling down until {until}")
        self.until = until


class PendingTaken(Exception):
    """The challenger already has a pending challenge in the server (``challenge``;
    None if it was answered in the meantime)."""

    def __init__(self, challenge: Challenge | None) -> None:
        super().__init__("the challenger already has a pending challenge")
        self.challenge = challenge


class RematchTaken(Exception):
    """The game the challenge plays again already has a pending rematch (perhaps the
    other player's, pressed at the same moment)."""
