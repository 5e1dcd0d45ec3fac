"""Sharding rules, as Discord's docs (Gateway -> Sharding, Get Gateway Bot) state them.

A session that IDENTIFYs with ``shard: [shard_id, shard_count]`` gets the events of the guilds
with ``(guild_id >> 22) % shard_count == shard_id``; events without a guild (DMs) go to shard 0
only. A session without ``shard`` is shard ``[0, 1]``: everything. Sessions are independent:
several may hold the same shard, or use different counts, and each simply gets what the formula
gives it. Each shard may hold at most 2,500 guilds (close 4011 otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DEFAULT_MAX_GUILDS_PER_SHARD",
    "GUILDS_PER_RECOMMENDED_SHARD",
    "SessionStartLimit",
    "parse_shard",
    "shard_for",
]

DEFAULT_MAX_GUILDS_PER_SHARD = 2500
# Discord's recommended count is not documented as a formula; libraries quote ~1,000 guilds per
# shard, which is what the emulator recommends unless told a count.
GUILDS_PER_RECOMMENDED_SHARD = 1000


def shard_for(guild_id: int, shard_count: int) -> int:
    """The shard id that gets ``guild_id``'s events when the bot runs ``shard_count`` shards."""
    return (guild_id >> 22) % shard_count


def parse_shard(value: Any) -> tuple[int, int] | None:
    """IDENTIFY's ``shard`` as ``(shard_id, shard_count)``, or None when Discord would refuse it
    (close 4010): not two integers, a count below 1, or an id outside ``0..count-1``."""
    if not isinstance(value, list) or len(value) != 2:
        return None
    shard_id, shard_count = value
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    if shard_count < 1 or not 0 <= shard_id < shard_count:
        return None
    return shard_id, shard_count


@dataclass
class SessionStartLimit:
    """The IDENTIFY budget ``/gateway/bot`` reports: ``total`` new sessions per ``window``
    seconds (1,000 a day for most bots), counted from the first start in the window.

    Only reported: the emulator neither refuses an IDENTIFY past the budget nor enforces
    ``max_concurrency`` (Discord's 5 s identify spacing per bucket).
    """

    total: int = 1000
    max_concurrency: int = 1
    window: float = 24 * 60 * 60.0
    _window_start: float | None = field(default=None, repr=False)
    _used: int = field(default=0, repr=False)

    def _roll(self, now: float) -> None:
        if self._window_start is not None and now >= self._window_start + self.window:
            self._window_start, self._used = None, 0

    def record(self, now: float) -> None:
        """Count one new session (a successful IDENTIFY; a RESUME is not one)."""
        self._roll(now)
        if self._window_start is None:
            self._window_start = now
        self._used += 1

    def payload(self, now: float) -> dict[str, int]:
        self._roll(now)
        reset_after = 0.0
        if self._window_start is not None:
            reset_after = self._window_start + self.window - now
        return {
            "total": self.total,
            "remaining": max(0, self.total - self._used),
            "reset_after": int(reset_after * 1000),
            "max_concurrency": self.max_concurrency,
        }
