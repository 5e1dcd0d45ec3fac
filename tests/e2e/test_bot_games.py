"""Games against the bot, end to end: every level on 3x3, a 5x5 game, refusals, rematch."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import defaultdict

import pytest

from bot.launcher import ai_paused, answered_thinking
from bot.ui import ids
from discord_emulator import ButtonStyle, CallbackType, InteractionType
from engine.levels import get_level

from .helpers import (
    TURN_TIMER,
    Arena,
    check_final,
    eventually,
    read_board,
    refusal,
    snapshot,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

# Games here are often forfeited before the member moves: no wait after that
# (test_fair_play.py tests it).
BOT_ENV = {"ABANDON_COOLDOWN_SECONDS": "0"}
POSTGRESQL = True  # the games module on PostgreSQL too (tests/e2e/conftest.py)

REVIEW_MOVE = re.compile(r"^`\s*[0-9]+\.`\s*(🟦 X|🟥 O) ([a-c])([1-3])\b", re.MULTILINE)
"""A review's move line: the mark in its colour and the cell by coordinate ("🟥 O b2")."""


@pytest.mark.parametrize(
    ("level", "first"),
    [
        ("easy", "me"),
        ("medium", "opponent"),
        ("hard", "me"),
        ("impossible", "me"),
        ("impossible", "opponent"),
        ("medium", "random"),
    ],
)
async def test_a_full_game_against_each_level(arena: Arena, level: str, first: str) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty=level, first=first)
    state = arena.board(board)
    if first == "random":
        assert state.move_no in (0, 1)
        me = "X" if state.move_no == 0 else "O"
    else:
        me = "X" if first == "me" else "O"
    assert state.live and state.move_no == (0 if me == "X" else 1)
    if state.move_no:  # the bot opened: its move is the last one, its mark on grey
        assert state.last is not None and state.marks[state.last] == "X", state
    # The level once, compactly, beside the bot's mark; its description is not repeated.
    assert state.text.count(f"🤖 me ({level})") == 1, state.text
    assert "Level:" not in state.text, state.text
    assert str(get_level(level).description) not in state.text, state.text
    assert any(
        "🟦 **X**" in line and "🟥 **O**" in line and f"<@{alice.id}>" in line
        for line in state.text.splitlines()
    ), f"a line with the players and their marks: {state.text}"
    grey = "The mark on a grey button is the last move."
    assert (grey in state.text) is (state.move_no > 0), state.text  # no cell names: none shown
    assert f"<@{alice.id}>, your move" in state.text
    assert TURN_TIMER.search(state.text), "the text shows the time left"
    # Alice asked for the board: it notifies nobody, nor does anything else here.
    allowed = board.allowed_mentions or {}
    assert not allowed.get("users") and not allowed.get("parse"), allowed
    assert board.pings.nobody and board.mentions.nobody

    final = await arena.play_out(alice, board, me)
    mark = check_final(final, 3)
    if mark == me:
        assert f"<@{alice.id}> won" in final.text, final.text
    elif mark:
        assert "won" in final.text and f"<@{alice.id}> won" not in final.text, final.text
    else:
        assert "draw" in final.text.lower(), final.text
    if level == "impossible":
        assert mark != me, f"the impossible level lost:\n{final.text}"
    assert final.controls == ("Rematch", "Review")
    assert not (final.message.allowed_mentions or {}).get("users"), "nobody to ping at the end"

    review = await arena.click(alice, final.message, label="Review")
    assert review.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE and review.ephemeral
    listed = REVIEW_MOVE.findall(review.message.text)
    assert len(listed) == final.move_no, review.message.text
    shown = {(int(row) - 1) * 3 + "abc".index(col): mark[-1] for mark, col, row in listed}
    assert shown == {i: m for i, m in enumerate(final.marks) if m}, review.message.text
    if mark:
        assert "decided" in review.message.text, review.message.text


async def test_a_full_game_on_5x5_shows_each_move_then_the_reply(arena: Arena) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    answer = await arena.command(
        alice, channel, "tictactoe", size="5x5", difficulty="medium", first="opponent"
    )
    # The bot opens: a deferred reply, then the board as the original response.
    assert answer.type is CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE
    board = await answer.handle.edited_original()
    state = arena.board(board, 5)
    assert state.live and state.move_no == 1 and "4 in a row" in state.text
    assert f"<@{alice.id}>, your move" in state.text

    final = await arena.play_out(alice, board, "O", side=5, k=4, thinking=True)
    mark = check_final(final, 4)
    assert ("won" if mark else "draw") in final.text.lower(), final.text
    assert final.controls == ("Rematch", "Review")


