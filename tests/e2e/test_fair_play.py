"""Fair play end to end: server settings, the limits on live games, challenge consent,
and the choices of a player who stops a rated game."""

from __future__ import annotations

import pytest

from discord_emulator import (
    CallbackType,
    Channel,
    ChannelType,
    InteractionType,
    Message,
    Permission,
    UserActionError,
)

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
    assert "preferences" not in text, "how to turn them back on is Bob's business"
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


async def test_a_difficulty_with_an_opponent_is_refused_before_anyone_is_pinged(
    arena: Arena,
) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    answer = await arena.command(alice, channel, "tictactoe", opponent=bob, difficulty="hard")
    text = await refusal(answer)
    assert "difficulty is for games against me" in text and f"<@{bob.id}>" in text, text
    assert not [m for m in channel.messages if not m.ephemeral], "nothing posted, nobody pinged"
    challenge = await arena.challenge(alice, bob, channel)  # no cooldown was spent
    await arena.click(alice, challenge, label="Withdraw")


async def test_a_stopped_rated_game_is_forfeited_after_a_choice(arena: Arena) -> None:
    alice, bob = arena.member("alice"), arena.member("bob")
    channel = arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    # Before both players moved, a player's stop aborts it; now it would cost a rating.
    await arena.move(bob, board, 0)
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


# -- a busy channel ------------------------------------------------------------------------


def threads_of(arena: Arena, channel: Channel) -> list[Channel]:
    return [c for c in arena.guild.channels if c.parent is channel]


def link(arena: Arena, message: Message) -> str:
    return f"https://discord.com/channels/{arena.guild.id}/{message.channel.id}/{message.id}"


async def test_a_busy_channel_links_its_game_and_opens_a_thread_for_yours(arena: Arena) -> None:
    alice, carol = arena.member("alice"), arena.member("carol")
    mod = arena.member("mod", permissions=Permission.MANAGE_MESSAGES)
    channel = arena.channel()
    board = await arena.start_bot_game(alice, channel, first="me")

    # A bystander: the link to the game in the way, no /tictactoe-stop (they may not
    # use it), and a button for the same game in a new thread.
    answer = await arena.command(
        carol, channel, "tictactoe", size="4x4", difficulty="easy", first="me"
    )
    text = await refusal(answer)
    assert link(arena, board) in text and "tictactoe-stop" not in text, text
    assert "new thread" in text
    (button,) = answer.message.buttons()
    assert (
        button.custom_id == "ttt:thread-bot:easy:4:0:me" and button.label == "Play in a new thread"
    )
    # A moderator may stop it, so is told how.
    told = await refusal(await arena.command(mod, channel, "tictactoe"))
    assert link(arena, board) in told and "/tictactoe-stop" in told, told

    requests = len(arena.emu.requests)
    opened = await arena.click(carol, answer.message, label="Play in a new thread")
    assert opened.type is CallbackType.DEFERRED_UPDATE_MESSAGE
    edited = await opened.handle.edited_original()
    (thread,) = threads_of(arena, channel)
    assert thread.type is ChannelType.PUBLIC_THREAD and thread.owner_id == arena.emu.bot.id
    (posted,) = [m for m in arena.emu.messages(thread) if not m.ephemeral]
    assert link(arena, posted) in edited.text and not edited.buttons(), edited.text
    # Two calls on the global budget: the thread, and the board posted in it.
    sent = [(r.method, r.path) for r in arena.emu.requests[requests:] if "/channels/" in r.path]
    assert sent.count(("POST", f"/channels/{channel.id}/threads")) == 1, sent
    assert sent.count(("POST", f"/channels/{thread.id}/messages")) == 1, sent
    # The same game: 4x4, the bot at easy, Carol first; playable there.
    state = arena.board(posted, 4)
    assert state.live and state.move_no == 0 and f"<@{carol.id}>, your move" in state.text
    await arena.move(carol, posted, 5, side=4, thinking=None)
    assert arena.board(posted, 4).marks[5] == "X"

    # A second click of that refusal (a client with an old copy) opens nothing more.
    again = await arena.raw_click(carol, answer.message, button.custom_id or "")
    assert again.type is CallbackType.DEFERRED_UPDATE_MESSAGE
    assert len(threads_of(arena, channel)) == 1
    await arena.forfeit(carol, posted, 4)
    await arena.forfeit(alice, board)


