"""Board shapes: the lines of k in a row and the symmetries of a width x height grid.

Everything here depends on the shape alone, never on the marks, and is computed once per
shape (``geometry`` is cached). Cells are indexed 0 .. width*height-1 row by row.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from operator import add

from engine.errors import InvalidBoardError

__all__ = ["MAX_SIDE", "MIN_K", "MIN_SIDE", "Geometry", "geometry", "key_tables"]

MIN_SIDE = 3
MAX_SIDE = 5
MIN_K = 3

_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))  # (row step, column step)


@dataclass(frozen=True, slots=True)
class Geometry:
    """Everything about a board shape that does not depend on the marks; shared and cached.

    ``symmetries`` are cell permutations (``perm[i]`` is where cell ``i`` goes), identity
    first: the 8 of the square on square boards, the 4 of the rectangle otherwise.
    """

    width: int
    height: int
    k: int
    lines: tuple[tuple[int, ...], ...]
    line_masks: tuple[int, ...]
    lines_through: tuple[tuple[int, ...], ...]
    symmetries: tuple[tuple[int, ...], ...]

    @property
    def size(self) -> int:
        return self.width * self.height

    @property
    def full_mask(self) -> int:
        return (1 << self.size) - 1

    def winning_line(self, bits: int) -> tuple[int, ...] | None:
        """The first line fully covered by ``bits``, or None."""
        for line, mask in zip(self.lines, self.line_masks, strict=True):
            if bits & mask == mask:
                return line
        return None

    def completes_line(self, bits: int, cell: int) -> tuple[int, ...] | None:
        """A line through ``cell`` fully covered by ``bits`` (which include ``cell``), or None."""
        for index in self.lines_through[cell]:
            mask = self.line_masks[index]
            if bits & mask == mask:
                return self.lines[index]
        return None


def _check_shape(width: int, height: int, k: int) -> None:
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidBoardError(f"{name} must be a whole number, not {value!r}")
        if not MIN_SIDE <= value <= MAX_SIDE:
            raise InvalidBoardError(f"{name} must be from {MIN_SIDE} to {MAX_SIDE}, not {value}")
    if isinstance(k, bool) or not isinstance(k, int):
        raise InvalidBoardError(f"win length must be a whole number, not {k!r}")
    longest = max(width, height)
    if not MIN_K <= k <= longest:
        raise InvalidBoardError(
            f"win length must be from {MIN_K} to {longest} on a {width}x{height} board, not {k}"
        )


@functools.cache
def geometry(width: int = 3, height: int = 3, k: int = 3) -> Geometry:
    """The (cached) geometry of a width x height board with k in a row."""
    _check_shape(width, height, k)
    lines: list[tuple[int, ...]] = []
    for row in range(height):
        for col in range(width):
            for d_row, d_col in _DIRECTIONS:
                end_row = row + d_row * (k - 1)
                end_col = col + d_col * (k - 1)
                if 0 <= end_row < height and 0 <= end_col < width:
                    lines.append(
                        tuple((row + d_row * i) * width + col + d_col * i for i in range(k))
                    )
    lines.sort()
    masks = tuple(sum(1 << cell for cell in line) for line in lines)
    through = tuple(
        tuple(i for i, line in enumerate(lines) if cell in line) for cell in range(width * height)
    )
    return Geometry(
        width=width,
        height=height,
        k=k,
        lines=tuple(lines),
        line_masks=masks,
        lines_through=through,
        symmetries=_symmetries(width, height),
    )


def _symmetries(width: int, height: int) -> tuple[tuple[int, ...], ...]:
    def perm(fn: object) -> tuple[int, ...]:
        out = []
        for cell in range(width * height):
            row, col = divmod(cell, width)
            new_row, new_col = fn(row, col)  # type: ignore[operator]
            out.append(new_row * width + new_col)
        return tuple(out)

    w, h = width - 1, height - 1
    maps = [
        lambda r, c: (r, c),
        lambda r, c: (r, w - c),
        lambda r, c: (h - r, c),
        lambda r, c: (h - r, w - c),
    ]
    if width == height:
        maps += [
            lambda r, c: (c, r),
            lambda r, c: (c, h - r),
            lambda r, c: (w - c, r),
            lambda r, c: (w - c, h - r),
        ]
    return tuple(perm(fn) for fn in maps)


@functools.cache
def key_tables(geo: Geometry) -> tuple[tuple[tuple[tuple[int, ...], ...], ...], ...]:
    """For each byte of cells (0-7, 8-15, ...): what each of the 256 ways of marking them
    adds to a position's key (X bits | O bits << size) under every symmetry, as X marks
    and as O marks. The exact search keys its tables on the smallest of these."""
    size = geo.size

    def table(start: int, offset: int) -> tuple[tuple[int, ...], ...]:
        # Each entry is a smaller one plus one cell's images: 255 additions a byte.
        ones = [
            tuple(1 << (perm[cell] + offset) if cell < size else 0 for perm in geo.symmetries)
            for cell in range(start, start + 8)
        ]
        rows: list[tuple[int, ...]] = [(0,) * len(geo.symmetries)]
        for byte in range(1, 256):
            low = byte & -byte
            rows.append(tuple(map(add, rows[byte ^ low], ones[low.bit_length() - 1])))
        return tuple(rows)

    return tuple((table(start, 0), table(start, size)) for start in range(0, size, 8))
