"""Fair play end to end: server settings, the limits on live games, challenge consent,
and the choices of a player who stops a rated game."""

from __future__ import annotations

import pytest

from discord_emulator import CallbackType, InteractionType, Permission, UserActionError

from .helpers import Arena, refusal

pytestmark = pytest.mark.asyncio(loop_scope="module")

MANAGE_SERVER = Permission.MANAGE_GUILD | Permission.USE_APPLICATION_COMMANDS


async def test_settings_are_shown_changed_and_checked(arena: Arena) -> None:
    mod = arena.member("mod", permissions=MANAGE_SERVER)
    member = arena.member("member")
    games, other = arena.channel(), arena.channel()

    shown = await arena.command(mod, games, "tictactoe-settings")
    assert shown.ephemeral and "every channel" in shown.message.text
    assert "Turn clock: 5 min" in shown.message.text

    changed = await arena.command(
        mod,
        games,
        "tictactoe-settings",
        add_channel=games,
        turn_clock="90s",
        challenge_cooldown="0",
    )
    assert changed.ephemeral and "Saved" in changed.message.text
    text = changed.message.text
    # What moved reads old → new; the rest as it was.
    marked = [line for line in text.splitlines() if " → " in line]
    assert marked == [
        f"Games can be started in: every channel → **<#{games.id}>**",
        "Turn clock: 5 min → **1 min 30 s**",
        "Cooldown between challenges to the same member: 1 min → **none**",
    ], text
    # The same change again changes nothing, and says so.
    same = await arena.command(mod, games, "tictactoe-settings", turn_clock="1m30s")
    assert same.message.text.startswith("**Nothing changed."), same.message.text
    assert " → " not in same.message.text and "Turn clock: 1 min 30 s" in same.message.text

    # Games start only in the listed channel, with the server's turn clock.
    refused = await refusal(await arena.command(member, other, "tictactoe"))
    assert f"played in <#{games.id}>" in refused
    board = await arena.start_bot_game(member, games, first="me")
    assert "<t:" in board.text
    await arena.forfeit(member, board)

    # Discord shows the command to Manage Server only; a forged use is refused too.
    with pytest.raises(UserActionError):
        await arena.emu.run_command(member, games, "tictactoe-settings")
    command = arena.emu.commands.find("tictactoe-settings", arena.guild.id)
    forged = await arena.answer(
        await arena.emu.send_raw_interaction(
            member,
            games,
            type=InteractionType.APPLICATION_COMMAND,
            data={"id": str(command["id"]), "name": "tictactoe-settings", "type": 1},
        )
    )
    assert "Manage Server" in await refusal(forged)

    # A value outside the bounds (sent by a client that ignored them) changes nothing.
    bad = await arena.answer(
        await arena.emu.send_raw_interaction(
            mod,
            games,
            type=InteractionType.APPLICATION_COMMAND,
            data={
                "id": str(command["id"]),
                "name": "tictactoe-settings",
                "type": 1,
                "options": [{"name": "turn_clock", "type": 3, "value": "5s"}],
            },
        )
    )
    assert "from 30 s to 1 d, not 5 s" in await refusal(bad)
    again = await arena.command(mod, games, "tictactoe-settings")
    assert "Turn clock: 1 min 30 s" in again.message.text

    reset = await arena.command(mod, games, "tictactoe-settings", reset=True)
    assert [line for line in reset.message.text.splitlines() if " → " in line] == [
        f"Games can be started in: <#{games.id}> → **every channel**",
        "Turn clock: 1 min 30 s → **5 min**",
        "Cooldown between challenges to the same member: none → **1 min**",
    ], reset.message.text


async def test_one_live_game_per_member_names_the_game_in_the_way(arena: Arena) -> None:
    alice, bob = arena.member("alice"), arena.member("bob")
    first, second = arena.channel(), arena.channel()
    board = await arena.start_bot_game(alice, first, first="me")
    link = f"https://discord.com/channels/{arena.guild.id}/{first.id}/{board.id}"
    text = await refusal(await arena.command(alice, second, "tictactoe"))
    assert "already in a game" in text and link in text
    text = await refusal(await arena.command(bob, second, "tictactoe", opponent=alice))
    assert f"<@{alice.id}> is already in a game" in text and link in text
    # Nobody was pinged by the refused challenge.
    assert not [m for m in second.messages if not m.ephemeral and m.pings.users]
    await arena.forfeit(alice, board)
    await arena.start_bot_game(alice, second, first="me")


