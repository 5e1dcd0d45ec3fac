"""Games between two members, end to end: challenge, play, refusals, forfeit, rematch, stop."""

from __future__ import annotations

import pytest

from discord_emulator import CallbackType, Channel, Permission, User

from .helpers import Arena, check_final, edited_through_channel, refusal, snapshot

pytestmark = pytest.mark.asyncio(loop_scope="module")
POSTGRESQL = True  # the challenges module on PostgreSQL too (tests/e2e/conftest.py)


async def stats_text(arena: Arena, viewer: User, channel: Channel, member: User) -> str:
    answer = await arena.command(viewer, channel, "tictactoe-stats", member=member)
    assert answer.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE, answer
    assert answer.message.pings.nobody
    assert not (answer.message.allowed_mentions or {}).get("users")
    return answer.message.text


async def test_a_game_between_members_from_challenge_to_result(arena: Arena) -> None:
    alice, bob, carol = arena.member("alice"), arena.member("bob"), arena.member("carol")
    channel = arena.channel()
    challenge = await arena.challenge(alice, bob, channel, first="me")
    assert "challenge" in challenge.text.lower()
    assert f"<@{alice.id}>" in challenge.text

    # Only the challenged member may answer.
    for user in (carol, alice):
        text = await refusal(await arena.click(user, arena.current(challenge), label="Accept"))
        assert "Only the challenged member" in text
    text = await refusal(await arena.click(carol, arena.current(challenge), label="Decline"))
    assert "Only the challenged member" in text

    state = await arena.accept(bob, challenge)
    assert state.message.id == challenge.id, "the challenge message becomes the board"
    players = {alice.id: "X", bob.id: "O"}
    for user, cell in ((alice, 0), (bob, 3), (alice, 1), (bob, 4), (alice, 2)):
        assert f"<@{user.id}>, your move" in state.text, state.text
        await arena.move(user, challenge, cell)
        after = arena.board(challenge)
        assert after.marks[cell] == players[user.id]
        assert after.move_no == state.move_no + 1
        state = after
        # The board is the challenge's message: it notified Bob of the challenge when
        # posted, and its edits notify (and highlight) nobody.
        assert state.message.pings.users == {bob.id} and state.message.mentions.nobody
        if state.live:
            allowed = state.message.allowed_mentions or {}
            assert not allowed.get("users") and not allowed.get("parse"), allowed

    assert check_final(state, 3) == "X"
    assert state.success_cells() == {0, 1, 2}
    assert f"<@{alice.id}> won" in state.text, state.text
    assert arena.turn_pings(channel, deleted=True) == [], "a game played at once pings nobody"
    assert state.controls == ("Rematch", "Review")
    review = await arena.click(bob, state.message, label="Review")
    assert review.ephemeral and "🟦 X a1" in review.message.text, review.message.text

    # A rated game: 1500 each, K = 40, expected score 0.5 -> 1520 / 1480.
    text = await stats_text(arena, carol, channel, alice)
    assert "1520" in text and "Versus members: 1W 0L 0D" in text, text
    text = await stats_text(arena, carol, channel, bob)
    assert "1480" in text and "Versus members: 0W 1L 0D" in text, text


async def test_rejected_clicks_in_a_member_game(arena: Arena) -> None:
    alice, bob, carol = arena.member("alice"), arena.member("bob"), arena.member("carol")
    channel = arena.channel()
    board = await arena.challenge(alice, bob, channel, first="me")
    pending = snapshot(board)
    await arena.accept(bob, board)

    text = await refusal(await arena.click(carol, arena.current(board), row=0, col=0))
    assert "isn't your game" in text
    text = await refusal(await arena.click(bob, arena.current(board), row=0, col=0))
    assert "not your turn" in text

    bobs_view = snapshot(arena.current(board))
    await arena.move(alice, board, 4)
    # Bob's client still shows the board before Alice's move: his click there is stale.
    text = await refusal(await arena.click(bob, bobs_view, row=0, col=0))
    assert "board changed" in text
    old_id = bobs_view.button_grid()[0][0].custom_id
    assert old_id is not None
    text = await refusal(await arena.raw_click(bob, board, old_id))
    assert "board changed" in text

    state = arena.board(board)
    text = await refusal(await arena.raw_click(bob, board, state.cell_id(4)))
    assert "already taken" in text
    text = await refusal(await arena.click(carol, arena.current(board), label="Forfeit"))
    assert "isn't your game" in text
    assert arena.board(board).marks == state.marks

    for user, cell in ((bob, 0), (alice, 2), (bob, 1), (alice, 6)):
        await arena.move(user, board, cell)
    final = arena.board(board)
    assert check_final(final, 3) == "X" and final.success_cells() == {2, 4, 6}

    # The game is over: clicks from an older view are refused, the board is unchanged.
    text = await refusal(await arena.click(bob, bobs_view, row=2, col=2))
    assert "over" in text
    text = await refusal(await arena.raw_click(bob, board, final.cell_id(8)))
    assert "over" in text
    text = await refusal(await arena.click(alice, bobs_view, label="Forfeit"))
    assert "over" in text
    # The challenge's buttons, long gone from the message, answer too.
    text = await refusal(await arena.click(bob, pending, label="Accept"))
    assert "no longer open" in text
    assert arena.board(board).marks == final.marks


