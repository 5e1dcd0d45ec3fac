"""Time running out, end to end: unanswered challenges and turns, settled by the bot's sweeper.

The clocks are the shortest a server may choose; each test runs its game or challenge out
by moving the stored deadline into the past (``tests.overdue``) and sweeps
(``arena.sweep``) instead of waiting."""

from __future__ import annotations

import pytest

from discord_emulator import CallbackType
from tests.overdue import run_out

from .helpers import Arena, check_final, edited_through_channel, refusal, snapshot

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOT_ENV = {"TURN_TIMEOUT_SECONDS": "30", "CHALLENGE_TIMEOUT_SECONDS": "15"}


async def test_an_unanswered_challenge_expires(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    challenge = await arena.challenge(alice, bob, channel)
    pending = snapshot(challenge)
    # Discord rate-limits the first try of the sweeper's edit: it is retried.
    limited = arena.emu.rate_limit_requests(
        "PATCH", f"/channels/{channel.id}/messages/{challenge.id}", retry_after=0.3
    )
    await run_out(arena.database, challenge.id)
    await arena.sweep()
    await arena.emu.wait_for(lambda: "expired" in arena.current(challenge).text)
    assert limited.hits == 1
    closed = arena.current(challenge)
    assert all(button.disabled for button in closed.buttons())
    assert edited_through_channel(arena.emu, challenge)
    assert not (closed.allowed_mentions or {}).get("users"), "the expiry pings nobody"
    text = await refusal(await arena.click(bob, pending, label="Accept"))
    assert "expired" in text
    # The channel is free again.
    board = await arena.start_bot_game(alice, channel, first="me")
    await arena.forfeit(alice, board)


async def test_the_player_on_move_loses_against_the_bot(arena: Arena) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty="easy", first="me")
    await arena.move(alice, board, 4)
    view = snapshot(arena.current(board))
    await run_out(arena.database, board.id)
    await arena.sweep()
    await arena.emu.wait_for(lambda: "ran out of time" in arena.current(board).text)
    state = arena.board(board)
    assert f"<@{alice.id}> ran out of time" in state.text and "won" in state.text, state.text
    check_final(state, 3)
    assert state.controls == ("Rematch", "Review") and state.move_no == 2
    assert edited_through_channel(arena.emu, board)
    free = [i for i, mark in enumerate(state.marks) if mark is None]
    text = await refusal(await arena.click(alice, view, row=free[0] // 3, col=free[0] % 3))
    assert "over" in text

    answer = await arena.command(alice, channel, "tictactoe-stats")
    assert "Versus me (easy): 0W 1L 0D" in answer.message.text, answer.message.text
    assert "1 loss" in answer.message.text


async def test_the_player_on_move_loses_between_members(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    for user, cell in ((alice, 0), (bob, 4), (alice, 8)):  # both moved: the time-out counts
        await arena.move(user, board, cell)
    await run_out(arena.database, board.id)
    await arena.sweep()
    await arena.emu.wait_for(lambda: "ran out of time" in arena.current(board).text)
    state = arena.board(board)
    assert f"<@{bob.id}> ran out of time. <@{alice.id}> won." in state.text, state.text
    check_final(state, 3)
    assert edited_through_channel(arena.emu, board)

    # A timeout is a rated result: 1520 / 1480.
    answer = await arena.command(alice, channel, "tictactoe-stats", member=bob)
    assert answer.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE
    assert "1480" in answer.message.text and "0W 1L 0D" in answer.message.text


async def test_a_game_whose_first_move_never_comes_is_aborted(arena: Arena) -> None:
    """The first move has the first-move clock (here the 30 s turn clock, as it is
    shorter): without it the board says why the game is aborted, and it counts for nobody."""
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await run_out(arena.database, board.id)
    await arena.sweep()
    await arena.emu.wait_for(lambda: "first move in time" in arena.current(board).text)
    state = arena.board(board)
    assert f"<@{alice.id}> didn't make the first move in time: aborted" in state.text, state.text
    assert edited_through_channel(arena.emu, board)
    # Alice, who was to move first, waits before her next game; Bob may start at once.
    text = await refusal(await arena.command(alice, arena.channel(), "tictactoe"))
    assert "without making a move" in text, text
    again = await arena.start_bot_game(bob, channel, first="me")
    await arena.move(bob, again, 4)
    await arena.forfeit(bob, again)
