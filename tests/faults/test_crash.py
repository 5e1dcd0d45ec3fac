"""Process death: the bot is SIGKILLed at random moments while users keep clicking.

After every kill: ``PRAGMA integrity_check`` passes, no game row is half-applied, every
click the users saw accepted (a type 7 update showing their mark) is in the database at
its move number, no game lost or rewrote a move it had, and the bot's AI worker and
forkserver are gone. After the last restart every game goes on from its stored state and
every board shows it.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time

import pytest

from tests.e2e.helpers import eventually

from .arena import (
    Arena,
    Table,
    acknowledged_moves,
    check_database,
    db_games,
    moves_of,
    shows,
    wait_for_no_processes,
)

LEVELS = ("easy", "medium", "hard", "impossible")


def tables(arena: Arena) -> list[Table]:
    """Four channels of games against the bot (every level) and two of member games."""
    made = [
        Table(arena, arena.channel(), (arena.member(),), level=level, rng_seed=i)
        for i, level in enumerate(LEVELS)
    ]
    made += [
        Table(arena, arena.channel(), (arena.member(), arena.member()), rng_seed=10 + i)
        for i in range(2)
    ]
    return made


def check_after_crash(
    arena: Arena, history: dict[int, tuple[int, ...]]
) -> tuple[int, dict[int, tuple[int, ...]]]:
    """The checks after a kill; returns how many accepted clicks were checked, and the moves."""
    games = check_database(arena.database)
    accepted = acknowledged_moves(arena.emu)
    for (game_id, move_no), cell in accepted.items():
        assert game_id in games, f"game {game_id} of an accepted click is not stored"
        moves = moves_of(games[game_id])
        assert len(moves) > move_no and moves[move_no] == cell, (
            f"accepted click lost: game {game_id} move {move_no} cell {cell}; stored {moves}"
        )
    now = {game_id: moves_of(row) for game_id, row in games.items()}
    for game_id, before in history.items():
        assert now[game_id][: len(before)] == before, f"game {game_id} lost or changed moves"
    return len(accepted), now


async def crash_loop(arena: Arena, kills: int, seed: int) -> None:
    rng = random.Random(seed)
    marker = f"DATABASE_PATH={arena.workdir}"
    env = {"CHALLENGE_TIMEOUT_SECONDS": "15"}  # the shortest a server may choose
    async with arena.bot(**env):
        pass  # the first start syncs the commands; later ones just connect
    playing = tables(arena)
    history: dict[int, tuple[int, ...]] = {}
    checked = 0
    for life in range(kills):
        bot = await arena.start_bot(**env)
        drivers = [asyncio.create_task(table.play()) for table in playing]
        await asyncio.sleep(rng.uniform(0.3, 1.0))
        await bot.stop(signal.SIGKILL)
        for driver in drivers:
            driver.cancel()
        await asyncio.gather(*drivers, return_exceptions=True)
        assert bot.returncode == -signal.SIGKILL
        survivors = await asyncio.to_thread(wait_for_no_processes, marker, 5.0)
        assert not survivors, f"life {life}: left behind {survivors}"
        checked, history = check_after_crash(arena, history)
    assert checked >= 5 * kills, f"only {checked} accepted clicks in {kills} lives"

    # The last life: every game goes on from where the database says it is.
    async with arena.process(**env) as bot:
        before = [table.clicks for table in playing]
        drivers = [asyncio.create_task(table.play(pause=0.05)) for table in playing]
        started = time.monotonic()
        try:
            await eventually(
                arena.emu,
                lambda: all(t.clicks >= b + 3 for t, b in zip(playing, before, strict=True)),
                "every table played on after the last restart: "
                + "; ".join(t.describe() for t in playing)
                + bot.log()[-3000:],
                within=30,
            )
        finally:
            for driver in drivers:
                driver.cancel()
            await asyncio.gather(*drivers, return_exceptions=True)
        assert time.monotonic() - started < 30
        await asyncio.sleep(0.5)  # answers in flight land
        games = db_games(arena.database)
        for table in playing:
            message = arena.emu.message(table.board)  # type: ignore[arg-type]
            if message is None or not message.buttons():
                continue
            game_id = int(message.buttons()[0].custom_id.split(":")[2])  # type: ignore[union-attr]
            if "Accept" in [b.label for b in message.buttons()]:
                continue  # a challenge, not a board
            await eventually(
                arena.emu,
                lambda m=message, g=game_id: shows(m, db_games(arena.database)[g]),
                f"board of game {game_id} shows the stored game",
            )
        check_after_crash(arena, history)
        assert len(games) >= kills
    assert bot.returncode == 0, bot.log()


async def test_sigkill_at_random_moments_loses_nothing(arena: Arena) -> None:
    await crash_loop(arena, kills=20, seed=6)


@pytest.mark.slow
async def test_sigkill_many_times(arena: Arena) -> None:
    await crash_loop(arena, kills=100, seed=66)