async def test_a_challenge_in_a_busy_channel_moves_to_a_thread(arena: Arena) -> None:
    alice, dave, erin = arena.member("alice"), arena.member("dave"), arena.member("erin")
    channel = arena.channel()
    waiting = await arena.challenge(alice, arena.member("bob"), channel)
    answer = await arena.command(dave, channel, "tictactoe", opponent=erin, first="opponent")
    text = await refusal(answer)
    assert "challenge is waiting" in text and link(arena, waiting) in text, text
    assert "tictactoe-stop" not in text  # a challenge isn't stopped: it expires
    opened = await arena.click(dave, answer.message, label="Play in a new thread")
    await opened.handle.edited_original()
    (thread,) = threads_of(arena, channel)
    (challenge,) = [m for m in arena.emu.messages(thread) if not m.ephemeral]
    assert challenge.pings.users == {erin.id}, "the challenge pings the challenged member"
    state = await arena.accept(erin, challenge)
    assert f"<@{erin.id}>, your move" in state.text  # who moves first came along
    await arena.move(erin, challenge, 4)
    await arena.forfeit(dave, challenge)


async def test_no_thread_is_offered_or_made_for_a_game_that_cannot_start(arena: Arena) -> None:
    alice, carol = arena.member("alice"), arena.member("carol")
    busy, elsewhere = arena.channel(), arena.channel()
    board = await arena.start_bot_game(alice, busy, first="me")
    offered = await arena.command(carol, busy, "tictactoe")
    assert offered.message.buttons()
    # Carol starts a game elsewhere, then clicks: her limit is checked before any thread.
    mine = await arena.start_bot_game(carol, elsewhere, first="me")
    opened = await arena.click(carol, offered.message, label="Play in a new thread")
    edited = await opened.handle.edited_original()
    assert "already in a game" in edited.text and link(arena, mine) in edited.text
    assert not edited.buttons() and threads_of(arena, busy) == []
    # Asked now, the refusal says why there is no offer.
    text = await refusal(answer := await arena.command(carol, busy, "tictactoe"))
    assert (
        link(arena, board) in text and "already in a game" in text and not answer.message.buttons()
    )
    await arena.forfeit(carol, mine)

    # Nor where the bot may not open threads, or the member may not: the bot opens none
    # a server denied them. (The emulator has no channel overwrites: roles it is.)
    threads = int(Permission.CREATE_PUBLIC_THREADS)
    opener = arena.member("opener", permissions=threads)
    everyone = arena.guild.everyone
    (bot_role,) = arena.guild.members[arena.emu.bot.id].roles  # its managed role
    kept = everyone.permissions, bot_role.permissions
    everyone.permissions &= ~threads
    bot_role.permissions &= ~threads
    try:
        for asker in (opener, carol):
            answer = await arena.command(asker, busy, "tictactoe")
            assert link(arena, board) in await refusal(answer) and not answer.message.buttons()
            bot_role.permissions |= threads  # then the bot may, but Carol may not
    finally:
        everyone.permissions, bot_role.permissions = kept
    thread = arena.emu.add_thread(busy, "side game", owner=alice)
    await arena.forfeit(alice, board)
    inside = await arena.start_bot_game(carol, thread, first="me")
    answer = await arena.command(alice, thread, "tictactoe")
    assert link(arena, inside) in await refusal(answer) and not answer.message.buttons()
    assert threads_of(arena, busy) == [thread]
    await arena.forfeit(carol, inside)


