"""Independent pieces for the brute-force checks: nothing here comes from the engine."""

from __future__ import annotations


def line_masks(width: int, height: int, k: int) -> list[int]:
    """A bitmask per line of k cells (rows, columns, both diagonals), worked out afresh."""
    masks = []
    for row in range(height):
        for col in range(width):
            for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(row + d_row * i, col + d_col * i) for i in range(k)]
                if all(0 <= r < height and 0 <= c < width for r, c in cells):
                    masks.append(sum(1 << (r * width + c) for r, c in cells))
    return masks
