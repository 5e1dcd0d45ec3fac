"""Static proofs that a player can no longer complete a line, whoever moves next.

The search asks, at every position, whether one side (the "maker") can still win against
the other's (the "breaker's") best defence. Two classic Maker-Breaker results answer
"never" without a search:

- **Pairing.** If every line still open to the maker (no breaker mark on it) holds both
  cells of one of a set of disjoint pairs of empty cells, the breaker answers each of the
  maker's cells in a pair with its partner, and no line is ever completed. Extra breaker
  marks and who moves first do not matter.
- **Erdős-Selfridge.** If the open lines' weights, 2 to the minus the number of cells the
  maker still needs on each, sum to less than 1/2, the breaker has a strategy that keeps
  every line open line from completion even with the maker to move.

Both are sufficient, not necessary: ``cannot_win`` answering False proves nothing. A
line the maker needs only one more cell on fails both at once (that is a threat the
search handles by forcing the block).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from itertools import combinations

from engine.board import Geometry

__all__ = ["Breaker", "breaker_for"]

_STEPS = 400
"""Backtracking steps the pairing search may take before it gives up (answers False)."""

_ANSWERS = 200_000
"""Pairing answers kept per shape before the cache starts afresh."""


@dataclass(frozen=True, slots=True)
class Breaker:
    """Per-shape tables of the pairing search: each line's 2-cell subsets and, for every
    pair of cells, the set of lines (as a bit set of line indices) holding both."""

    k: int
    masks: tuple[int, ...]
    pairs: tuple[tuple[int, ...], ...]
    covers: dict[int, int]
    found: dict[tuple[int, int], bool] = field(default_factory=dict, compare=False)
    """Pairing answers by (open lines, taken cells on them): many positions share one."""

    def cannot_win(self, maker: int, breaker: int) -> bool:
        """Whether the player holding ``maker`` provably never completes a line against
        the one holding ``breaker`` (empty cells are the rest)."""
        masks = self.masks
        k = self.k
        open_lines = 0
        weight = 0
        cells = 0
        for index, mask in enumerate(masks):
            if mask & breaker:
                continue
            need = (mask & ~maker).bit_count()
            if need < 2:
                return False
            open_lines |= 1 << index
            cells |= mask
            weight += 1 << (k - need)
        if not open_lines or 2 * weight < 1 << k:
            return True
        # Open lines hold no breaker mark, so only the maker's marks on them matter.
        question = (open_lines, maker & cells)
        answer = self.found.get(question)
        if answer is None:
            if len(self.found) > _ANSWERS:
                self.found.clear()
            answer = self.found[question] = self._pairable(open_lines, maker & cells)
        return answer

    def _pairable(self, open_lines: int, taken: int) -> bool:
        """Whether disjoint pairs of cells outside ``taken`` cover every line in the bit set
        ``open_lines``; depth-first, the line with the fewest free pairs first."""
        pairs, covers = self.pairs, self.covers
        steps = _STEPS

        def cover(todo: int, used: int) -> bool:
            nonlocal steps
            if not todo:
                return True
            steps -= 1
            if steps < 0:
                return False
            best: list[int] | None = None
            rest = todo
            while rest:
                low = rest & -rest
                rest ^= low
                free = [p for p in pairs[low.bit_length() - 1] if not p & used]
                if best is None or len(free) < len(best):
                    best = free
                    if len(free) <= 1:
                        break
            assert best is not None
            return any(cover(todo & ~covers[p], used | p) for p in best)

        return cover(open_lines, taken)


@functools.cache
def breaker_for(geo: Geometry) -> Breaker:
    """The (cached) pairing tables of a board shape."""
    pairs = tuple(
        tuple(sum(1 << c for c in pair) for pair in combinations(line, 2)) for line in geo.lines
    )
    covers: dict[int, int] = {}
    for pair_masks in pairs:
        for pair in pair_masks:
            if pair not in covers:
                covers[pair] = sum(
                    1 << index for index, mask in enumerate(geo.line_masks) if mask & pair == pair
                )
    return Breaker(k=geo.k, masks=geo.line_masks, pairs=pairs, covers=covers)