async def test_a_thread_discord_refuses_leaves_no_game_behind(arena: Arena) -> None:
    alice, carol = arena.member("alice"), arena.member("carol")
    busy, elsewhere = arena.channel(), arena.channel()
    board = await arena.start_bot_game(alice, busy, first="me")
    # Discord refuses the thread itself: nothing was started.
    offered = await arena.command(carol, busy, "tictactoe")
    arena.emu.fail_requests("POST", f"/channels/{busy.id}/threads", status=403)
    opened = await arena.click(carol, offered.message, label="Play in a new thread")
    edited = await opened.handle.edited_original()
    assert "couldn't open a thread" in edited.text and threads_of(arena, busy) == []
    # Discord refuses the board in the new thread: the game nobody can see is ended, so
    # it holds none of Carol's places.
    offered = await arena.command(carol, busy, "tictactoe")
    arena.emu.fail_requests("POST", "/channels/*/messages", status=403)
    opened = await arena.click(carol, offered.message, label="Play in a new thread")
    edited = await opened.handle.edited_original()
    assert "couldn't post in it" in edited.text and len(threads_of(arena, busy)) == 1
    mine = await arena.start_bot_game(carol, elsewhere, first="me")
    await arena.forfeit(carol, mine)
    await arena.forfeit(alice, board)


async def test_public_answers_and_new_games_keep_the_channels_rules(arena: Arena) -> None:
    """A leaderboard or public stats answer is private (saying why) where the member may
    not post, under slowmode, outside the game channels, or within their cooldown;
    ``/tictactoe`` is refused where they may not post and paced by slowmode."""
    asker, mod = arena.member("asker"), arena.member("mod", permissions=MANAGE_SERVER)
    channel = arena.channel()
    first = await arena.command(asker, channel, "tictactoe-leaderboard")
    assert not first.ephemeral and "Only you can see" not in first.message.text
    again = await arena.command(asker, channel, "tictactoe-stats", public=True)
    assert again.ephemeral and "Rating" in again.message.text
    assert "Only you can see this answer. You can show one to the channel again <t:" in (
        again.message.text
    )
    other = arena.member("other")  # one member's cooldown holds no one else
    assert not (await arena.command(other, channel, "tictactoe-stats", public=True)).ephemeral

    # Slowmode: answers private, a second game within it refused (a moderator bypasses it).
    slow = arena.channel("slow", slowmode=60)
    slowed = arena.member("slowed")
    answer = await arena.command(slowed, slow, "tictactoe-leaderboard")
    assert answer.ephemeral and "This channel is in slowmode." in answer.message.text
    board = await arena.start_bot_game(slowed, slow, first="me")
    await arena.forfeit(slowed, board)
    text = await refusal(await arena.command(slowed, slow, "tictactoe"))
    assert "This channel is in slowmode: you can start a game here again <t:" in text
    moderator = arena.member("moderator", permissions=Permission.MANAGE_MESSAGES)
    assert not (await arena.command(moderator, slow, "tictactoe-leaderboard")).ephemeral

    # Outside the server's game channels.
    elsewhere = arena.channel("elsewhere")
    await arena.command(mod, channel, "tictactoe-settings", add_channel=channel)
    try:
        answer = await arena.command(arena.member("x"), elsewhere, "tictactoe-leaderboard")
        assert answer.ephemeral and f"Games on this server are played in <#{channel.id}>" in (
            answer.message.text
        )
    finally:
        await arena.command(mod, channel, "tictactoe-settings", reset=True)

    # Without Send Messages (the emulator has no channel overwrites: roles it is).
    everyone = arena.guild.everyone
    kept = everyone.permissions
    everyone.permissions &= ~int(Permission.SEND_MESSAGES)
    try:
        mute = arena.member("mute")
        answer = await arena.command(mute, channel, "tictactoe-leaderboard")
        assert answer.ephemeral and "You can't send messages in this channel." in (
            answer.message.text
        )
        text = await refusal(await arena.command(mute, channel, "tictactoe"))
        assert "so you can't start a game here" in text
    finally:
        everyone.permissions = kept
