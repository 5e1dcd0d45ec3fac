"""Pure tic-tac-toe engine: m,n,k boards, rules, AI strategies, solver and analysis.

Nothing here does I/O or imports discord, asyncio or sqlite; the bot and the CLI build
on it.
"""

from engine.board import (
    MAX_SIDE,
    MIN_K,
    MIN_SIDE,
    Board,
    Geometry,
    Mark,
    Outcome,
    Termination,
    geometry,
)
from engine.errors import (
    EngineError,
    IllegalMoveError,
    InvalidBoardError,
    InvalidMoveError,
    InvalidPositionError,
)

__all__ = [
    "MAX_SIDE",
    "MIN_K",
    "MIN_SIDE",
    "Board",
    "EngineError",
    "Geometry",
    "IllegalMoveError",
    "InvalidBoardError",
    "InvalidMoveError",
    "InvalidPositionError",
    "Mark",
    "Outcome",
    "Termination",
    "geometry",
]
