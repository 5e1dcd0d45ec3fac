"""The value of a variant under perfect play: does the first player win, or is it a draw?

``opening_value(width, height, k)`` is the game-theoretic value of the empty board for
the player who moves first (``solver.WIN`` or ``solver.DRAW``; the second player never
wins, by strategy stealing). Small boards are solved here; a board too big to solve in
a moment gets its value from a smaller or bigger board whose value is known, by the two
facts that hold for every m,n,k-game:

- a first-player win on a board stays one on any board that contains it (with the same
  or a shorter line): the first player plays the same strategy inside the smaller board
  and treats the opponent's moves outside it as passes;
- a draw stays one on any board it contains (with the same or a longer line): the second
  player's drawing strategy works there too.

The one result taken from outside is that 5 x 5 with four in a row is a draw (Uiterwijk
and van den Herik, "The advantage of the initiative", 2000; too big to solve here in
seconds). Boards of up to twelve cells are solved by ``engine.solver``; the tests check
the derived values of the bigger boards it can solve (4 x 4, 5 x 4) against a search.
"""

from __future__ import annotations

import functools
import itertools

from engine.board import MAX_SIDE, MIN_SIDE, Board, geometry
from engine.solver import DRAW, WIN, result_of, solve

__all__ = ["SOLVED_CELLS", "is_fair", "opening_value"]

SOLVED_CELLS = 12
"""Boards of at most this many cells are solved on demand (a few milliseconds each)."""

_KNOWN_DRAWS = ((5, 5, 4),)
"""Published values of boards too big to solve here: (width, height, k), drawn."""


def _contains(big: tuple[int, int], small: tuple[int, int]) -> bool:
    """Whether a ``small`` (width, height) board fits inside ``big``, turned or not."""
    (bw, bh), (sw, sh) = big, small
    return (sw <= bw and sh <= bh) or (sh <= bw and sw <= bh)


@functools.cache
def opening_value(width: int, height: int, k: int) -> str:
    """WIN if the first player can force a win on the empty board, else DRAW.

    >>> opening_value(3, 3, 3)
    'draw'
    >>> opening_value(4, 4, 3)
    'win'
    """
    geometry(width, height, k)  # InvalidBoardError for a shape the engine cannot play
    for big_w, big_h, big_k in _KNOWN_DRAWS:
        if k >= big_k and _contains((big_w, big_h), (width, height)):
            return DRAW
    if width * height <= SOLVED_CELLS:
        return result_of(solve(Board(width, height, k)))
    # A solvable board inside this one that the first player wins, with a line as long.
    sides = range(MIN_SIDE, MAX_SIDE + 1)
    inside = [
        (w, h)
        for w, h in itertools.product(sides, repeat=2)
        if w * h <= SOLVED_CELLS and _contains((width, height), (w, h)) and k <= max(w, h)
    ]
    if any(opening_value(w, h, k) == WIN for w, h in inside):
        return WIN
    # Every board up to 5 x 5 is decided above; a bigger engine needs a value here.
    raise NotImplementedError(f"no known value for {width}x{height} with {k} in a row")


def is_fair(width: int, height: int, k: int) -> bool:
    """Whether neither player can force a win: the variants fit for rated games."""
    return opening_value(width, height, k) == DRAW
