"""The search pool: worker processes for the bot's moves and reviews, fairly shared.

At most ``workers`` jobs are in the processes at a time; the others wait here:

- The bot's moves go first: a review starts only when no move is waiting (a review
  already running is not interrupted, so a move waits at most for the searches running).
- Moves are served round-robin across servers: the next is taken from the server served
  least recently, so one server's many games delay another server's reply by at most
  the searches already running (plus, with several busy servers, one search each).
- Within a server, each move waits until its arrival plus an allowance for its cost
  (``ALLOWANCE``), earliest first. So a reply that takes milliseconds does not queue
  behind searches of 1.5 s (which lose nothing by waiting: their budget counts from the
  request), yet a stream of quick jobs cannot hold a search back for more than its
  allowance.
- The queue is bounded (``MAX_WAITING_MOVES``, ``MAX_WAITING_REVIEWS``), and so is each
  server's part of it (``share``: a quarter by default, host setting SERVER_POOL_PERCENT),
  so one server's flood never fills the queue others need; a job over a bound is
  refused with ``Busy``. A server with no move waiting or promised is never refused a
  move: round-robin serves it within one search per busy server, however long the queue.
  A move is refused before the player's move that owes it is written (``promise``),
  since once written its reply must be computed.

"Server" is whatever key the caller gives (``server``): the guild's id, or the
channel's for a game outside any server the bot is in.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import enum
import heapq
import itertools
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from bot.errors import Busy
from bot.games import ai

__all__ = [
    "ALLOWANCE",
    "MAX_WAITING_MOVES",
    "MAX_WAITING_REVIEWS",
    "PROMISE_SECONDS",
    "Cost",
    "SearchPool",
    "share",
]

T = TypeVar("T")


class Cost(enum.IntEnum):
    """How long a job may take, which orders the queue (see the module docstring)."""

    QUICK = 0  # expected to be quick
    BOUNDED = 1  # a deeper but bounded search (exact up to 16 cells, fixed depth above)
    BUDGETED = 2  # a search to a time budget (the strongest level above 16 cells)
    REVIEW = 3  # a finished game's review: nobody is waiting on a move


ALLOWANCE = {Cost.QUICK: 0.0, Cost.BOUNDED: 0.25, Cost.BUDGETED: 1.0}
"""Seconds a move of each cost may be overtaken for by cheaper moves of its server
arriving after it."""

MAX_WAITING_MOVES = 64
"""Bot moves that may wait for a worker. A reply's budget counts from its request, so a
backlog drains at the minimum budget per search (ai.MIN_BUDGET, ~0.05-0.1 s of a worker),
and 64 of them clear in a few seconds: a move further back would come so late that the
player is better told to try again. It is far above what the servers of one process
normally keep waiting (one per game whose bot is thinking; a 20-game flood fits)."""

MAX_WAITING_REVIEWS = 4
"""Reviews that may wait for a worker. A 5x5 review searches up to about 1 s (0.4 s on
average, ``python -m bench.engine --reviews-only``) and runs only when no move waits:
with one worker, the fifth in line would answer after a few seconds or much later under
moves. Reviews are stored once computed, so a refused member loses nothing
by clicking again a moment later."""

PROMISE_SECONDS = 10.0
"""How long a place promised to a move (``promise``) is kept if the move never comes
(a caller that did not ask for the reply): then the place is free again."""


def share(total: int, percent: int) -> int:
    """How many of ``total`` places one server may hold: ``percent`` of them, at least 1."""
    return max(1, total * percent // 100)


class SearchPool:
    """A process pool (made here unless given) with the fair queue described above;
    one server holds at most ``server_percent`` % of each queue's places."""

    def __init__(
        self,
        workers: int,
        executor: concurrent.futures.Executor | None = None,
        *,
        server_percent: int = 25,
    ) -> None:
        self._workers = workers
        self._server_moves = share(MAX_WAITING_MOVES, server_percent)
        self._server_reviews = share(MAX_WAITING_REVIEWS, server_percent)
        self._executor = executor
        self._owns_executor = executor is None
        self._tickets = itertools.count()
        self._running = 0
        # Moves: a heap per server of (due, ticket, turn), and when each server was last
        # served (a serial; servers never served, or not since every waiting one was,
        # have none). Cancelled waiters stay in the heaps, skipped when reached.
        self._moves: dict[int, list[tuple[float, int, asyncio.Future[None]]]] = {}
        self._served: dict[int, int] = {}
        self._serial = itertools.count(1)
        self._waiting_moves = 0
        # game id -> (when its place was promised, its server)
        self._promised: dict[int, tuple[float, int]] = {}
        self._reviews: deque[tuple[int, asyncio.Future[None]]] = deque()
        self._waiting_reviews = 0
        # Places held per server: moves waiting or promised, and reviews waiting.
        self._held_moves: Counter[int] = Counter()
        self._held_reviews: Counter[int] = Counter()

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

    # -- room ---------------------------------------------------------------------------

    @property
    def waiting(self) -> tuple[int, int]:
        """(moves, reviews) waiting for a worker now."""
        return self._waiting_moves, self._waiting_reviews

    def promise(self, game_id: int, server: int = 0) -> None:
        """Keep a place for the bot's move in ``game_id`` of ``server``, or raise Busy if
        there is no room for it (``has_room``).

        Call it before writing the move that owes the reply; ``run(..., game_id=...)``
        takes the place, ``withdraw`` gives it back if the write failed. Moves no one
        promised (owed since a crash, a bot's first move) are always taken.
        """
        if game_id in self._promised:
            return
        if not self.has_room(Cost.QUICK, server):
            raise Busy()
        self._promised[game_id] = (time.monotonic(), server)
        self._held_moves[server] += 1

    def withdraw(self, game_id: int) -> None:
        """Free the place promised to ``game_id``'s move (its move was not written)."""
        if (promised := self._promised.pop(game_id, None)) is not None:
            self._release(self._held_moves, promised[1])

    def has_room(self, cost: Cost, server: int = 0) -> bool:
        """Whether a job of ``cost`` for ``server`` would be queued now rather than refused:
        below the server's share and the queue's bound, or (a move) the server's first."""
        if cost is Cost.REVIEW:
            return self._review_room(server)
        self._drop_old_promises()
        held = self._held_moves[server]
        if held == 0:
            return True
        return (
            held < self._server_moves
            and self._waiting_moves + len(self._promised) < MAX_WAITING_MOVES
        )

    def _review_room(self, server: int) -> bool:
        return (
            self._held_reviews[server] < self._server_reviews
            and self._waiting_reviews < MAX_WAITING_REVIEWS
        )

    @staticmethod
    def _release(held: Counter[int], server: int) -> None:
        held[server] -= 1
        if held[server] <= 0:
            del held[server]

    def _drop_old_promises(self) -> None:
        old = time.monotonic() - PROMISE_SECONDS
        for game_id in [g for g, (when, _) in self._promised.items() if when < old]:
            self.withdraw(game_id)

    # -- running ------------------------------------------------------------------------

    async def run(
        self,
        cost: Cost,
        fn: Callable[..., T],
        *args: object,
        server: int = 0,
        game_id: int | None = None,
    ) -> T:
        """``fn(*args)`` in a worker process, once the queue gets to it.

        A move (any cost but REVIEW) of ``server`` is always queued, taking the place
        promised to ``game_id`` if there is one. A review is refused with Busy when there
        is no room for it (``has_room``).
        """
        loop = asyncio.get_running_loop()
        turn: asyncio.Future[None] = loop.create_future()
        review = cost is Cost.REVIEW
        if review:
            if not self._review_room(server):
                raise Busy()
            self._reviews.append((server, turn))
            self._waiting_reviews += 1
            self._held_reviews[server] += 1
        else:
            if game_id is None or game_id not in self._promised:
                self._held_moves[server] += 1  # else the promise's place is taken over
            else:
                del self._promised[game_id]
            entry = (loop.time() + ALLOWANCE[cost], next(self._tickets), turn)
            heapq.heappush(self._moves.setdefault(server, []), entry)
            self._waiting_moves += 1
        self._admit()
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # admitted just as it was cancelled
                self._running -= 1
                self._admit()
            elif review:
                self._waiting_reviews -= 1
                self._release(self._held_reviews, server)
            else:
                self._waiting_moves -= 1
                self._release(self._held_moves, server)
            raise
        try:
            return await self._in_process(fn, *args)
        finally:
            self._running -= 1
            self._admit()

    def _admit(self) -> None:
        while self._running < self._workers:
            turn = self._next_move() or self._next_review()
            if turn is None:
                return
            self._running += 1
            turn.set_result(None)

    def _next_move(self) -> asyncio.Future[None] | None:
        """The next live move waiting: from the server served least recently."""
        while self._moves:
            guild = min(self._moves, key=lambda g: (self._served.get(g, 0), self._moves[g][0][1]))
            heap = self._moves[guild]
            *_, turn = heapq.heappop(heap)
            if not heap:
                del self._moves[guild]
            if turn.done():  # its waiter was cancelled (and uncounted)
                continue
            self._waiting_moves -= 1
            self._release(self._held_moves, guild)
            serial = self._served[guild] = next(self._serial)
            self._forget_served(serial)
            return turn
        return None

    def _forget_served(self, latest: int) -> None:
        """Drop the serials older than every waiting server's (than ``latest`` if none
        waits): those servers would come before any waiting one anyway, as they do with
        no serial at all."""
        if len(self._served) <= 2 * len(self._moves) + 8:
            return
        oldest = min((self._served.get(g, 0) for g in self._moves), default=latest)
        for guild in [g for g, s in self._served.items() if s < oldest]:
            del self._served[guild]

    def _next_review(self) -> asyncio.Future[None] | None:
        while self._reviews:
            server, turn = self._reviews.popleft()
            if not turn.done():
                self._waiting_reviews -= 1
                self._release(self._held_reviews, server)
                return turn
        return None

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
