"""Data over years (bot/upkeep/service.py, bot/upkeep/queries.py), on SQLite and PostgreSQL:
outages and clock jumps move turn clocks on, servers the bot left, deleted boards and
channels, and the pruning of what nobody needs any more."""

from __future__ import annotations

import concurrent.futures
import functools
import sqlite3
from pathlib import Path

import pytest

from bot.app import GameService
from bot.challenges.queries import ChallengeQueries
from bot.errors import ChallengeNotFound, GameNotFound
from bot.games.queries import Store
from bot.models import ChallengeStatus, First, GameStatus, Result, Shards, StandingPing
from bot.pings.calloff_queries import CallOffStore
from bot.pings.queries import PingStore
from bot.pings.service import outranks
from bot.settings import Settings, SettingsError
from bot.stats.queries import StatsQueries
from bot.stats.review_queries import ReviewStore
from bot.tunables import HISTORY_DAYS, LEFT_SERVER_DAYS
from bot.upkeep import queries as upkeep_sql
from bot.upkeep.service import ALLOWANCE, DAY, PRUNE_EVERY
from tests.pgtools import read_rows

from .helpers import (
    ALICE,
    BOB,
    CAROL,
    CHANNEL,
    GUILD,
    FakeClock,
    make_service,
    member_game,
    play_out,
)

DAVE = 44


