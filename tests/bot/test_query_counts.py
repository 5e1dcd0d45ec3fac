"""What a use case costs the database: the statements each of the Discord layer's calls
runs (BEGIN and COMMIT aside), counted on SQLite. A rule moved between the layers must
not add a query to a click or a sweep; these are the counts when the service took the
rules over from the store and the Discord layer (one fewer for /tictactoe against the
bot and for a rematch, whose checks the Discord layer no longer repeats)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

import pytest

from bot.app import GameService
from bot.games.queries import Store

from .helpers import ALICE, BOB, CHANNEL, GUILD, FakeClock, game_of, member_game, play_out

T = TypeVar("T")
pytestmark = pytest.mark.sqlite_only  # traces SQLite's statements

FRAMING = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")


class Counter:
    def __init__(self) -> None:
        self.statements: list[str] = []

    async def __call__(self, call: Awaitable[T]) -> tuple[T, int]:
        self.statements.clear()
        result = await call
        await asyncio.sleep(0)  # the trace callback runs on the database's thread
        return result, sum(not text.startswith(FRAMING) for text in self.statements)


async def test_each_use_case_keeps_its_query_count(
    service: GameService, store: Store, clock: FakeClock
) -> None:
    """(The tests' config sends 3 x 3 replies through the pool: a bot move is a second
    write, as on larger boards.)"""
    counter = Counter()
    await store.trace(counter.statements.append)
    try:
        # Starting reads whether the member left a game without a move lately (walkaways).
        game, n = await counter(service.start_bot_game(GUILD, CHANNEL, ALICE, first="me"))
        assert n <= 9
        await service.set_game_message(game.id, 5)
        game, n = await counter(game_of(service.move(game.id, ALICE, 4, game.move_no)))
        assert n <= 3
        game, n = await counter(service.endings.forfeit(game.id, ALICE, GUILD))
        assert n <= 9
        _, n = await counter(service.rematch(game.id, ALICE, GUILD))
        assert n <= 12
        _, n = await counter(service.stats.leaderboard(GUILD, 9))
        assert n == 2, "the count and the page, in one read"
        _, n = await counter(service.start_bot_game(GUILD, CHANNEL + 1, BOB, k=None))
        assert n <= 10
        clock.advance(100)
        _, n = await counter(service.sweep())
        assert n <= 7  # one of them drops dead interaction tokens (bot/reach.py)
        _, n = await counter(service.pings.due())
        assert n == 1
    finally:
        await store.trace(None)


async def test_a_member_move_reads_its_game_and_ping_once_and_writes_once(
    service: GameService, store: Store
) -> None:
    """A click on a member game is one read (the game with its standing ping, which the
    Discord layer then tidies without reading again) and one guarded write."""
    game = await member_game(service, ALICE, BOB)
    counter = Counter()
    await store.trace(counter.statements.append)
    try:
        moved, n = await counter(service.move(game.id, ALICE, 4, game.move_no))
        assert n == 2 and moved.game.move_no == 1 and moved.stale_ping is None
    finally:
        await store.trace(None)


async def test_a_member_rematch_reads_the_old_game_once(service: GameService, store: Store) -> None:
    """The rematch's checks take the game it already read (its first-rematch exemption
    included), instead of reading it again."""
    game = await member_game(service, ALICE, BOB)
    game = await play_out(service, game, [0, 3, 1, 4, 2])
    counter = Counter()
    await store.trace(counter.statements.append)
    try:
        _, n = await counter(service.rematch(game.id, BOB, GUILD))
        assert n <= 14  # (one is the walkaways' read: did Bob leave a game without a move?)
        reads = [s for s in counter.statements if s.startswith("SELECT id, guild_id")]
        assert sum(f"WHERE id = {game.id}" in s for s in reads) == 1
    finally:
        await store.trace(None)
