"""``impossible``'s 4x4 and 5x5 replies that need no search come with the click, in its
own write, as 3x3 replies do; only real searches go to the pool.

On 5x5 k=4 the book and the capped proofs answer every position the level reaches
(``python -m engine prove`` walks them all); on 5x5 k=3, which has no book, the level
searches, and its reply goes to the pool."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable

from bot.games.queries import Store
from bot.models import First, GameStatus

from .helpers import ALICE, CHANNEL, GUILD, FakeClock, make_service


class NoPool(concurrent.futures.Executor):
    """An executor that counts what is sent to it and runs it (in this thread)."""

    def __init__(self) -> None:
        self.jobs = 0

    def submit(self, fn: Callable[..., object], /, *args: object, **kwargs: object):  # type: ignore[override]
        self.jobs += 1
        future: concurrent.futures.Future[object] = concurrent.futures.Future()
        future.set_result(fn(*args, **kwargs))
        return future


async def test_5x5_k5_replies_come_with_the_click(store: Store, clock: FakeClock) -> None:
    pool = NoPool()
    service = make_service(store, clock, pool, inline_cells=9)
    game = await service.start_bot_game(
        GUILD, CHANNEL, ALICE, level="impossible", width=5, height=5, k=5, first=First.ME
    )
    while game.is_live:
        before = game.move_no
        cell = game.board.legal_moves()[0]
        game = (await service.move(game.id, ALICE, cell, before)).game
        assert game.status is not GameStatus.BOT_TO_MOVE
        assert game.move_no == before + 2 or not game.is_live
        assert await store.get_game(game.id) == game
    assert pool.jobs == 0
    assert game.winner_id is None  # impossible never loses: a draw or its win


async def test_5x5_k4_replies_come_with_the_click(store: Store, clock: FakeClock) -> None:
    pool = NoPool()
    service = make_service(store, clock, pool, inline_cells=9)
    for channel, first in ((CHANNEL, First.ME), (CHANNEL + 1, First.OPPONENT)):
        game = await service.start_bot_game(
            GUILD, channel, ALICE, level="impossible", width=5, height=5, k=4, first=first
        )
        while game.is_live:
            before = game.move_no
            cell = game.board.legal_moves()[-1]
            game = (await service.move(game.id, ALICE, cell, before)).game
            assert game.status is not GameStatus.BOT_TO_MOVE
            assert game.move_no == before + 2 or not game.is_live
        assert game.winner_id is None  # impossible never loses
    assert pool.jobs == 0


async def test_5x5_replies_that_need_a_search_go_to_the_pool(
    store: Store, clock: FakeClock
) -> None:
    pool = NoPool()
    service = make_service(store, clock, pool, inline_cells=9)
    game = await service.start_bot_game(
        GUILD, CHANNEL, ALICE, level="impossible", width=5, height=5, k=3, first=First.ME
    )
    moved = await service.move(game.id, ALICE, 12, game.move_no, await_reply=False)
    game, plan = moved.game, moved.reply
    assert game.status is GameStatus.BOT_TO_MOVE and plan is not None and plan.answer_first
    assert pool.jobs == 0
    game = await service.bot_reply(game, plan)
    assert game.move_no == 2 and game.status is GameStatus.ACTIVE and pool.jobs == 1
