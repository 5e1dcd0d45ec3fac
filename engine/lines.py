"""What the strategies share: per-shape line tables, the leaf evaluations, threats and
forks, all on raw bitboards (``x_bits``/``o_bits`` and the geometry's line masks)."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from engine.board import Board
from engine.errors import IllegalMoveError

__all__ = [
    "EVALUATIONS",
    "WIN_SCORE",
    "Strategy",
    "UnknownStrategyError",
    "forking_cells",
    "open_lines_eval",
    "preference_order",
    "threat_cells",
    "weighted_eval",
]

WIN_SCORE = 1_000_000_000
"""The score of a win on the spot; a win ``p`` plies away scores ``WIN_SCORE - p``.

Far above any evaluation (below 10**6 on every board up to 5x5), so no heuristic
estimate is ever mistaken for a forced result.
"""


class Strategy(Protocol):
    """Chooses a legal 0-based cell for the player to move."""

    def __call__(self, board: Board, rng: random.Random) -> int: ...


class UnknownStrategyError(ValueError):
    """A strategy name or parameter that the registry does not know."""


# -- per-shape tables ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Tables:
    """Precomputed bit masks for one board shape (width, height, k)."""

    k: int
    size: int
    full: int
    line_masks: tuple[int, ...]
    cell_masks: tuple[tuple[int, ...], ...]  # masks of the lines through each cell
    order: tuple[int, ...]  # preference order, best first


@functools.cache
def _tables(width: int, height: int, k: int) -> _Tables:
    geo = Board(width, height, k).geometry
    cell_masks = tuple(
        tuple(geo.line_masks[i] for i in geo.lines_through[cell]) for cell in range(geo.size)
    )
    return _Tables(
        k=k,
        size=geo.size,
        full=geo.full_mask,
        line_masks=geo.line_masks,
        cell_masks=cell_masks,
        order=_preference(width, height, cell_masks),
    )


def _tables_of(board: Board) -> _Tables:
    return _tables(board.width, board.height, board.k)


def _preference(
    width: int, height: int, cell_masks: tuple[tuple[int, ...], ...]
) -> tuple[int, ...]:
    def key(cell: int) -> tuple[int, int, int]:
        row, col = divmod(cell, width)
        # Four times the squared distance to the centre: whole numbers on any board.
        dist = (2 * row - (height - 1)) ** 2 + (2 * col - (width - 1)) ** 2
        return (-len(cell_masks[cell]), dist, cell)

    return tuple(sorted(range(width * height), key=key))


def preference_order(board: Board) -> tuple[int, ...]:
    """The ``table`` strategy's order of all cells, most preferred first.

    Cells on more winning lines come first; ties go to the cell nearer the centre, then
    to the lower index (reading order). On 3x3 this is the tutorial's table: centre,
    corners (1, 3, 7, 9), sides (2, 4, 6, 8) in 1-based numbers.
    """
    return _tables_of(board).order


def _mover_bits(board: Board) -> tuple[int, int]:
    """(mover's bits, opponent's bits)."""
    x, o = board.x_bits, board.o_bits
    return (x, o) if x.bit_count() == o.bit_count() else (o, x)


def _require_moves(board: Board) -> tuple[int, ...]:
    moves = board.legal_moves()
    if not moves:
        raise IllegalMoveError("the game is over; there is no move to choose")
    return moves


def _bit_cells(bits: int) -> list[int]:
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


# -- evaluations -----------------------------------------------------------------------


def _line_score(me: int, opp: int, masks: tuple[int, ...], weights: tuple[int, ...]) -> int:
    score = 0
    for mask in masks:
        mine = me & mask
        theirs = opp & mask
        if theirs:
            if not mine:
                score -= weights[theirs.bit_count()]
        elif mine:
            score += weights[mine.bit_count()]
    return score


@functools.cache
def _open_weights(k: int) -> tuple[int, ...]:
    return tuple(range(k + 1))


@functools.cache
def _power_weights(k: int) -> tuple[int, ...]:
    return (0, *(10 ** (n - 1) for n in range(1, k + 1)))


def open_lines_eval(board: Board, me: int, opp: int) -> int:
    """The C# tutorial's estimate: over every line still winnable by a player (none of the
    other's marks on it), that player's marks on it; ``me``'s sum minus ``opp``'s.

    ``me``/``opp`` are bitboards; ``board`` only supplies the shape.
    """
    t = _tables_of(board)
    return _line_score(me, opp, t.line_masks, _open_weights(t.k))


def weighted_eval(board: Board, me: int, opp: int) -> int:
    """The Java tutorial's estimate, generalised to k: a line holding ``n`` of one
    player's marks and none of the other's is worth ``10**(n-1)`` to that player
    (+100/+10/+1 on 3x3); ``me``'s total minus ``opp``'s.
    """
    t = _tables_of(board)
    return _line_score(me, opp, t.line_masks, _power_weights(t.k))


EVALUATIONS: dict[str, tuple[Callable[[int], tuple[int, ...]], str]] = {
    "open_lines": (_open_weights, "marks on each line still winnable, mine minus theirs"),
    "weighted": (_power_weights, "10**(n-1) for n marks on an open line, mine minus theirs"),
}


# -- threats and forks -----------------------------------------------------------------


def _threats(me: int, opp: int, t: _Tables) -> int:
    """Bit mask of the empty cells that would complete a line for ``me``."""
    need = t.k - 1
    cells = 0
    for mask in t.line_masks:
        if opp & mask:
            continue
        mine = me & mask
        if mine.bit_count() == need:
            cells |= mask & ~mine
    return cells


def _forks(me: int, opp: int, t: _Tables) -> int:
    """Bit mask of the empty cells where ``me`` would get two or more winning cells."""
    empty = t.full & ~(me | opp)
    cells = 0
    for cell in _bit_cells(empty):
        if _threats(me | 1 << cell, opp, t).bit_count() >= 2:
            cells |= 1 << cell
    return cells


def threat_cells(board: Board, mover: bool = True) -> list[int]:
    """The cells that would win on the spot for the player to move (or, with
    ``mover=False``, for the other player): the empty cell of each line holding k-1 of
    that player's marks and nothing else.
    """
    me, opp = _mover_bits(board)
    if not mover:
        me, opp = opp, me
    if board.is_over:
        return []
    return _bit_cells(_threats(me, opp, _tables_of(board)))


def forking_cells(board: Board, mover: bool = True) -> list[int]:
    """The cells where that player would create a fork: two or more different winning
    cells at once, so that one block cannot stop both.
    """
    me, opp = _mover_bits(board)
    if not mover:
        me, opp = opp, me
    if board.is_over:
        return []
    return _bit_cells(_forks(me, opp, _tables_of(board)))


def _pick(cells: list[int], rng: random.Random) -> int:
    return cells[0] if len(cells) == 1 else rng.choice(cells)
