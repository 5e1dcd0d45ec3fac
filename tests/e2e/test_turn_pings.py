"""Turn notifications, end to end: who is pinged, when, and that none is left standing.

A player watching the board needs no notification: the player to move of a member game
is pinged, by a new plain message that mentions only them, only once their turn waited
the grace period (here a fifth of a 30 s turn, the shortest a server may choose: 6 s), by
the sweep, once per turn, and reminded once before the clock runs out (6 s before,
brought forward by at most one sweep). The tests let that time pass by moving the turn
back in the database (``tests.overdue``) instead of waiting for it, and sweep when a
sweep would have come round (``arena.sweep``). Discord's
refusals are injected: rate-limited deletes are retried until none stands, and a refused
ping is not tried again in that turn.
"""

from __future__ import annotations

import re

import pytest

from discord_emulator import CallbackType, Channel, Message, Permission, User
from tests.overdue import elapse, run_out

from .helpers import WAIT, Arena, eventually, refusal

pytestmark = pytest.mark.asyncio(loop_scope="module")
POSTGRESQL = True  # the turn pings and call-offs module on PostgreSQL too (tests/e2e/conftest.py)

TURN = 30.0
GRACE = TURN / 5
REMINDED = TURN - GRACE - 1
"""How far into a turn its reminder is due: a fifth of the turn, and a sweep (every 1 s in
the process), before its end."""
BOT_ENV = {"TURN_TIMEOUT_SECONDS": f"{TURN:g}"}
DEADLINE = re.compile(r"time runs out <t:(?P<at>[0-9]+):R>")
MANAGE_SERVER = Permission.MANAGE_GUILD | Permission.USE_APPLICATION_COMMANDS


def most_standing(arena: Arena, channel: Channel) -> int:
    """The most turn notifications that ever stood at once in ``channel``, replayed from
    the requests the emulator answered, in order: sends (to the channel, or a click's
    follow-ups through its webhook), then deletes (either way)."""
    pings = {message.id for message in arena.turn_pings(channel, deleted=True)}
    standing: set[int] = set()
    most = 0
    for request in arena.emu.requests:
        if request.method == "POST" and request.status == 200:
            sent = (
                (request.response or {}).get("id") if isinstance(request.response, dict) else None
            )
            if sent is not None and int(sent) in pings:
                standing.add(int(sent))
        elif request.method == "DELETE" and request.status in (204, 404):
            gone = request.path.rsplit("/", 1)[1]
            if gone.isdigit():
                standing.discard(int(gone))
        most = max(most, len(standing))
    return most


def nobody_else(arena: Arena, channel: Channel, pinged: set[int]) -> None:
    """Every message of the channel notified nobody but the members in ``pinged``."""
    for message in arena.emu.messages(channel, include_deleted=True):
        assert message.pings.users <= pinged and not message.pings.roles, message
        assert not message.pings.everyone, message


def sends(arena: Arena, channel: Channel) -> list[int]:
    """The status of every message the bot tried to send in ``channel`` (not answers)."""
    path = f"/channels/{channel.id}/messages"
    return [r.status for r in arena.emu.requests if r.method == "POST" and r.path == path]


async def none_standing(arena: Arena, channel: Channel, why: str) -> None:
    await eventually(arena.emu, lambda: not arena.turn_pings(channel), why, WAIT)


