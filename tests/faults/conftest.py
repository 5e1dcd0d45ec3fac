"""Fixtures of the fault tests: a bot process per test against the emulator (``arena``),
and no process of a test left behind; the helpers are in tests/faults/arena.py."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.launcher import full_collections_held_back
from discord_emulator import Emulator
from tests.faults.arena import (
    Arena,
    wait_for_no_processes,
)


@pytest.fixture
async def arena(tmp_path: Path) -> AsyncIterator[Arena]:
    with full_collections_held_back():
        async with Emulator(wait_timeout=15.0) as emu:
            guild = emu.add_guild("Arcade")
            yield Arena(emu, guild, tmp_path, tmp_path / "data" / "tictactoe.db")


@pytest.fixture(autouse=True)
def no_orphans(tmp_path: Path) -> Iterator[None]:
    """After the test: no process of it (bot, forkserver, AI worker) is left running."""
    yield
    survivors = wait_for_no_processes(f"DATABASE_PATH={tmp_path}")
    for pid in survivors:  # don't let one failure leak into the next tests
        with contextlib.suppress(OSError):
            os.kill(pid, 9)
    assert not survivors, f"processes outlived the test: {survivors}"
