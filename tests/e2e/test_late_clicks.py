"""Actions that arrive after time ran out but before the sweeper came round.

The module's bot sweeps only at start-up and then every 5 minutes, so the action itself
finds the game or challenge overdue. A move or an answer must be refused privately, and
the message must not go on showing a live game (or an open challenge) with working
buttons; a forfeit or a stop must not change a result the clock already decided (the
player on move lost). The clocks are the shortest a server may choose; each test runs its
game or challenge out by moving the stored deadline into the past (``tests.overdue``).
"""

from __future__ import annotations

import pytest

from tests.overdue import run_out

from .helpers import Arena, check_final, eventually, refusal

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOT_ENV = {
    "TURN_TIMEOUT_SECONDS": "30",
    "CHALLENGE_TIMEOUT_SECONDS": "15",
    "SWEEP_INTERVAL_SECONDS": "300",
}
SETTLE = 3.0  # how long the message may take to show the result after the click


async def test_a_move_after_the_turn_ran_out(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    for user, cell in ((alice, 4), (bob, 0), (alice, 8)):  # both moved: the result counts
        await arena.move(user, board, cell)
    await run_out(arena.database, board.id)  # Bob's turn runs out; no sweep is due
    state = arena.board(board)
    text = await refusal(await arena.click(bob, state.message, custom_id=state.cell_id(1)))
    assert "over" in text or "time" in text.lower(), text

    await eventually(
        arena.emu,
        lambda: not arena.board(board).live,
        "the board shows that Bob's time ran out (it still offers live cells)",
        SETTLE,
    )
    state = arena.board(board)
    assert f"<@{bob.id}> ran out of time" in state.text, state.text
    check_final(state, 3)


async def test_an_answer_after_the_challenge_expired(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    challenge = await arena.challenge(alice, bob, channel)
    await run_out(arena.database, challenge.id)  # the challenge expires; no sweep is due
    text = await refusal(await arena.click(bob, arena.current(challenge), label="Accept"))
    assert "expired" in text

    await eventually(
        arena.emu,
        lambda: "expired" in arena.current(challenge).text,
        "the challenge message shows it expired (it still offers Accept/Decline)",
        SETTLE,
    )
    assert all(button.disabled for button in arena.current(challenge).buttons())


async def test_a_forfeit_after_the_opponents_turn_ran_out(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    for user, cell in ((alice, 4), (bob, 0), (alice, 8)):  # both moved: the result counts
        await arena.move(user, board, cell)
    # Bob's turn runs out: Alice has won, whatever she clicks now (Forfeit asks nothing).
    await run_out(arena.database, board.id)
    text = await refusal(await arena.click(alice, arena.current(board), label="Forfeit"))
    assert "Time ran out" in text, text
    await eventually(arena.emu, lambda: not arena.board(board).live, "the game ends", SETTLE)
    state = arena.board(board)
    assert f"<@{bob.id}> ran out of time. <@{alice.id}> won." in state.text, state.text
    stats = await arena.command(alice, channel, "tictactoe-stats")
    assert "Versus members: 1W 0L 0D" in stats.message.text, stats.message.text


async def test_stopping_after_ones_own_turn_ran_out(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    for user, cell in ((alice, 4), (bob, 0), (alice, 8)):  # both moved: the result counts
        await arena.move(user, board, cell)
    # Bob's turn runs out: stopping the game now can't save him.
    await run_out(arena.database, board.id)
    await arena.command(bob, channel, "tictactoe-stop")
    await eventually(arena.emu, lambda: not arena.board(board).live, "the game ends", SETTLE)
    state = arena.board(board)
    assert f"<@{bob.id}> ran out of time. <@{alice.id}> won." in state.text, state.text
    stats = await arena.command(alice, channel, "tictactoe-stats", member=bob)
    assert "Versus members: 0W 1L 0D" in stats.message.text, stats.message.text


async def test_running_out_before_both_players_moved_is_an_abort(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    await run_out(arena.database, board.id)  # Bob never moved: nobody loses rating
    text = await refusal(await arena.click(bob, arena.current(board), label="Forfeit"))
    assert "Time ran out" in text, text
    await eventually(arena.emu, lambda: not arena.board(board).live, "the game ends", SETTLE)
    state = arena.board(board)
    assert "Aborted before both players moved: it doesn't count." in state.text, state.text
    stats = await arena.command(alice, channel, "tictactoe-stats", member=bob)
    assert "Versus members: 0W 0L 0D" in stats.message.text, stats.message.text