async def test_rejected_clicks_are_answered_privately(arena: Arena) -> None:
    alice, carol, channel = arena.member("alice"), arena.member("carol"), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty="easy", first="me")
    edits = arena.current(board).edits

    # Someone else's game.
    text = await refusal(await arena.click(carol, arena.current(board), row=1, col=1))
    assert "isn't your game" in text
    text = await refusal(await arena.click(carol, arena.current(board), label="Forfeit"))
    assert "isn't your game" in text
    assert arena.current(board).edits == edits and arena.board(board).move_no == 0

    # A click on the board as it was before the last move (the user's client lagging).
    before = snapshot(arena.current(board))
    await arena.move(alice, board, 4)
    state = arena.board(board)
    assert state.move_no == 2
    free = state.free()[0]  # free now, and in the old view too
    text = await refusal(await arena.click(alice, before, row=free // 3, col=free % 3))
    assert "board changed" in text
    # The same old custom_id arriving with the message as it is now.
    old_id = before.button_grid()[free // 3][free % 3].custom_id
    assert old_id is not None
    text = await refusal(await arena.raw_click(alice, board, old_id))
    assert "board changed" in text

    # A taken cell named by a forged move click (its mark's own button is tested in
    # test_marks_stay_bright_and_their_clicks_change_nothing).
    taken = arena.board(board)
    forged = f"ttt:cell:{taken.game_id}:4:{taken.move_no}"
    text = await refusal(await arena.raw_click(alice, board, forged))
    assert "already taken" in text
    assert arena.board(board).marks == taken.marks

    # After the end: a click from an old view of the live board, and an old Forfeit.
    live = snapshot(arena.current(board))
    await arena.forfeit(alice, board)
    ended = arena.board(board)
    assert "forfeited" in ended.text and ended.controls == ("Rematch", "Review")
    cell = read_board(live, 3).free()[0]
    text = await refusal(await arena.click(alice, live, row=cell // 3, col=cell % 3))
    assert "over" in text
    text = await refusal(await arena.click(alice, live, label="Forfeit"))
    assert "over" in text
    assert arena.board(board).marks == ended.marks


async def test_marks_stay_bright_and_their_clicks_change_nothing(arena: Arena) -> None:
    """No mark is on a disabled button (Discord fades those): a click on one is answered
    privately and changes nothing, on a live board and a finished one; only a finished
    board's empty cells are disabled."""
    alice, carol, channel = arena.member("alice"), arena.member("carol"), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty="easy", first="me")
    await arena.move(alice, board, 4)
    live = arena.board(board)  # read_board checks the colours and that no mark is disabled
    assert live.marks[4] == "X" and live.cells[4].style == ButtonStyle.PRIMARY
    bot_cell = next(i for i, m in enumerate(live.marks) if m == "O")
    # The bot's reply is the last move: its O on grey, still enabled.
    assert live.last == bot_cell and live.cells[bot_cell].style == ButtonStyle.SECONDARY
    edits = arena.current(board).edits
    for user, cell in ((alice, 4), (alice, bot_cell), (carol, 4)):
        text = await refusal(
            await arena.click(user, arena.current(board), custom_id=live.cell_id(cell))
        )
        assert text == "That cell is already taken."
    assert arena.current(board).edits == edits and arena.board(board).marks == live.marks

    ended = await arena.forfeit(alice, board)
    assert [b.disabled for b in ended.cells] == [m is None for m in ended.marks]
    edits = arena.current(board).edits
    for user in (alice, carol):
        text = await refusal(await arena.click(user, arena.current(board), row=1, col=1))
        assert text == "This game is already over."
    assert arena.current(board).edits == edits and arena.board(board).marks == ended.marks


async def test_refusals_while_the_bot_thinks(arena: Arena) -> None:
    alice, carol, channel = arena.member("alice"), arena.member("carol"), arena.channel()
    board = await arena.start_bot_game(alice, channel, size="5x5", difficulty="hard", first="me")
    before = snapshot(arena.current(board))
    await arena.move(alice, board, 12, side=5, thinking=True)
    state = arena.board(board, 5)
    assert state.move_no == 2

    text = await refusal(await arena.click(carol, arena.current(board), row=0, col=0))
    assert "isn't your game" in text
    text = await refusal(await arena.click(alice, before, row=0, col=0))
    assert "board changed" in text
    # A forged click on a taken cell is answered privately.
    text = await refusal(await arena.raw_click(alice, board, state.cell_id(12)))
    assert "already taken" in text
    assert arena.board(board, 5).marks == state.marks
    await arena.forfeit(alice, board, side=5)


async def test_rematch_and_forfeit_against_the_bot(arena: Arena) -> None:
    alice, carol, channel = arena.member("alice"), arena.member("carol"), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty="medium", first="me")
    ended = await arena.forfeit(alice, board)
    assert ended.controls == ("Rematch",), "no moves: nothing to review"
    assert f"<@{alice.id}> forfeited" in ended.text
    assert "forfeited. I won." in ended.text

    text = await refusal(await arena.click(carol, arena.current(board), label="Rematch"))
    assert "isn't your game" in text

    rematch = await arena.click(alice, arena.current(board), label="Rematch")
    assert rematch.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE
    new = rematch.message
    assert new.id != board.id and not new.ephemeral
    state = arena.board(new)
    # Sides swapped: the bot is X now and has already opened.
    assert state.live and state.move_no == 1 and state.marks.count("X") == 1
    assert f"<@{alice.id}>, your move" in state.text and state.text.count("🤖 me (medium)") == 1
    assert state.game_id != ended.game_id
    # The old board is left as it was.
    assert arena.board(board).marks == ended.marks

    final = await arena.play_out(alice, new, "O")
    check_final(final, 3)


async def test_one_game_per_channel(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.start_bot_game(alice, channel, first="me")
    answer = await arena.command(bob, channel, "tictactoe")
    assert answer.ephemeral and "already a game" in answer.message.text
    await arena.forfeit(alice, board)
    second = await arena.start_bot_game(bob, channel, first="me")
    assert second.text.count("🤖 me (medium)") == 1, "medium is the default level"


async def test_server_commands_in_dms_are_answered_privately(arena: Arena) -> None:
    """The commands of a server that added the bot (settings, erasure, the leaderboard)
    are offered only there; one arriving in a DM anyway is refused privately."""
    alice = arena.member("alice")
    dm = arena.emu.dm_channel(alice)
    for command in arena.emu.commands.list(arena.guild.id):
        if command.get("contexts") != [0]:
            continue  # played anywhere (bot/reach.py): tests/e2e/test_anywhere.py
        data = {"id": str(command["id"]), "name": command["name"], "type": 1}
        handle = await arena.emu.send_raw_interaction(
            alice, dm, type=InteractionType.APPLICATION_COMMAND, data=data
        )
        answer = await arena.answer(handle)
        assert answer.ephemeral, (command["name"], answer)
        text = answer.message.text
        assert "server that added me" in text or "Manage Server" in text, text


async def test_an_unexpected_error_gets_a_private_apology(arena: Arena) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty="easy", first="me")
    # Discord refuses the bot's first answer to the next click: the bot hits an error it
    # has no rule for, logs it, and still tells the user.
    fault = arena.emu.fail_requests("POST", "/interactions/*/callback", status=400)
    state = arena.board(board)
    answer = await arena.click(alice, state.message, custom_id=state.cell_id(0))
    assert fault.hits == 1
    assert answer.ephemeral, answer
    assert "something went wrong" in answer.message.text.lower()
    arena.expected_log_errors = 1


async def test_a_failed_board_update_does_not_strand_the_game(arena: Arena) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty="easy", first="me")
    arena.emu.fail_requests("POST", "/interactions/*/callback", status=400)
    state = arena.board(board)
    answer = await arena.click(alice, state.message, custom_id=state.cell_id(0))
    assert answer.ephemeral and "something went wrong" in answer.message.text.lower()
    arena.expected_log_errors = 1
    # The player must be able to go on: the board shows the move that was kept (at once,
    # or when the next click on the old board is refused), or the move was not kept and
    # that click plays it.
    with contextlib.suppress(AssertionError):
        await eventually(arena.emu, lambda: arena.board(board).move_no > 0, "a redraw", 3)
    state = arena.board(board)
    if state.move_no == 0:
        retry = await arena.click(alice, state.message, custom_id=state.cell_id(0))
        if retry.type is not CallbackType.UPDATE_MESSAGE:
            await refusal(retry)
            await eventually(
                arena.emu,
                lambda: arena.board(board).move_no > 0,
                "the move was kept but the board still shows the game before it",
                3,
            )
        state = arena.board(board)
    assert state.marks[0] == "X" and state.live and state.move_no == 2
    await arena.forfeit(alice, board)


async def test_naming_the_bot_as_opponent_starts_a_game_against_it(arena: Arena) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    answer = await arena.command(
        alice, channel, "tictactoe", opponent=arena.emu.bot, difficulty="hard", first="me"
    )
    assert answer.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE and not answer.ephemeral
    state = arena.board(answer.message)
    assert state.live and state.text.count("🤖 me (hard)") == 1
    assert f"<@{alice.id}>, your move" in state.text
    assert not [b for b in answer.message.buttons() if b.label in ("Accept", "Decline")]
    await arena.forfeit(alice, answer.message)


async def test_a_double_click_plays_once(arena: Arena) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty="hard", first="me")
    state = arena.board(board)
    first = await arena.emu.click(alice, state.message, custom_id=state.cell_id(4))
    second = await arena.emu.click(alice, state.message, custom_id=state.cell_id(4))
    answers = [await arena.answer(first), await arena.answer(second)]
    assert [a.type for a in answers].count(CallbackType.UPDATE_MESSAGE) == 1, answers
    refused = next(a for a in answers if a.type is not CallbackType.UPDATE_MESSAGE)
    assert "board changed" in await refusal(refused)
    after = arena.board(board)
    assert after.move_no == 2 and after.marks[4] == "X" and after.marks.count("O") == 1
    await arena.forfeit(alice, board)


@pytest.mark.parametrize(("level", "win_length"), [("medium", 3), ("hard", 4)])
async def test_a_full_game_on_4x4(arena: Arena, level: str, win_length: int) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    board = await arena.start_bot_game(
        alice, channel, size="4x4", win_length=win_length, difficulty=level, first="me"
    )
    state = arena.board(board, 4)
    assert state.live and state.move_no == 0
    assert f"{win_length} in a row" in state.text
    # One answer per click: an update, or (if the bot may think long) a deferral + one edit.
    final = await arena.play_out(alice, board, "X", side=4, k=win_length, thinking=None)
    mark = check_final(final, win_length)
    assert ("won" if mark else "draw") in final.text.lower(), final.text


async def test_settings_that_do_not_fit_are_refused(arena: Arena) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    answer = await arena.command(alice, channel, "tictactoe", size="3x3", win_length=4)
    assert answer.ephemeral and "doesn't fit" in answer.message.text, answer.message.text
    answer = await arena.command(alice, channel, "tictactoe-stats", member=arena.emu.bot)
    assert answer.ephemeral and "Bots" in answer.message.text, answer.message.text
    board = await arena.start_bot_game(alice, channel, first="me")  # the channel is still free
    await arena.forfeit(alice, board)


async def test_the_game_goes_on_after_the_gateway_session_is_lost(arena: Arena) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty="hard", first="me")
    await arena.move(alice, board, 4)
    # The session is invalidated: the bot identifies afresh (after discord.py's backoff),
    # and the same buttons go on working.
    async with arena.emu.disconnected(resumable=False):
        pass
    final = await arena.play_out(alice, board, "X")
    check_final(final, 3)


