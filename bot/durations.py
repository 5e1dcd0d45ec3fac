"""Durations as people type them: ``90s``, ``5m``, ``1h30m``, ``1d``, or a plain number of
seconds; read the same way by ``/tictactoe-settings`` and by the host's settings.

Units are the English letters d, h, m and s, each at most once and largest first, with
optional spaces between parts (``1h 30m``); fractions are not accepted (``1.5h``), except
in a plain number of seconds (a host's ``TURN_TIMEOUT_SECONDS=30.5``).
"""

from __future__ import annotations

import math
import re

__all__ = ["UNITS", "parse_duration", "split_duration"]

UNITS = (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1))
"""Each unit's letter and length in seconds, largest first."""
_PART = re.compile(r"\s*(\d{1,9})\s*([dhms])", re.IGNORECASE)
_ORDER = {letter: i for i, (letter, _) in enumerate(UNITS)}
_SECONDS = dict(UNITS)


def parse_duration(text: str) -> float:
    """Seconds in ``text``; ValueError if it is not a duration."""
    raw = text.strip()
    if not raw:
        raise ValueError("an empty duration")
    try:
        plain = float(raw)
    except ValueError:
        pass
    else:
        if not math.isfinite(plain):
            raise ValueError(f"not a duration: {text!r}")
        return plain
    total, at, last = 0, 0, -1
    for part in _PART.finditer(raw):
        if part.start() != at:
            break
        letter = part[2].lower()
        if _ORDER[letter] <= last:
            raise ValueError(f"units out of order or repeated: {text!r}")
        last = _ORDER[letter]
        total += int(part[1]) * _SECONDS[letter]
        at = part.end()
    if last < 0 or raw[at:].strip():
        raise ValueError(f"not a duration: {text!r}")
    return float(total)


def split_duration(seconds: float) -> list[tuple[str, int]]:
    """Whole ``seconds`` as (unit letter, count) pairs, largest first, zero parts left out
    (``5400`` -> ``[("h", 1), ("m", 30)]``; ``0`` -> ``[("s", 0)]``)."""
    rest = round(seconds)
    parts = []
    for letter, size in UNITS:
        count, rest = divmod(rest, size)
        if count:
            parts.append((letter, count))
    return parts or [("s", 0)]