async def test_challenges_can_be_turned_off(arena: Arena) -> None:
    alice, bob = arena.member("alice"), arena.member("bob")
    channel = arena.channel()
    off = await arena.command(bob, channel, "tictactoe-preferences", challenges=False)
    assert off.ephemeral and "Challenges to you: on → **off**" in off.message.text
    text = await refusal(await arena.command(alice, channel, "tictactoe", opponent=bob))
    assert "turned challenges off" in text
    assert not [m for m in channel.messages if not m.ephemeral]  # no ping, no message
    on = await arena.command(bob, channel, "tictactoe-preferences", challenges=True)
    assert "Challenges to you: off → **on**" in on.message.text
    await arena.challenge(alice, bob, channel)


async def test_preferences_switch_with_their_buttons(arena: Arena) -> None:
    alice, bob = arena.member("alice"), arena.member("bob")
    channel = arena.channel()
    shown = await arena.command(bob, channel, "tictactoe-preferences")
    assert shown.ephemeral and " → " not in shown.message.text
    assert "Challenges to you: on" in shown.message.text
    switches = [button.custom_id for button in shown.message.buttons()]
    assert switches == [f"ttt:pref:pings:off:{bob.id}", f"ttt:pref:challenges:off:{bob.id}"]

    # A click switches the choice and redraws the same private message, in its answer.
    since = len(arena.emu.requests)
    click = await arena.click(bob, shown.message, custom_id=switches[1])
    assert click.type is CallbackType.UPDATE_MESSAGE
    assert not click.handle.followups and click.handle.original_edits == 0
    answers = [
        f"{r.method} {r.path}"
        for r in arena.emu.requests[since:]
        if r.path.startswith(("/interactions/", "/webhooks/", "/channels/"))
    ]
    assert len(answers) == 1 and answers[0].endswith("/callback"), answers
    now = arena.current(shown.message)
    assert now.ephemeral and "Saved" in now.text and "Challenges to you: on → **off**" in now.text
    assert now.buttons()[1].custom_id == f"ttt:pref:challenges:on:{bob.id}"
    text = await refusal(await arena.command(alice, channel, "tictactoe", opponent=bob))
    assert "turned challenges off" in text

    # Only Bob sees the message; a click carrying his id from anyone else (forged) is
    # refused privately and changes nothing.
    with pytest.raises(UserActionError):
        await arena.emu.click(alice, now, custom_id=now.buttons()[1].custom_id)
    forged = await arena.raw_click(alice, now, f"ttt:pref:challenges:on:{bob.id}")
    assert "another member's choices" in await refusal(forged)
    assert "Challenges to you: on → **off**" in arena.current(now).text

    # A click on an old copy does what its button said, once: here, nothing new.
    again = await arena.raw_click(bob, now, f"ttt:pref:challenges:off:{bob.id}")
    assert again.type is CallbackType.UPDATE_MESSAGE
    assert arena.current(now).text.startswith("**Nothing changed."), arena.current(now).text
    await arena.click(bob, arena.current(now), custom_id=f"ttt:pref:challenges:on:{bob.id}")
    assert "Challenges to you: off → **on**" in arena.current(now).text
    await arena.challenge(alice, bob, channel)

    # The command with an option answers the same way: the change marked, the switches.
    quiet = await arena.command(bob, channel, "tictactoe-preferences", turn_notifications=False)
    assert "Turn notifications: on → **off**" in quiet.message.text
    assert quiet.message.buttons()[0].custom_id == f"ttt:pref:pings:on:{bob.id}"


async def test_a_stopped_rated_game_is_forfeited_after_a_choice(arena: Arena) -> None:
    alice, bob = arena.member("alice"), arena.member("bob")
    channel = arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.click(alice, arena.current(board), row=1, col=1)
    stop = await arena.command(bob, channel, "tictactoe-stop")
    assert stop.ephemeral and "counts as a loss" in stop.message.text
    assert arena.board(board).live  # nothing changed yet
    quit_ = await arena.click(bob, stop.message, label="Forfeit (counts as a loss)")
    assert quit_.type is CallbackType.UPDATE_MESSAGE
    assert "forfeited" in arena.emu.message(stop.message.id).text
    await arena.emu.wait_for(lambda: not arena.board(board).live)
    assert "forfeited" in arena.board(board).text
    stats = await arena.command(bob, channel, "tictactoe-stats")
    assert "0W 1L 0D" in stats.message.text, stats.message.text