async def test_rematch_of_a_big_board_defers(arena: Arena) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    board = await arena.start_bot_game(alice, channel, size="5x5", difficulty="medium", first="me")
    await arena.forfeit(alice, board, side=5)
    answer = await arena.click(alice, arena.current(board), label="Rematch")
    # Now the bot opens, which may take a while: "thinking", then the new board.
    assert answer.type is CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE, answer
    new = await answer.handle.edited_original()
    state = arena.board(new, 5)
    assert new.id != board.id and state.live and state.move_no == 1
    assert f"<@{alice.id}>, your move" in state.text
    await arena.forfeit(alice, new, side=5)


async def test_forged_and_foreign_buttons_are_refused(arena: Arena) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty="easy", first="me")
    state = arena.board(board)
    # The game's buttons, forged in another server the bot is in: refused, nothing changes.
    other = arena.emu.add_guild("Elsewhere")
    elsewhere = arena.emu.add_text_channel(other, "games")
    mallory = arena.emu.add_user("mallory")
    arena.emu.add_member(other, mallory)
    for custom_id in (state.cell_id(0), f"ttt:forfeit:{state.game_id}"):
        handle = await arena.emu.send_raw_interaction(
            mallory,
            elsewhere,
            type=InteractionType.MESSAGE_COMPONENT,
            data={"custom_id": custom_id, "component_type": 2},
        )
        assert await refusal(await arena.answer(handle)), custom_id
    # Ids that match no game, or nothing at all.
    for custom_id in ("ttt:cell:987654321:0:0", "ttt:nonsense", "something-else"):
        text = await refusal(await arena.raw_click(alice, board, custom_id))
        assert text, custom_id
    # Every kind of id, malformed: its template with each field not a number or a choice,
    # the kind's bare prefix, one field too many. The router's answer, not a crash.
    for kind in ids.KINDS:
        broken = re.sub(r"\{\w+\}", "x", kind.TEMPLATE)
        wire = kind.TEMPLATE.format_map(defaultdict(lambda: "1", scope="me", answer="yes"))
        for custom_id in (broken, kind.TEMPLATE.partition("{")[0], wire + ":1"):
            text = await refusal(await arena.raw_click(alice, board, custom_id))
            assert "no longer in use" in text, (custom_id, text)
    # A click in a DM, and in a server that installed the commands but not the bot user:
    # games there are kept apart (bot/reach.py), so this server's game is not found.
    outside = arena.emu.add_guild("Commands only", bot_member=False)
    outside_channel = arena.emu.add_text_channel(outside, "games")
    arena.emu.add_member(outside, mallory)
    for user, where in ((alice, arena.emu.dm_channel(alice)), (mallory, outside_channel)):
        handle = await arena.emu.send_raw_interaction(
            user,
            where,
            type=InteractionType.MESSAGE_COMPONENT,
            data={"custom_id": state.cell_id(0), "component_type": 2},
        )
        assert await refusal(await arena.answer(handle))
    assert arena.board(board).marks == state.marks and arena.board(board).live
    await arena.forfeit(alice, board)


