"""Turn pings' rules on a real SQLite file: one standing per game, newer moves win races."""

from __future__ import annotations

import asyncio
import concurrent.futures
from pathlib import Path

from bot.models import Game, GameStatus
from bot.service import GameService
from bot.service.pings import REMINDER_LEAD, TurnPings
from bot.store import Store
from bot.store.pings import StandingPing

from .conftest import ALICE, BOB, CHANNEL, GUILD, FakeClock, make_service, member_game


async def is_news(pings: TurnPings, game: Game, *, reminder: bool = False) -> bool:
    return (await pings.news(game, reminder=reminder))[0]


async def test_each_turn_is_announced_once_and_replaces_the_last(
    service: GameService, store: Store
) -> None:
    pings = service.pings
    game = await member_game(service)
    assert await is_news(pings, game)
    first = await pings.record(game, 501)
    assert first.won and first.replaced is None
    assert not await is_news(pings, game), "this turn was announced"
    assert await is_news(pings, game, reminder=True), "its reminder was not"

    moved = await service.play(game.id, ALICE, 4, game.move_no)
    assert not await is_news(pings, game), "a ping for the old turn is no news"
    news, standing = await pings.news(moved)
    assert news and standing is not None and standing.message_id == 501, "delete it first"
    second = await pings.record(moved, 502)
    assert second.won and second.replaced is not None
    assert (second.replaced.message_id, second.replaced.user_id) == (501, ALICE)
    standing = await store.pings.get(game.id)
    assert standing == StandingPing(game.id, CHANNEL, 502, BOB, 1, False)


async def test_an_older_move_never_replaces_a_newer_one(service: GameService, store: Store) -> None:
    pings = service.pings
    game = await member_game(service)
    moved = await service.play(game.id, ALICE, 4, game.move_no)
    assert (await pings.record(moved, 602)).won
    late = await pings.record(game, 601)  # the ping for move 0, sent late
    assert not late.won and late.replaced is None, "the sender deletes its own message"
    standing = await store.pings.get(game.id)
    assert standing is not None and standing.message_id == 602


async def test_the_reminder_outranks_the_turns_first_ping_in_either_order(
    service: GameService, store: Store
) -> None:
    pings = service.pings
    for first_reminder in (False, True):
        game = await member_game(service, channel=CHANNEL + first_reminder)
        a = await pings.record(game, 700 + first_reminder, reminder=first_reminder)
        b = await pings.record(game, 800 + first_reminder, reminder=not first_reminder)
        assert a.won
        assert b.won is (not first_reminder), "only the reminder replaces the first ping"
        standing = await store.pings.get(game.id)
        assert standing is not None and standing.reminder
        # A second reminder for the same turn (another process's) loses too.
        assert not (await pings.record(game, 900, reminder=True)).won


async def test_racing_claims_leave_exactly_the_highest_rank(
    service: GameService, store: Store
) -> None:
    pings = service.pings
    game = await member_game(service)
    outcomes = await asyncio.gather(
        *(pings.record(game, 1000 + i, reminder=i % 2 == 1) for i in range(10))
    )
    standing = await store.pings.get(game.id)
    assert standing is not None and standing.reminder
    winners = [1000 + i for i, claim in enumerate(outcomes) if claim.won]
    # The last claim to commit stands; which one that is, is up to the engine's scheduling.
    assert standing.message_id in winners
    assert 1 <= len(winners) <= 2, "at most the first ping and then the reminder stood"
    replaced = {c.replaced.message_id for c in outcomes if c.won and c.replaced is not None}
    losers = {1000 + i for i, c in enumerate(outcomes) if not c.won}
    # Every message but the standing one is deleted by exactly one party.
    assert replaced | losers == {1000 + i for i in range(10)} - {standing.message_id}
    assert not replaced & losers


