"""Discord's REST API failing under the bot: 500s, 429s, and answers too slow for the deadline.

The rule in every case: the move is committed exactly once, whatever happened to the answer,
and the board message ends up showing the stored game, either because discord.py's retry got
the answer through in time, or because the next click on the out-of-date board is answered
"the board changed" and redraws it (``bot.ui.refresh_board``). The bot logs no ERROR for
Discord's failures.
"""

from __future__ import annotations

from typing import Any

from bot.launcher import answered_thinking
from discord_emulator import CallbackType, Message, User
from tests.e2e.helpers import assert_log_clean, eventually

from .arena import (
    Arena,
    db_games,
    free_cells,
    moves_of,
    shows,
)

CALLBACK = "/interactions/*/callback"
ORIGINAL = "/webhooks/*/messages/@original"


async def new_board(arena: Arena, user: User, **options: Any) -> Message:
    channel = arena.channel()
    handle = await arena.emu.run_command(user, channel, "tictactoe", first="me", **options)
    response = await handle.response()
    if response.deferred:
        return await handle.edited_original()
    assert response.message is not None and not response.message.ephemeral
    return response.message


def stored(arena: Arena, message: Message) -> Any:
    game_id = int(str(free_cells(message)[0].custom_id).split(":")[2])
    return db_games(arena.database)[game_id]


async def click_first_free(arena: Arena, user: User, message: Message) -> Any:
    """Click the first free cell of ``message`` as it is now; return (handle, cell)."""
    button = free_cells(message)[0]
    handle = await arena.emu.click(user, message, custom_id=button.custom_id)
    return handle, int(str(button.custom_id).split(":")[3])


async def test_a_500_or_429_on_the_answer_is_retried_in_time(arena: Arena) -> None:
    emu = arena.emu
    alice = arena.member()
    async with arena.bot() as bot:
        for fault in (
            lambda: emu.fail_requests("POST", CALLBACK, status=500),
            lambda: emu.rate_limit_requests("POST", CALLBACK, retry_after=0.5),
        ):
            board = await new_board(arena, alice, difficulty="hard")
            injected = fault()
            handle, cell = await click_first_free(arena, alice, board)
            response = await handle.response()
            assert injected.hits == 1
            assert response.type == CallbackType.UPDATE_MESSAGE, bot.log()
            row = stored(arena, board)
            assert moves_of(row)[0] == cell and row["move_no"] == 2  # once, plus my reply
            assert shows(emu.message(board.id), row)  # type: ignore[arg-type]
        assert not emu.failed_interactions
    assert_log_clean(bot.log())


async def test_an_answer_that_misses_the_deadline_is_repaired_by_the_next_click(
    arena: Arena,
) -> None:
    """500 twice (discord.py's retry comes too late) or held past 3 s: the user saw
    "interaction failed", but the move was stored; the next click on the old board is
    answered "the board changed" and the board is redrawn."""
    emu = arena.emu
    alice, bob = arena.member(), arena.member()
    async with arena.bot() as bot:
        for fault in (
            lambda: emu.fail_requests("POST", CALLBACK, status=500, times=2),
            lambda: emu.delay_requests("POST", CALLBACK, 3.5),
        ):
            # Between two members: the board changes only by the clicks themselves.
            handle = await emu.run_command(
                alice, arena.channel(), "tictactoe", opponent=bob, first="me"
            )
            challenge = (await handle.response()).message
            assert challenge is not None
            await (await emu.click(bob, challenge, label="Accept")).response()
            board = emu.message(challenge.id)
            assert board is not None
            injected = fault()
            lost, cell = await click_first_free(arena, alice, board)
            assert (await lost.response()).failed
            await eventually(emu, lambda f=injected: f.hits >= f.times, "the fault was used")
            row = stored(arena, board)
            await eventually(
                emu,
                lambda b=board: stored(arena, b)["move_no"] == 1,
                "the lost answer's move is stored",
            )
            row = stored(arena, board)
            assert moves_of(row) == (cell,)
            assert not shows(emu.message(board.id), row)  # type: ignore[arg-type]

            # Alice, seeing no change, clicks again on the board she has.
            again, _ = await click_first_free(arena, alice, emu.message(board.id))  # type: ignore[arg-type]
            answer = await again.response()
            assert answer.ephemeral and "board changed" in answer.message.text  # type: ignore[union-attr]
            await eventually(
                emu,
                lambda b=board: shows(emu.message(b.id), stored(arena, b)),  # type: ignore[arg-type]
                "the board is redrawn with the stored move",
            )
            assert moves_of(stored(arena, board)) == (cell,)  # not applied twice

            # And the game goes on from there.
            turn, _ = await click_first_free(arena, bob, emu.message(board.id))  # type: ignore[arg-type]
            assert (await turn.response()).type == CallbackType.UPDATE_MESSAGE
            assert stored(arena, board)["move_no"] == 2
        assert len(emu.failed_interactions) == 2
    log = bot.log()
    assert_log_clean(log)
    assert "Too late to answer" in log


async def test_a_failing_edit_after_a_deferral_is_retried(arena: Arena) -> None:
    """A 5x5 click against the bot is answered with the player's move, then the board is
    edited through the interaction's webhook; that edit answered 500 once, 429, or held
    for 4 s still lands."""
    emu = arena.emu
    alice = arena.member()
    async with arena.bot() as bot:
        for fault in (
            lambda: emu.fail_requests("PATCH", ORIGINAL, status=500),
            lambda: emu.rate_limit_requests("PATCH", ORIGINAL, retry_after=0.5),
            lambda: emu.delay_requests("PATCH", ORIGINAL, 4.0),
        ):
            board = await new_board(arena, alice, size="5x5", difficulty="hard")
            injected = fault()
            handle, cell = await click_first_free(arena, alice, board)
            await handle.response()
            assert answered_thinking(handle), bot.log()
            await handle.edited_original()
            assert injected.hits == 1
            row = stored(arena, board)
            assert moves_of(row)[0] == cell and row["move_no"] == 2
            assert shows(emu.message(board.id), row)  # type: ignore[arg-type]
        assert not emu.failed_interactions
    assert_log_clean(bot.log())
