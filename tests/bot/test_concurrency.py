"""Races: simultaneous clicks, a click against a forfeit, stop or sweep, two services on one file.

In every race exactly one action lands, the others get a typed error, and the stored
game stays consistent (its moves replay legally and move_no == len(moves)).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import pytest

from bot.app import GameService
from bot.errors import GameError, GameNotFound, GameOver, NotYourTurn, RatedStop, StaleBoard
from bot.games.queries import Store
from bot.models import First, Game, GameStatus, Result
from bot.stats.queries import StatsQueries
from engine import Board
from tests.pgtools import read_rows

from .helpers import (
    ALICE,
    BOB,
    CAROL,
    CHANNEL,
    GUILD,
    FakeClock,
    game_of,
    make_service,
    member_game,
    play_out,
)


async def race(*calls: Awaitable[Any]) -> tuple[list[Any], list[BaseException]]:
    """Run ``calls`` at once; (results, errors). Anything but a GameError fails the test."""
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    for error in errors:
        if not isinstance(error, GameError):
            raise error
    return [o for o in outcomes if not isinstance(o, BaseException)], errors


def assert_consistent(game: Game) -> None:
    board = Board.from_moves(game.moves, game.width, game.height, game.k)  # replays legally
    assert game.move_no == len(game.moves)
    assert board.is_over == (game.result in (Result.WIN, Result.DRAW))
    if game.is_bot_game and game.status is GameStatus.ACTIVE:
        assert game.player_of(board.turn) is not None  # the human is on move
    if game.status is GameStatus.BOT_TO_MOVE:
        assert game.player_of(board.turn) is None


async def consistent_file(target: str | Path) -> None:
    """Every game in the database, read directly: move_no matches the moves, which replay."""
    rows = await read_rows(target, "SELECT moves, move_no, width, height, k FROM games")
    for moves, move_no, width, height, k in rows:
        cells = [int(c) for c in moves.split(",")] if moves else []
        assert len(cells) == move_no
        Board.from_moves(cells, width, height, k)


async def test_double_clicks_and_out_of_turn_clicks(service: GameService) -> None:
    game = await member_game(service, ALICE, BOB)
    calls = [game_of(service.move(game.id, ALICE, 4, 0)) for _ in range(10)]  # double clicks
    calls += [game_of(service.move(game.id, ALICE, cell, 0)) for cell in (0, 1, 2, 3, 5, 6, 7, 8)]
    calls += [game_of(service.move(game.id, BOB, cell, 0)) for cell in range(6)]  # not Bob's turn
    random.Random(1).shuffle(calls)
    results, errors = await race(*calls)
    assert len(results) == 1
    assert all(isinstance(e, StaleBoard | NotYourTurn) for e in errors)
    stored = await service.get_game(game.id)
    assert stored.move_no == 1 and stored == results[0]
    assert_consistent(stored)


async def test_two_players_racing(service: GameService) -> None:
    game = await member_game(service, ALICE, BOB)
    game = (await service.move(game.id, ALICE, 4, 0)).game
    calls = [
        game_of(service.move(game.id, player, cell, 1))
        for player in (ALICE, BOB)
        for cell in range(9)
    ]
    calls += [game_of(service.move(game.id, BOB, 0, 1)) for _ in range(5)]
    random.Random(2).shuffle(calls)
    results, errors = await race(*calls)
    assert len(results) == 1 and results[0].moves[0] == 4 and results[0].move_no == 2
    assert len(errors) == len(calls) - 1
    assert_consistent(await service.get_game(game.id))


@pytest.mark.parametrize("seed", range(6))
async def test_moves_racing_forfeit_and_stop(service: GameService, seed: int) -> None:
    game = await member_game(service, ALICE, BOB)
    game = (await service.move(game.id, ALICE, 4, 0)).game
    calls: list[Awaitable[Any]] = [
        game_of(service.move(game.id, BOB, c, 1)) for c in (0, 1, 2, 3) * 5
    ]
    calls.append(service.endings.forfeit(game.id, BOB, move_no=1))
    calls.append(service.endings.forfeit(game.id, ALICE, move_no=1))
    calls.append(service.endings.stop(GUILD, CHANNEL, ALICE, is_moderator=False, move_no=1))
    calls.append(service.endings.stop(GUILD, CHANNEL, CAROL, is_moderator=True, move_no=1))
    random.Random(seed).shuffle(calls)
    results, errors = await race(*calls)
    assert len(results) == 1, results
    # A stop that looks for the channel's game after another action ended it finds none;
    # a player's stop of this rated, begun game is refused (they must forfeit instead).
    allowed = StaleBoard | GameOver | GameNotFound | RatedStop
    assert all(isinstance(e, allowed) for e in errors), errors
    stored = await service.get_game(game.id)
    assert stored == results[0]
    assert_consistent(stored)
    # The result was counted at most once, and only if the game ended rated.
    bob = await service.stats.player_stats(GUILD, BOB)
    assert bob.versus_members.games == (1 if stored.result is Result.FORFEIT else 0)


async def test_moves_racing_a_sweep_at_the_deadline(service: GameService, clock: FakeClock) -> None:
    game = await play_out(service, await member_game(service, ALICE, BOB), [4, 0, 1])
    clock.advance(300)  # exactly at Bob's deadline
    calls: list[Awaitable[Any]] = [
        game_of(service.move(game.id, BOB, c, 3)) for c in (2, 3, 5, 6) for _ in range(5)
    ]
    calls += [service.sweep() for _ in range(3)]
    random.Random(3).shuffle(calls)
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    plays = [o for o in outcomes if not isinstance(o, tuple)]
    sweeps = [o for o in outcomes if isinstance(o, tuple)]
    assert all(isinstance(o, GameOver) for o in plays)
    settled = [g for changed, _ in sweeps for g in changed]
    assert len(settled) <= 1  # by a sweep, or by the first late click
    stored = await service.get_game(game.id)
    assert (stored.result, stored.winner_id, stored.move_no) == (Result.TIMEOUT, ALICE, 3)
    assert (await service.stats.player_stats(GUILD, BOB)).versus_members.losses == 1  # once
    assert (await service.stats.player_stats(GUILD, ALICE)).versus_members.wins == 1


async def test_just_before_the_deadline_a_move_beats_the_sweep(
    service: GameService, clock: FakeClock
) -> None:
    game = await member_game(service, ALICE, BOB)
    clock.advance(299.999)
    results, _ = await race(
        *(game_of(service.move(game.id, ALICE, c, 0)) for c in range(9)), service.sweep()
    )
    moved = [r for r in results if isinstance(r, Game)]
    assert len(moved) == 1 and [r for r in results if isinstance(r, tuple)] == [([], [])]
    clock.advance(0.001)  # Alice's deadline passed, but she moved: Bob has 300 s now
    assert (await service.sweep())[0] == []


async def test_bot_game_double_clicks(service: GameService) -> None:
    game = await service.start_bot_game(GUILD, CHANNEL, ALICE, level="hard", first=First.ME)
    for _ in range(3):
        if not game.is_live:
            break
        free = [c for c in range(9) if c not in game.moves]
        calls = [
            game_of(service.move(game.id, ALICE, c, game.move_no)) for c in free for _ in range(3)
        ]
        results, errors = await race(*calls)
        assert len(results) == 1
        assert all(isinstance(e, StaleBoard | NotYourTurn) for e in errors)
        game = await service.get_game(game.id)
        assert game == results[0]
        assert game.status is not GameStatus.BOT_TO_MOVE
        assert_consistent(game)


async def test_the_sql_guard_alone_stops_double_moves(service: GameService) -> None:
    # Without the per-game asyncio lock only the conditional UPDATE is left.
    service._lock = lambda key: asyncio.Lock()  # type: ignore[method-assign]
    game = await member_game(service, ALICE, BOB)
    results, errors = await race(
        *(game_of(service.move(game.id, ALICE, c, 0)) for c in range(9) for _ in range(3))
    )
    assert len(results) == 1 and len(errors) == 26
    assert_consistent(await service.get_game(game.id))


@pytest.fixture
async def two_services(
    db_target: str | Path, clock: FakeClock, executor: concurrent.futures.Executor
) -> AsyncIterator[tuple[GameService, GameService]]:
    """Two services, each with its own Store (connection, or pool) on the same database."""
    stores = [await Store.open(db_target), await Store.open(db_target)]
    services = [make_service(store, clock, executor) for store in stores]
    for service in services:
        await service.start()
    yield services[0], services[1]
    for service, store in zip(services, stores, strict=True):
        await service.close()
        await store.close()


async def test_two_instances_racing_on_one_file(
    two_services: tuple[GameService, GameService], db_target: str | Path
) -> None:
    one, two = two_services
    game = await member_game(one, ALICE, BOB)
    for move_no in range(5):
        current = await two.get_game(game.id)
        if not current.is_live:
            break
        player = current.current_player_id
        free = [c for c in range(9) if c not in current.moves]
        calls = [
            game_of(svc.move(game.id, player, c, move_no)) for c in free for svc in (one, two, two)
        ]
        random.Random(move_no).shuffle(calls)
        results, errors = await race(*calls)
        assert len(results) == 1, (move_no, results)
        assert all(isinstance(e, StaleBoard | GameOver) for e in errors)
    final = await one.get_game(game.id)
    assert_consistent(final)
    await consistent_file(db_target)


async def test_two_instances_accepting_and_starting(
    two_services: tuple[GameService, GameService], db_target: str | Path
) -> None:
    one, two = two_services
    challenge = await one.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    results, errors = await race(
        *(svc.challenges.accept(challenge.id, BOB) for svc in (one, two) * 5)
    )
    assert len(results) == 1
    game = results[0]
    # Bot games in the same channel from both instances: the channel index says no.
    results, errors = await race(
        *(svc.start_bot_game(GUILD, CHANNEL, CAROL, level="easy") for svc in (one, two) * 3)
    )
    assert results == [] and len(errors) == 6
    # Ending it from both sides at once: one forfeit lands.
    results, errors = await race(
        one.endings.forfeit(game.id, ALICE, move_no=0),
        two.endings.forfeit(game.id, BOB, move_no=0),
        two.endings.stop(GUILD, CHANNEL, ALICE, is_moderator=False, move_no=0),
    )
    # A stop that looks for the channel's game after a forfeit ended it finds none.
    assert len(results) == 1
    assert all(isinstance(e, GameOver | StaleBoard | GameNotFound) for e in errors), errors
    await consistent_file(db_target)


async def test_two_instances_bot_game(two_services: tuple[GameService, GameService]) -> None:
    one, two = two_services
    game = await one.start_bot_game(GUILD, CHANNEL, ALICE, level="medium", first=First.ME)
    while game.is_live:
        free = [c for c in range(9) if c not in game.moves]
        calls = [
            game_of(svc.move(game.id, ALICE, c, game.move_no)) for c in free for svc in (one, two)
        ]
        results, _ = await race(*calls)
        assert len(results) == 1
        game = await two.get_game(game.id)
        assert game.status is not GameStatus.BOT_TO_MOVE
        assert_consistent(game)


async def test_a_hundred_games_at_once(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    """Fifty member games and fifty bot games of one server, every move at once: one
    server may fill the whole search pool here (its share is test_pool.py's)."""
    service = make_service(store, clock, executor, server_pool_percent=100)
    await service.start()
    try:
        await _hundred_games(service)
    finally:
        await service.close()


async def _hundred_games(service: GameService) -> None:
    games = [await member_game(service, 1000 + i, 2000 + i, channel=i) for i in range(50)] + [
        await service.start_bot_game(GUILD, 100 + i, 3000 + i, level="easy") for i in range(50)
    ]
    rng = random.Random(4)

    async def play_through(game: Game) -> Game:
        while game.is_live:
            player = game.current_player_id
            cell = rng.choice([c for c in range(9) if c not in game.moves])
            game = (await service.move(game.id, player, cell, game.move_no)).game
        return game

    finished = await asyncio.gather(*(play_through(g) for g in games))
    assert all(g.status is GameStatus.FINISHED for g in finished)
    for game in finished:
        assert_consistent(game)
        assert await service.get_game(game.id) == game
    pages = [await service.stats.leaderboard(GUILD, page=p, per_page=50) for p in (1, 2)]
    assert pages[0].total_players == 100
    member_games = sum(1 for g in finished if not g.is_bot_game)
    assert sum(e.record.games for page in pages for e in page.entries) == 2 * member_games


async def test_two_instances_ending_two_games_of_one_member(
    two_services: tuple[GameService, GameService], store: Store
) -> None:
    """Alice wins two games at the same moment, one through each service: both results
    count. Each end reads her row and writes it back whole, so without the server's lock
    (PostgreSQL reads committed rows, it does not hold them) one result would be lost."""
    one, two = two_services
    for round_ in range(4):
        games = []
        for opponent, channel in ((BOB, 10 * round_ + 1), (CAROL, 10 * round_ + 2)):
            game = await member_game(one, ALICE, opponent, channel=channel)
            games.append(await play_out(one, game, [0, 3, 1, 4]))
        results, errors = await race(
            game_of(one.move(games[0].id, ALICE, 2, 4)), game_of(two.move(games[1].id, ALICE, 2, 4))
        )
        assert errors == [] and all(g.winner_id == ALICE for g in results)
        alice = await StatsQueries(store.db).player(GUILD, ALICE)
        assert (alice.record.wins, alice.rated_games, alice.current_streak) == (
            2 * (round_ + 1),
            2 * (round_ + 1),
            2 * (round_ + 1),
        )
