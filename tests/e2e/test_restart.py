"""Restarts, end to end: the bot is SIGKILLed mid-game and started again on the same database
(a SQLite file, then a PostgreSQL database).

The messages and their buttons stay on Discord's side (the emulator), so after the restart
the very same custom_ids must carry on the games; time the bot was down is nobody's loss:
a turn that would have run out meanwhile goes on, with at least what was left of it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from bot.app import GameService
from bot.config import ServiceConfig
from bot.games.queries import Store
from bot.launcher import BotProcess, ai_paused, answered_thinking
from bot.models import Result
from bot.tunables import TURN_TIMEOUT
from discord_emulator import CallbackType, Emulator, Permission, User
from tests.overdue import outage, run_out
from tests.pgtools import read_rows

from .helpers import (
    WAIT,
    Arena,
    assert_log_clean,
    check_final,
    edited_through_channel,
    eventually,
    refusal,
    snapshot,
)


async def kill(bot: BotProcess) -> None:
    """SIGKILL: no shutdown code runs, as when the host dies."""
    code = await bot.stop(signal.SIGKILL, within=WAIT)
    assert code == -signal.SIGKILL, code


async def test_games_survive_sigkill_and_the_outage_costs_nobody_their_turn(
    tmp_path: Path, database_env: dict[str, str]
) -> None:
    async with Emulator(wait_timeout=WAIT) as emu:
        guild = emu.add_guild("Arcade")
        database = tmp_path / "data" / "tictactoe.db"

        def launch(**env: str) -> AbstractAsyncContextManager[BotProcess]:
            return BotProcess.launch(
                emu,
                tmp_path,
                dev_guild=guild,
                database=database,
                ready_timeout=3 * WAIT,
                **database_env,
                **env,
            )

        # First life, with the shortest turns a server may choose (30 s): games whose
        # turns would run out while it is down.
        async with launch(TURN_TIMEOUT_SECONDS="30") as bot:
            arena = Arena(emu, guild, bot, tmp_path)
            alice, bob, carol = arena.member("alice"), arena.member("bob"), arena.member("carol")
            dave, erin = arena.member("dave"), arena.member("erin")
            late = await arena.start_bot_game(alice, arena.channel(), difficulty="easy", first="me")
            await arena.move(alice, late, 4)
            rated = await arena.member_game(dave, erin, arena.channel())
            await arena.move(dave, rated, 4)
            await kill(bot)
        first_life = bot.log()
        # Their turns had 5 s left, and the outage lasts 5.5 s, longer than that: nobody
        # could play. Both moved on in the database instead of waiting (25 s, then 5.5 s):
        # the turns ran out 0.5 s ago, and the bot was last alive 5.5 s earlier than it was.
        target = database_env.get("DATABASE_URL", database)
        for board in (late, rated):
            await run_out(target, board.id, ago=0.5)
        await outage(target, 5.5)

        # Second life: the clocks moved on by the outage; the players move normally.
        async with launch() as bot:
            arena.bot = bot
            assert "Turn clocks and challenges moved on by" in bot.log(), bot.log()
            await asyncio.sleep(1.5)  # a sweep or more: nothing is settled
            for board in (late, rated):
                assert arena.board(board).live, arena.current(board).text
            await arena.move(erin, rated, 0)
            await arena.move(alice, late, arena.board(late).free()[0])
            state = arena.board(rated)
            assert state.live and state.marks[0] == "O" and state.marks[4] == "X"
            assert f"<@{dave.id}>, your move" in state.text, state.text
            await arena.forfeit(erin, rated)
            await arena.command(alice, arena.current(late).channel, "tictactoe-stop")

            versus_bot = await arena.start_bot_game(
                alice, arena.channel(), difficulty="hard", first="me"
            )
            await arena.move(alice, versus_bot, 0)
            members = await arena.member_game(bob, carol, arena.channel())
            await arena.move(bob, members, 4)
            before_restart = snapshot(arena.current(members))
            await arena.move(carol, members, 0)
            custom_ids = [b.custom_id for b in arena.current(versus_bot).buttons()]
            await kill(bot)
        second_life = bot.log()[len(first_life) :]

        # Third life: the same messages, the same buttons, the games go on.
        async with launch() as bot:
            arena.bot = bot
            assert [b.custom_id for b in arena.current(versus_bot).buttons()] == custom_ids
            final = await arena.play_out(alice, versus_bot, "X")
            check_final(final, 3)

            text = await refusal(await arena.click(bob, before_restart, row=2, col=2))
            assert "board changed" in text
            for user, cell in ((bob, 2), (carol, 1), (bob, 6)):
                await arena.move(user, members, cell)
            state = arena.board(members)
            assert check_final(state, 3) == "X" and state.success_cells() == {2, 4, 6}
            assert f"<@{bob.id}> won" in state.text
            stats = await arena.command(carol, arena.current(members).channel, "tictactoe-stats")
            assert stats.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE
            assert "Versus members: 0W 1L 0D" in stats.message.text, stats.message.text
            assert await bot.stop() == 0, bot.log()
        third_life = bot.log()[len(first_life) + len(second_life) :]

        assert not emu.failed_interactions, bot.log()
        assert not emu.unrouted, emu.unrouted
        for log in (first_life, second_life, third_life):
            assert_log_clean(log)


async def test_a_bot_reply_cut_short_by_sigkill_is_made_at_restart(
    tmp_path: Path, database_env: dict[str, str]
) -> None:
    async with Emulator(wait_timeout=WAIT) as emu:
        guild = emu.add_guild("Arcade")

        def launch() -> AbstractAsyncContextManager[BotProcess]:
            return BotProcess.launch(
                emu, tmp_path, dev_guild=guild, ready_timeout=3 * WAIT, **database_env
            )

        async with launch() as bot:
            arena = Arena(emu, guild, bot, tmp_path)
            alice, channel = arena.member("alice"), arena.channel()
            board = await arena.start_bot_game(
                alice, channel, size="5x5", win_length=4, difficulty="hard", first="me"
            )
            state = arena.board(board, 5)
            # On 5x5 at hard the bot's reply is a search in its worker, stopped here: the
            # click is answered with the move saved and shown, and the bot dies while the
            # reply is owed (its worker with it).
            with ai_paused(bot) as workers:
                answer = await arena.click(alice, state.message, custom_id=state.cell_id(0))
                assert answered_thinking(answer.handle), answer.handle.callback_data
                await asyncio.sleep(0.5)
                assert answer.handle.original_edits == 0, "the reply was not cut short"
                await kill(bot)
                for worker in workers:
                    os.kill(worker, signal.SIGKILL)
        first_life = bot.log()

        async with launch() as bot:
            arena.bot = bot
            await eventually(
                emu,
                lambda: arena.board(board, 5).move_no == 2,
                "the restarted bot makes its owed reply and shows it",
                WAIT,
            )
            state = arena.board(board, 5)
            assert state.live and state.marks[0] == "X" and state.marks.count("O") == 1
            assert f"<@{alice.id}>, your move" in state.text
            assert edited_through_channel(emu, board)
            await arena.move(alice, board, state.free()[0], side=5, thinking=True)
            assert arena.board(board, 5).move_no == 4
            await arena.forfeit(alice, board, side=5)
            assert await bot.stop() == 0, bot.log()

        assert not emu.failed_interactions, bot.log()
        assert not emu.unrouted, emu.unrouted
        assert_log_clean(first_life)
        assert_log_clean(bot.log()[len(first_life) :])


async def test_a_board_settled_by_a_process_that_died_before_redrawing_it_is_redrawn(
    tmp_path: Path, database_env: dict[str, str]
) -> None:
    """A process that settles a timed-out game and dies before editing its message leaves
    the board showing a live game. The game's turn notification still stands (it goes after
    the redraw), so the restarted process's sweep finds it, redraws the board, then deletes
    the notification."""
    async with Emulator(wait_timeout=WAIT) as emu:
        guild = emu.add_guild("Arcade")
        database = tmp_path / "data" / "tictactoe.db"

        def launch() -> AbstractAsyncContextManager[BotProcess]:
            # Bob is pinged once his turn waited a second.
            return BotProcess.launch(
                emu,
                tmp_path,
                dev_guild=guild,
                database=database,
                PING_GRACE_SECONDS="1",
                **database_env,
            )

        async with launch() as bot:
            arena = Arena(emu, guild, bot, tmp_path)
            alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
            board = await arena.member_game(alice, bob, channel)
            await arena.move(alice, board, 4)
            ping = await arena.turn_ping(bob, channel, after=0)
            target = database_env.get("DATABASE_URL", database)
            for _ in range(100):  # the notification is recorded right after it is sent
                if await read_rows(target, "SELECT message_id FROM turn_pings") == [(ping.id,)]:
                    break
                await asyncio.sleep(0.05)
            await kill(bot)

        # What the dead process did before dying: the sweep's settling write, and no more.
        store = await Store.open(target)
        try:
            late = ServiceConfig()[TURN_TIMEOUT] + 60
            service = GameService(store, clock=lambda: time.time() + late)
            settled, _ = await service.sweep()
            # Bob never moved: his time-out is an abort (unrated, no result).
            assert [game.result for game in settled] == [Result.ABANDONED]
        finally:
            await store.close()
        assert arena.board(board).live, "the message still shows the game going on"

        async with launch() as bot:
            arena.bot = bot
            await emu.wait_for(lambda: "Aborted" in arena.current(board).text)
            assert "Aborted before both players moved" in arena.board(board).text
            await emu.wait_for(lambda: arena.current(ping).deleted)
            assert await bot.stop() == 0
        assert_log_clean(bot.log())


async def test_a_board_or_channel_deleted_while_the_bot_was_down_ends_its_game_unrated(
    tmp_path: Path, database_env: dict[str, str]
) -> None:
    """The bot is killed while it thinks on two 5x5 games; meanwhile a moderator deletes
    one's board and the other's channel, events it never gets. At the restart it makes
    the owed moves and redraws them: Discord answers Unknown Message and Unknown Channel,
    and each game ends unrated; nothing more is sent to the deleted channel."""
    async with Emulator(wait_timeout=WAIT) as emu:
        guild = emu.add_guild("Arcade")
        database = tmp_path / "data" / "tictactoe.db"

        def launch() -> AbstractAsyncContextManager[BotProcess]:
            return BotProcess.launch(
                emu, tmp_path, dev_guild=guild, database=database, ready_timeout=3 * WAIT,
                **database_env,
            )  # fmt: skip

        async with launch() as bot:
            arena = Arena(emu, guild, bot, tmp_path)
            alice, bob = arena.member("alice"), arena.member("bob")
            moderator = arena.member("mod", permissions=Permission.MANAGE_MESSAGES)
            boards = []
            for player in (alice, bob):
                board = await arena.start_bot_game(
                    player,
                    arena.channel(),
                    size="5x5",
                    win_length=4,
                    difficulty="hard",
                    first="me",
                )
                boards.append(board)
            # On 5x5 at hard each reply is a search in the worker, stopped here: the bot
            # dies with both replies owed.
            with ai_paused(bot) as workers:
                for player, board in zip((alice, bob), boards, strict=True):
                    state = arena.board(board, 5)
                    answer = await arena.click(player, state.message, custom_id=state.cell_id(0))
                    assert answered_thinking(answer.handle), answer.handle.callback_data
                await kill(bot)
                for worker in workers:
                    os.kill(worker, signal.SIGKILL)
        first_life = bot.log()
        emu.delete_message(moderator, arena.current(boards[0]))
        gone = boards[1].channel
        emu.delete_channel(gone)
        since = len(emu.requests)

        async with launch() as bot:
            arena.bot = bot
            target = database_env.get("DATABASE_URL", database)
            query = "SELECT status, result, rated, message_id FROM games ORDER BY id"
            for _ in range(200):
                rows = await read_rows(target, query)
                if all(status == "abandoned" for status, *_ in rows):
                    break
                await asyncio.sleep(0.05)
            assert [row[:3] for row in rows] == [("abandoned", "abandoned", 0)] * 2, rows
            assert rows[0][3] is None, "the deleted board is forgotten: nothing redraws it"
            await asyncio.sleep(1.5)  # a sweep or more
            prefix = f"/channels/{gone.id}/"
            tried = [r for r in emu.requests[since:] if r.path.startswith(prefix)]
            assert len(tried) == 1 and tried[0].status == 404, tried
            await can_play(arena, alice, bob)
            assert await bot.stop() == 0, bot.log()
        assert_log_clean(first_life)
        assert_log_clean(bot.log()[len(first_life) :])


async def can_play(arena: Arena, *players: User) -> None:
    """Each player holds no seat: a new game starts (and is stopped)."""
    for player in players:
        channel = arena.channel()
        board = await arena.start_bot_game(player, channel, difficulty="easy", first="me")
        assert arena.board(board).live
        await arena.command(player, channel, "tictactoe-stop")
