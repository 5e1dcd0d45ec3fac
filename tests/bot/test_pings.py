"""Turn notifications' rules: who is due a ping and when (plain functions of the game and
the clock), and what the store keeps (one standing per game, newer moves win races,
a ping forgotten only once its message is gone) on real databases."""

from __future__ import annotations

import asyncio
import concurrent.futures
from dataclasses import replace
from pathlib import Path

import pytest

from bot.app import GameService
from bot.games.queries import Store
from bot.models import First, Game, GameStatus, Ping, StandingPing
from bot.pings.queries import PingStore, TurnState
from bot.pings.service import REMINDER_LEAD, Due, Kind, due, grace, ping_of, reminder_at
from bot.tunables import PING_GRACE_LONGEST, TURN_TIMEOUT

from .helpers import ALICE, BOB, CHANNEL, GUILD, FakeClock, make_service, member_game

# -- the rules, as plain functions ----------------------------------------------------------


def waiting_game(turn: float = 300.0, *, move_no: int = 1, start: float = 1000.0) -> Game:
    """An active member game at ``move_no``, its turn begun at ``start``."""
    moves = tuple(range(move_no))
    return Game(
        id=7,
        guild_id=GUILD,
        channel_id=CHANNEL,
        message_id=70,
        x_id=ALICE,
        o_id=BOB,
        bot_level=None,
        width=3,
        height=3,
        k=3,
        moves=moves,
        status=GameStatus.ACTIVE,
        result=None,
        winner_id=None,
        winner_mark=None,
        created_at=start,
        updated_at=start,
        turn_deadline=start + turn,
    )


def state(game: Game, **changes: object) -> TurnState:
    base = TurnState(game, None, None, None, None, {})
    return replace(base, **changes)  # type: ignore[arg-type]


def ping(game: Game, *, reminder: bool = False, move_no: int | None = None) -> StandingPing:
    move = game.move_no if move_no is None else move_no
    return StandingPing(game.id, CHANNEL, 99, BOB, move, reminder)


def kind(item: Due | None) -> Kind | None:
    return None if item is None else item.kind


def test_the_grace_is_30_s_or_a_fifth_of_the_turn_unless_the_server_chose() -> None:
    assert grace(300.0, None) == PING_GRACE_LONGEST == 30.0
    assert grace(60.0, None) == 12.0
    assert grace(300.0, 5.0) == 5.0


def test_a_player_who_moves_within_the_grace_is_never_pinged() -> None:
    game = waiting_game()  # BOB to move, since 1000
    assert kind(due(state(game), 1000.0 + 29.9, 5.0)) is None
    assert kind(due(state(game), 1000.0 + 30.0, 5.0)) is Kind.PING


def test_a_turn_whose_ping_was_refused_gets_nothing_more() -> None:
    game = waiting_game(move_no=2)
    at = reminder_at(1000.0, 1300.0, 5.0)
    assert kind(due(state(game, refused_move=2), 1031.0, 5.0)) is None
    assert kind(due(state(game, refused_move=2), at, 5.0)) is None, "nor its reminder"
    assert kind(due(state(game, refused_move=1), 1031.0, 5.0)) is Kind.PING


def test_once_pinged_a_turn_waits_for_its_reminder_and_then_nothing() -> None:
    game = waiting_game()
    pinged = state(game, standing=ping(game))
    at = reminder_at(1000.0, 1300.0, 5.0)
    assert at == 1300.0 - REMINDER_LEAD - 5.0
    assert kind(due(pinged, at - 0.1, 5.0)) is None, "one ping per turn"
    item = due(pinged, at, 5.0)
    assert kind(item) is Kind.REMINDER and item is not None and item.standing == ping_of(ping(game))
    reminded = state(game, standing=ping(game, reminder=True))
    assert kind(due(reminded, at + 1, 5.0)) is None
    assert kind(due(state(game), 1300.0, 5.0)) is None, "past the deadline: the sweep ends it"


def test_a_ping_of_an_older_turn_does_not_count_for_this_one() -> None:
    game = waiting_game(move_no=2)
    item = due(state(game, standing=ping(game, move_no=1, reminder=True)), 1031.0, 5.0)
    assert kind(item) is Kind.PING and item is not None and item.standing is not None


def test_a_short_turn_is_reminded_in_its_last_fifth_but_never_its_first_half() -> None:
    game = waiting_game(10.0)  # grace 2 s; reminder 2 s before, brought forward a sweep
    assert reminder_at(1000.0, 1010.0, 1.0) == 1007.0
    assert reminder_at(1000.0, 1010.0, 9.0) == 1005.0, "never in the first half"
    assert kind(due(state(game), 1006.9, 1.0)) is Kind.PING
    assert kind(due(state(game), 1007.0, 1.0)) is Kind.REMINDER, "one ping, the reminder"


