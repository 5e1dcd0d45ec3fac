"""Time as the emulator sees it: a clock tests move forward, and snowflake ids stamped by it."""

from __future__ import annotations

import datetime
import time

__all__ = ["DISCORD_EPOCH_MS", "Clock", "Snowflakes"]

DISCORD_EPOCH_MS = 1_420_070_400_000


class Clock:
    """Monotonic seconds that tests can move forward with :meth:`advance`.

    The emulator measures the acknowledgement deadline and interaction token lifetimes on this
    clock, and stamps messages with the wall-clock time shifted by the same offset.
    """

    def __init__(self) -> None:
        self.offset = 0.0

    def now(self) -> float:
        return time.monotonic() + self.offset

    def utcnow(self) -> datetime.datetime:
        return datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=self.offset)

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        self.offset += seconds


class Snowflakes:
    """Generates unique, increasing snowflakes whose timestamp part is the current time."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._last = 0

    def next(self) -> int:
        millis = int(self._clock.utcnow().timestamp() * 1000) - DISCORD_EPOCH_MS
        value = max(millis << 22, self._last + 1)
        self._last = value
        return value

    def advance_past(self, taken: int) -> None:
        """Never hand out ``taken`` or a smaller id (after restoring saved objects)."""
        self._last = max(self._last, taken)

    def next_on_shard(self, shard_id: int, shard_count: int) -> int:
        """A fresh snowflake with ``(id >> 22) % shard_count == shard_id``: its timestamp is
        moved up to ``shard_count - 1`` ms ahead so that the formula picks that shard."""
        if not 0 <= shard_id < shard_count:
            raise ValueError(f"no shard {shard_id} among {shard_count}")
        millis = int(self._clock.utcnow().timestamp() * 1000) - DISCORD_EPOCH_MS
        stamp = max(millis, (self._last >> 22) + 1)
        stamp += (shard_id - stamp) % shard_count
        self._last = stamp << 22
        return self._last
