"""Fixtures of the emulator's own tests: an emulator, and a discord.py bot logged into it
(``arena``); the bot and its helpers are in tests/emulator/helpers.py."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from discord_emulator import Emulator
from tests.emulator.helpers import (
    Arena,
    EmuBot,
    build_world,
    running,
)


@pytest.fixture
async def emu() -> AsyncIterator[Emulator]:
    async with Emulator() as emulator:
        yield emulator


@pytest.fixture
async def arena(emu: Emulator) -> AsyncIterator[Arena]:
    world = build_world(emu)
    bot = EmuBot()
    async with running(emu, bot):
        await emu.wait_for_commands("play", "board")
        yield Arena(emu=emu, bot=bot, **world)
    assert emu.unrouted == [], emu.unrouted
