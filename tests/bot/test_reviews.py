"""Reviews: computed once and stored, a per-member cooldown on searches, refusals."""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.app import GameService
from bot.errors import Busy, GameInProgress, GameNotFound, ReviewCooldown, ReviewsOff
from bot.games import ai
from bot.games.pool import MAX_WAITING_REVIEWS, Cost, share
from bot.games.queries import Store
from bot.models import Game
from bot.stats.review_queries import ReviewStore
from bot.stats.reviews import decode, encode

from .helpers import ALICE, BOB, CAROL, GUILD, FakeClock, make_service, member_game, play_out
from .shown import shown

X_WINS = [0, 3, 1, 4, 2]  # X takes the top row; O's 4 lost (3x3: reviewed in a blink)


class CountingExecutor(concurrent.futures.ThreadPoolExecutor):
    """One thread; counts the reviews submitted, and runs jobs only once ``gate`` is set."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.gate = threading.Event()
        self.gate.set()
        self.reviews = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if fn is ai.review_game:
            self.reviews += 1

        def gated() -> Any:
            self.gate.wait(timeout=10)
            return fn(*args, **kwargs)

        return super().submit(gated)


@pytest.fixture
def counting() -> Iterator[CountingExecutor]:
    executor = CountingExecutor()
    yield executor
    executor.gate.set()
    executor.shutdown()


@pytest.fixture
async def svc(
    store: Store, clock: FakeClock, counting: CountingExecutor
) -> AsyncIterator[GameService]:
    # inline_cells=0: 3x3 reviews go through the pool, as 5x5 ones do in the bot.
    service = make_service(store, clock, counting, ai_workers=1, review_cooldown=30.0)
    await service.start()
    yield service
    await service.close()


async def finished(service: GameService, guild: int = GUILD, channel: int = 1) -> Game:
    return await play_out(service, await member_game(service, guild=guild, channel=channel), X_WINS)


async def test_a_review_is_computed_once_and_stored(
    svc: GameService, counting: CountingExecutor, store: Store
) -> None:
    game = await finished(svc)
    assert await svc.reviews.at_once(game.id) is None  # needs a search
    # Three members click at once: one search, one stored review, three answers.
    answers = await asyncio.gather(
        *(svc.reviews.review(game.id, user) for user in (ALICE, BOB, CAROL))
    )
    assert counting.reviews == 1
    reviews = {review for _, review in answers}
    assert len(reviews) == 1
    (review,) = reviews
    assert review.moves == game.moves and review.decider is not None
    stored = await ReviewStore(store.db).get(game.id)
    assert stored is not None and decode(stored) == review
    # Later clicks read it: no search, and no cooldown (ALICE just had one).
    assert await svc.reviews.at_once(game.id) == (game, review)
    assert (await svc.reviews.review(game.id, ALICE))[1] == review
    assert counting.reviews == 1


async def test_the_first_review_stored_wins_across_processes(
    db_target: str | Path, store: Store
) -> None:
    other = await Store.open(db_target)  # a second process on the same database
    try:
        game = await finished(make_service(store, FakeClock(), CountingExecutor()))
        mine = ai.review_game(game.moves, 3, 3, 3)
        theirs = encode(dataclasses.replace(mine, better=(7,)))
        assert await ReviewStore(other.db).put(game.id, theirs) == theirs
        assert await ReviewStore(store.db).put(game.id, encode(mine)) == theirs
        found = decode(theirs)
        assert found is not None and found.better == (7,)
    finally:
        await other.close()


OLD_REVIEW = (
    '{"moves":[0,3,1,4,2],"width":3,"height":3,"k":3,"values":["draw","draw","draw",'
    '"draw","X wins","X wins"],"turning_point":3,"kind":"mistake","note":null}'
)
"""A review as version 1 stored it: it named the first change of the value."""


async def test_an_older_versions_review_is_never_shown_and_is_replaced(
    db_target: str | Path, store: Store, clock: FakeClock, counting: CountingExecutor
) -> None:
    assert decode(OLD_REVIEW) is None and decode("{}") is None
    service = make_service(store, clock, counting, ai_workers=1, review_cooldown=30.0)
    await service.start()
    other = await Store.open(db_target)
    try:
        game, small = await finished(service), await finished(service, channel=2)
        for played in (game, small):
            await ReviewStore(store.db).put(played.id, OLD_REVIEW)
        # A search (inline_cells=0): the old row counts as absent and is replaced.
        assert await service.reviews.at_once(game.id) is None
        _, review = await service.reviews.review(game.id, ALICE)
        assert counting.reviews == 1 and review == ai.review_game(game.moves, 3, 3, 3)
        assert await ReviewStore(store.db).get(game.id) == encode(review)
        # Two processes replace the same old row: the first replacement wins for both.
        first = encode(dataclasses.replace(review, better=(8,)))
        assert await ReviewStore(other.db).put(small.id, first, replacing=OLD_REVIEW) == first
        assert (
            await ReviewStore(store.db).put(small.id, encode(review), replacing=OLD_REVIEW) == first
        )
    finally:
        await other.close()
        await service.close()


async def test_the_cooldown_applies_to_searches_only(
    svc: GameService, clock: FakeClock, counting: CountingExecutor
) -> None:
    first, second, third = [await finished(svc, channel=c) for c in (1, 2, 3)]
    await svc.reviews.review(first.id, ALICE)
    with pytest.raises(ReviewCooldown) as refused:
        await svc.reviews.review(second.id, ALICE)
    until = clock.now + 30
    assert refused.value.until == until
    assert re.fullmatch(r".*<t:(\d+):R>\.", shown(refused.value))
    assert f"<t:{int(until)}:R>" in shown(refused.value)
    # Others may; a stored review is free; the server's own setting overrides the config.
    await svc.reviews.review(second.id, BOB)
    await svc.reviews.review(second.id, ALICE)  # stored by BOB's click just now
    clock.advance(29)
    with pytest.raises(ReviewCooldown):
        await svc.reviews.review(third.id, ALICE)
    # The server's setting (here 10 s) sets the length of the cooldowns claimed from now.
    clock.advance(1)
    await svc.reviews.review(third.id, ALICE, cooldown=10)
    clock.advance(5)
    fourth = await finished(svc, channel=4)
    with pytest.raises(ReviewCooldown) as refused:
        await svc.reviews.review(fourth.id, ALICE, cooldown=10)
    assert refused.value.until == clock.now + 5
    assert counting.reviews == 3


async def test_the_cooldown_holds_across_processes(db_path: Path, store: Store) -> None:
    other = await Store.open(db_path)
    try:
        now = 1000.0
        claims = await asyncio.gather(
            ReviewStore(store.db).claim_cooldown(GUILD, ALICE, now, now + 30),
            ReviewStore(other.db).claim_cooldown(GUILD, ALICE, now, now + 30),
        )
        assert sorted(claims, key=lambda c: c is not None) == [None, now + 30]
        assert (
            await ReviewStore(other.db).claim_cooldown(GUILD, ALICE, now + 29, now + 59) == now + 30
        )
        assert await ReviewStore(other.db).claim_cooldown(GUILD, ALICE, now + 30, now + 60) is None
        assert await ReviewStore(store.db).claim_cooldown(GUILD + 1, ALICE, now, now + 30) is None
    finally:
        await other.close()


async def test_a_busy_pool_refuses_without_spending_the_cooldown(
    svc: GameService, counting: CountingExecutor
) -> None:
    games = [await finished(svc, channel=c) for c in range(1, MAX_WAITING_REVIEWS + 4)]
    counting.gate.clear()  # hold the worker
    pool = svc.replies._pool
    running = asyncio.ensure_future(pool.run(Cost.QUICK, str, "holding"))
    mine = share(MAX_WAITING_REVIEWS, 25)  # the server's share of the reviews queue
    users = range(100, 100 + mine)
    waiting = [
        asyncio.ensure_future(svc.reviews.review(g.id, u))
        for g, u in zip(games, users, strict=False)
    ]
    for _ in range(100):
        if pool.waiting[1] == mine:
            break
        await asyncio.sleep(0.01)
    assert pool.waiting == (0, mine)
    last = games[-1]
    with pytest.raises(Busy):
        await svc.reviews.review(last.id, ALICE)
    counting.gate.set()
    await asyncio.gather(running, *waiting)
    _, review = await svc.reviews.review(last.id, ALICE)  # no cooldown was spent
    assert review.moves == last.moves


async def test_refusals(svc: GameService, counting: CountingExecutor) -> None:
    game = await finished(svc)
    with pytest.raises(ReviewsOff):
        await svc.reviews.review(game.id, ALICE, enabled=False)
    with pytest.raises(ReviewsOff):
        await svc.reviews.at_once(game.id, enabled=False)
    with pytest.raises(GameNotFound):
        await svc.reviews.review(game.id, ALICE, GUILD + 1)
    with pytest.raises(GameNotFound):
        await svc.reviews.at_once(10**9)
    live = await member_game(svc, channel=9)
    with pytest.raises(GameInProgress):
        await svc.reviews.review(live.id, ALICE)
    assert counting.reviews == 0
    # Refusals spent no cooldown.
    assert (await svc.reviews.review(game.id, ALICE))[0] == game


async def test_small_boards_are_reviewed_at_once(store: Store, clock: FakeClock) -> None:
    with CountingExecutor() as executor:
        service = make_service(store, clock, executor, inline_cells=9)
        await service.start()
        try:
            game = await finished(service)
            found = await service.reviews.at_once(game.id)
            assert found is not None and found[1].moves == game.moves
            assert await ReviewStore(store.db).get(game.id) == encode(found[1])
            # An older version's review is recomputed at once, and replaces the old row.
            old = await finished(service, channel=2)
            await ReviewStore(store.db).put(old.id, OLD_REVIEW)
            again = await service.reviews.at_once(old.id)
            assert again is not None and again[1].decider == 1  # not the old row's 3
            assert await ReviewStore(store.db).get(old.id) == encode(again[1])
            assert executor.reviews == 0
        finally:
            await service.close()


async def test_on_search_is_awaited_only_before_waiting_for_a_search(
    svc: GameService, counting: CountingExecutor
) -> None:
    """The Discord layer defers there: never for a refusal nor for a stored review."""
    first, second = [await finished(svc, channel=c) for c in (1, 2)]
    calls: list[str] = []

    def hook(name: str) -> Callable[[], Any]:
        async def on_search() -> None:
            calls.append(name)

        return on_search

    await svc.reviews.review(first.id, ALICE, on_search=hook("searched"))
    await svc.reviews.review(first.id, BOB, on_search=hook("stored"))
    with pytest.raises(ReviewCooldown):
        await svc.reviews.review(second.id, ALICE, on_search=hook("cooldown"))
    with pytest.raises(ReviewsOff):
        await svc.reviews.review(second.id, BOB, enabled=False, on_search=hook("off"))
    assert calls == ["searched"] and counting.reviews == 1


async def test_a_pool_filled_after_the_checks_gives_the_cooldown_back(
    svc: GameService, counting: CountingExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the room check and the queue the cooldown is claimed (an await): other
    reviews may fill the queue meanwhile. Here the queue is full already and the check
    is made to see the room it saw a moment before."""
    game = await finished(svc)
    pool = svc.replies._pool
    counting.gate.clear()
    held = [asyncio.ensure_future(pool.run(Cost.QUICK, str, "running"))]
    await asyncio.sleep(0)
    held += [  # reviews of other servers fill the queue
        asyncio.ensure_future(pool.run(Cost.REVIEW, str, f"review {i}", server=GUILD + 1 + i))
        for i in range(MAX_WAITING_REVIEWS)
    ]
    await asyncio.sleep(0)
    assert pool.waiting == (0, MAX_WAITING_REVIEWS)
    with monkeypatch.context() as patch:
        patch.setattr(pool, "has_room", lambda cost, server: True)
        with pytest.raises(Busy):
            await svc.reviews.review(game.id, ALICE)
    counting.gate.set()
    await asyncio.gather(*held)
    assert (await svc.reviews.review(game.id, ALICE))[1].moves == game.moves  # no cooldown
