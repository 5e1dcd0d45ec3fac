"""The real bot against the Discord emulator: one game from command to SIGTERM, and the
global sync at start-up, with ``python -m bot`` (signals and the ``--sync`` flag are
the process's); a challenge's life and a big board with the bot in the test's loop."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from bot.launcher import BotProcess, answered_thinking
from discord_emulator import ButtonStyle, CallbackType, Emulator, Message, Permission
from tests.e2e.helpers import EMPTY, shown
from tests.e2e.inprocess import BotInProcess
from tests.overdue import run_out


def board_cells(message: Message, side: int = 3) -> list:
    grid = message.button_grid()
    return [button for row in grid[:side] for button in row]


async def test_a_game_against_the_bot_from_command_to_sigterm(tmp_path: Path) -> None:
    async with Emulator() as emu:
        guild = emu.add_guild("Arcade")
        channel = emu.add_text_channel(guild, "games")
        alice, bob = emu.add_user("alice"), emu.add_user("bob")
        emu.add_member(guild, alice)
        emu.add_member(guild, bob)

        async with BotProcess.launch(emu, tmp_path, dev_guild=guild) as bot:
            handle = await emu.run_command(
                alice, channel, "tictactoe", difficulty="easy", first="me"
            )
            response = await handle.response()
            assert not response.failed and response.type == CallbackType.CHANNEL_MESSAGE_WITH_SOURCE
            board = response.message
            assert board is not None and board.components_v2 and not board.ephemeral
            assert f"<@{alice.id}>, your move" in board.text
            # A board pings nobody (Alice just asked for it), though its text mentions her.
            allowed = board.allowed_mentions or {}
            assert not allowed.get("users") and not allowed.get("parse")
            assert not allowed.get("roles")
            assert board.pings.nobody and board.mentions.nobody

            # Someone else's click is refused, privately, and changes nothing.
            refused = await (await emu.click(bob, board, row=1, col=1)).response()
            assert refused.type == CallbackType.CHANNEL_MESSAGE_WITH_SOURCE
            assert refused.ephemeral and "isn't your game" in refused.message.text
            assert all(shown(cell) == EMPTY for cell in board_cells(emu.message(board.id)))

            for _ in range(5):  # X needs at most five moves on 3x3
                current = emu.message(board.id)
                free = [c for c in board_cells(current) if shown(c) == EMPTY and not c.disabled]
                if not free:
                    break
                click = await emu.click(alice, current, custom_id=free[0].custom_id)
                answer = await click.response()
                assert answer.type == CallbackType.UPDATE_MESSAGE, bot.log()
            final = emu.message(board.id)
            cells = board_cells(final)
            # Marks at full colour (never disabled); only the empty cells are disabled.
            assert all(cell.disabled is (shown(cell) == EMPTY) for cell in cells)
            assert any(word in final.text for word in ("won", "draw"))
            if "won" in final.text:
                assert sum(cell.style == ButtonStyle.SUCCESS for cell in cells) == 3
            controls = [b.label for b in final.button_grid()[3]]
            assert controls == ["Rematch", "Review"]

            review = await (await emu.click(alice, final, label="Review")).response()
            text = review.message.text
            assert review.ephemeral and "🟦 X " in text and "```" in text, text

            assert not emu.failed_interactions
            assert not emu.unrouted

            # SIGTERM while a click is being answered: the answer still goes out.
            held = emu.delay_requests("POST", "/interactions/*/callback", 1.0)
            click = await emu.click(alice, final, label="Rematch")
            await emu.wait_for(lambda: held.hits >= 1)
            started = time.monotonic()
            bot.process.send_signal(signal.SIGTERM)
            rematch = await click.response()
            assert rematch.type == CallbackType.CHANNEL_MESSAGE_WITH_SOURCE, bot.log()
            assert rematch.message is not None and rematch.message.id != board.id
            assert "your move" in rematch.message.text or "My move" in rematch.message.text
            code = await bot.stop()
            assert code == 0, bot.log()
            assert time.monotonic() - started < 8
            log = bot.log()
            assert "Traceback" not in log, log
            assert emu.bot_token not in log


async def test_challenge_accept_refusals_stop_and_expiry(tmp_path: Path) -> None:
    async with Emulator() as emu:
        # The bot gets only View Channels, the one permission the README asks for; the
        # members may talk in the channel (where they may not, games are refused).
        guild = emu.add_guild(
            "Arcade",
            bot_permissions=Permission.VIEW_CHANNEL,
            everyone_permissions=Permission.VIEW_CHANNEL
            | Permission.USE_APPLICATION_COMMANDS
            | Permission.SEND_MESSAGES,
        )
        channel = emu.add_text_channel(guild, "games")
        alice, bob, carol = emu.add_user("alice"), emu.add_user("bob"), emu.add_user("carol")
        for member in (alice, bob, carol):
            emu.add_member(guild, member)

        async with BotInProcess.launch(
            emu, tmp_path, dev_guild=guild, CHALLENGE_TIMEOUT_SECONDS="15"
        ) as bot:
            handle = await emu.run_command(
                alice, channel, "tictactoe", opponent=bob, first="me", difficulty="hard"
            )
            difficult = (await handle.response()).message
            assert difficult is not None and difficult.ephemeral
            assert "A difficulty is for games against me" in difficult.text, difficult.text
            handle = await emu.run_command(alice, channel, "tictactoe", opponent=bob, first="me")
            challenge = (await handle.response()).message
            assert challenge is not None and not challenge.ephemeral
            assert [int(u) for u in (challenge.allowed_mentions or {}).get("users", [])] == [bob.id]

            refused = await (await emu.click(alice, challenge, label="Accept")).response()
            assert refused.ephemeral and "Only the challenged member" in refused.message.text

            accepted = await (await emu.click(bob, challenge, label="Accept")).response()
            assert accepted.type == CallbackType.UPDATE_MESSAGE, bot.log()
            board = emu.message(challenge.id)
            assert f"<@{alice.id}>, your move" in board.text

            early = await (await emu.click(bob, board, row=0, col=0)).response()
            assert early.ephemeral and "not your turn" in early.message.text
            seen = board.button_grid()[0][0].custom_id  # as bob saw it before alice moved
            moved = await (await emu.click(alice, board, row=1, col=1)).response()
            assert moved.type == CallbackType.UPDATE_MESSAGE
            stale = await (
                await emu.send_raw_interaction(
                    bob,
                    channel,
                    type=3,
                    data={"custom_id": seen, "component_type": 2},
                    message=emu.message(board.id),
                )
            ).response()
            assert stale.ephemeral and "board changed" in stale.message.text
            replied = await (await emu.click(bob, emu.message(board.id), row=0, col=0)).response()
            assert replied.type == CallbackType.UPDATE_MESSAGE

            # Both moved in a rated game: stopping it would be a loss, so bob is asked.
            stop = await (await emu.run_command(bob, channel, "tictactoe-stop")).response()
            assert stop.ephemeral and "counts as a loss" in stop.message.text
            assert [b.label for b in stop.message.buttons()] == [
                "Forfeit (counts as a loss)",
                "Propose calling it off",
                "Keep playing",
            ]
            assert "stopped" not in emu.message(board.id).text
            asked = await emu.click(bob, stop.message, label="Propose calling it off")
            assert (await asked.response()).type == CallbackType.UPDATE_MESSAGE
            (proposal,) = await asked.wait_followups(1)
            assert not proposal.ephemeral and proposal.pings.users == {alice.id}
            agreed = await (await emu.click(alice, proposal, label="Agree: call it off")).response()
            assert agreed.type == CallbackType.UPDATE_MESSAGE, bot.log()
            await emu.wait_for(lambda: "stopped" in emu.message(board.id).text)
            stopped = board_cells(emu.message(board.id))
            assert all(cell.disabled is (shown(cell) == EMPTY) for cell in stopped)
            assert "Called off" in emu.message(proposal.id).text

            # Alice challenged bob a moment ago: the cooldown stops a second challenge.
            again = await (
                await emu.run_command(alice, channel, "tictactoe", opponent=bob)
            ).response()
            assert again.ephemeral and "again <t:" in again.message.text
            handle = await emu.run_command(bob, channel, "tictactoe", opponent=alice)
            declined = (await handle.response()).message
            answer = await (await emu.click(alice, declined, label="Decline")).response()
            assert answer.type == CallbackType.UPDATE_MESSAGE
            assert "declined" in emu.message(declined.id).text
            assert all(button.disabled for button in emu.message(declined.id).buttons())

            # Nobody answers this one: the sweeper closes it through the channel.
            handle = await emu.run_command(carol, channel, "tictactoe", opponent=alice)
            waiting = (await handle.response()).message
            await run_out(tmp_path / "data" / "tictactoe.db", waiting.id)  # its 15 s pass
            await bot.sweep()
            await emu.wait_for(lambda: "expired" in emu.message(waiting.id).text)
            assert all(button.disabled for button in emu.message(waiting.id).buttons())

            board = (
                await (await emu.run_command(alice, channel, "tictactoe-leaderboard")).response()
            ).message
            assert board is not None and "Leaderboard" in board.text and board.pings.nobody
            assert [b.label for b in board.buttons()] == ["◀ Previous", "Next ▶"]
            stats = await (
                await emu.run_command(bob, channel, "tictactoe-stats", member=alice)
            ).response()
            assert stats.message is not None and f"Stats for <@{alice.id}>" in stats.message.text

            # Discord hides the commands in DMs; one arriving anyway still gets an answer.
            (command,) = [
                c for c in emu.commands.list(guild.id) if c["name"] == "tictactoe-leaderboard"
            ]
            data = {"id": str(command["id"]), "name": "tictactoe-leaderboard", "type": 1}
            dm = await emu.send_raw_interaction(alice, emu.dm_channel(alice), type=2, data=data)
            answer = await dm.response()
            assert answer.ephemeral and "server that added me" in answer.message.text

            assert not emu.failed_interactions and not emu.unrouted
            assert await bot.stop() == 0


async def test_big_board_against_the_bot_defers(tmp_path: Path) -> None:
    async with Emulator() as emu:
        guild = emu.add_guild("Arcade")
        channel = emu.add_text_channel(guild, "games")
        alice = emu.add_user("alice")
        emu.add_member(guild, alice)
        async with BotInProcess.launch(emu, tmp_path, dev_guild=guild) as bot:
            handle = await emu.run_command(
                alice, channel, "tictactoe", size="5x5", first="opponent", difficulty="hard"
            )
            assert (
                await handle.response()
            ).type == CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE
            board = await handle.edited_original()
            assert board.components_v2 and not board.loading
            cells = board_cells(board, side=5)
            assert len(cells) == 25 and sum(shown(c) != EMPTY for c in cells) == 1
            assert [b.label for b in board.button_grid()[5]] == ["Forfeit"]

            free = next(c for c in cells if shown(c) == EMPTY)
            click = await emu.click(alice, board, custom_id=free.custom_id)
            await click.response()
            assert answered_thinking(click), bot.log()
            await click.edited_original()
            marks = [shown(c) for c in board_cells(emu.message(board.id), side=5)]
            assert sum(mark != EMPTY for mark in marks) == 3, bot.log()

            asked = await emu.click(alice, board, label="Forfeit")
            assert (await asked.response()).type == CallbackType.DEFERRED_UPDATE_MESSAGE
            (question,) = await asked.wait_followups(1)
            assert question.ephemeral and "It counts as a loss." in question.text
            confirm = await emu.click(alice, question, label="Forfeit (counts as a loss)")
            assert (await confirm.response()).type == CallbackType.UPDATE_MESSAGE
            await emu.wait_for(lambda: "forfeited" in emu.message(board.id).text)
            assert not emu.failed_interactions and not emu.unrouted
            assert await bot.stop() == 0


async def test_global_commands_are_synced_only_when_changed(tmp_path: Path) -> None:
    async with Emulator() as emu:
        emu.add_guild("Arcade")
        database = tmp_path / "shared.db"
        async with BotProcess.launch(emu, tmp_path, database=database):
            pass
        assert emu.command_syncs == 1
        assert "tictactoe" in {c["name"] for c in emu.commands.list(None)}
        async with BotProcess.launch(emu, tmp_path, database=database) as bot:
            assert await bot.stop(signal.SIGINT) == 0  # Ctrl-C stops it cleanly too
        assert emu.command_syncs == 1  # unchanged: no second sync
        async with BotProcess.launch(emu, tmp_path, "--sync", database=database):
            pass
        assert emu.command_syncs == 2  # the owner asked for it
