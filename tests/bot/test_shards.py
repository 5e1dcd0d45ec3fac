"""Once-only work by shard ownership: each process sweeps, reminds and repairs only the
servers of its own shards, ``(guild_id >> 22) % count`` in its ids (Discord's routing).

The servers here are built as ``(high << 22) | low``, so each one's shard under any count
is ``high % count``, known without the formula under test. Two servers per shard of four
(``high`` = n and n + 4) also tell counts 4, 2 and 1 apart.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import re
from pathlib import Path

import pytest

from bot.challenges.queries import ChallengeQueries
from bot.db.shards import owned, owned_named, owned_names, owned_values
from bot.games.queries import Store
from bot.games.rules import is_abort
from bot.models import (
    Challenge,
    ChallengeStatus,
    First,
    Game,
    GameStatus,
    Result,
    Settlement,
    Shards,
    StandingPing,
)
from bot.pings.queries import PingStore
from bot.pings.service import outranks
from engine import Mark

from .helpers import ALICE, BOB, CHANNEL, FakeClock, make_service
from .test_storage import NOW, ROOMY
from .test_storage import new_game as stored_game

HIGHS = range(8)
"""Each server's id >> 22: servers 0-3 and 4-7 hold shards 0-3 of four."""


def server(high: int) -> int:
    return (high << 22) | (1000 + high)


def owned_highs(shards: Shards | None) -> set[int]:
    """The servers (by ``high``) that ``shards`` owns, from how their ids were built."""
    if shards is None:
        return set(HIGHS)
    return {high for high in HIGHS if high % shards.count in shards.ids}


SHARDINGS = [
    None,
    Shards(4, (0,)),
    Shards(4, (3, 1)),
    Shards(4, (0, 1, 2, 3)),
    Shards(2, (1,)),
    Shards(1, (0,)),
]


def new_game(high: int, **changes: object) -> Game:
    """test_storage's new game, in server ``high``, started 250 s ago."""
    started = {"guild_id": server(high), "created_at": NOW - 250, "updated_at": NOW - 250}
    return stored_game(**{**started, **changes})


def due_challenge(high: int) -> Challenge:
    return Challenge(
        id=0,
        guild_id=server(high),
        channel_id=CHANNEL,
        message_id=None,
        challenger_id=ALICE,
        opponent_id=BOB,
        width=3,
        height=3,
        k=3,
        first=First.ME,
        status=ChallengeStatus.PENDING,
        created_at=NOW - 60,
        expires_at=NOW - 1,
    )


@dataclasses.dataclass
class World:
    """Per server (by ``high``): the id of each kind of once-only work waiting there."""

    overdue: dict[int, int] = dataclasses.field(default_factory=dict)
    bot_to_move: dict[int, int] = dataclasses.field(default_factory=dict)
    reminder: dict[int, int] = dataclasses.field(default_factory=dict)  # a ping due
    left_behind: dict[int, int] = dataclasses.field(default_factory=dict)
    challenge: dict[int, int] = dataclasses.field(default_factory=dict)


async def populate(store: Store) -> World:
    """In every server: an overdue game, a game owing the bot's move, a game whose
    reminder is due, an ended game whose ping still stands, and an expired challenge."""
    world = World()

    async def insert(game: Game) -> Game:
        return await store.insert_game(game, exclusive=False, **ROOMY)

    for high in HIGHS:
        world.overdue[high] = (await insert(new_game(high, turn_deadline=NOW - 1))).id
        owed = new_game(
            high, o_id=None, bot_level="easy", status=GameStatus.BOT_TO_MOVE, moves=(4,)
        )
        world.bot_to_move[high] = (await insert(owed)).id
        world.reminder[high] = (await insert(new_game(high, turn_deadline=NOW + 50))).id
        game = await insert(new_game(high))
        ping = StandingPing(game.id, CHANNEL, 9000 + high, ALICE, 0, False)
        assert (await PingStore(store.db).claim(ping, functools.partial(outranks, ping))).won
        ended = dataclasses.replace(
            game,
            moves=(0, 3, 1, 4, 2),
            status=GameStatus.FINISHED,
            result=Result.WIN,
            winner_mark=Mark.X,
            winner_id=ALICE,
            turn_deadline=None,
        )
        assert await store.end_game(ended, game, lambda rows: Settlement())
        world.left_behind[high] = game.id
        challenge = await ChallengeQueries(store.db).insert_challenge(
            due_challenge(high), cooldown_until=0.0, exempt=False
        )
        world.challenge[high] = challenge.id
    return world


def ids_in(found: dict[int, int], highs: set[int]) -> set[int]:
    return {found[high] for high in highs}


