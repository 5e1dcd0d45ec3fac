"""Elo ratings between members: pure arithmetic, no I/O.

Everyone starts at 1500. The K factor is 40 for a player's first 30 rated games and 20
after that, so newcomers find their level quickly and settled ratings move slowly; a
rating counts as provisional until 10 rated games. Each side's change uses its own K, so
the two changes need not cancel out while one player is still new.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.models import START_RATING

__all__ = [
    "ESTABLISHED_K",
    "NEW_PLAYER_GAMES",
    "NEW_PLAYER_K",
    "PROVISIONAL_GAMES",
    "START_RATING",
    "Rating",
    "expected_score",
    "is_provisional",
    "k_factor",
    "rate",
]

NEW_PLAYER_K = 40
ESTABLISHED_K = 20
NEW_PLAYER_GAMES = 30  # games played with NEW_PLAYER_K
PROVISIONAL_GAMES = 10  # provisional while fewer rated games than this


@dataclass(frozen=True, slots=True)
class Rating:
    """A member's Elo rating and how many rated games it rests on."""

    value: float = START_RATING
    games: int = 0

    @property
    def provisional(self) -> bool:
        return is_provisional(self.games)


def expected_score(rating: float, opponent: float) -> float:
    """The score (1 win, 0.5 draw, 0 loss) Elo predicts for ``rating`` against ``opponent``."""
    # float ** float is typed Any (a negative base gives a complex); this one is a float.
    scale: float = 10.0 ** ((opponent - rating) / 400.0)
    return 1.0 / (1.0 + scale)


def k_factor(games: int) -> int:
    """K for a player's next game, given the rated games already played."""
    return NEW_PLAYER_K if games < NEW_PLAYER_GAMES else ESTABLISHED_K


def is_provisional(games: int) -> bool:
    return games < PROVISIONAL_GAMES


def rate(a: Rating, b: Rating, score_a: float) -> tuple[Rating, Rating]:
    """Both ratings after one game in which ``a`` scored ``score_a`` (1, 0.5 or 0)."""
    if score_a not in (0.0, 0.5, 1.0):
        raise ValueError(f"a game scores 0, 0.5 or 1, not {score_a!r}")
    expected_a = expected_score(a.value, b.value)
    new_a = a.value + k_factor(a.games) * (score_a - expected_a)
    new_b = b.value + k_factor(b.games) * ((1.0 - score_a) - (1.0 - expected_a))
    return Rating(new_a, a.games + 1), Rating(new_b, b.games + 1)
