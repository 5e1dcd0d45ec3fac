"""The search pool: worker processes for the bot's moves and reviews, cheapest job first.

At most ``workers`` jobs are in the processes at a time; the others wait here, each until
its arrival plus an allowance for its cost (``ALLOWANCE``), earliest first. So a reply
that takes milliseconds does not queue behind searches of 1.5 s (which lose nothing by
waiting: their budget counts from the request), yet a stream of quick jobs cannot hold a
search back for more than its allowance.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import enum
import heapq
import itertools
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from bot.service import ai

__all__ = ["Cost", "SearchPool"]

T = TypeVar("T")


class Cost(enum.IntEnum):
    """How long a job may take, which orders the queue (see the module docstring)."""

    QUICK = 0  # expected to be quick
    BOUNDED = 1  # a deeper but bounded search (exact up to 16 cells, fixed depth above)
    BUDGETED = 2  # a search to a time budget (the strongest level above 16 cells)
    REVIEW = 3  # a finished game's review: nobody is waiting on a move


ALLOWANCE = {Cost.QUICK: 0.0, Cost.BOUNDED: 0.25, Cost.BUDGETED: 1.0, Cost.REVIEW: 2.0}
"""Seconds a job of each cost may be overtaken for by cheaper jobs arriving after it."""


class SearchPool:
    """A process pool (made here unless given) with the fair queue described above."""

    def __init__(self, workers: int, executor: concurrent.futures.Executor | None = None) -> None:
        self._workers = workers
        self._executor = executor
        self._owns_executor = executor is None
        self._waiting: list[tuple[float, int, asyncio.Future[None]]] = []
        self._tickets = itertools.count()
        self._running = 0

    async def start(self) -> None:
        """Make the processes now and wait until each has warmed up (imports, tables)."""
        if self._executor is None:
            self._executor = ai.create_pool(self._workers)
            await ai.warm_up_pool(self._executor, self._workers)

    async def close(self) -> None:
        """Shut down the processes if this pool made them."""
        executor, self._executor = self._executor, None
        if self._owns_executor and executor is not None:
            await asyncio.to_thread(executor.shutdown, True)

    async def run(self, cost: Cost, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)`` in a worker process, once the queue gets to it."""
        loop = asyncio.get_running_loop()
        turn = loop.create_future()
        due = loop.time() + ALLOWANCE[cost]
        heapq.heappush(self._waiting, (due, next(self._tickets), turn))
        self._admit()
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # admitted just as it was cancelled
                self._running -= 1
                self._admit()
            raise
        try:
            return await self._in_process(fn, *args)
        finally:
            self._running -= 1
            self._admit()

    def _admit(self) -> None:
        while self._waiting and self._running < self._workers:
            *_, turn = heapq.heappop(self._waiting)
            if not turn.done():  # else its waiter was cancelled
                self._running += 1
                turn.set_result(None)

    async def _in_process(self, fn: Callable[..., T], *args: object) -> T:
        """Run in the executor; a broken pool of ours (a killed worker) is replaced once."""
        loop = asyncio.get_running_loop()
        if self._executor is None:
            self._executor = ai.create_pool(self._workers)
            self._owns_executor = True
        executor = self._executor
        try:
            return await loop.run_in_executor(executor, fn, *args)
        except BrokenProcessPool:
            if not self._owns_executor:
                raise
            if self._executor is executor:  # the first to notice replaces it
                self._executor = ai.create_pool(self._workers)
                executor.shutdown(wait=False)
            return await loop.run_in_executor(self._executor, fn, *args)
