"""The gateway connection drops mid-game; the bot reconnects and the next clicks work."""

from __future__ import annotations

from discord_emulator import CallbackType
from tests.e2e.helpers import assert_log_clean, eventually

from .arena import Arena, db_games, free_cells, mark_shown, shows


async def test_clicks_work_after_dropped_connections(arena: Arena) -> None:
    emu = arena.emu
    alice, bob = arena.member(), arena.member()
    channel = arena.channel()
    async with arena.bot() as bot:
        handle = await emu.run_command(alice, channel, "tictactoe", opponent=bob, first="me")
        challenge = (await handle.response()).message
        assert challenge is not None
        await (await emu.click(bob, challenge, label="Accept")).response()
        players = [alice, bob]

        async def move() -> None:
            board = emu.message(challenge.id)
            assert board is not None
            user = players[len([b for b in board.buttons() if mark_shown(b.emoji)]) % 2]
            click = await emu.click(user, board, custom_id=free_cells(board)[0].custom_id)
            assert (await click.response()).type == CallbackType.UPDATE_MESSAGE, bot.log()

        await move()
        identifies, resumes = emu.gateway.identifies, emu.gateway.resumes

        emu.drop_connection(resumable=True)
        await eventually(emu, lambda: emu.gateway.resumes > resumes, "the bot resumed")
        await emu.wait_for_ready()
        await move()

        emu.drop_connection(resumable=False)
        await eventually(emu, lambda: emu.gateway.identifies > identifies, "a new session")
        await emu.wait_for_ready()
        await move()

        # A click sent while the connection is down is replayed on RESUME and answered.
        async with emu.disconnected(resumable=True):
            board = emu.message(challenge.id)
            assert board is not None
            user = players[len([b for b in board.buttons() if mark_shown(b.emoji)]) % 2]
            click = await emu.click(user, board, custom_id=free_cells(board)[0].custom_id)
        assert (await click.response()).type == CallbackType.UPDATE_MESSAGE
        await move()

        game_id = int(str(free_cells(emu.message(challenge.id))[0].custom_id).split(":")[2])  # type: ignore[arg-type]
        row = db_games(arena.database)[game_id]
        assert row["move_no"] == 5
        assert shows(emu.message(challenge.id), row)  # type: ignore[arg-type]
        assert not emu.failed_interactions
    assert bot.returncode == 0
    assert_log_clean(bot.log())
