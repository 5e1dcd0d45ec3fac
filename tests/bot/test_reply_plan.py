"""The bot's reply plan (``bot.games.replies.plan_reply``): instant or from the pool at
which cost, for each board and level, and what the service does with it: the room it
asks of the pool, the "My move…" a click shows first, the deferral of a new game."""

from __future__ import annotations

import concurrent.futures

import pytest

from bot.config import ServiceConfig
from bot.errors import Busy
from bot.games import ai, rules
from bot.games.pool import MAX_WAITING_MOVES, Cost, share
from bot.games.queries import Store
from bot.games.replies import ReplyPlan, plan_reply
from bot.models import First, Game, GameStatus

from .helpers import ALICE, CHANNEL, GUILD, FakeClock, make_service

DEFAULT = ServiceConfig()
POOL_ONLY = ServiceConfig(inline_cells=0)  # as the tests' make_service sets it


def owed(level: str, side: int, k: int, opening: int | None = None) -> Game:
    """A game in which the bot owes its move: as X, or as O after the player's ``opening``."""
    game = rules.new_game(
        GUILD,
        CHANNEL,
        x_id=None if opening is None else ALICE,
        o_id=ALICE if opening is None else None,
        bot_level=level,
        width=side,
        height=side,
        k=k,
        now=0.0,
        turn_timeout=300.0,
    )
    if opening is not None:
        game = rules.advance(game, opening, 0.0, 300.0)
    assert game.status is GameStatus.BOT_TO_MOVE
    return game


INSTANT = ReplyPlan(None)
QUICK, BOUNDED, BUDGETED = ReplyPlan(Cost.QUICK), ReplyPlan(Cost.BOUNDED), ReplyPlan(Cost.BUDGETED)


@pytest.mark.parametrize(
    ("side", "k", "level", "plan"),
    [
        (3, 3, "easy", INSTANT),
        (3, 3, "medium", INSTANT),
        (3, 3, "hard", INSTANT),
        (3, 3, "impossible", INSTANT),
        (4, 4, "easy", QUICK),
        (4, 4, "medium", QUICK),
        (4, 4, "hard", BOUNDED),
        (4, 3, "impossible", BOUNDED),  # no book on 4x4 k=3: the exact solver
        (5, 4, "easy", QUICK),
        (5, 4, "medium", BOUNDED),
        (5, 4, "hard", BOUNDED),
        (5, 3, "impossible", BUDGETED),  # no book on 5x5 k=3: a search to a time budget
    ],
)
def test_the_plan_of_each_board_and_level(side: int, k: int, level: str, plan: ReplyPlan) -> None:
    assert plan_reply(owed(level, side, k), DEFAULT) == plan
    assert plan.answer_first is (plan in (BOUNDED, BUDGETED))


@pytest.mark.parametrize(
    ("side", "k", "opening"), [(4, 4, None), (4, 4, 5), (5, 4, None), (5, 4, 12), (5, 5, None)]
)
def test_impossibles_book_replies_are_instant_and_the_pools_move(
    side: int, k: int, opening: int | None
) -> None:
    game = owed("impossible", side, k, opening)
    plan = plan_reply(game, DEFAULT)
    assert plan.instant and not plan.answer_first and plan.cell is not None
    seed = ai.move_seed(game.id, game.move_no)
    args = (game.width, game.height, game.k, game.moves, "impossible", seed)
    assert plan.cell == ai.compute_move(*args)


def test_inline_cells_0_sends_every_reply_to_the_pool() -> None:
    """As on a board above ``inline_cells``: the book is not read, the strength decides."""
    assert plan_reply(owed("easy", 3, 3), POOL_ONLY) == QUICK
    assert plan_reply(owed("impossible", 3, 3), POOL_ONLY) == BOUNDED
    assert plan_reply(owed("impossible", 4, 4), POOL_ONLY) == BOUNDED
    assert plan_reply(owed("impossible", 5, 4), POOL_ONLY) == BUDGETED
    assert plan_reply(owed("easy", 3, 3), ServiceConfig(inline_cells=16)) == INSTANT
    assert plan_reply(owed("hard", 4, 4), ServiceConfig(inline_cells=16)) == INSTANT


async def test_a_click_gets_the_plan_of_the_reply_it_still_owes(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    service = make_service(store, clock, executor, inline_cells=9)
    small = await service.start_bot_game(GUILD, CHANNEL, ALICE, level="hard", first=First.ME)
    moved = await service.move(small.id, ALICE, 4, 0, await_reply=False)
    assert moved.reply is None and moved.game.move_no == 2  # instant: in the same write
    big = await service.start_bot_game(
        GUILD, CHANNEL + 1, ALICE, level="hard", width=5, height=5, k=4, first=First.ME
    )
    moved = await service.move(big.id, ALICE, 12, 0, await_reply=False)
    assert moved.game.status is GameStatus.BOT_TO_MOVE and moved.reply == BOUNDED
    game = await service.bot_reply(moved.game, moved.reply)
    assert game.status is GameStatus.ACTIVE and game.move_no == 2
    moved = await service.move(big.id, ALICE, 0, 2)
    assert moved.reply is None and moved.game.move_no == 4  # awaited: nothing owed
    await service.close()


async def test_a_new_game_defers_only_for_a_first_move_from_the_pool(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    service = make_service(store, clock, executor, inline_cells=9)
    deferred: list[str] = []
    cases = [
        ("3x3", "hard", 3, 3),
        ("5x5 k=4 book", "impossible", 5, 4),
        ("5x5 medium", "medium", 5, 4),
        ("4x4 easy", "easy", 4, 4),
    ]
    for i, (name, level, side, k) in enumerate(cases):

        async def defer(name: str = name) -> None:
            deferred.append(name)

        game = await service.start_bot_game(
            GUILD,
            CHANNEL + i,
            ALICE,
            level=level,
            width=side,
            height=side,
            k=k,
            first=First.OPPONENT,
            on_slow=defer,
        )
        assert game.move_no == 1 and game.status is GameStatus.ACTIVE
    assert deferred == ["5x5 medium", "4x4 easy"]
    await service.close()


async def test_a_full_pool_refuses_only_replies_that_need_it(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    service = make_service(store, clock, executor, inline_cells=9)
    small = await service.start_bot_game(GUILD, CHANNEL, ALICE, level="hard", first=First.ME)
    big = await service.start_bot_game(
        GUILD, CHANNEL + 1, ALICE, level="hard", width=5, height=5, k=4, first=First.ME
    )
    pool = service.replies._pool  # the test fills the server's share of the pool
    for game_id in range(10**6, 10**6 + share(MAX_WAITING_MOVES, 25)):
        pool.promise(game_id, GUILD)
    assert (await service.move(small.id, ALICE, 4, 0)).game.move_no == 2
    with pytest.raises(Busy):
        await service.move(big.id, ALICE, 12, 0)
    first = await service.start_bot_game(  # impossible's book: instant, no room needed
        GUILD, CHANNEL + 2, ALICE, level="impossible", width=5, height=5, k=4, first="opponent"
    )
    assert first.move_no == 1
    with pytest.raises(Busy):
        await service.start_bot_game(
            GUILD, CHANNEL + 3, ALICE, level="hard", width=5, height=5, k=4, first="opponent"
        )
    await service.close()
