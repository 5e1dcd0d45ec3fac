"""Helpers of the service and storage tests: ids, limits, a fake clock, the service as the
fixtures build it (conftest.py), games started and played out.

The ``store`` fixture (and so ``service``) is a real SQLite file, and again a real
PostgreSQL database (tests/conftest.py): every test using it runs on both engines unless
it reads the SQLite file itself (``db_path``) or is marked ``sqlite_only``.
"""

from __future__ import annotations

import concurrent.futures
import random
from collections.abc import Awaitable
from pathlib import Path

from bot.app import GameService
from bot.config import ServiceConfig
from bot.games.queries import Store
from bot.games.service import Moved
from bot.models import First, Game
from bot.tunables import BY_NAME, Values

GUILD = 1000
CHANNEL = 2000
ALICE = 11
BOB = 22
CAROL = 33


ROOMY_CONFIG = {
    "games_per_member": 50,
    "server_games": 100,
    "challenge_cooldown": 0.0,
    "challenge_reach": 20,
    # The first move gets the whole turn clock, and a decline or a game left without a
    # move sets no wait (test_fair_play.py tests them, with the bot's defaults).
    "first_move_timeout": 86_400.0,
    "decline_cooldown": 0.0,
    "abandon_cooldown": 0.0,
}
DEFAULT_LIMITS = {name: BY_NAME[name].default for name in ROOMY_CONFIG}
"""The bot's own defaults, for tests of the limits (make_service is roomy otherwise)."""


class FakeClock:
    """A clock the test moves by hand: timeouts without sleeping."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def sqlite_file(tmp_path: Path) -> Path:
    return tmp_path / "data" / "tictactoe.db"


def make_service(
    store: Store,
    clock: FakeClock,
    executor: concurrent.futures.Executor,
    **config: object,
) -> GameService:
    # Every reply through the (test's) pool unless a test asks for inline 3x3 replies,
    # so that tests can hold, fail and count the pool's jobs on the small boards too.
    config.setdefault("inline_cells", 0)
    # Most tests here play several games per member and challenge each other again at
    # once: the limits and cooldowns are off unless a test sets them (test_fair_play.py
    # runs with the bot's defaults).
    for name, value in ROOMY_CONFIG.items():
        config.setdefault(name, value)
    numbers = {name: config.pop(name) for name in list(config) if name in BY_NAME}
    return GameService(
        store,
        ServiceConfig(Values(**numbers), **config),  # type: ignore[arg-type]
        clock=clock,
        executor=executor,
        rng=random.Random(1234),
    )


async def member_game(
    service: GameService,
    x: int = ALICE,
    o: int = BOB,
    *,
    guild: int = GUILD,
    channel: int = CHANNEL,
    **settings: int,
) -> Game:
    """A started game between two members with ``x`` moving first."""
    challenge = await service.challenges.create(guild, channel, x, o, first=First.ME, **settings)
    return await service.challenges.accept(challenge.id, o)


async def game_of(moved: Awaitable[Moved]) -> Game:
    """The game after a move (``GameService.move``), for races gathered as games."""
    return (await moved).game


async def play_out(service: GameService, game: Game, cells: list[int]) -> Game:
    """Play ``cells`` in order, each by whoever is on move."""
    for cell in cells:
        player = game.current_player_id
        assert player is not None
        game = (await service.move(game.id, player, cell, game.move_no)).game
    return game