async def test_a_game_played_at_once_pings_nobody(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    for user, cell in [(alice, 0), (bob, 3), (alice, 1), (bob, 4), (alice, 2)]:
        await arena.move(user, board, cell)
    assert f"<@{alice.id}> won" in arena.board(board).text
    await elapse(arena.database, board.id, GRACE)  # past the grace of the last turn
    await arena.sweep()  # a sweep or two after the end
    await arena.sweep()
    assert arena.turn_pings(channel, deleted=True) == []
    assert sends(arena, channel) == []
    # The board was the challenge: it notified Bob of it once, and nobody since.
    assert arena.current(board).pings.users == {bob.id}


async def test_an_idle_player_gets_one_ping_after_the_grace_then_one_reminder(
    arena: Arena,
) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    await elapse(arena.database, board.id, GRACE - 2)  # two seconds short of the grace
    await arena.sweep()
    assert arena.turn_pings(channel, deleted=True) == [], "not before the grace"
    await elapse(arena.database, board.id, 2)
    first = await arena.turn_ping(bob, channel, after=0)
    link = f"https://discord.com/channels/{arena.guild.id}/{channel.id}/{board.id}"
    assert link in first.content and "(you play O)" in first.content
    assert f"against <@{alice.id}>" in first.content and first.edits == 0
    found = DEADLINE.search(first.content)
    assert found is not None

    await elapse(arena.database, board.id, REMINDED - GRACE)
    reminder = await arena.turn_ping(bob, channel, after=1)  # deletes the first
    assert "reminder" in reminder.content and arena.current(first).deleted
    at = DEADLINE.search(reminder.content)
    assert at is not None and int(at["at"]) == int(found["at"]) - int(REMINDED - GRACE)
    assert reminder.created_at.timestamp() < int(at["at"]) + 1, "before time runs out"

    await run_out(arena.database, board.id)
    await arena.sweep()
    await eventually(arena.emu, lambda: not arena.board(board).live, "the timeout", WAIT)
    # Bob never moved: his time-out is an abort, and counts for nobody.
    assert "Aborted before both players moved" in arena.board(board).text
    await none_standing(arena, channel, "the timeout deletes it")
    sent = arena.turn_pings(channel, deleted=True)
    assert [m.pings.users for m in sent] == [{bob.id}, {bob.id}], "Alice moved at once"
    assert most_standing(arena, channel) == 1
    nobody_else(arena, channel, {alice.id, bob.id})


async def test_who_accepted_and_moves_first_is_not_pinged_for_that_turn(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    challenge = await arena.challenge(alice, bob, channel, first="opponent")
    state = await arena.accept(bob, challenge)
    assert f"<@{bob.id}>, your move" in state.text
    await elapse(arena.database, challenge.id, GRACE)  # past the grace, before the reminder
    await arena.sweep()
    assert arena.turn_pings(channel, deleted=True) == []
    await arena.move(bob, challenge, 4)
    await elapse(arena.database, challenge.id, GRACE)
    ping = await arena.turn_ping(alice, channel, after=0)  # Alice did not click
    await arena.move(alice, challenge, 0)
    await eventually(arena.emu, lambda: arena.current(ping).deleted, "the move deletes it", WAIT)
    await arena.forfeit(bob, challenge)
    await arena.sweep()
    assert len(arena.turn_pings(channel, deleted=True)) == 1, "the ping of Alice's turn only"
    nobody_else(arena, channel, {alice.id, bob.id})


async def test_a_member_who_turned_notifications_off_is_not_pinged(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    answer = await arena.command(bob, channel, "tictactoe-preferences", turn_notifications=False)
    assert answer.ephemeral and "Turn notifications: on → **off**" in answer.message.text
    assert "Challenges to you: on" in answer.message.text
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    await elapse(arena.database, board.id, REMINDED + 1)  # past the reminder's time
    await arena.sweep()
    assert arena.turn_pings(channel, deleted=True) == []
    answer = await arena.command(bob, channel, "tictactoe-preferences", turn_notifications=True)
    assert "Turn notifications: off → **on**" in answer.message.text
    await run_out(arena.database, board.id, missing_ok=True)  # unless it ran out already
    await arena.sweep()
    await eventually(arena.emu, lambda: not arena.board(board).live, "the timeout", WAIT)


async def test_a_server_may_turn_notifications_off_and_choose_the_grace(arena: Arena) -> None:
    mod = arena.member("mod", permissions=MANAGE_SERVER)
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    saved = await arena.command(mod, channel, "tictactoe-settings", turn_notifications=False)
    assert "Turn notifications: on → **off**" in saved.message.text
    try:
        board = await arena.member_game(alice, bob, channel)
        await arena.move(alice, board, 4)
        await elapse(arena.database, board.id, GRACE)
        await arena.sweep()
        assert arena.turn_pings(channel, deleted=True) == []
        # Bob's own choice beats the server's.
        await arena.command(bob, channel, "tictactoe-preferences", turn_notifications=True)
        await arena.turn_ping(bob, channel, after=0)
        await arena.forfeit(bob, board)
        await none_standing(arena, channel, "the forfeit deletes it")
    finally:
        await arena.command(mod, channel, "tictactoe-settings", reset=True)


async def test_rate_limited_and_failed_deletes_are_retried_until_none_stands(
    arena: Arena,
) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    await elapse(arena.database, board.id, GRACE)
    ping = await arena.turn_ping(bob, channel, after=0)
    assert ping.interaction_metadata is not None, "a follow-up of Alice's click"
    path = f"/webhooks/*/messages/{ping.id}"
    # Twice as many 429s as discord.py tries: the forfeit's delete fails, and a sweep's.
    limited = arena.emu.rate_limit_requests("DELETE", path, retry_after=0.05, times=10)
    await arena.forfeit(bob, board)
    await arena.sweep_until(lambda: arena.current(ping).deleted, "a later sweep's delete")
    assert limited.exhausted
    deletes = [
        r.status
        for r in arena.emu.requests
        if r.method == "DELETE" and r.path.endswith(f"/messages/{ping.id}")
    ]
    # (The injected 429s count toward the route's bucket too: it may answer a few more.)
    assert deletes[:10] == [429] * 10 and deletes[-1] == 204, deletes
    assert set(deletes[10:-1]) <= {429}, deletes
    assert most_standing(arena, channel) == 1


async def test_one_call_off_proposal_at_a_time_and_it_goes_when_it_lapses(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    await arena.move(bob, board, 0)  # both moved: only now would a stop cost a rating

    async def propose(user: User) -> Message | str:
        stop = await arena.command(user, channel, "tictactoe-stop")
        answer = await arena.click(user, stop.message, label="Propose calling it off")
        if answer.type is not CallbackType.UPDATE_MESSAGE:
            return await refusal(answer)
        (proposal,) = await answer.handle.wait_followups(1)
        return proposal

    proposal = await propose(bob)
    assert isinstance(proposal, Message) and proposal.pings.users == {alice.id}
    for user in (bob, alice):
        again = await propose(user)
        assert isinstance(again, str) and "already waiting" in again, again
    standing = [m for m in arena.emu.messages(channel) if not m.ephemeral and m.id != board.id]
    assert standing == [arena.current(proposal)], "one proposal stands"
    await arena.move(alice, board, 8)  # the proposal lapses: the sweep deletes its message
    await arena.sweep()
    await eventually(arena.emu, lambda: arena.current(proposal).deleted, "the lapse", WAIT)
    await arena.forfeit(alice, board)


async def test_a_member_may_challenge_five_members_in_ten_minutes(arena: Arena) -> None:
    carol, channel = arena.member("carol"), arena.channel()
    others = [arena.member(f"member{i}") for i in range(6)]
    for other in others[:5]:
        challenge = await arena.challenge(carol, other, channel)
        await arena.click(carol, arena.current(challenge), label="Withdraw")
    before = len(arena.emu.messages(channel, include_deleted=True))
    text = await refusal(await arena.command(carol, channel, "tictactoe", opponent=others[5]))
    assert "as many different members in 10 minutes" in text and "(5)" in text, text
    new = arena.emu.messages(channel, include_deleted=True)[before:]
    assert not [m for m in new if not m.ephemeral], "nobody is pinged"
    # One of the five again is fine (its own cooldown allowing).
    text = await refusal(await arena.command(carol, channel, "tictactoe", opponent=others[0]))
    assert "a moment ago" in text, "the per-member cooldown, not the cap"
