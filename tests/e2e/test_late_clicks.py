"""Actions that arrive after time ran out but before the sweeper came round.

The module's bot sweeps only at start-up and then every 5 minutes, so the action itself
finds the game or challenge overdue. A move or an answer must be refused privately, and
the message must not go on showing a live game (or an open challenge) with working
buttons; a forfeit or a stop must not change a result the clock already decided (the
player on move lost). The clocks are the shortest a server may choose; each test runs its
game or challenge out by moving the stored deadline into the past (``tests.overdue``).
"""

from __future__ import annotations

import re

import pytest

from discord_emulator import (
    CallbackType,
    Channel,
    Emulator,
    Observation,
    RequestArrived,
    User,
)
from tests.overdue import run_out

from .helpers import Answer, Arena, check_final, eventually, refusal

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOT_ENV = {
    "TURN_TIMEOUT_SECONDS": "30",
    "CHALLENGE_TIMEOUT_SECONDS": "15",
    "SWEEP_INTERVAL_SECONDS": "300",
    # Boards here time out before anyone moved, one after another for the same member.
    "ABANDON_COOLDOWN_SECONDS": "0",
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


# -- where the bot cannot reach the board (issue 37: invalid requests bounded by design) ------

THREADS = 20
CLICKS = 5


class OwnCalls:
    """The bot's own REST calls (not interaction answers) to ``channels``, seen through the
    emulator's public observers, and the invalid requests (401, 403, 429) since made."""

    def __init__(self, emu: Emulator, channels: list[Channel]) -> None:
        self.emu = emu
        self.paths = re.compile(rf"/channels/({'|'.join(str(c.id) for c in channels)})(/|$)")
        self.calls: list[str] = []
        self.invalid_before = emu.rate_limits.invalid_requests

    def __call__(self, seen: Observation) -> None:
        if isinstance(seen, RequestArrived) and self.paths.search(seen.path):
            self.calls.append(f"{seen.method} {seen.path}")

    @property
    def invalid(self) -> int:
        return self.emu.rate_limits.invalid_requests - self.invalid_before


async def timed_out_boards(
    arena: Arena, alice: User, places: list[tuple[Channel, User]]
) -> list[tuple[str, Answer]]:
    """In each channel a game of Alice's against the bot, run out and swept (aborted: she
    never made her first move), and a challenge to her from the member there, run out and
    swept; then Alice's clicks on a stale copy of each message (the board's centre, the
    challenge's Accept, as they were before the clock ran out)."""
    cells = []
    for channel, bob in places:
        board = await arena.start_bot_game(alice, channel, first="me")
        cells.append((board, arena.board(board).cell_id(4)))
        await run_out(arena.database, board.id)
        await arena.sweep()
        challenge = await arena.challenge(bob, alice, channel)
        accept = next(b for b in challenge.buttons() if b.label == "Accept").custom_id
        assert accept is not None
        cells.append((challenge, accept))
        await run_out(arena.database, challenge.id)
        await arena.sweep()
    answers = []
    for board, cell in cells:  # a stale copy of each message, clicked again and again
        for _ in range(CLICKS):
            answers.append((cell, await arena.raw_click(alice, board, cell)))
    return answers


async def test_stale_boards_in_private_threads_the_bot_is_not_in_call_nothing(
    arena: Arena,
) -> None:
    """The 20-thread attack: one member, private threads the bot is not in, a board in each
    whose game the sweep timed out, a challenge the sweep expired, and the stale boards
    clicked. The bot never calls those threads (it knows it cannot see them) and answers
    each click through the interaction with the board as it is."""
    emu, alice = arena.emu, arena.member("alice")
    parent = arena.channel()
    bobs = [arena.member("bob") for _ in range(THREADS)]
    threads = [
        emu.add_thread(parent, f"duel-{n}", owner=alice, private=True, members=[bob])
        for n, bob in enumerate(bobs)
    ]
    watch = OwnCalls(emu, threads)
    emu.observers.append(watch)
    try:
        answers = await timed_out_boards(arena, alice, list(zip(threads, bobs, strict=True)))
        for _ in range(3):  # later sweeps try nothing either
            await arena.sweep()
    finally:
        emu.observers.remove(watch)
    assert watch.calls == [], f"{len(watch.calls)} calls, {watch.invalid} invalid requests"
    assert watch.invalid == 0
    assert len(answers) == 2 * THREADS * CLICKS
    for _cell, answer in answers:
        assert answer.type is CallbackType.UPDATE_MESSAGE, answer
        text = answer.message.text
        assert "first move in time" in text or "expired" in text, text
        assert all(button.disabled for button in answer.message.buttons()) or not (
            arena.board(answer.message).live
        )


async def test_a_channel_that_refuses_is_called_once_then_left_alone(arena: Arena) -> None:
    """A channel the bot believes it sees but that refuses its edits (access lost without an
    event): one refused redraw, then the channel is backed off; its clicks are answered
    through the interaction with the board as it is."""
    emu, alice = arena.emu, arena.member("alice")
    channels = [arena.channel("lost") for _ in range(3)]
    for channel in channels:
        emu.fail_requests("PATCH", re.compile(rf"/channels/{channel.id}/"), status=403, times=999)
    watch = OwnCalls(emu, channels)
    emu.observers.append(watch)
    try:
        places = [(channel, arena.member("bob")) for channel in channels]
        answers = await timed_out_boards(arena, alice, places)
        for _ in range(3):
            await arena.sweep()
    finally:
        emu.observers.remove(watch)
    assert len(watch.calls) == len(channels) and watch.invalid == len(channels), watch.calls
    for _cell, answer in answers:
        assert answer.type is CallbackType.UPDATE_MESSAGE, answer
        shown = answer.message.text
        assert "first move in time" in shown or "expired" in shown, shown