async def test_two_processes_racing_keep_one_ping(
    db_path: Path, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    first = await Store.open(db_path)
    second = await Store.open(db_path)
    try:
        one, two = make_service(first, clock, executor), make_service(second, clock, executor)
        await one.start()
        await two.start()
        game = await member_game(one)
        moved = await one.play(game.id, ALICE, 0, 0)
        claims = await asyncio.gather(
            one.pings.record(game, 1),  # move 0, stale
            two.pings.record(moved, 2),
            one.pings.record(moved, 3, reminder=True),
            two.pings.record(game, 4, reminder=True),  # move 0's reminder, stale
        )
        assert not claims[0].won and not claims[3].won
        assert claims[2].won
        standing = await second.pings.get(game.id)
        assert standing is not None and (standing.message_id, standing.move_no) == (3, 1)
        await one.close()
        await two.close()
    finally:
        await first.close()
        await second.close()


async def test_the_end_takes_the_standing_ping_once(service: GameService) -> None:
    pings = service.pings
    game = await member_game(service)
    await pings.record(game, 55)
    assert await pings.clear(game) is None, "a live game keeps its ping"
    ended = await service.endings.forfeit(game.id, BOB)
    assert not await is_news(pings, ended)
    assert [g.id for g in await pings.left_behind()] == [game.id]
    assert await pings.clear(ended) == (CHANNEL, 55)
    assert await pings.clear(ended) is None, "only one party deletes it"
    assert await pings.left_behind() == []
    late = await pings.record(game, 56)  # a ping sent for the ended game's last turn
    assert not late.won


async def test_the_standing_ping_survives_a_restart(
    db_path: Path, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    store = await Store.open(db_path)
    service = make_service(store, clock, executor)
    await service.start()
    game = await member_game(service)
    await service.pings.record(game, 77)
    await service.close()
    await store.close()

    store = await Store.open(db_path)
    try:
        service = make_service(store, clock, executor)
        await service.start()
        ended = await service.endings.stop(GUILD, CHANNEL, ALICE, is_moderator=False)
        assert ended.status is GameStatus.ABANDONED
        assert await service.pings.clear(ended) == (CHANNEL, 77)
        await service.close()
    finally:
        await store.close()


async def test_games_against_the_bot_never_ping(service: GameService, clock: FakeClock) -> None:
    game = await service.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first="me")
    assert game.status is GameStatus.ACTIVE
    assert not await is_news(service.pings, game)
    clock.advance(service.config.turn_timeout - 1)
    assert await service.pings.reminders_due(5.0) == []


async def test_the_reminder_is_due_once_per_turn_before_the_deadline(
    service: GameService, clock: FakeClock
) -> None:
    pings = service.pings
    turn = service.config.turn_timeout  # 300 s: the reminder comes 60-65 s before
    assert turn / 5 >= REMINDER_LEAD
    game = await member_game(service)
    await pings.record(game, 1)
    clock.advance(turn - REMINDER_LEAD - 5.0 - 0.5)
    assert await pings.reminders_due(5.0) == []
    clock.advance(1.0)
    assert [g.id for g in await pings.reminders_due(5.0)] == [game.id]
    assert [g.id for g in await pings.reminders_due(0.0)] == [], "a sweep every 0 s waits"
    assert (await pings.record(game, 2, reminder=True)).won
    assert await pings.reminders_due(5.0) == [], "once per turn"
    moved = await service.play(game.id, ALICE, 4, game.move_no)
    await pings.record(moved, 3)
    assert await pings.reminders_due(5.0) == [], "the new turn has its whole clock"
    clock.advance(turn - REMINDER_LEAD)
    assert [g.id for g in await pings.reminders_due(5.0)] == [game.id]
    clock.advance(REMINDER_LEAD)
    assert await pings.reminders_due(5.0) == [], "past the deadline it is the sweep's to end"


async def test_a_short_turn_is_reminded_in_its_last_fifth_but_not_its_first_half(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    service = make_service(store, clock, executor, turn_timeout=10.0)
    await service.start()
    try:
        game = await member_game(service)
        clock.advance(6.5)  # lead 2 s, brought forward by a 1 s sweep: due from 7 s
        assert await service.pings.reminders_due(1.0) == []
        clock.advance(0.5)
        assert [g.id for g in await service.pings.reminders_due(1.0)] == [game.id]
        other = await member_game(service, channel=CHANNEL + 1)
        clock.advance(4.0)  # a sweep every 9 s would make it due at once; not before half-time
        assert other.id not in {g.id for g in await service.pings.reminders_due(9.0)}
        clock.advance(1.0)
        assert other.id in {g.id for g in await service.pings.reminders_due(9.0)}
    finally:
        await service.close()