async def test_decline_and_withdraw(arena: Arena) -> None:
    alice, bob = arena.member("alice"), arena.member("bob")
    channel = arena.channel()
    challenge = await arena.challenge(alice, bob, channel)
    pending = snapshot(arena.current(challenge))
    answer = await arena.click(bob, arena.current(challenge), label="Decline")
    assert answer.type is CallbackType.UPDATE_MESSAGE
    closed = arena.current(challenge)
    assert "declined" in closed.text
    assert all(button.disabled for button in closed.buttons())
    text = await refusal(await arena.click(bob, pending, label="Accept"))
    assert "no longer open" in text

    # Alice may not challenge bob again so soon (the cooldown); carol challenges and
    # withdraws.
    carol = arena.member("carol")
    challenge = await arena.challenge(carol, bob, channel)
    # Decline is the challenged member's, Withdraw the challenger's: each refuses the
    # others privately, and the challenger is told to use Withdraw.
    dave = arena.member("dave")
    for user in (carol, dave):
        text = await refusal(await arena.click(user, arena.current(challenge), label="Decline"))
        assert text == "Only the challenged member can answer this challenge."
    for user in (bob, dave):
        text = await refusal(await arena.click(user, arena.current(challenge), label="Withdraw"))
        assert text == "Only the challenger can withdraw this challenge."
    answer = await arena.command(carol, arena.channel(), "tictactoe", opponent=dave)
    assert answer.ephemeral and "Withdraw it with its Withdraw button" in answer.message.text
    assert arena.current(challenge).edits == 0, "refusals change nothing"
    answer = await arena.click(carol, arena.current(challenge), label="Withdraw")
    assert answer.type is CallbackType.UPDATE_MESSAGE
    closed = arena.current(challenge)
    assert "withdrew" in closed.text
    assert all(button.disabled for button in closed.buttons())

    # Nothing was played, so nothing was rated.
    answer = await arena.command(alice, channel, "tictactoe-stats")
    assert "Versus members: 0W 0L 0D" in answer.message.text, answer.message.text


async def test_challenges_that_cannot_be_made(arena: Arena) -> None:
    alice, bob, carol = arena.member("alice"), arena.member("bob"), arena.member("carol")
    channel = arena.channel()
    answer = await arena.command(alice, channel, "tictactoe", opponent=alice)
    assert answer.ephemeral and "challenge yourself" in answer.message.text
    challenge = await arena.challenge(alice, bob, channel)
    answer = await arena.command(carol, channel, "tictactoe", opponent=bob)
    assert answer.ephemeral, answer
    await arena.click(alice, arena.current(challenge), label="Decline")


