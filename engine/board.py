"""Boards of the m,n,k-game: width x height cells, k in a row wins, X moves first.

Cells are indexed 0 .. width*height-1 row by row from the top left. People see them
numbered from 1 (``cell_number``/``parse_cell`` convert), as in the tutorials' 1-9 grid.

The text form lists the rows top to bottom, separated by ``/``, each cell ``X``, ``O`` or
``.``; whose turn it is follows from the counts, since X always starts::

    >>> board = Board.from_text("X.O/.X./..O")
    >>> board.turn
    <Mark.X: 'X'>
    >>> board.play(3).text
    'X.O/XX./..O'
    >>> Board.from_text(board.text) == board
    True
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from engine.errors import (
    IllegalMoveError,
    InvalidBoardError,
    InvalidMoveError,
    InvalidPositionError,
)
from engine.geometry import MAX_SIDE, MIN_K, MIN_SIDE, Geometry, geometry

__all__ = [
    "MAX_SIDE",
    "MIN_K",
    "MIN_SIDE",
    "Board",
    "Geometry",
    "Mark",
    "Outcome",
    "Termination",
    "geometry",
]


class Mark(enum.Enum):
    """A player's mark; X always moves first."""

    X = "X"
    O = "O"  # noqa: E741 - the letter is the point

    @property
    def other(self) -> Mark:
        return Mark.O if self is Mark.X else Mark.X


class Termination(enum.Enum):
    """How a game ended."""

    WIN = "win"
    DRAW = "draw"


@dataclass(frozen=True, slots=True)
class Outcome:
    """The end of a game: the winner and the cells of the winning line, or a draw."""

    winner: Mark | None
    line: tuple[int, ...] = ()

    @property
    def termination(self) -> Termination:
        return Termination.DRAW if self.winner is None else Termination.WIN

    @property
    def is_draw(self) -> bool:
        return self.winner is None


def _bits(cells: Iterable[int]) -> int:
    out = 0
    for cell in cells:
        out |= 1 << cell
    return out


def _cells(bits: int) -> Iterator[int]:
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