class Ticks:
    """A monotonic clock of the test's own, apart from the wall clock (``FakeClock``)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def count(target: str | Path, table: str) -> int:
    ((n,),) = await read_rows(target, f"SELECT COUNT(*) FROM {table}")
    return int(n)


async def test_a_restart_moves_deadlines_and_expiries_on_by_the_outage(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    first = make_service(store, clock, executor)
    await first.start()
    game = await member_game(first, ALICE, BOB)
    game = (await first.move(game.id, ALICE, 4, 0)).game
    challenge = await first.challenges.create(GUILD, CHANNEL + 1, CAROL, DAVE)
    await first.challenges.set_message(challenge, 600)
    await first.sweep()  # the last sign of life
    left = game.turn_deadline - clock.now
    clock.advance(10)
    await first.close()  # ... then a SIGKILL: nothing runs at the end either way

    clock.advance(3600)  # down for an hour, far past the turn clock
    second = make_service(store, clock, executor)
    await second.start()
    try:
        moved = await store.get_game(game.id)
        assert moved is not None and moved.turn_deadline is not None
        assert moved.turn_deadline - clock.now >= left  # at least what was left
        assert moved.turn_deadline == game.turn_deadline + 3610
        pending = await ChallengeQueries(store.db).get_challenge(challenge.id)
        assert pending is not None and pending.expires_at == challenge.expires_at + 3610
        swept, expired = await second.sweep()
        assert swept == [] and expired == []
        played = (await second.move(game.id, BOB, 0, 1)).game  # Bob moves normally
        assert played.status is GameStatus.ACTIVE
    finally:
        await second.close()


async def test_a_first_start_and_a_quick_restart_move_nothing_more(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    service = make_service(store, clock, executor)
    assert await service.upkeep.resume() == 0.0  # never alive before
    game = await member_game(service)
    assert await service.upkeep.resume() == 0.0  # alive just now
    clock.advance(2)
    assert await service.upkeep.resume() == 2.0
    stored = await store.get_game(game.id)
    assert stored is not None and stored.turn_deadline == game.turn_deadline + 2


async def test_a_wall_clock_jump_moves_deadlines_past_the_allowance(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    ticks = Ticks()
    config = make_service(store, clock, executor).config
    service = GameService(store, config, clock=clock, monotonic=ticks, executor=executor)
    await service.upkeep.resume()
    game = await member_game(service)
    # Time that passes on both clocks is play time: no shift.
    clock.advance(5)
    ticks.now += 5
    assert await service.upkeep.beat() == 0.0
    # A small step of the wall clock alone is within the allowance.
    clock.advance(ALLOWANCE / 2)
    assert await service.upkeep.beat() == 0.0
    # A jump of an hour: nobody could play through it.
    clock.advance(3600)
    ticks.now += 1
    swept, _ = await service.sweep()
    assert swept == []
    stored = await store.get_game(game.id)
    assert stored is not None and stored.is_live
    assert stored.turn_deadline == game.turn_deadline + 3599


async def test_each_process_moves_only_its_own_shards_servers(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    """Two processes of SHARD_COUNT=2: one stays up, the other was down for an hour."""
    on = [g << 22 for g in (10, 11)]  # a server on shard 0, one on shard 1
    zero = make_service(store, clock, executor, shards=Shards(2, (0,)))
    one = make_service(store, clock, executor, shards=Shards(2, (1,)))
    await zero.upkeep.resume()
    await one.upkeep.resume()
    games = [await member_game(zero, guild=guild) for guild in on]
    clock.advance(3600)
    await zero.upkeep.beat()  # it was up all along (no jump: no monotonic here either)
    assert await one.upkeep.resume() == 3600  # its restart
    first, second = [await store.get_game(g.id) for g in games]
    assert first is not None and first.turn_deadline == games[0].turn_deadline
    assert second is not None and second.turn_deadline == games[1].turn_deadline + 3600


async def test_an_outage_of_a_shard_stops_its_clocks_and_gives_the_time_back(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    """Issue 37's case: a 30 s clock and the gateway down for 41 s. Two shards in one
    process: only the one that was down has its clocks stopped."""
    service = make_service(store, clock, executor, shards=Shards(2, (0, 1)), turn_timeout=30.0)
    await service.start()
    try:
        down, up = [await member_game(service, guild=g << 22) for g in (11, 10)]  # 1, 0
        pending = await service.challenges.create(11 << 22, CHANNEL + 1, CAROL, DAVE)
        await service.challenges.set_message(pending, 600)
        left = down.turn_deadline - clock.now
        outage = service.upkeep.shard(1)
        await service.upkeep.outage_begins(outage)
        clock.advance(20)
        games, _challenges = await service.sweep()  # a sweep in the middle of it
        assert games == []
        clock.advance(21)
        games, _challenges = await service.sweep()
        assert [g.id for g in games] == [up.id]  # ran out: no outage on shard 0
        assert await service.upkeep.outage_ends(outage) == 0  # the sweeps caught up
        stored = await store.get_game(down.id)
        assert stored is not None and stored.is_live
        assert stored.turn_deadline == clock.now + left  # the time they had left
        challenge = await ChallengeQueries(store.db).get_challenge(pending.id)
        assert challenge is not None and challenge.expires_at == pending.expires_at + 41
        # Ended between two sweeps: the rest of the time comes back at its end.
        await service.upkeep.outage_begins(outage)
        clock.advance(5)
        assert await service.upkeep.outage_ends(outage) == 5
        assert await service.upkeep.outage_ends(outage) == 0  # ended once
        clock.advance(left - 1)
        assert (await service.sweep())[0] == []
        clock.advance(2)
        assert [g.id for g in (await service.sweep())[0]] == [down.id]
    finally:
        await service.close()


async def test_an_unavailable_server_keeps_its_clocks_others_do_not(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor, db_target: str | Path
) -> None:
    service = make_service(store, clock, executor, turn_timeout=30.0)
    await service.start()
    try:
        out, other = [await member_game(service, guild=g) for g in (GUILD, GUILD + 1)]
        outage = service.upkeep.server(GUILD)
        await service.upkeep.outage_begins(outage)
        clock.advance(41)
        games, _challenges = await service.sweep()
        assert [g.id for g in games] == [other.id]
        clock.advance(3)
        assert await service.upkeep.outage_ends(outage) == 3
        stored = await store.get_game(out.id)
        assert stored is not None and stored.turn_deadline == out.turn_deadline + 44
        assert await count(db_target, "alive") == 1  # the server's key is gone
    finally:
        await service.close()


async def test_a_removal_missed_while_down_is_found_when_the_shard_is_ready(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    """READY lists GUILD + 1 but not GUILD: GUILD removed the bot while it was stopped."""
    service = make_service(store, clock, executor)
    await service.start()
    try:
        gone = await member_game(service)
        kept = await member_game(service, CAROL, DAVE, guild=GUILD + 1)
        assert (await service.upkeep.prune(None))[1] == []
        removed = await service.upkeep.reconcile(Shards(1, (0,)), [GUILD + 1])
        assert [(guild, [g.id for g in games]) for guild, games, _c in removed] == [
            (GUILD, [gone.id])
        ]
        ended = await store.get_game(gone.id)
        assert ended is not None and ended.result is Result.ABANDONED
        assert await service.upkeep.reconcile(Shards(1, (0,)), [GUILD + 1]) == []  # noted once
        clock.advance(31 * DAY)
        assert (await service.upkeep.prune(None))[1] == []  # not ready: nothing erased
        clock.advance(PRUNE_EVERY)
        assert (await service.upkeep.prune(lambda guild: guild == GUILD + 1))[1] == [GUILD]
        assert await store.get_game(gone.id) is None
        assert await store.get_game(kept.id) is not None
    finally:
        await service.close()


async def test_removed_from_a_server_its_games_end_unrated_and_its_data_goes_later(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor, db_target: str | Path
) -> None:
    service = make_service(store, clock, executor, server_games=1, games_per_member=1)
    await service.start()
    try:
        game = await member_game(service)
        game = (await service.move(game.id, ALICE, 4, 0)).game
        pending = await service.challenges.create(GUILD, CHANNEL + 1, CAROL, DAVE)
        other = await member_game(service, CAROL, DAVE, guild=GUILD + 1)

        ended, withdrawn = await service.upkeep.guild_left(GUILD)
        assert [(g.id, g.status, g.result) for g in ended] == [
            (game.id, GameStatus.ABANDONED, Result.ABANDONED)
        ]
        assert [c.id for c in withdrawn] == [pending.id]
        assert (await StatsQueries(store.db).player(GUILD, ALICE)).rated_games == 0
        # Its slot and seats are free (a cap of one game per server and per member).
        await service.start_bot_game(GUILD, CHANNEL, ALICE, level="easy")

        # Back within LEFT_SERVER_DAYS: kept. Left again, and gone for good: erased.
        clock.advance(29 * DAY)
        assert await service.upkeep.guild_back(GUILD)
        await service.upkeep.guild_left(GUILD)
        clock.advance(29 * DAY)
        assert (await service.upkeep.prune(lambda _guild: False))[1] == []
        clock.advance(2 * DAY)
        _pruned, erased = await service.upkeep.prune(lambda _guild: False)
        assert erased == [GUILD]
        assert await store.get_game(game.id) is None
        assert await ChallengeQueries(store.db).get_challenge(pending.id) is None
        assert (await store.get_game(other.id)) is not None  # another server's
        assert await count(db_target, "left_guilds") == 0
    finally:
        await service.close()


async def test_a_server_the_bot_is_in_again_is_not_erased(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor, db_target: str | Path
) -> None:
    service = make_service(store, clock, executor)
    game = await member_game(service)
    await service.upkeep.guild_left(GUILD)
    clock.advance(31 * DAY)
    _pruned, erased = await service.upkeep.prune(lambda guild: guild == GUILD)
    assert erased == [] and await store.get_game(game.id) is not None
    assert await count(db_target, "left_guilds") == 0


async def test_a_deleted_board_or_channel_ends_its_games_unrated(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    service = make_service(store, clock, executor)
    game = await member_game(service)
    await service.set_game_message(game.id, 900)
    game = (await service.move(game.id, ALICE, 4, 0)).game
    assert await service.upkeep.message_gone(GUILD, CHANNEL, 901) == ([], [])  # not ours
    ended, _ = await service.upkeep.message_gone(GUILD, CHANNEL, 900)
    assert [(g.id, g.result, g.winner_id) for g in ended] == [(game.id, Result.ABANDONED, None)]
    stored = await store.get_game(game.id)
    assert stored is not None and stored.message_id is None  # nothing redraws it

    challenge = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    await service.challenges.set_message(challenge, 902)
    _, withdrawn = await service.upkeep.message_gone(GUILD, CHANNEL, 902)
    assert [(c.id, c.status) for c in withdrawn] == [(challenge.id, ChallengeStatus.WITHDRAWN)]

    game = await member_game(service, CAROL, DAVE)
    standing = StandingPing(game.id, CHANNEL, 903, CAROL, 0, False)
    assert (await PingStore(store.db).claim(standing, functools.partial(outranks, standing))).won
    pending = await service.challenges.create(GUILD, CHANNEL + 1, ALICE, BOB)
    games, challenges = await service.upkeep.channel_gone(GUILD, CHANNEL)
    assert [g.id for g in games] == [game.id] and challenges == []
    assert await PingStore(store.db).get(game.id) is None  # forgotten, never sent to
    assert (
        await ChallengeQueries(store.db).get_challenge(pending.id)
    ).status is ChallengeStatus.PENDING  # type: ignore[union-attr]
    assert (await StatsQueries(store.db).player(GUILD, CAROL)).rated_games == 0


@pytest.mark.parametrize("history_days", [None, 60.0])
async def test_pruning_in_batches(
    store: Store,
    clock: FakeClock,
    executor: concurrent.futures.Executor,
    db_target: str | Path,
    history_days: float | None,
) -> None:
    service = make_service(
        store, clock, executor, challenge_cooldown=60.0, history_days=history_days
    )
    old = await member_game(service)  # rated, with a review and a ping left behind
    standing = StandingPing(old.id, CHANNEL, 800, ALICE, 0, False)
    assert (await PingStore(store.db).claim(standing, functools.partial(outranks, standing))).won
    await play_out(service, old, [4, 0])  # both moved: rated
    await service.endings.forfeit(old.id, BOB)
    await ReviewStore(store.db).put(old.id, "{}")
    declined = await service.challenges.create(GUILD, CHANNEL, CAROL, DAVE)
    await service.challenges.decline(declined.id, DAVE)
    stale = await member_game(service, DAVE, CAROL, channel=CHANNEL + 1)
    await CallOffStore(store.db).propose(stale.id, DAVE, 0, clock.now)
    await service.move(stale.id, DAVE, 4, 0)  # the proposal no longer holds
    assert await count(db_target, "cooldowns") == 3

    clock.advance(61 * DAY)
    recent = await play_out(
        service, await member_game(service, ALICE, BOB, channel=CHANNEL + 2), [4, 0]
    )
    await service.endings.forfeit(recent.id, ALICE)
    await ReviewStore(store.db).put(recent.id, "{}")
    fresh = await service.challenges.create(GUILD, CHANNEL + 3, ALICE, CAROL)
    await service.challenges.decline(fresh.id, CAROL)

    pruned, _ = await service.upkeep.prune(lambda _guild: True)
    # Carol's and Dave's cooldowns ran out (Alice's towards Bob was claimed again), and
    # the three challenges that ended 61 days ago go; the recent one stays.
    assert pruned.cooldowns == 2 and pruned.challenges == 3
    assert pruned.reviews == 1 and pruned.pings == 1 and pruned.calloffs == 1
    assert pruned.games == (1 if history_days else 0)
    assert await ReviewStore(store.db).get(recent.id) == "{}"
    assert (await ChallengeQueries(store.db).get_challenge(fresh.id)) is not None
    assert (await store.get_game(old.id) is None) == bool(history_days)
    assert await CallOffStore(store.db).get(stale.id) is None
    # Ratings and records stay whatever happens to the games.
    assert (await StatsQueries(store.db).player(GUILD, ALICE)).rated_games == 2
    assert (await StatsQueries(store.db).player(GUILD, BOB)).rated_games == 2
    # Once per PRUNE_EVERY.
    assert (await service.upkeep.prune(lambda _guild: True))[0].total == 0
    clock.advance(PRUNE_EVERY)
    assert (await service.upkeep.prune(lambda _guild: True))[0].total == 2  # two cooldowns


async def test_each_pruning_statement_reads_an_index_or_a_small_table(db_path: Path) -> None:
    """No round of pruning reads what grows without bound (games, challenges, cooldowns)
    beyond its batch: SQLite's query plans. Reviews are read from the head of the table
    in id order (SCAN r, stopped by its LIMIT)."""
    await (await Store.open(db_path)).close()
    grows = {"games", "challenges", "cooldowns", "g"}
    with sqlite3.connect(db_path) as conn:
        for name in ("COOLDOWNS", "CHALLENGES", "PINGS", "CALLOFFS", "REVIEWS", "GAMES"):
            statement = getattr(upkeep_sql, f"PRUNE_{name}")
            values = {"before": 1.0, "batch": 5} if ":batch" in statement else (1.0, 5)
            plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}", values)]
            scanned = {step.split()[1] for step in plan if step.startswith("SCAN ")}
            assert not scanned & grows, (name, plan)
    conn.close()


def test_the_hosts_settings_for_data_kept() -> None:
    base = {"DISCORD_TOKEN": "x.y.z"}
    default = Settings.from_env(base)
    assert (default[LEFT_SERVER_DAYS], default[HISTORY_DAYS]) == (30.0, None)
    chosen = Settings.from_env(base | {"LEFT_SERVER_DAYS": "7", "HISTORY_DAYS": "365"})
    assert (chosen[LEFT_SERVER_DAYS], chosen[HISTORY_DAYS]) == (7.0, 365.0)
    assert Settings.from_env(base | {"HISTORY_DAYS": "0"})[HISTORY_DAYS] is None  # off
    for name, raw in (("LEFT_SERVER_DAYS", "0"), ("HISTORY_DAYS", "-1"), ("HISTORY_DAYS", "x")):
        with pytest.raises(SettingsError, match=name):
            Settings.from_env(base | {name: raw})


async def test_a_click_on_another_message_than_the_recorded_one_changes_nothing(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    service = make_service(store, clock, executor)
    challenge = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB, first=First.ME)
    await service.challenges.set_message(challenge, 500)
    with pytest.raises(ChallengeNotFound):
        await service.challenges.accept(challenge.id, BOB, GUILD, message_id=501)
    with pytest.raises(ChallengeNotFound):
        await service.challenges.decline(challenge.id, BOB, GUILD, message_id=501)
    game = await service.challenges.accept(challenge.id, BOB, GUILD, message_id=500)
    assert game.message_id == 500  # the challenge's message became the board
    with pytest.raises(GameNotFound):
        await service.move(game.id, ALICE, 4, 0, guild_id=GUILD, message_id=501)
    with pytest.raises(GameNotFound):
        await service.endings.forfeit(game.id, ALICE, guild_id=GUILD, message_id=501)
    assert await store.get_game(game.id) == game
    played = (await service.move(game.id, ALICE, 4, 0, guild_id=GUILD, message_id=500)).game
    assert played.move_no == 1
    # A click from no message at all (there is always one from Discord) goes by the id.
    assert ((await service.move(game.id, BOB, 0, 1, guild_id=GUILD)).game).move_no == 2
