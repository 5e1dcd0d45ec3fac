"""What the exact solver answers: results, scores and the records it returns.

Scores are from the point of view of the player to move and depend only on the
position: a game that ends in a win with ``n`` marks on the board is worth
``size + 1 - n`` to the winner and the negation to the loser, a draw is worth 0. This is
the tutorials' "10 - depth" rule counted from the empty board, so a quicker win scores
more and a later loss scores less.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import EngineError

__all__ = [
    "DRAW",
    "LOSS",
    "SCORE_UNIT",
    "WIN",
    "MoveValue",
    "SearchResult",
    "UnsolvableError",
    "result_of",
]

WIN = "win"
DRAW = "draw"
LOSS = "loss"

SCORE_UNIT = 100_000
"""``SearchResult.score`` is an exact score times this; heuristic estimates stay inside it."""


class UnsolvableError(EngineError):
    """The position is too big to solve exactly within the node limit."""


@dataclass(frozen=True, slots=True)
class MoveValue:
    """The exact value of playing ``cell`` for the player to move.

    ``plies`` counts the move itself: a winning move that completes a line has plies 1.
    A draw always lasts until the board is full.
    """

    cell: int
    result: str
    plies: int


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What ``Perfect.search`` chose and how sure it is.

    ``score`` is for the player to move, in ``SCORE_UNIT``s: an exact score times
    SCORE_UNIT when ``proven``. Otherwise it is the search's estimate: a heuristic value
    strictly between -SCORE_UNIT and SCORE_UNIT, or (rarely) a win or loss the search
    saw but could not prove within its depth. ``depth`` is how many plies were searched
    (all remaining plies for an exact solve). ``result`` and ``plies`` describe the
    chosen move as in MoveValue when proven, and are None otherwise.
    """

    cell: int
    score: int
    proven: bool
    depth: int
    nodes: int
    result: str | None = None
    plies: int | None = None


def result_of(score: int) -> str:
    """WIN, DRAW or LOSS for an exact score (either scale)."""
    return WIN if score > 0 else LOSS if score < 0 else DRAW


def _move_value(cell: int, score: int, ply: int, size: int) -> MoveValue:
    """A move's MoveValue from its exact score for the mover, played at ``ply`` marks."""
    if score == 0:
        return MoveValue(cell, DRAW, size - ply)
    return MoveValue(cell, result_of(score), size + 1 - abs(score) - ply)