class Board:
    """An immutable position: the geometry plus the cells each player holds.

    Equality and hashing are by position (shape, k and marks), not by the moves that
    led there. ``moves`` keeps the moves played since the board was created empty or
    from text, which is what ``undo`` takes back.
    """

    __slots__ = ("_geo", "_moves", "_o", "_outcome", "_x")

    _geo: Geometry
    _x: int
    _o: int
    _moves: tuple[int, ...]
    _outcome: Outcome | None

    def __init__(self, width: int = 3, height: int = 3, k: int = 3) -> None:
        self._geo = geometry(width, height, k)
        self._x = 0
        self._o = 0
        self._moves = ()
        self._outcome = None

    @classmethod
    def _make(
        cls, geo: Geometry, x: int, o: int, moves: tuple[int, ...], outcome: Outcome | None
    ) -> Board:
        board = object.__new__(cls)
        board._geo = geo
        board._x = x
        board._o = o
        board._moves = moves
        board._outcome = outcome
        return board

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_text(cls, text: str, k: int | None = None) -> Board:
        """Parse the text form; ``k`` defaults to the shorter side.

        Raises InvalidBoardError for a malformed text and InvalidPositionError for one
        that no legal game reaches.
        """
        if not isinstance(text, str):
            raise InvalidBoardError(f"board text must be a string, not {type(text).__name__}")
        rows = text.strip().split("/")
        height = len(rows)
        width = len(rows[0])
        if any(len(row) != width for row in rows):
            raise InvalidBoardError(f"rows of {text!r} are not all the same length")
        if not (MIN_SIDE <= width <= MAX_SIDE and MIN_SIDE <= height <= MAX_SIDE):
            raise InvalidBoardError(
                f"{text!r} is {width}x{height}; sides must be from {MIN_SIDE} to {MAX_SIDE}"
            )
        geo = geometry(width, height, min(width, height) if k is None else k)
        x = o = 0
        for cell, char in enumerate("".join(rows)):
            if char in "Xx":
                x |= 1 << cell
            elif char in "Oo":
                o |= 1 << cell
            elif char != ".":
                raise InvalidBoardError(f"unknown character {char!r} in {text!r} (use X, O or .)")
        return cls._make(geo, x, o, (), _validate(geo, x, o))

    @classmethod
    def from_bits(cls, x: int, o: int, width: int = 3, height: int = 3, k: int = 3) -> Board:
        """The position where X holds the cells of ``x`` and O those of ``o`` (bit i is
        cell i); raises InvalidPositionError like ``from_text``. ``moves`` starts empty."""
        geo = geometry(width, height, k)
        if (x | o) & ~geo.full_mask or x & o:
            raise InvalidPositionError("marks off the board, or two marks on one cell")
        return cls._make(geo, x, o, (), _validate(geo, x, o))

    @classmethod
    def from_moves(cls, moves: Iterable[int], width: int = 3, height: int = 3, k: int = 3) -> Board:
        """Replay 0-based moves from the empty board; raises like ``play`` does."""
        board = cls(width, height, k)
        for cell in moves:
            board = board.play(cell)
        return board

    # -- reading ------------------------------------------------------------------------

    @property
    def geometry(self) -> Geometry:
        return self._geo

    @property
    def width(self) -> int:
        return self._geo.width

    @property
    def height(self) -> int:
        return self._geo.height

    @property
    def k(self) -> int:
        return self._geo.k

    @property
    def size(self) -> int:
        return self._geo.size

    @property
    def x_bits(self) -> int:
        return self._x

    @property
    def o_bits(self) -> int:
        return self._o

    @property
    def moves(self) -> tuple[int, ...]:
        return self._moves

    @property
    def ply(self) -> int:
        """How many marks are on the board."""
        return (self._x | self._o).bit_count()

    @property
    def turn(self) -> Mark:
        """Whose move it is (also on a finished board: who would move next)."""
        return Mark.X if self._x.bit_count() == self._o.bit_count() else Mark.O

    def bits(self, mark: Mark) -> int:
        return self._x if mark is Mark.X else self._o

    def cell(self, cell: int) -> Mark | None:
        """The mark on a cell, or None if it is empty."""
        self._check_index(cell)
        if self._x >> cell & 1:
            return Mark.X
        if self._o >> cell & 1:
            return Mark.O
        return None

    __getitem__ = cell

    def empty_cells(self) -> tuple[int, ...]:
        return tuple(_cells(self._geo.full_mask & ~(self._x | self._o)))

    def legal_moves(self) -> tuple[int, ...]:
        """Empty cells in index order; none once the game is over."""
        if self._outcome is not None:
            return ()
        return self.empty_cells()

    def outcome(self) -> Outcome | None:
        return self._outcome

    @property
    def is_over(self) -> bool:
        return self._outcome is not None

    @property
    def winner(self) -> Mark | None:
        return None if self._outcome is None else self._outcome.winner

    # -- changing (returns new boards) ----------------------------------------------------

    def play(self, cell: int) -> Board:
        """The board after the player to move marks ``cell`` (0-based)."""
        self._check_index(cell)
        if self._outcome is not None:
            raise IllegalMoveError("the game is over")
        bit = 1 << cell
        if (self._x | self._o) & bit:
            raise IllegalMoveError(f"cell {cell + 1} is taken")
        geo = self._geo
        x, o = self._x, self._o
        if x.bit_count() == o.bit_count():
            x |= bit
            mover, mark = x, Mark.X
        else:
            o |= bit
            mover, mark = o, Mark.O
        line = geo.completes_line(mover, cell)
        if line is not None:
            outcome: Outcome | None = Outcome(mark, line)
        elif (x | o) == geo.full_mask:
            outcome = Outcome(None)
        else:
            outcome = None
        return Board._make(geo, x, o, (*self._moves, cell), outcome)

    def undo(self) -> Board:
        """The board before the last move in ``moves`` (the C# tutorial's UndoLastMove)."""
        if not self._moves:
            raise IllegalMoveError("there is no move to undo")
        cell = self._moves[-1]
        bit = 1 << cell
        x, o = self._x & ~bit, self._o & ~bit
        # Taking back a move never creates a win, and a position before a win had no win.
        return Board._make(self._geo, x, o, self._moves[:-1], None)

    def transformed(self, perm: tuple[int, ...]) -> Board:
        """The position mapped through a cell permutation from ``geometry.symmetries``."""
        x = _bits(perm[c] for c in _cells(self._x))
        o = _bits(perm[c] for c in _cells(self._o))
        outcome = self._outcome
        if outcome is not None and outcome.line:
            outcome = Outcome(outcome.winner, tuple(sorted(perm[c] for c in outcome.line)))
        return Board._make(self._geo, x, o, tuple(perm[c] for c in self._moves), outcome)

    # -- people's cell numbers ----------------------------------------------------------

    def parse_cell(self, text: str) -> int:
        """A 1-based cell number typed by a person -> a 0-based index."""
        token = text.strip() if isinstance(text, str) else text
        if not isinstance(token, str) or not token.isdecimal():
            raise InvalidMoveError(f"{text!r} is not a cell number")
        number = int(token)
        if not 1 <= number <= self.size:
            raise InvalidMoveError(f"cell {number} is out of range (1-{self.size})")
        return number - 1

    @staticmethod
    def cell_number(cell: int) -> int:
        return cell + 1

    # -- text -----------------------------------------------------------------------------

    @property
    def text(self) -> str:
        chars = []
        for cell in range(self.size):
            if self._x >> cell & 1:
                chars.append("X")
            elif self._o >> cell & 1:
                chars.append("O")
            else:
                chars.append(".")
        w = self.width
        return "/".join("".join(chars[r * w : (r + 1) * w]) for r in range(self.height))

    def pretty(self, numbers: bool = True) -> str:
        """A multi-line picture for terminals; empty cells show their 1-based numbers."""
        pad = len(str(self.size))
        rows = []
        for r in range(self.height):
            cells = []
            for c in range(self.width):
                index = r * self.width + c
                mark = self.cell(index)
                if mark is not None:
                    cells.append(mark.value.center(pad))
                else:
                    cells.append(str(index + 1).rjust(pad) if numbers else ".".center(pad))
            rows.append(" " + " | ".join(cells))
        rule = "\n" + "+".join("-" * (pad + 2) for _ in range(self.width)) + "\n"
        return rule.join(rows)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Board.from_text({self.text!r}, k={self.k})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return self._geo is other._geo and self._x == other._x and self._o == other._o

    def __hash__(self) -> int:
        return hash((self.width, self.height, self.k, self._x, self._o))

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuild through the geometry cache so that a board sent to a worker process
        # shares its Geometry (equality compares geometries by identity).
        return (_restore, (self.width, self.height, self.k, self._x, self._o, self._moves))

    def _check_index(self, cell: int) -> None:
        if isinstance(cell, bool) or not isinstance(cell, int):
            raise InvalidMoveError(f"{cell!r} is not a cell index")
        if not 0 <= cell < self.size:
            raise InvalidMoveError(f"cell index {cell} is out of range (0-{self.size - 1})")


