"""The real bot on shards: both of two in one process, then one each in two processes.

One server on each shard. One process with SHARD_IDS=0-1: each server's clicks arrive on
its own shard's session and are answered, its sweep settles a timed-out turn in each, and
the commands are synced once. The emulator reports ``max_concurrency`` 2, so the bot
identifies its two shards at once instead of 5 s apart.

Two processes on one SQLite file, SHARD_IDS=0 and SHARD_IDS=1: only shard 0's syncs, and
each sweeps only its own server, so when shard 1's process dies its server's timed-out
turn waits for it to come back (its players' clicks would go nowhere meanwhile anyway).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from pathlib import Path

from bot.launcher import BotProcess, full_collections_held_back
from bot.ui.shards import IDENTIFY_SPACING
from discord_emulator import Emulator
from tests.overdue import run_out

from .helpers import WAIT, Arena, assert_log_clean, check_final, edited_through_channel, eventually

TURN = 30.0
"""The shortest turn clock a server may choose; the tests run turns out in the database
(``tests.overdue``) instead of waiting."""


async def identified(emu: Emulator, shard_id: int) -> float:
    """When (loop time) shard ``shard_id`` of two got a live session."""
    await emu.wait_for_shards(2, [shard_id])
    return asyncio.get_running_loop().time()


async def test_one_process_runs_both_shards(tmp_path: Path) -> None:
    with full_collections_held_back():
        async with Emulator(wait_timeout=WAIT, max_concurrency=2) as emu:
            guilds = [emu.add_guild(f"shard-{n}", shard=(n, 2)) for n in (0, 1)]
            sessions = [asyncio.create_task(identified(emu, n)) for n in (0, 1)]
            env = {"TURN_TIMEOUT_SECONDS": f"{TURN:g}"}
            async with BotProcess.launch(emu, tmp_path, shards=(2, [0, 1]), **env) as bot:
                zero, one = await asyncio.gather(*sessions)
                assert abs(one - zero) < IDENTIFY_SPACING / 2, "the second shard waited"
                live = sorted(s.shard or [] for s in emu.gateway.live_sessions())
                assert live == [[0, 2], [1, 2]]

                boards = []
                for guild in guilds:
                    arena = Arena(emu, guild, bot, tmp_path)
                    alice, channel = arena.member("alice"), arena.channel()
                    board = await arena.start_bot_game(alice, channel, first="me")
                    await arena.move(alice, board, 4)
                    await run_out(tmp_path / "data" / "tictactoe.db", board.id)
                    boards.append((arena, alice, board))
                for n, guild in enumerate(guilds):
                    (session,) = emu.gateway.live_sessions(n)
                    seen = {d.get("guild_id") for d in session.dispatched("INTERACTION_CREATE")}
                    assert seen == {str(guild.id)}, (n, seen)

                for arena, alice, board in boards:
                    await eventually(
                        emu,
                        lambda arena=arena, board=board: not arena.board(board).live,
                        "the sweep settles the timed-out turn",
                        3.0,
                    )
                    state = arena.board(board)
                    assert f"<@{alice.id}> ran out of time" in state.text, state.text
                    check_final(state, 3)
                    assert edited_through_channel(emu, board)

                # Synced once, globally (no DEV_GUILD_ID here).
                assert emu.command_syncs == 1
                assert {c["name"] for c in await emu.wait_for_commands()} >= {"tictactoe"}
            code = await bot.stop()
            log = bot.log()
            assert code == 0, f"the bot did not stop cleanly ({code}):\n{log}"
            assert not emu.unrouted, emu.unrouted
            assert not [h for h in emu.interactions.values() if h.failed], log
            assert_log_clean(log)


async def test_each_process_sweeps_its_own_shards_server(tmp_path: Path) -> None:
    with full_collections_held_back():
        async with Emulator(wait_timeout=WAIT) as emu:
            guilds = [emu.add_guild(f"shard-{n}", shard=(n, 2)) for n in (0, 1)]
            env = {"TURN_TIMEOUT_SECONDS": f"{TURN:g}"}

            def launch(shard: int) -> contextlib.AbstractAsyncContextManager[BotProcess]:
                log = f"shard-{shard}.log"
                return BotProcess.launch(emu, tmp_path, shards=(2, [shard]), log_name=log, **env)

            async with launch(0) as zero:
                async with launch(1) as one:
                    games = []
                    for guild, bot in zip(guilds, (zero, one), strict=True):
                        arena = Arena(emu, guild, bot, tmp_path)
                        alice, bob, channel = arena.member("a"), arena.member("b"), arena.channel()
                        board = await arena.member_game(alice, bob, channel)
                        for user, cell in ((alice, 4), (bob, 0), (alice, 8)):  # both moved
                            await arena.move(user, board, cell)  # Bob will run out of time
                        games.append((arena, bob, board))
                    assert emu.command_syncs == 1, "only the process of shard 0 syncs"
                    code = await one.stop(signal.SIGKILL, within=WAIT)
                    assert code == -signal.SIGKILL, code
                # Both turns run out. The other one by more than shard 1's process will be
                # down, so that its restart (which moves live turns on by the time it was
                # down) still finds it overdue.
                database = tmp_path / "data" / "tictactoe.db"
                await run_out(database, games[0][2].id)
                await run_out(database, games[1][2].id, ago=600)

                (arena, bob, board), (other, other_bob, other_board) = games
                await eventually(emu, lambda: not arena.board(board).live, "shard 0's timeout", 5)
                assert f"<@{bob.id}> ran out of time" in arena.board(board).text
                # Shard 0's process sweeps again after the other turn ran out too: not its server.
                await asyncio.sleep(1.5)
                assert other.board(other_board).live, "only shard 1's process settles its games"
                assert not edited_through_channel(emu, other_board)

                async with launch(1) as again:
                    await eventually(
                        emu,
                        lambda: not other.board(other_board).live,
                        "the restarted process's first sweep settles its server's timeout",
                        5,
                    )
                    state = other.board(other_board)
                    assert f"<@{other_bob.id}> ran out of time" in state.text, state.text
                    check_final(state, 3)
                    assert edited_through_channel(emu, other_board)
                assert emu.command_syncs == 1
            for bot in (zero, one, again):
                assert bot.returncode in (0, -signal.SIGKILL), bot.log()
                assert_log_clean(bot.log())
            assert (zero.returncode, again.returncode) == (0, 0)
            assert not emu.unrouted, emu.unrouted
            assert not [h for h in emu.interactions.values() if h.failed]
