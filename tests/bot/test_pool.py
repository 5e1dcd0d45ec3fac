"""The search pool's queue: moves before reviews, servers in turn, bounded (Busy)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from bot.errors import Busy
from bot.games.pool import (
    MAX_WAITING_MOVES,
    MAX_WAITING_REVIEWS,
    PROMISE_SECONDS,
    Cost,
    SearchPool,
    share,
)
from bot.games.queries import Store
from bot.models import First, GameStatus

from .helpers import ALICE, CHANNEL, GUILD, FakeClock, make_service

A, B, C = 1, 2, 3  # servers


@pytest.fixture
def one_thread() -> Iterator[concurrent.futures.ThreadPoolExecutor]:
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as executor:
        yield executor


@pytest.fixture
async def pool(one_thread: concurrent.futures.Executor) -> AsyncIterator[SearchPool]:
    pool = SearchPool(1, one_thread)
    yield pool
    await pool.close()


class Worker:
    """Holds the pool's one worker with a job of server ``guild`` until ``release``; then
    records the order in which the jobs queued behind it ran."""

    def __init__(self, pool: SearchPool, guild: int = A) -> None:
        self.pool = pool
        self.gate = threading.Event()
        self.ran: list[str] = []
        self.holder = asyncio.ensure_future(
            pool.run(Cost.QUICK, self.gate.wait, 10.0, server=guild)
        )
        self.jobs: list[asyncio.Future[str]] = []

    def queue(self, name: str, cost: Cost, guild: int) -> None:
        self.jobs.append(asyncio.ensure_future(self.pool.run(cost, self._job, name, server=guild)))

    def _job(self, name: str) -> str:
        self.ran.append(name)
        return name

    async def release(self) -> list[str]:
        await asyncio.sleep(0)  # every job queued
        self.gate.set()
        assert await self.holder is True
        await asyncio.gather(*self.jobs)
        return self.ran


async def test_moves_go_before_reviews_whatever_their_order(pool: SearchPool) -> None:
    worker = Worker(pool)
    worker.queue("review 1", Cost.REVIEW, A)
    worker.queue("review 2", Cost.REVIEW, B)
    worker.queue("budgeted move", Cost.BUDGETED, B)
    worker.queue("quick move", Cost.QUICK, A)
    await asyncio.sleep(0)
    assert pool.waiting == (2, 2)
    ran = await worker.release()
    assert ran[:2] == ["budgeted move", "quick move"]  # B was not served yet, A was
    assert ran[2:] == ["review 1", "review 2"]  # reviews in their order, after every move
    assert pool.waiting == (0, 0)


async def test_servers_are_served_in_turn(pool: SearchPool) -> None:
    """Server A's flood of moves delays B's and C's by at most the search running (A's)."""
    worker = Worker(pool, guild=A)
    for i in range(6):
        worker.queue(f"A{i}", Cost.BUDGETED, A)
    worker.queue("B0", Cost.BUDGETED, B)
    worker.queue("B1", Cost.BUDGETED, B)
    worker.queue("C0", Cost.QUICK, C)
    ran = await worker.release()
    # B and C were never served: they go first (in their order of arrival), then the
    # servers alternate, least recently served first.
    assert ran == ["B0", "C0", "A0", "B1", "A1", "A2", "A3", "A4", "A5"]


async def test_within_a_server_cheap_moves_overtake_within_their_allowance(
    pool: SearchPool,
) -> None:
    worker = Worker(pool, guild=B)
    worker.queue("budgeted", Cost.BUDGETED, A)
    worker.queue("bounded", Cost.BOUNDED, A)
    worker.queue("quick", Cost.QUICK, A)
    assert await worker.release() == ["quick", "bounded", "budgeted"]


@pytest.fixture
async def whole(one_thread: concurrent.futures.Executor) -> AsyncIterator[SearchPool]:
    """A pool whose every place one server may hold (the queue's own bounds alone)."""
    pool = SearchPool(1, one_thread, server_percent=100)
    yield pool
    await pool.close()


async def test_the_reviews_queue_is_bounded(whole: SearchPool) -> None:
    pool = whole
    worker = Worker(pool)
    for i in range(MAX_WAITING_REVIEWS):
        worker.queue(f"review {i}", Cost.REVIEW, A)
    await asyncio.sleep(0)
    assert not pool.has_room(Cost.REVIEW) and pool.has_room(Cost.QUICK)
    with pytest.raises(Busy):
        await pool.run(Cost.REVIEW, str, "one too many", server=B)
    # A review whose clicker went away gives its place back.
    worker.jobs[0].cancel()
    await asyncio.sleep(0)
    assert pool.has_room(Cost.REVIEW) and pool.waiting == (0, MAX_WAITING_REVIEWS - 1)
    worker.jobs.pop(0)
    assert len(await worker.release()) == MAX_WAITING_REVIEWS - 1


async def test_moves_are_bounded_by_promises_made_before_writing(whole: SearchPool) -> None:
    pool = whole
    worker = Worker(pool)
    for game_id in range(MAX_WAITING_MOVES - 1):
        pool.promise(game_id)
    pool.promise(0)  # promised already: no second place
    worker.queue("promised", Cost.QUICK, A)  # a move no one promised is always taken
    await asyncio.sleep(0)
    assert not pool.has_room(Cost.QUICK)
    with pytest.raises(Busy):
        pool.promise(10_000)
    pool.withdraw(5)  # that move was not written after all
    pool.promise(10_000)
    with pytest.raises(Busy):
        pool.promise(10_001)
    # A promised move takes its own place when it comes: still full, no more.
    worker.jobs.append(asyncio.ensure_future(pool.run(Cost.QUICK, str, "kept", game_id=1)))
    await asyncio.sleep(0)
    assert pool.waiting == (2, 0) and not pool.has_room(Cost.QUICK)
    assert sorted(await worker.release()) == ["promised"]
    assert await worker.jobs[-1] == "kept"


async def test_play_refuses_a_move_the_full_pool_could_not_answer_and_writes_nothing(
    store: Store, clock: FakeClock, one_thread: concurrent.futures.Executor
) -> None:
    service = make_service(store, clock, one_thread, ai_workers=1)
    await service.start()
    try:
        game = await service.start_bot_game(
            GUILD, CHANNEL, ALICE, level="hard", width=5, height=5, k=4, first=First.ME
        )
        pool = service.replies._pool  # the test fills the server's share of the pool
        for game_id in range(10**6, 10**6 + share(MAX_WAITING_MOVES, 25)):
            pool.promise(game_id, GUILD)
        with pytest.raises(Busy):
            await service.move(game.id, ALICE, 12, 0)
        assert await service.get_game(game.id) == game  # nothing changed
        pool.withdraw(10**6)
        played = (await service.move(game.id, ALICE, 12, 0)).game
        assert played.move_no == 2 and played.status is GameStatus.ACTIVE
    finally:
        await service.close()


async def test_a_promise_never_taken_lapses(
    whole: SearchPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller that wrote the move but never asked for the reply does not hold its place."""
    pool = whole
    now = [1000.0]
    monkeypatch.setattr("bot.games.pool.time.monotonic", lambda: now[0])
    for game_id in range(MAX_WAITING_MOVES):
        pool.promise(game_id)
    assert not pool.has_room(Cost.QUICK)
    now[0] += PROMISE_SECONDS - 1
    with pytest.raises(Busy):
        pool.promise(-1)
    now[0] += 2
    assert pool.has_room(Cost.QUICK)
    pool.promise(-1)


async def test_one_server_holds_at_most_its_share_of_the_moves(pool: SearchPool) -> None:
    mine = share(MAX_WAITING_MOVES, 25)
    for game_id in range(mine):
        pool.promise(game_id, A)
    assert not pool.has_room(Cost.QUICK, A) and pool.has_room(Cost.QUICK, B)
    with pytest.raises(Busy):
        pool.promise(10_000, A)
    pool.promise(10_000, B)  # another server's move still finds room
    pool.withdraw(0)  # a place given back is A's again
    pool.promise(10_001, A)


async def test_a_server_with_nothing_waiting_is_never_refused_a_move(pool: SearchPool) -> None:
    """Busy servers filling the whole queue still leave a quiet server its first move."""
    mine = share(MAX_WAITING_MOVES, 25)
    for server in range(10, 10 + MAX_WAITING_MOVES // mine):
        for i in range(mine):
            pool.promise(server * 1000 + i, server)
    assert not pool.has_room(Cost.QUICK, 10) and pool.has_room(Cost.QUICK, C)
    pool.promise(1, C)
    with pytest.raises(Busy):  # a second one waits for room like any other
        pool.promise(2, C)


async def test_one_server_holds_at_most_its_share_of_the_reviews(pool: SearchPool) -> None:
    worker = Worker(pool)
    worker.queue("A's review", Cost.REVIEW, A)
    await asyncio.sleep(0)
    assert not pool.has_room(Cost.REVIEW, A) and pool.has_room(Cost.REVIEW, B)
    with pytest.raises(Busy):
        await pool.run(Cost.REVIEW, str, "A's second", server=A)
    worker.queue("B's review", Cost.REVIEW, B)
    assert await worker.release() == ["A's review", "B's review"]


async def test_a_flooding_server_never_gets_another_refused_and_delays_it_one_search(
    one_thread: concurrent.futures.Executor,
) -> None:
    """Server A: 100 bot games whose players click again as soon as the reply came (1 ms
    after a refusal); server B's player clicks 10 times meanwhile. Each search takes
    ``search`` seconds of the one worker. (Before per-server shares, B was refused on
    10 clicks of 10 here: A kept the 64 places full.)"""
    pool = SearchPool(1, one_thread)
    search = 0.004
    refused = {A: 0, B: 0}
    waits: list[float] = []
    started: list[int] = []  # the server of each search, as they start
    overtaken: list[int] = []  # A's searches started between B's click and its search
    stop = asyncio.Event()

    def searching(server: int) -> None:
        started.append(server)
        time.sleep(search)

    async def click(game_id: int, server: int) -> float:
        loop = asyncio.get_running_loop()
        while True:
            try:
                pool.promise(game_id, server)
                break
            except Busy:
                refused[server] += 1
                if server == B:
                    return -1.0
                await asyncio.sleep(0.001)  # a player clicking again
        asked, before = loop.time(), len(started)
        await pool.run(Cost.BUDGETED, searching, server, server=server, game_id=game_id)
        if server == B:
            overtaken.append(started[before:].count(A))
        return loop.time() - asked

    async def flood(game_id: int) -> None:
        while not stop.is_set():
            await click(game_id, A)

    floods = [asyncio.ensure_future(flood(game_id)) for game_id in range(100)]
    try:
        await asyncio.sleep(0.05)  # A's share is full
        for _ in range(10):
            waits.append(await click(10_000, B))
            await asyncio.sleep(0.01)
    finally:
        stop.set()
        await asyncio.gather(*floods)
        await pool.close()
    assert refused[B] == 0 and refused[A] > 0
    # B waits for the search running when it clicked (started before), then its own.
    assert max(overtaken) <= 1, overtaken
    assert max(waits) < 1.0, waits  # about two searches, 10 ms; loose for a loaded machine
