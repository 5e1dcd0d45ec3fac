"""Fixtures every suite shares: one real PostgreSQL server for the whole session.

The server comes from the ``pgserver`` wheel (PostgreSQL 16 in a package, installed by the
test extra), started once in a temporary folder and listening only on a unix socket.
Each test that asks for ``pg_url`` gets the same migrated database emptied (every table's
rows deleted and identities restarted: about 2 ms, against 20-50 ms for TRUNCATE and more
for a database per test). Tests whose subject is the schema itself make their own
databases with ``fresh_pg_database``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.pgtools import database_url, empty_database, new_pg_database, throwaway_pg_server

PG_DATABASE = "tictactoe"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A PostgreSQL server for the session (its URI: ``.get_uri()``)."""
    pytest.importorskip("pgserver", reason="the test extra installs pgserver")
    with throwaway_pg_server("tictactoe-pg-") as server:
        server.psql(f"CREATE DATABASE {PG_DATABASE};")
        yield server


@pytest.fixture
async def pg_url(pg_server: Any) -> str:
    """The session's database, empty (migrated by the first store that opens it)."""
    url = database_url(pg_server, PG_DATABASE)
    await empty_database(url)
    return url


@pytest.fixture
def fresh_pg_database(pg_server: Any) -> Iterator[str]:
    """A new, empty database of its own (dropped afterwards): for migration tests."""
    with new_pg_database(pg_server) as url:
        yield url


@pytest.fixture
def database_env(backend: str, request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """What a ``python -m bot`` process needs in its environment to use this test's
    engine: nothing for SQLite (DATABASE_PATH), DATABASE_URL of a new database else."""
    if backend == "sqlite":
        yield {}
        return
    with new_pg_database(request.getfixturevalue("pg_server")) as url:
        yield {"DATABASE_URL": url}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests that use ``backend`` run on SQLite and on PostgreSQL, except those that
    read the SQLite file themselves (they ask for ``db_path``) or are marked
    ``sqlite_only``."""
    if "backend" not in metafunc.fixturenames:
        return
    sqlite_only = "db_path" in metafunc.fixturenames or any(
        mark.name == "sqlite_only" for mark in metafunc.definition.iter_markers()
    )
    metafunc.parametrize("backend", ["sqlite"] if sqlite_only else ["sqlite", "postgresql"])
