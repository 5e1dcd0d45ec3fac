"""Turn notifications, end to end: who is pinged, by which message, and when it goes away.

Editing a message notifies nobody in Discord, so the player to move of a member game is
told by a new plain message that mentions only them; one stands per game at a time, the
game's end deletes it, and a reminder comes before the turn clock runs out. The bot runs
with a 6 s turn and a 1 s sweep: the reminder is due 1.2 s (a fifth of the turn) plus at
most one sweep before the deadline.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import signal
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest

from discord_emulator import Channel, Emulator, Message, User
from tests.bot.e2e_helpers import BotProcess
from tests.pgtools import read_rows

from .conftest import WAIT, Arena, assert_log_clean, eventually

pytestmark = pytest.mark.asyncio(loop_scope="module")

TURN = 6.0
BOT_ENV = {"TURN_TIMEOUT_SECONDS": f"{TURN:g}", "SWEEP_INTERVAL_SECONDS": "1"}
DEADLINE = re.compile(r"time runs out <t:(?P<at>[0-9]+):R>")


def most_standing(arena: Arena, channel: Channel) -> int:
    """The most turn notifications that ever stood at once in ``channel``, replayed from
    the requests the emulator answered, in order (a send, then deletes)."""
    pings = {message.id for message in arena.turn_pings(channel, deleted=True)}
    messages = f"/channels/{channel.id}/messages"
    standing: set[int] = set()
    most = 0
    for request in arena.emu.requests:
        if request.method == "POST" and request.path == messages and request.status == 200:
            if int(request.response["id"]) in pings:
                standing.add(int(request.response["id"]))
        elif request.method == "DELETE" and request.path.startswith(messages + "/"):
            standing.discard(int(request.path.rsplit("/", 1)[1]))  # 204, or 404: gone
        most = max(most, len(standing))
    return most


def nobody_else(arena: Arena, channel: Channel, pinged: set[int]) -> None:
    """Every message of the channel notified nobody but the members in ``pinged`` (the
    challenge's opponent and the turn notifications' players)."""
    for message in arena.emu.messages(channel, include_deleted=True):
        assert message.pings.users <= pinged and not message.pings.roles, message
        assert not message.pings.everyone, message


async def play(
    arena: Arena,
    board: Message,
    channel: Channel,
    players: tuple[User, User],
    moves: list[tuple[User, int]],
) -> None:
    """Each move is followed by exactly one notification, to the other player alone."""
    for user, cell in moves:
        before = len(arena.turn_pings(channel, deleted=True))
        await arena.move(user, board, cell)
        state = arena.board(board)
        assert state.message.mentions.nobody, "an edited board highlights nobody"
        if state.live:
            waiting = players[1] if user is players[0] else players[0]
            ping = await arena.turn_ping(waiting, channel, after=before)
            link = f"https://discord.com/channels/{arena.guild.id}/{channel.id}/{board.id}"
            assert link in ping.content and DEADLINE.search(ping.content), ping.content


async def test_accept_and_every_move_notify_exactly_the_next_player(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)  # checks Alice's first notification
    (first,) = arena.turn_pings(channel, deleted=True)
    assert "(you play X)" in first.content and f"against <@{bob.id}>" in first.content
    assert first.edits == 0 and not first.components_v2
    await play(
        arena,
        board,
        channel,
        (alice, bob),
        [(alice, 0), (bob, 3), (alice, 1), (bob, 4), (alice, 2)],
    )
    state = arena.board(board)
    assert not state.live and f"<@{alice.id}> won" in state.text
    await eventually(arena.emu, lambda: not arena.turn_pings(channel), "the win deletes it", 5)
    sent = arena.turn_pings(channel, deleted=True)
    assert [m.pings.users for m in sent] == [{alice.id}, {bob.id}, {alice.id}, {bob.id}, {alice.id}]
    assert all(m.deleted for m in sent)
    assert most_standing(arena, channel) == 1
    nobody_else(arena, channel, {alice.id, bob.id})
    # The board was the challenge: it notified Bob of it once, and nobody since.
    assert arena.current(board).pings.users == {bob.id}


async def test_a_forfeit_deletes_the_standing_notification(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await play(arena, board, channel, (alice, bob), [(alice, 4)])
    assert len(arena.turn_pings(channel)) == 1
    await arena.forfeit(bob, board)
    await eventually(arena.emu, lambda: not arena.turn_pings(channel), "the forfeit deletes it", 5)
    assert most_standing(arena, channel) == 1
    nobody_else(arena, channel, {alice.id, bob.id})


async def test_a_stop_deletes_the_standing_notification(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    await arena.member_game(alice, bob, channel)
    answer = await arena.command(bob, channel, "tictactoe-stop")
    assert "stopped" in answer.message.text and answer.message.pings.nobody
    await eventually(arena.emu, lambda: not arena.turn_pings(channel), "the stop deletes it", 5)
    nobody_else(arena, channel, {alice.id, bob.id})


async def test_a_reminder_before_the_deadline_then_the_timeout_deletes_it(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await play(arena, board, channel, (alice, bob), [(alice, 4)])
    (turn,) = arena.turn_pings(channel)
    found = DEADLINE.search(turn.content)
    assert found is not None
    deadline = int(found["at"])

    reminder = await arena.turn_ping(bob, channel, after=2)  # waits for it (up to 10 s)
    assert "reminder" in reminder.content and turn.deleted, "it replaced the turn's first"
    assert reminder.created_at.timestamp() < deadline, "it comes before time runs out"
    assert reminder.created_at.timestamp() >= turn.created_at.timestamp() + TURN / 2 - 0.5

    await eventually(arena.emu, lambda: not arena.board(board).live, "the timeout", TURN)
    assert "ran out of time" in arena.board(board).text
    await eventually(arena.emu, lambda: not arena.turn_pings(channel), "the timeout deletes it", 5)
    sent = arena.turn_pings(channel, deleted=True)
    assert len(sent) == 3, "once per turn: no second reminder"
    assert most_standing(arena, channel) == 1
    nobody_else(arena, channel, {alice.id, bob.id})


async def test_no_notification_in_games_against_the_bot(arena: Arena) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty="easy", first="me")
    assert board.pings.nobody and board.mentions.nobody, "a board notifies nobody"
    await arena.move(alice, board, 4)
    await arena.move(alice, board, arena.board(board).free()[0])
    await arena.forfeit(alice, board)
    assert arena.turn_pings(channel, deleted=True) == []
    nobody_else(arena, channel, set())


async def wait_recorded(database: str | Path, message_ids: list[int]) -> None:
    """Wait until the standing notifications recorded in the database are ``message_ids``."""
    async with asyncio.timeout(WAIT):
        for _ in itertools.count():  # polled: no event tells the test of a commit
            if [r[0] for r in await read_rows(database, RECORDED)] == message_ids:
                return
            await asyncio.sleep(0.05)


RECORDED = "SELECT message_id FROM turn_pings"


async def test_after_a_restart_the_standing_notification_is_still_replaced(
    tmp_path: Path, database_env: dict[str, str]
) -> None:
    async with Emulator(wait_timeout=WAIT) as emu:
        guild = emu.add_guild("Arcade")
        database = tmp_path / "data" / "tictactoe.db"

        def launch() -> AbstractAsyncContextManager[BotProcess]:
            return BotProcess.launch(
                emu,
                tmp_path,
                dev_guild=guild,
                database=database,
                ready_timeout=3 * WAIT,
                **database_env,
            )

        async with launch() as bot:
            arena = Arena(emu, guild, bot, tmp_path)
            alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
            board = await arena.member_game(alice, bob, channel)
            (first,) = arena.turn_pings(channel)
            # Killed once the notification is recorded (sent, not yet recorded, it would be
            # forgotten: the one window this cannot close).
            await wait_recorded(database_env.get("DATABASE_URL", database), [first.id])
            assert await bot.stop(signal.SIGKILL, within=WAIT) == -signal.SIGKILL
        async with launch() as bot:
            arena.bot = bot
            await arena.move(alice, board, 4)
            await arena.turn_ping(bob, channel, after=1)  # which deletes the first
            assert arena.current(first).deleted
            await arena.forfeit(bob, board)
            await eventually(emu, lambda: not arena.turn_pings(channel), "the forfeit", WAIT)
            assert await bot.stop() == 0
        assert_log_clean(bot.log())
