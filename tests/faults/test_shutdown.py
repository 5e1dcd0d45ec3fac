"""SIGTERM while users play: the bot finishes the answers in flight, loses nothing, and
exits with status 0 within a few seconds (its AI processes too)."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import time

from tests.e2e.helpers import assert_log_clean

from .arena import (
    Arena,
    Table,
    acknowledged_moves,
    check_database,
    moves_of,
)


async def test_sigterm_during_play_loses_nothing(arena: Arena) -> None:
    async with arena.bot():
        pass  # sync the commands once
    tables = [
        Table(arena, arena.channel(), (arena.member(),), level, "3x3", i)
        for i, level in enumerate(("easy", "hard", "impossible"))
    ]
    tables.append(Table(arena, arena.channel(), (arena.member(),), "hard", "5x5", 7))
    tables.append(Table(arena, arena.channel(), (arena.member(), arena.member()), rng_seed=8))
    for round_no in range(3):
        bot = await arena.start_bot()
        known = set(arena.emu.interactions)
        drivers = [asyncio.create_task(table.play()) for table in tables]
        await asyncio.sleep(1.0 + round_no * 0.3)
        started, signalled = time.monotonic(), arena.emu.clock.now()
        bot.process.send_signal(signal.SIGTERM)
        code = await bot.stop(within=10)
        took = time.monotonic() - started
        for driver in drivers:
            driver.cancel()
        await asyncio.gather(*drivers, return_exceptions=True)
        assert code == 0, bot.log()
        assert took < 8, f"shutdown took {took:.1f} s"
        assert_log_clean(bot.log())
        games = check_database(arena.database)
        accepted = acknowledged_moves(arena.emu)
        assert accepted
        for (game_id, move_no), cell in accepted.items():
            assert moves_of(games[game_id])[move_no] == cell
        # Clicks being answered at the signal got their answer. (Those racing the very
        # moment the connection closes may go unanswered: Discord shows them as failed.)
        lost = [
            handle
            for handle in arena.emu.failed_interactions
            if handle.id not in known and handle.created_at < signalled - 0.5
        ]
        assert not lost, lost


async def test_a_click_that_cannot_finish_in_the_grace_is_answered(arena: Arena) -> None:
    """The slow case, made certain: the test holds SQLite's write lock, so a click's move
    cannot be written however fast the machine is. After SHUTDOWN_GRACE_SECONDS the bot
    must answer that click itself (ephemerally: "restarting, look again") before it closes
    its connection, then exit cleanly once the lock is free."""
    async with arena.bot():
        pass  # sync the commands once
    bot = await arena.start_bot(SHUTDOWN_GRACE_SECONDS="1")
    player, channel = arena.member(), arena.channel()
    started = await arena.emu.run_command(
        player, channel, "tictactoe", difficulty="easy", first="me"
    )
    board = (await started.response()).message
    assert board is not None
    holder = sqlite3.connect(arena.database, isolation_level=None, timeout=10)
    try:
        holder.execute("BEGIN IMMEDIATE")  # what a long write elsewhere would do
        click = await arena.emu.click(player, board, row=1, col=1)
        await asyncio.sleep(1.0)  # the bot has the click and waits for the lock
        assert click.callback_type is None, "answered before the lock was free?"
        bot.process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(8):
            answer = await click.response()
        assert not answer.failed and answer.ephemeral, answer
        assert answer.message is not None and "restarting" in answer.message.text
        assert "couldn't finish" in answer.message.text  # it was in flight, not refused
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert await bot.stop(within=20) == 0, bot.log()
    assert_log_clean(bot.log())
    assert not arena.emu.failed_interactions
    check_database(arena.database)
