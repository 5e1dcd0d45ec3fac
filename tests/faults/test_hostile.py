"""Hostile and bad input: each gets a clear ephemeral answer, the database does not change,
and the bot logs no error; nobody can be made to ping @everyone or a role; one server's
games and ratings never show up in another's answers."""

from __future__ import annotations

import asyncio
from typing import Any

from discord_emulator import CallbackType
from tests.e2e.helpers import assert_log_clean

from .arena import Arena, dump, free_cells


async def test_forged_and_invalid_input_changes_nothing(arena: Arena) -> None:
    emu = arena.emu
    alice, bob, mallory = arena.member(), arena.member(), arena.member()
    robot = emu.add_user("otherbot", bot=True)
    emu.add_member(arena.guild, robot)
    other_guild = emu.add_guild("Elsewhere")
    elsewhere = arena.channel(other_guild)
    eve = arena.member(other_guild)
    stranger_guild = emu.add_guild("Unknown to the bot", bot_member=False)
    async with arena.bot(sync=True) as bot:
        channel = arena.channel()
        handle = await emu.run_command(alice, channel, "tictactoe", opponent=bob, first="me")
        challenge = (await handle.response()).message
        assert challenge is not None
        await (await emu.click(bob, challenge, label="Accept")).response()
        board = emu.message(challenge.id)
        assert board is not None
        cell = str(free_cells(board)[0].custom_id)
        game_id = int(cell.split(":")[2])
        # A game in the other server, to forge clicks at from here.
        started = await emu.run_command(eve, elsewhere, "tictactoe", difficulty="easy", first="me")
        await started.response()
        foreign = emu.latest_message(elsewhere)
        assert foreign is not None
        foreign_cell = str(free_cells(foreign)[0].custom_id) if free_cells(foreign) else ""
        await asyncio.sleep(0.3)  # the boards' message ids are recorded after the answers
        before = dump(arena.database)

        answers: list[Any] = []

        async def expect_refusal(handle: Any, *words: str) -> None:
            response = await handle.response()
            assert not response.failed and response.ephemeral, response
            text = response.message.text
            assert "Something went wrong" not in text, text  # a clear answer, not a shrug
            assert not words or any(w in text for w in words), text
            answers.append(text)

        def raw(user: Any, custom_id: str, where: Any = channel, message: Any = board) -> Any:
            data = {"custom_id": custom_id, "component_type": 2}
            return emu.send_raw_interaction(user, where, type=3, data=data, message=message)

        # Clicks by someone who isn't playing.
        await expect_refusal(await emu.click(mallory, board, custom_id=cell), "isn't your game")
        await expect_refusal(await emu.click(mallory, board, label="Forfeit"), "isn't your game")
        # Forged custom_ids.
        forged = [
            f"ttt:cell:{game_id + 999}:0:0",  # an unknown game
            f"ttt:cell:{game_id}:42:0",  # a cell off the board
            f"ttt:cell:{game_id}:-1:0",
            f"ttt:cell:{game_id}:1e3:0",
            f"ttt:cell:0{game_id}:0:0",
            f"ttt:cell:{game_id}:0:0:0",
            "ttt:cell:" + "9" * 80,  # too long a number
            "x" * 100,
            "ttt:forfeit:" + "1" * 19,
            f"ttt:quit:{game_id}:0:99999999999",  # an answer to a question, on the board
            f"ttt:quit:{game_id}",  # an older version's, without an expiry
            f"ttt:keep:{game_id}",
            "ttt:accept:0",
            "ttt:lb:-1",
        ]
        for custom_id in forged:
            await expect_refusal(await raw(alice, custom_id))
        if foreign_cell:  # another server's game, clicked from here
            await expect_refusal(await raw(alice, foreign_cell))
        # Commands that make no sense.
        for options, words in (
            ({"size": "3x3", "win_length": 4}, ("doesn't fit",)),
            ({"opponent": alice}, ("yourself",)),
            ({"opponent": robot}, ("Bots",)),
        ):
            await expect_refusal(
                await emu.run_command(alice, arena.channel(), "tictactoe", **options), *words
            )
        await expect_refusal(
            await emu.run_command(alice, channel, "tictactoe", opponent=mallory), "already"
        )
        # A server's command in a DM (Discord offers it only in servers), and a server the
        # bot is not in.
        (command,) = [
            c for c in emu.commands.list(arena.guild.id) if c["name"] == "tictactoe-leaderboard"
        ]
        data = {"id": str(command["id"]), "name": "tictactoe-leaderboard", "type": 1}
        dm = await emu.send_raw_interaction(alice, emu.dm_channel(alice), type=2, data=data)
        await expect_refusal(dm, "server that added me")
        strange = emu.add_text_channel(stranger_guild, "void")
        emu.add_member(stranger_guild, mallory)
        ghost = await emu.send_raw_interaction(
            mallory, strange, type=3, data={"custom_id": cell, "component_type": 2}
        )
        response = await ghost.response()
        assert not response.failed and response.ephemeral, response

        assert dump(arena.database) == before
        assert not emu.failed_interactions and not emu.unrouted
    assert_log_clean(bot.log())


