"""Opt-in instrumentation for load tests, and the heap freeze after start-up."""

from __future__ import annotations

import asyncio
import gc
import logging
import time

__all__ = ["GcPauses", "freeze_heap", "watch_loop_lag"]

log = logging.getLogger(__name__)


def freeze_heap() -> None:
    """Keep what start-up allocated (modules, discord.py, the engine's tables) out of
    every later garbage collection, so a full one, which stops the event loop, scans
    only what is new (see docs/decisions.md#the-start-up-heap-frozen). Those objects
    live as long as the process anyway."""
    gc.collect()
    gc.freeze()


class GcPauses:
    """The garbage collector's pauses (they stop the event loop), read and reset together."""

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.longest = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            took = time.perf_counter() - self._started
            self.count += 1
            self.total += took
            self.longest = max(self.longest, took)

    def take(self) -> tuple[int, float, float]:
        """Collections, their total and their longest pause (seconds) since the last take."""
        found = (self.count, self.total, self.longest)
        self.count, self.total, self.longest = 0, 0.0, 0.0
        return found


async def watch_loop_lag(every: float, tick: float = 0.01) -> None:
    """Log how late the event loop runs a ``tick``-second timer, every ``every`` seconds.

    Opt-in instrumentation (LAG_REPORT_SECONDS) for load tests: a late timer means some
    callback held the loop, and every click waiting behind it was answered that much later.
    The garbage collector's runs, total time and longest pause are logged with it.
    """
    loop = asyncio.get_running_loop()
    lags: list[float] = []
    pauses = GcPauses()
    gc.callbacks.append(pauses)
    report_at = loop.time() + every
    try:
        while True:
            expected = loop.time() + tick
            await asyncio.sleep(tick)
            now = loop.time()
            lags.append(max(0.0, now - expected))
            if now >= report_at:
                lags.sort()
                collections, total, longest = pauses.take()
                log.info(
                    "Event loop lag: max %.1f ms, p99 %.1f ms, p50 %.1f ms over %d ticks;"
                    " %d GC runs, %.1f ms in all, longest %.1f ms",
                    lags[-1] * 1e3,
                    lags[int(len(lags) * 0.99)] * 1e3,
                    lags[len(lags) // 2] * 1e3,
                    len(lags),
                    collections,
                    total * 1e3,
                    longest * 1e3,
                )
                lags.clear()
                report_at = now + every
    finally:
        gc.callbacks.remove(pauses)