def test_whoever_accepted_is_not_pinged_for_the_turn_their_click_started() -> None:
    first = waiting_game(move_no=0)  # ALICE to move, and she accepted
    assert kind(due(state(first, starter=ALICE), 1299.0, 5.0)) is None
    assert kind(due(state(first, starter=BOB), 1031.0, 5.0)) is Kind.PING
    later = waiting_game(move_no=2)
    assert kind(due(state(later, starter=ALICE), 1031.0, 5.0)) is Kind.PING


def test_a_member_choice_beats_the_servers_default() -> None:
    game = waiting_game()  # BOB to move
    at = 1100.0
    assert kind(due(state(game, choices={BOB: False}), at, 5.0)) is None
    assert kind(due(state(game, server_default=False), at, 5.0)) is None
    on = state(game, server_default=False, choices={BOB: True})
    assert kind(due(on, at, 5.0)) is Kind.PING
    assert kind(due(state(game, choices={ALICE: False}), at, 5.0)) is Kind.PING


def test_a_servers_grace_applies() -> None:
    game = waiting_game()
    assert kind(due(state(game, server_grace=5.0), 1005.0, 5.0)) is Kind.PING


# -- with the store ---------------------------------------------------------------------------


async def test_an_idle_player_is_due_one_ping_after_the_grace(
    service: GameService, clock: FakeClock
) -> None:
    pings = service.pings
    game = await member_game(service)  # ALICE to move; BOB accepted
    clock.advance(PING_GRACE_LONGEST - 1)
    assert await pings.due() == []
    clock.advance(1)
    (item,) = await pings.due()
    assert (item.game.id, item.kind, item.game.current_player_id) == (game.id, Kind.PING, ALICE)
    assert (await pings.record(item, 501)).won
    assert await pings.due() == [], "once per turn"
    assert await pings.standing(game) is None, "its turn is not over"

    played = await service.move(game.id, ALICE, 4, game.move_no)
    moved = played.game
    assert played.stale_ping == Ping(game.id, CHANNEL, 501), "read with the move"
    assert not await pings.still_due(item), "a ping for a turn that is over is stale"
    old = await pings.standing(moved)
    assert old == played.stale_ping
    assert await pings.stale() == [(game.id, CHANNEL, 501, GUILD)]
    await pings.forget(game.id, 501)
    assert await pings.stale() == []
    assert await pings.due() == [], "BOB's turn has just begun"


async def test_the_reminder_replaces_the_first_ping_once_per_turn(
    service: GameService, clock: FakeClock
) -> None:
    pings = service.pings
    turn = service.config[TURN_TIMEOUT]  # 300 s: the reminder comes 60-65 s before
    await member_game(service)
    clock.advance(PING_GRACE_LONGEST)
    (first,) = await pings.due()
    await pings.record(first, 1)
    clock.advance(turn - REMINDER_LEAD - 5.0 - PING_GRACE_LONGEST)
    (item,) = await pings.due()
    assert item.kind is Kind.REMINDER and item.standing is not None
    assert item.standing.message_id == 1, "deleted before the reminder goes"
    claim = await pings.record(item, 2)
    assert claim.won and claim.replaced is not None and claim.replaced.message_id == 1
    assert await pings.due() == []
    clock.advance(REMINDER_LEAD)
    assert await pings.due() == []


async def test_a_refused_turn_is_not_tried_again_but_the_next_is(
    service: GameService, clock: FakeClock
) -> None:
    pings = service.pings
    game = await member_game(service)
    clock.advance(PING_GRACE_LONGEST)
    (item,) = await pings.due()
    await pings.refused(item.game)
    clock.advance(200)  # the reminder's time too
    assert await pings.due() == []
    moved = (await service.move(game.id, ALICE, 4, game.move_no)).game
    clock.advance(PING_GRACE_LONGEST)
    assert [i.game.id for i in await pings.due()] == [moved.id]


async def test_the_first_mover_who_accepted_is_left_alone(
    service: GameService, clock: FakeClock
) -> None:
    challenge = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB, first=First.OPPONENT)
    game = await service.challenges.accept(challenge.id, BOB)
    assert game.current_player_id == BOB
    clock.advance(service.config[TURN_TIMEOUT] - 1)
    assert await service.pings.due() == []


