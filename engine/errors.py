"""The engine's exceptions.

All of them are ``ValueError``s, so a caller that only wants "bad input" can catch one
type; a caller that must tell a typo from a rule violation catches the subclasses.
"""

from __future__ import annotations

__all__ = [
    "EngineError",
    "IllegalMoveError",
    "InvalidBoardError",
    "InvalidMoveError",
    "InvalidPositionError",
]


class EngineError(ValueError):
    """Base class of every error the engine raises on bad input."""


class InvalidMoveError(EngineError):
    """A move that does not name a cell of the board (not a number, out of range)."""


class IllegalMoveError(EngineError):
    """A well-formed move the rules forbid (cell taken, game over, nothing to undo)."""


class InvalidBoardError(EngineError):
    """A board description that is malformed (size, win length, shape, characters)."""


class InvalidPositionError(InvalidBoardError):
    """A well-formed board that no legal game can reach (counts, two winners, play after a win)."""
