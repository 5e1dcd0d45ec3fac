"""Waiting for a condition: woken at every change the emulator makes, and polled besides."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["Changes"]


class Changes:
    """Wakes the waiters of :meth:`wait_for` and calls ``listeners`` at every change."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.listeners: list[Callable[[], None]] = []
        """Called (with no arguments) after every change, e.g. to push updates to a page."""
        self._waiters: list[asyncio.Future[None]] = []

    def notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(None)
        for listener in self.listeners:
            listener()

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds, re-checked at every change and every 50 ms
        (so it may look at things outside the emulator); TimeoutError after ``timeout``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while not predicate():
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"condition not met within {self.timeout} s")
            future: asyncio.Future[None] = loop.create_future()
            self._waiters.append(future)
            try:
                await asyncio.wait([future], timeout=min(remaining, 0.05))
            finally:
                if future in self._waiters:
                    self._waiters.remove(future)