async def test_forfeit_between_members(arena: Arena) -> None:
    alice, bob, carol = arena.member("alice"), arena.member("bob"), arena.member("carol")
    channel = arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    await arena.move(bob, board, 0)
    # Forfeit asks first, privately; Keep playing leaves the game as it was.
    question = await arena.ask_forfeit(bob, board)
    assert "It counts as a loss, and your rating goes down." in question.text, question.text
    labels = [b.label for b in question.buttons()]
    assert labels == ["Forfeit (counts as a loss)", "Propose calling it off", "Keep playing"]
    kept = await arena.click(bob, question, label="Keep playing")
    assert kept.type is CallbackType.UPDATE_MESSAGE
    assert "the game goes on" in arena.current(question).text
    assert not arena.current(question).buttons() and arena.board(board).live
    # An answer after a move is refused, and changes nothing.
    stale = await arena.ask_forfeit(bob, board)
    await arena.move(alice, board, 8)
    text = await refusal(await arena.click(bob, stale, label="Forfeit (counts as a loss)"))
    assert "moved on since you were asked; nothing changed" in text, text
    assert arena.board(board).live and arena.board(board).move_no == 3
    ended = await arena.forfeit(bob, board)
    assert f"<@{bob.id}> forfeited" in ended.text and f"<@{alice.id}> won" in ended.text
    # Redrawn through the Forfeit click's token, not the channel: it works where the bot
    # may not edit messages (a private thread it isn't in).
    assert not edited_through_channel(arena.emu, board)
    # The finished board shows each player's rating and its change.
    assert f"<@{alice.id}> 1520 (+20) · <@{bob.id}> 1480 (\u221220)" in ended.text, ended.text
    assert ended.controls == ("Rematch", "Review") and not ended.success_cells()
    text = await stats_text(arena, carol, channel, bob)
    assert "1480" in text and "Versus members: 0W 1L 0D" in text, text


async def test_a_forfeit_before_both_players_moved_is_an_abort(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    question = await arena.ask_forfeit(bob, board)
    assert "Not both players have moved yet, so it doesn't count." in question.text
    assert [b.label for b in question.buttons()] == ["End it (doesn't count)", "Keep playing"]
    # An older version's Forfeit in the answer to /tictactoe-stop has no expiry: expired.
    game_id = arena.board(board).game_id
    text = await refusal(await arena.raw_click(bob, board, f"ttt:quit:{game_id}"))
    assert "This question has expired; nothing changed." in text and arena.board(board).live
    done = await arena.click(bob, question, label="End it (doesn't count)")
    assert done.type is CallbackType.UPDATE_MESSAGE  # the answer, in place of the question
    assert "Aborted before both players moved" in arena.current(question).text
    await arena.emu.wait_for(lambda: not arena.board(board).live)
    ended = arena.board(board)
    assert "Aborted before both players moved: it doesn't count." in ended.text, ended.text
    assert "forfeited" not in ended.text and "(+" not in ended.text
    text = await stats_text(arena, alice, channel, bob)
    assert "1500" in text and "Versus members: 0W 0L 0D" in text, text
    assert f"aborted, against <@{alice.id}>" in text, text


async def test_rematch_between_members(arena: Arena) -> None:
    alice, bob, carol = arena.member("alice"), arena.member("bob"), arena.member("carol")
    channel = arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)  # (leaving without a move would hold her off a while)
    await arena.forfeit(alice, board)

    text = await refusal(await arena.click(carol, arena.current(board), label="Rematch"))
    assert "isn't your game" in text
    answer = await arena.click(bob, arena.current(board), label="Rematch")
    assert answer.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE
    challenge = answer.message
    assert challenge.id != board.id and not challenge.ephemeral
    allowed = challenge.allowed_mentions or {}
    assert [int(u) for u in allowed.get("users", [])] == [alice.id], "it pings only the other"
    assert [b.label for b in challenge.buttons()] == ["Accept", "Decline", "Withdraw"]
    text = await refusal(await arena.click(bob, arena.current(challenge), label="Accept"))
    assert "Only the challenged member" in text

    state = await arena.accept(alice, challenge)
    # Sides swapped: Bob, who was O, now plays X and moves first.
    assert f"🟦 **X** <@{bob.id}>" in state.text and f"<@{bob.id}>, your move" in state.text
    await arena.move(bob, challenge, 0)
    assert arena.board(challenge).marks[0] == "X"
    await arena.forfeit(alice, challenge)


