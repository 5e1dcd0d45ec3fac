"""Every position of 3x3 solved once, on first use: exact scores and ``perfect``'s picks."""

from __future__ import annotations

from engine.board import geometry

__all__: list[str] = []


_Table = tuple[dict[int, int], dict[int, tuple[int, ...]]]
_TABLE3: _Table | None = None


def _table3() -> _Table:
    """Exact scores of all 5,478 positions of 3x3 and the moves ``perfect`` picks from.

    Keys are X bits | O bits << 9; built on first use (a few tens of milliseconds).
    """
    global _TABLE3
    if _TABLE3 is None:
        _TABLE3 = _build_table3()
    return _TABLE3


def _build_table3() -> _Table:
    masks = geometry(3, 3, 3).line_masks
    scores: dict[int, int] = {}
    picks: dict[int, tuple[int, ...]] = {}

    def visit(x: int, o: int, ply: int) -> int:
        key = x | o << 9
        known = scores.get(key)
        if known is not None:
            return known
        last = x if ply & 1 else o
        if any(last & mask == mask for mask in masks):
            scores[key] = ply - 10
            return ply - 10
        if ply == 9:
            scores[key] = 0
            return 0
        empty = [c for c in range(9) if not (x | o) >> c & 1]
        children = [x | 1 << c | (o << 9) if ply & 1 == 0 else x | (o | 1 << c) << 9 for c in empty]
        values = [-visit(child & 511, child >> 9, ply + 1) for child in children]
        best = max(values)
        chosen = [
            (c, child) for c, child, v in zip(empty, children, values, strict=True) if v == best
        ]
        if len(chosen) > 1 and best <= 0:
            counts = []
            for _, child in chosen:
                errors = 0
                for reply in range(9):
                    bit = 1 << reply
                    if (child | child >> 9) & bit:
                        continue
                    after = child | bit << 9 if ply & 1 == 0 else child | bit
                    value = scores[after]
                    errors += value > 0 if best == 0 else value >= 0
                counts.append(errors)
            most = max(counts)
            chosen = [pair for pair, n in zip(chosen, counts, strict=True) if n == most]
        picks[key] = tuple(c for c, _ in chosen)
        scores[key] = best
        return best

    visit(0, 0, 0)
    return scores, picks


def forget() -> None:
    """Drop the table (a cold start, for benchmarks)."""
    global _TABLE3
    _TABLE3 = None
