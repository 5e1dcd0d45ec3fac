"""Running a range of shards: what this process owns, and IDENTIFYs paced as Discord allows.

``SHARD_IDS`` splits the bot's shards between processes. The process then owns the
once-only work of its shards' servers (``bot.models.Shards`` says why ownership and not
a leader lock), and only the process running shard 0 syncs the slash commands, which
every process shares.

Discord accepts ``max_concurrency`` IDENTIFYs per 5 seconds, one in each bucket
``shard_id % max_concurrency`` (``/gateway/bot``'s ``session_start_limit``); one over
is refused with an invalid session, which costs an IDENTIFY of the day's budget.
discord.py's default ``before_identify_hook`` sleeps 5 s before every IDENTIFY but the
first, whatever the bucket, and its maintainers leave using ``max_concurrency`` to an
override of that hook (Rapptz/discord.py#8430): ``IdentifyPacer`` is that override's
logic, so a bot allowed 16 at a time starts 16 shards in one go instead of in 75 s.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

import discord

from bot.models import Shards
from bot.settings import Settings

__all__ = [
    "IDENTIFY_SPACING",
    "IdentifyPacer",
    "max_concurrency",
    "owned_shards",
    "syncs_commands",
]

log = logging.getLogger(__name__)

IDENTIFY_SPACING = 5.0
"""Seconds between two IDENTIFYs in one bucket (Discord: Gateway -> Rate limiting)."""


def owned_shards(settings: Settings) -> Shards | None:
    """The shards whose servers this process sweeps: those of ``SHARD_IDS``, or None
    (every server) when it runs every shard."""
    if settings.shard_ids is None or settings.shard_count is None:
        return None
    return Shards(settings.shard_count, settings.shard_ids)


def syncs_commands(settings: Settings) -> bool:
    """Whether this process syncs the commands: it runs shard 0 (or every shard)."""
    return settings.shard_ids is None or 0 in settings.shard_ids


async def max_concurrency(client: discord.AutoShardedClient) -> int:
    """How many shards may IDENTIFY at once (a ``/gateway/bot`` request)."""
    return (await client.fetch_session_start_limits()).max_concurrency


class IdentifyPacer:
    """Waits before an IDENTIFY until its bucket allows one, and no longer.

    ``max_concurrency`` is asked for (``fetch``, a ``/gateway/bot`` request) only when a
    second IDENTIFY comes, so a bot of one shard never asks; if asking fails, the pacer
    assumes 1, Discord's smallest. It knows this process's IDENTIFYs only: several
    processes starting at once may still collide, and Discord's invalid session makes
    discord.py identify again after this wait.
    """

    def __init__(
        self,
        fetch: Callable[[], Awaitable[int]],
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self._fetch = fetch
        self._clock = clock
        self._sleep = sleep
        self._max_concurrency: int | None = None
        self._last: dict[int, float] = {}  # bucket -> when its last IDENTIFY went
        self._lock = asyncio.Lock()

    async def wait(self, shard_id: int) -> None:
        async with self._lock:  # one at a time: discord.py identifies shards in turn anyway
            if self._last and self._max_concurrency is None:
                self._max_concurrency = await self._concurrency()
            bucket = shard_id % (self._max_concurrency or 1)
            last = self._last.get(bucket)
            if last is not None and (delay := last + IDENTIFY_SPACING - self._clock()) > 0:
                await self._sleep(delay)
            self._last[bucket] = self._clock()

    async def _concurrency(self) -> int:
        try:
            return max(1, await self._fetch())
        except Exception:
            log.warning(
                "Could not ask Discord how many shards may identify at once; one at a time",
                exc_info=True,
            )
            return 1