async def test_both_pressing_rematch_start_the_game(arena: Arena) -> None:
    """Bob presses Rematch, then Alice does too (not Accept): her press accepts his
    challenge, and the new board is her press's answer."""
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    await arena.forfeit(alice, board)
    asked = await arena.click(bob, arena.current(board), label="Rematch")
    assert asked.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE and not asked.ephemeral
    started = await arena.click(alice, arena.current(board), label="Rematch")
    assert started.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE, started
    assert not started.ephemeral and started.message.pings.nobody
    state = arena.board(started.message)
    assert state.live and f"🟦 **X** <@{bob.id}>" in state.text  # sides swapped, Bob first
    await arena.emu.wait_for(lambda: "accepted" in arena.current(asked.message).text)
    assert all(b.disabled for b in arena.current(asked.message).buttons())
    await arena.move(bob, started.message, 4)
    await arena.forfeit(alice, started.message)


async def test_stop_by_a_moderator_and_refusal_for_others(arena: Arena) -> None:
    alice, bob = arena.member("alice"), arena.member("bob")
    carol = arena.member("carol")
    dave = arena.member("dave", permissions=Permission.MANAGE_MESSAGES)
    channel = arena.channel()

    answer = await arena.command(dave, channel, "tictactoe-stop")
    assert answer.ephemeral and "no game" in answer.message.text.lower()

    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    answer = await arena.command(carol, channel, "tictactoe-stop")
    assert answer.ephemeral and "moderator" in answer.message.text, answer.message.text
    assert arena.board(board).live
    await arena.move(bob, board, 0)  # the game goes on

    view = snapshot(arena.current(board))
    answer = await arena.command(dave, channel, "tictactoe-stop")
    assert answer.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE and not answer.ephemeral
    assert "stopped" in answer.message.text and answer.message.pings.nobody
    await arena.emu.wait_for(lambda: "stopped" in arena.current(board).text)
    state = arena.board(board)
    assert not state.live
    assert [b.disabled for b in state.cells] == [m is None for m in state.marks]
    assert state.marks[4] == "X" and state.marks[0] == "O"
    text = await refusal(await arena.click(alice, view, row=2, col=2))
    assert "over" in text

    # A stopped game doesn't count.
    answer = await arena.command(alice, channel, "tictactoe-stats")
    assert "Versus members: 0W 0L 0D" in answer.message.text, answer.message.text
    assert "1500" in answer.message.text


async def test_a_player_may_stop_their_own_game(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    answer = await arena.command(bob, channel, "tictactoe-stop")
    assert not answer.ephemeral and "stopped" in answer.message.text
    # Before both players moved, the board calls it what it is: an abort.
    await arena.emu.wait_for(lambda: "Aborted" in arena.current(board).text)
    assert not arena.board(board).live


async def test_two_clicks_at_once_only_one_lands(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    state = arena.board(board)
    # A double click: both arrive before the bot has answered either.
    first = await arena.emu.click(alice, state.message, custom_id=state.cell_id(0))
    second = await arena.emu.click(alice, state.message, custom_id=state.cell_id(1))
    answers = [await arena.answer(first), await arena.answer(second)]
    landed = [a for a in answers if a.type is CallbackType.UPDATE_MESSAGE]
    assert len(landed) == 1, answers
    (refused,) = [a for a in answers if a is not landed[0]]
    text = await refusal(refused)
    assert "board changed" in text or "not your turn" in text, text
    after = arena.board(board)
    assert after.move_no == 1 and after.marks.count("X") == 1
    assert f"<@{bob.id}>, your move" in after.text
    await arena.forfeit(bob, board)


async def test_a_member_game_on_4x4_with_three_in_a_row(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel, side=4, win_length=3)
    assert "4×4" in board.text and "3 in a row" in board.text, board.text
    for user, cell in ((alice, 5), (bob, 0), (alice, 10), (bob, 1), (alice, 15)):
        await arena.move(user, board, cell, side=4)
    state = arena.board(board, 4)
    assert check_final(state, 3) == "X" and state.success_cells() == {5, 10, 15}
    assert f"<@{alice.id}> won" in state.text


async def test_the_challenged_member_may_be_given_the_first_move(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    challenge = await arena.challenge(alice, bob, channel, first="opponent")
    state = await arena.accept(bob, challenge)
    assert f"🟦 **X** <@{bob.id}>" in state.text and f"<@{bob.id}>, your move" in state.text
    text = await refusal(await arena.click(alice, state.message, row=1, col=1))
    assert "not your turn" in text
    await arena.move(bob, challenge, 4)
    assert arena.board(challenge).marks[4] == "X"
    await arena.forfeit(alice, challenge)