async def test_names_cannot_ping_and_servers_stay_apart(arena: Arena) -> None:
    emu = arena.emu
    role = emu.add_role(arena.guild, "mods", mentionable=True)
    loud = arena.member(nick=f"@everyone <@&{role.id}> @here")
    quiet = arena.member(nick="@here")
    other_guild = emu.add_guild("Elsewhere")
    elsewhere = arena.channel(other_guild)
    eve, zed = arena.member(other_guild), arena.member(other_guild)
    async with arena.bot(sync=True) as bot:
        for guild_users, where in (((loud, quiet), arena.channel()), ((eve, zed), elsewhere)):
            first, second = guild_users
            handle = await emu.run_command(first, where, "tictactoe", opponent=second, first="me")
            challenge = (await handle.response()).message
            assert challenge is not None and challenge.pings.users <= {second.id}
            assert not challenge.pings.everyone and not challenge.pings.roles
            await (await emu.click(second, challenge, label="Accept")).response()
            stop = await emu.run_command(first, where, "tictactoe-stop")
            assert not (await stop.response()).failed
            handle = await emu.run_command(first, where, "tictactoe", opponent=second, first="me")
            challenge = (await handle.response()).message
            assert challenge is not None
            await (await emu.click(second, challenge, label="Accept")).response()
            for user, row in ((first, 1), (second, 0)):  # both moved: the forfeit is rated
                moved = await emu.click(user, emu.message(challenge.id), row=row, col=row)  # type: ignore[arg-type]
                assert (await moved.response()).type == CallbackType.UPDATE_MESSAGE
            forfeit = await emu.click(second, emu.message(challenge.id), label="Forfeit")  # type: ignore[arg-type]
            assert (await forfeit.response()).type == CallbackType.DEFERRED_UPDATE_MESSAGE
            (question,) = await forfeit.wait_followups(1)
            confirm = await emu.click(second, question, index=0)
            assert (await confirm.response()).type == CallbackType.UPDATE_MESSAGE

        for user, where, mine, theirs in (
            (loud, arena.channel(), (loud, quiet), (eve, zed)),
            (eve, elsewhere, (eve, zed), (loud, quiet)),
        ):
            board = (
                await (await emu.run_command(user, where, "tictactoe-leaderboard")).response()
            ).message
            assert board is not None and board.pings.nobody
            allowed = board.allowed_mentions or {}
            assert not allowed.get("parse") and not allowed.get("roles")
            assert all(f"<@{u.id}>" in board.text for u in mine), board.text
            assert not any(str(u.id) in board.text for u in theirs), board.text
            assert "@everyone" not in board.text and "@here" not in board.text
            stats = await (
                await emu.run_command(user, where, "tictactoe-stats", member=theirs[0])
            ).response()
            assert stats.message is not None and stats.message.pings.nobody
            # A member of the other server is not a member here: refused, not looked up.
            assert stats.ephemeral and "isn't a member of this server" in stats.message.text, (
                stats.message.text
            )
        for message in (m for c in emu.channels.values() for m in c.messages):
            assert not message.pings.everyone and not message.pings.roles, message
    assert_log_clean(bot.log())