async def test_choices_are_kept_per_member_and_server(
    service: GameService, clock: FakeClock
) -> None:
    pings = service.pings
    guilds = service.guilds
    assert await guilds.turn_pings_of(GUILD, ALICE) is None
    await guilds.set_turn_pings(GUILD, ALICE, False)
    assert await guilds.turn_pings_of(GUILD, ALICE) is False
    assert await guilds.turn_pings_of(GUILD + 1, ALICE) is None
    await member_game(service)  # ALICE to move
    clock.advance(PING_GRACE_LONGEST)
    assert await pings.due() == []
    await guilds.set_turn_pings(GUILD, ALICE, True)
    assert len(await pings.due()) == 1
    await service.guilds.change(GUILD, {"turn_pings": False})
    assert len(await pings.due()) == 1, "her own choice beats the server's"
    await service.guilds.change(GUILD, {"ping_grace": 3600.0, "turn_pings": True})
    assert await pings.due() == [], "the server's longer grace applies"


async def test_games_against_the_bot_never_ping(service: GameService, clock: FakeClock) -> None:
    await service.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first="me")
    clock.advance(service.config[TURN_TIMEOUT] - 1)
    assert await service.pings.due() == []


async def test_an_ended_games_ping_stays_listed_until_its_message_is_gone(
    service: GameService, clock: FakeClock
) -> None:
    pings = service.pings
    game = await member_game(service)
    clock.advance(PING_GRACE_LONGEST)
    (item,) = await pings.due()
    await pings.record(item, 55)
    ended = await service.endings.forfeit(game.id, BOB)
    assert (await pings.standing(ended)) is not None
    # A refused or rate-limited delete forgets nothing: every sweep finds it again.
    assert await pings.stale() == [(game.id, CHANNEL, 55, GUILD)]
    assert await pings.stale() == [(game.id, CHANNEL, 55, GUILD)]
    await pings.forget(game.id, 55)
    assert await pings.stale() == []
    assert not (await pings.record(item, 56)).won, "a ping sent for an ended game's turn"


# -- ranks and races ----------------------------------------------------------------------------


def as_due(game: Game, reminder: bool = False) -> Due:
    return Due(game, Kind.REMINDER if reminder else Kind.PING, None)


async def test_an_older_move_never_replaces_a_newer_one(service: GameService, store: Store) -> None:
    pings = service.pings
    game = await member_game(service)
    moved = (await service.move(game.id, ALICE, 4, game.move_no)).game
    assert (await pings.record(as_due(moved), 602)).won
    late = await pings.record(as_due(game), 601)  # the ping for move 0, sent late
    assert not late.won and late.replaced is None, "the sender deletes its own message"
    standing = await PingStore(store.db).get(game.id)
    assert standing is not None and standing.message_id == 602


async def test_the_reminder_outranks_the_turns_first_ping_in_either_order(
    service: GameService, store: Store
) -> None:
    pings = service.pings
    for first_reminder in (False, True):
        game = await member_game(service, channel=CHANNEL + first_reminder)
        a = await pings.record(as_due(game, first_reminder), 700 + first_reminder)
        b = await pings.record(as_due(game, not first_reminder), 800 + first_reminder)
        assert a.won
        assert b.won is (not first_reminder), "only the reminder replaces the first ping"
        standing = await PingStore(store.db).get(game.id)
        assert standing is not None and standing.reminder
        assert not (await pings.record(as_due(game, True), 900)).won


async def test_racing_claims_leave_exactly_the_highest_rank(
    service: GameService, store: Store
) -> None:
    pings = service.pings
    game = await member_game(service)
    outcomes = await asyncio.gather(
        *(pings.record(as_due(game, i % 2 == 1), 1000 + i) for i in range(10))
    )
    standing = await PingStore(store.db).get(game.id)
    assert standing is not None and standing.reminder
    winners = [1000 + i for i, claim in enumerate(outcomes) if claim.won]
    assert standing.message_id in winners
    assert 1 <= len(winners) <= 2, "at most the first ping and then the reminder stood"
    replaced = {c.replaced.message_id for c in outcomes if c.won and c.replaced is not None}
    losers = {1000 + i for i, c in enumerate(outcomes) if not c.won}
    assert replaced | losers == {1000 + i for i in range(10)} - {standing.message_id}
    assert not replaced & losers


@pytest.mark.sqlite_only
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
        moved = (await one.move(game.id, ALICE, 0, 0)).game
        claims = await asyncio.gather(
            one.pings.record(as_due(game), 1),  # move 0, stale
            two.pings.record(as_due(moved), 2),
            one.pings.record(as_due(moved, True), 3),
            two.pings.record(as_due(game, True), 4),  # move 0's reminder, stale
        )
        assert not claims[0].won and not claims[3].won
        assert claims[2].won
        standing = await PingStore(second.db).get(game.id)
        assert standing is not None and (standing.message_id, standing.move_no) == (3, 1)
        await one.close()
        await two.close()
    finally:
        await first.close()
        await second.close()