def _restore(width: int, height: int, k: int, x: int, o: int, moves: tuple[int, ...]) -> Board:
    geo = geometry(width, height, k)
    return Board._make(geo, x, o, moves, _validate(geo, x, o))


def _validate(geo: Geometry, x: int, o: int) -> Outcome | None:
    """The outcome of a parsed position, or InvalidPositionError if no game reaches it."""
    nx, no = x.bit_count(), o.bit_count()
    if no > nx:
        raise InvalidPositionError(f"O has {no} marks but X only {nx}; X moves first")
    if nx > no + 1:
        raise InvalidPositionError(f"X has {nx} marks but O only {no}; they take turns")
    x_line = geo.winning_line(x)
    o_line = geo.winning_line(o)
    if x_line and o_line:
        raise InvalidPositionError("both players have a line")
    for mark, bits, line, last_mover in (
        (Mark.X, x, x_line, nx == no + 1),
        (Mark.O, o, o_line, nx == no),
    ):
        if line is None:
            continue
        if not last_mover:
            raise InvalidPositionError(f"play went on after {mark.value} had won")
        # The winning move must be a single cell whose removal leaves no line.
        if not any(geo.winning_line(bits & ~(1 << c)) is None for c in _cells(bits)):
            raise InvalidPositionError(f"{mark.value}'s lines cannot come from one last move")
        return Outcome(mark, line)
    if (x | o) == geo.full_mask:
        return Outcome(None)
    return None
