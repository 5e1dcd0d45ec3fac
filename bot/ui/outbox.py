"""The one path of this process's own REST traffic: the calls nobody's click answers.

Interaction answers (a click's edit, a command's reply, follow-ups) do not count toward
Discord's global limit of ``GLOBAL_LIMIT`` requests a second per bot token; everything
else does, for every shard and process of the token together: turn notifications,
reminders, deletes, the sweep's and start-up's redraws. They all go out here, paced to
this process's share of the limit (its share of ``SHARD_COUNT``) times ``HEADROOM``,
which leaves room for discord.py's own calls (command sync, ``/gateway/bot``).

Work is queued under a key: newer work under the same key supersedes older work still
waiting (a redraw of a game that changed again), and work may bring a check, run just
before it goes out, that drops it once it is stale (a ping for a turn that is over).
Each request of a piece of work waits for its slot (``slot``). discord.py still meets
per-route limits through its own rate-limit handling; this only keeps the process under
the global one, which discord.py learns of only by a 429.

``call`` is the one checked path of a request: it asks the channel-health record
(``bot.ui.health``) whether the channel or message may be called (viewable, not backed
off, the breaker closed), raising ``Blocked`` without sending if not; takes the slot;
and tells the record what Discord answered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import TypeVar

import discord

from bot.models import Shards
from bot.ui.health import Health

__all__ = [
    "GLOBAL_LIMIT",
    "HEADROOM",
    "UNKNOWN_CHANNEL",
    "UNKNOWN_MESSAGE",
    "Blocked",
    "Outbox",
    "reachable",
    "share_of_limit",
]

log = logging.getLogger(__name__)

GLOBAL_LIMIT = 50.0
"""Discord's global limit: requests a second per bot token, every process together."""
HEADROOM = 0.8
"""The part of its share a process spends on its own traffic."""
IN_FLIGHT = 16
"""Pieces of work under way at once (each still waits for its slots)."""

T = TypeVar("T")
Work = Callable[[], Awaitable[None]]
Check = Callable[[], Awaitable[bool]]


def share_of_limit(shards: Shards | None) -> float:
    """Requests a second this process may spend: its share of the global limit (all of
    it when it runs every shard), with headroom."""
    share = 1.0 if shards is None else len(shards.ids) / shards.count
    return GLOBAL_LIMIT * share * HEADROOM


UNKNOWN_CHANNEL = 10003
UNKNOWN_MESSAGE = 10008
"""Discord's JSON error codes for a channel or message that does not exist (any more)."""


def reachable(client: discord.Client, guild_id: int | None) -> bool:
    """Whether anything may go to the server: one the bot is still in (once the guilds
    are known). A channel backed off is the channel route's to check."""
    gone = guild_id is not None and client.is_ready() and client.get_guild(guild_id) is None
    return not gone


class Blocked(Exception):
    """Nothing was sent: the channel or message is backed off or not viewable, or the
    breaker is open (``reason``: ``bot.ui.health``'s ``why_not``)."""

    def __init__(self, channel_id: int, reason: str) -> None:
        super().__init__(f"channel {channel_id}: {reason}")
        self.channel_id = channel_id
        self.reason = reason


class Outbox:
    def __init__(self, rate: float, health: Health | None = None) -> None:
        self.rate = rate
        self.health = health if health is not None else Health()
        self._interval = 1.0 / rate
        self._next = 0.0
        self._pacing = asyncio.Lock()
        self._in_flight = asyncio.Semaphore(IN_FLIGHT)
        self._latest: dict[Hashable, object] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.requests = 0  # slots handed out: requests sent
        self.dropped = 0  # work dropped, superseded or stale, before anything was sent

    async def slot(self) -> None:
        """Wait for the next free slot of this process's pace, then take it (one slot per
        request)."""
        async with self._pacing:
            loop = asyncio.get_running_loop()
            now = loop.time()
            at = max(now, self._next)
            self._next = at + self._interval
            self.requests += 1
            if at > now:
                await asyncio.sleep(at - now)

    async def call(
        self,
        channel_id: int,
        request: Callable[[], Awaitable[T]],
        *,
        message_id: int | None = None,
        guild_id: int | None = None,
        admitted: bool = False,
    ) -> T:
        """Send ``request`` (a REST call to ``channel_id`` in server ``guild_id``, about
        ``message_id`` if given) through the checked path: ``admit`` (``admitted``: the
        caller did), then the request; a failure is recorded and raised as discord.py
        raised it."""
        health = self.health
        if not admitted:
            await self.admit(channel_id, message_id=message_id, guild_id=guild_id)
        try:
            result = await request()
        except discord.HTTPException as exc:
            health.record(channel_id, message_id, exc)
            raise
        health.succeeded(channel_id)
        return result

    async def admit(
        self, channel_id: int, *, message_id: int | None = None, guild_id: int | None = None
    ) -> None:
        """Take a slot for a call to the channel: ``Blocked`` if the health record refuses
        it, asked before and again after the slot (which may have waited)."""
        for wait in (True, False):
            reason = self.health.why_not(channel_id, message_id, guild_id)
            if reason is not None:
                self.health.blocked += 1
                raise Blocked(channel_id, reason)
            if wait:
                await self.slot()

    def submit(self, key: Hashable, work: Work, *, fresh: Check | None = None) -> None:
        """Queue ``work`` under ``key``, superseding work still waiting under it; dropped
        if ``fresh`` (awaited just before it starts) says it is stale."""
        token = object()
        self._latest[key] = token
        task = asyncio.create_task(self._run(key, token, work, fresh))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def waiting(self, key: Hashable) -> bool:
        """Whether work under ``key`` is queued or under way."""
        return key in self._latest

    async def _run(self, key: Hashable, token: object, work: Work, fresh: Check | None) -> None:
        try:
            async with self._in_flight:
                if self._latest.get(key) is not token:
                    self.dropped += 1
                    return
                try:
                    if fresh is not None and not await fresh():
                        self.dropped += 1
                        return
                    await work()
                finally:
                    if self._latest.get(key) is token:
                        del self._latest[key]
        except Exception:
            log.exception("Sending %s failed", key)

    async def drain(self, seconds: float) -> None:
        """Wait (up to ``seconds``) for the queued work to go out."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=seconds)

    def cancel(self) -> None:
        for task in self._tasks:
            task.cancel()
