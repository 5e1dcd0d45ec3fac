"""Fixtures for the service and storage tests: a real database (SQLite, and again
PostgreSQL: tests/conftest.py), the service over it, a fake clock and a thread pool for
the bot's moves; their helpers are in tests/bot/helpers.py."""

from __future__ import annotations

import concurrent.futures
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.app import GameService
from bot.games.queries import Store
from tests.bot.helpers import (
    DEFAULT_LIMITS,
    FakeClock,
    make_service,
    sqlite_file,
)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(scope="session")
def executor() -> Iterator[concurrent.futures.Executor]:
    """Bot moves in threads: the same pure function the process pool runs, minus start-up."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        yield pool


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return sqlite_file(tmp_path)


@pytest.fixture
def db_target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str | Path:
    """What ``Store.open`` takes for this test's engine: a file path, or a database URL.
    (Not through ``db_path``: asking for that keeps a test to SQLite, tests/conftest.py.)"""
    if backend == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return sqlite_file(tmp_path)


@pytest.fixture
async def store(db_target: str | Path) -> AsyncIterator[Store]:
    store = await Store.open(db_target)
    yield store
    await store.close()


@pytest.fixture
async def service(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> AsyncIterator[GameService]:
    svc = make_service(store, clock, executor)
    await svc.start()
    yield svc
    await svc.close()


@pytest.fixture
async def fair(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> AsyncIterator[GameService]:
    """A service with the bot's own limits and cooldowns (``service`` is roomy)."""
    service = make_service(store, clock, executor, **DEFAULT_LIMITS)
    await service.start()
    yield service
    await service.close()