@pytest.mark.parametrize("shards", SHARDINGS, ids=str)
async def test_each_once_only_query_finds_exactly_the_owned_servers(
    store: Store, shards: Shards | None
) -> None:
    world = await populate(store)
    mine = owned_highs(shards)

    assert {g.id for g in await store.overdue_games(NOW, shards)} == ids_in(world.overdue, mine)
    owed = await store.games_bot_to_move(shards)
    assert {g.id for g in owed} == ids_in(world.bot_to_move, mine)
    waiting = await PingStore(store.db).waiting(NOW, NOW - 1.0, NOW + 65.0, shards=shards)
    assert {s.game.id for s in waiting} == ids_in(world.reminder, mine)
    stale = await PingStore(store.db).stale(shards=shards)
    assert {row[0] for row in stale} == ids_in(world.left_behind, mine)

    expired = await ChallengeQueries(store.db).expire_challenges(NOW, shards)
    assert {c.id for c in expired} == ids_in(world.challenge, mine)
    assert all(c.status is ChallengeStatus.EXPIRED for c in expired)
    # The others' challenges are left pending, for their own process to expire.
    rest = await ChallengeQueries(store.db).expire_challenges(NOW)
    assert {c.id for c in rest} == ids_in(world.challenge, set(HIGHS) - mine)


async def test_the_filter_is_discords_routing_formula_on_real_snowflakes(store: Store) -> None:
    """Ids as large as Discord's (2**63 - 1 at most) and the formula Python computes."""
    shards = Shards(16, (5, 11))
    guilds = [1_200_000_000_000_000_000 + 7919 * 2**22 * i + i for i in range(64)] + [2**63 - 1]
    expected = set()
    for i, guild in enumerate(guilds):
        game = await store.insert_game(
            new_game(0, guild_id=guild, channel_id=CHANNEL + i, turn_deadline=NOW - 1),
            exclusive=False,
            **ROOMY,
        )
        if shards.owns(guild):
            expected.add(game.id)
    assert 0 < len(expected) < len(guilds)
    assert {g.id for g in await store.overdue_games(NOW, shards)} == expected


def test_the_condition_and_its_parameters() -> None:
    assert owned(None) == owned_named(None) == "" and owned_values(None) == ()
    assert owned_names(None) == {}
    assert owned(Shards(8, (6, 2)), "g.guild_id") == " AND ((g.guild_id >> 22) % ?) IN (?, ?)"
    assert owned_values(Shards(8, (6, 2))) == (8, 2, 6)
    many = Shards(100, tuple(range(0, 100, 2)))
    names = re.findall(r":(\w+)", owned_named(many))
    assert names[0] == "shard_count" and len(set(names)) == 51
    assert all(name.replace("_", "").isalpha() for name in names)
    assert owned_names(many) == {"shard_count": 100} | dict(zip(names[1:], many.ids, strict=True))


def test_shards_are_checked_and_sorted() -> None:
    assert Shards(4, (3, 0, 2)).ids == (0, 2, 3)
    for count, ids in ((0, (0,)), (2, ()), (2, (1, 1)), (2, (2,)), (2, (-1,))):
        with pytest.raises(ValueError):
            Shards(count, ids)
    shards = Shards(4, (1,))
    assert shards.owns(server(1)) and shards.owns(server(5))
    assert not shards.owns(server(0)) and not shards.owns(server(6))


async def test_two_processes_sweep_each_game_once(
    db_path: Path, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    """Two services on one database file, each with half the shards, as two processes
    would run: at start-up each completes only its own servers' owed bot moves, and each
    sweep settles, expires and reminds only its own; between them, everything once."""
    clock.now = NOW
    first = await Store.open(db_path)
    second = await Store.open(db_path)
    world = await populate(first)
    evens = make_service(first, clock, executor, shards=Shards(2, (0,)))
    odds = make_service(second, clock, executor, shards=Shards(2, (1,)))
    try:
        settled: dict[str, set[int]] = {}
        for name, service in (("evens", evens), ("odds", odds)):
            mine = owned_highs(service.config.shards)
            completed = await service.start()
            assert {g.id for g in completed} == ids_in(world.bot_to_move, mine), name
            assert all(g.status is not GameStatus.BOT_TO_MOVE for g in completed)
            games, challenges = await service.sweep()
            assert {g.id for g in games} == ids_in(world.overdue, mine), name
            # A time-out (an abort if the first move never came: rules.time_out), or an
            # abort where not both players had moved (rules.is_abort).
            assert all(
                g.result is Result.TIMEOUT or (is_abort(g) and g.result is Result.ABANDONED)
                for g in games
            )
            assert {c.id for c in challenges} == ids_in(world.challenge, mine), name
            due = await service.pings.due()
            assert {item.game.id for item in due} == ids_in(world.reminder, mine), name
            stale = await service.pings.stale()
            assert {row[0] for row in stale} == ids_in(world.left_behind, mine), name
            settled[name] = {g.id for g in games}
        assert settled["evens"].isdisjoint(settled["odds"])
        assert settled["evens"] | settled["odds"] == set(world.overdue.values())
        # Nothing is left for either, and a second sweep settles nothing twice.
        assert await first.overdue_games(NOW) == []
        assert await first.games_bot_to_move() == []
        assert await ChallengeQueries(first.db).expire_challenges(NOW) == []
        for service in (evens, odds):
            assert await service.sweep() == ([], [])
    finally:
        for service in (evens, odds):
            await service.close()
        await first.close()
        await second.close()