async def test_many_games_at_once(arena: Arena) -> None:
    players = [arena.member(f"rush{i}") for i in range(10)]
    boards = [
        await arena.start_bot_game(player, arena.channel("rush"), size="4x4", difficulty="medium")
        for player in players
    ]
    # Everyone clicks at the same moment, in their own channel: every click is answered
    # in time, once, with the player's move and the bot's reply (or, if the reply queued
    # too long, with the move and "My move…", then the reply in an edit).
    handles = []
    for player, board in zip(players, boards, strict=True):
        state = arena.board(board, 4)
        cell = state.cell_id(state.free()[0])
        handles.append(await arena.emu.click(player, state.message, custom_id=cell))
    answers = await asyncio.gather(*(arena.answer(handle) for handle in handles))
    for answer, board in zip(answers, boards, strict=True):
        assert answer.type is CallbackType.UPDATE_MESSAGE
        if answered_thinking(answer.handle):
            await answer.handle.edited_original()
        state = arena.board(board, 4)
        assert state.live and state.move_no in (2, 3), state.marks
    for player, board in zip(players, boards, strict=True):
        await arena.forfeit(player, board, side=4)


async def test_a_quick_reply_stuck_behind_a_search_still_answers_in_time(arena: Arena) -> None:
    """A 4x4 reply at medium is normally part of the click's answer; when it queues behind
    a 5x5 search (one AI worker, held stopped here so that the search cannot end first),
    the click is answered after QUICK_REPLY_SECONDS with the player's move and "My move…",
    and the reply follows as an edit once the worker goes on."""
    alice, bob = arena.member("alice"), arena.member("bob")
    big = await arena.start_bot_game(
        alice, arena.channel("deep"), size="5x5", win_length=4, difficulty="hard", first="me"
    )
    small = await arena.start_bot_game(
        bob, arena.channel("quick"), size="4x4", difficulty="medium", first="me"
    )
    with ai_paused(None):  # the bot runs in this process: its forkserver's workers
        cell = arena.board(big, 5).cell_id(12)
        search = await arena.click(alice, arena.current(big), custom_id=cell)
        assert answered_thinking(search.handle)  # 5x5 at hard: a search, sent to the worker
        state = arena.board(small, 4)
        answer = await arena.click(bob, state.message, custom_id=state.cell_id(state.free()[0]))
        assert answer.type is CallbackType.UPDATE_MESSAGE and not answer.handle.failed
        assert answered_thinking(answer.handle), "the reply should have waited for the search"
        assert answer.handle.original_edits == 0 and search.handle.original_edits == 0
    await answer.handle.edited_original()
    after = arena.board(small, 4)
    assert after.live and after.move_no == 2 and f"<@{bob.id}>, your move" in after.text
    await search.handle.edited_original()
    await arena.forfeit(alice, big, side=5)
    await arena.forfeit(bob, small, side=4)
