"""Play anywhere (issue 36): the bot's DM, a group DM, a DM between friends and a server
that never added the bot, through interactions alone, on both engines.

Every game here is played with the app installed to one player's account only; the
friend never installed it. Each test counts the requests of its game: all interaction
callbacks or webhook calls, and not one channel route (``REST calls per game`` in the
report of issue 36 comes from ``-s``: each test prints its count).
"""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import time
from pathlib import Path

import asyncpg
import pytest

from bot.i18n import N_
from discord_emulator import CallbackType, Channel, Emulator, User
from tests.e2e.helpers import WAIT, Arena, assert_log_clean, refusal
from tests.e2e.inprocess import BotInProcess
from tests.overdue import elapse, run_out

pytestmark = pytest.mark.asyncio(loop_scope="module")

POSTGRESQL = True
ANYWHERE = True
# Games here end on their first move's clock on purpose; that sets no wait on the next.
BOT_ENV = {"ABANDON_COOLDOWN_SECONDS": "0"}


_NAMES = itertools.count()


def people(arena: Arena, *names: str) -> list[User]:
    """New users (members of no server); the first installs the app to their account."""
    emu = arena.emu
    users = [emu.add_user(f"{name}{next(_NAMES)}") for name in names]
    emu.add_user_install(users[0])
    return users


def routes(arena: Arena, since: int) -> tuple[int, list[str]]:
    """(interaction calls, channel routes) among the requests since ``since``."""
    made = arena.emu.requests[since:]
    calls = [r for r in made if r.path.startswith(("/interactions/", "/webhooks/"))]
    channel = [f"{r.method} {r.path} {r.status}" for r in made if r.path.startswith("/channels/")]
    return len(calls), channel


async def sql(arena: Arena, statement: str, *values: object) -> list[tuple[object, ...]]:
    """Run ``statement`` (``?`` placeholders) on the bot's database, on its own connection."""
    database = arena.database
    if isinstance(database, Path):

        def run() -> list[tuple[object, ...]]:
            with sqlite3.connect(database, timeout=30) as conn:
                rows = conn.execute(statement, values).fetchall()
            conn.close()
            return rows

        return await asyncio.to_thread(run)
    assert isinstance(database, str)
    numbered = statement
    for n in range(1, statement.count("?") + 1):
        numbered = numbered.replace("?", f"${n}", 1)
    conn = await asyncpg.connect(database)
    try:
        if numbered.lstrip().upper().startswith("SELECT"):
            return [tuple(r) for r in await conn.fetch(numbered, *values)]
        await conn.execute(numbered, *values)
        return []
    finally:
        await conn.close()


async def age_token(arena: Arena, message_id: int, seconds: float) -> None:
    """Move the stored token of the game shown by ``message_id`` back by ``seconds``, once
    the bot stored it (it does so just after answering the click)."""
    game = "SELECT id FROM games WHERE message_id = ?"
    token = f"SELECT issued_at FROM reach_tokens WHERE kind = 'game' AND item_id = ({game})"
    for _ in range(500):
        rows = await sql(arena, token, message_id)
        if rows and float(str(rows[0][0])) > time.time() - 60:
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError(f"no fresh token stored for message {message_id}")
    move = (
        "UPDATE reach_tokens SET issued_at = issued_at - ?"
        f" WHERE kind = 'game' AND item_id = ({game})"
    )
    await sql(arena, move, seconds, message_id)


async def play_member_game(arena: Arena, x: User, o: User, channel: Channel) -> int:
    """``x`` challenges ``o`` in ``channel``, a bystander is refused, ``o`` accepts and
    ``x`` wins along the top row; the board's message id."""
    asked = await arena.command(x, channel, "tictactoe", opponent=o, first="me")
    assert not asked.ephemeral, asked.message.text
    challenge = asked.message
    state = await arena.accept(o, challenge)
    for cell, player in ((0, x), (3, o), (1, x), (4, o), (2, x)):
        answer = await arena.click(player, state.message, custom_id=state.cell_id(cell))
        assert answer.type is CallbackType.UPDATE_MESSAGE, (answer, arena.bot.log())
        state = arena.board(challenge)
    assert not state.live
    assert f"<@{x.id}>" in state.text
    return challenge.id


async def test_a_challenge_in_a_group_dm_is_played_to_its_end_through_interactions(
    arena: Arena,
) -> None:
    alice, bob, carol = people(arena, "alice", "bob", "carol")
    group = arena.emu.open_group_dm(alice, [bob, carol])
    since = len(arena.emu.requests)
    challenge = await arena.challenge(alice, bob, group, first="me")
    # Carol sees it but it is not hers: refused privately, nothing changes.
    accept = arena.speaks()(N_("Accept"))
    refused = await arena.click(carol, challenge, label=accept)
    assert refused.ephemeral, refused
    await refusal(refused)
    state = await arena.accept(bob, challenge)
    for cell, player in ((0, alice), (3, bob), (1, alice), (4, bob), (2, alice)):
        answer = await arena.click(player, state.message, custom_id=state.cell_id(cell))
        assert answer.type is CallbackType.UPDATE_MESSAGE, (answer, arena.bot.log())
        state = arena.board(challenge)
    assert not state.live
    calls, channel = routes(arena, since)
    assert channel == [], channel
    print(f"\ngroup DM, challenge + 5 moves + 1 refused click: {calls} interaction calls")
    rows = await sql(arena, "SELECT guild_id, rated FROM games WHERE message_id = ?", challenge.id)
    assert [tuple(int(v) for v in row) for row in rows] == [(0, 0)], rows  # kept outside, unrated


async def test_a_game_against_the_bot_in_its_dm_takes_the_one_road(arena: Arena) -> None:
    (alice,) = people(arena, "alice")
    dm = arena.emu.dm_channel(alice)
    since = len(arena.emu.requests)
    board = await arena.start_bot_game(alice, dm, first="me")
    await arena.play_out(alice, board, "X", thinking=None)
    calls, channel = routes(arena, since)
    assert channel == [], channel
    print(f"\nbot DM, a game against the bot: {calls} interaction calls")


async def test_a_dm_between_friends_and_a_server_without_the_bot(arena: Arena) -> None:
    alice, bob, carol = people(arena, "alice", "bob", "carol")
    pair = arena.emu.open_dm(alice, bob)
    far = arena.emu.add_guild("Elsewhere", bot_member=False)
    for user in (alice, bob, carol):
        arena.emu.add_member(far, user)
    room = arena.emu.add_text_channel(far, "general")
    since = len(arena.emu.requests)
    await play_member_game(arena, alice, bob, pair)
    calls, channel = routes(arena, since)
    assert channel == [], channel
    print(f"\nDM between friends, challenge + 5 moves: {calls} interaction calls")
    # Fair play across places: the cooldown on challenging Bob again holds in the server.
    again = await arena.command(alice, room, "tictactoe", opponent=bob)
    assert again.ephemeral and "again" in again.message.text, again.message.text
    since = len(arena.emu.requests)
    await play_member_game(arena, alice, carol, room)
    calls, channel = routes(arena, since)
    assert channel == [], channel
    print(f"\nserver without the bot, challenge + 5 moves: {calls} interaction calls")
    rows = await sql(arena, "SELECT DISTINCT guild_id FROM games WHERE channel_id = ?", room.id)
    assert [int(r[0]) for r in rows] == [0]  # never in that server's (nor any) leaderboard
    # /tictactoe-stats in a DM shows the player's own record: both wins are in it.
    answer = await arena.command(alice, pair, "tictactoe-stats")
    assert answer.ephemeral, answer


async def test_a_server_that_keeps_apps_private_gets_an_explanation_and_no_game(
    arena: Arena,
) -> None:
    alice, bob = people(arena, "alice", "bob")
    far = arena.emu.add_guild("Private", bot_member=False)
    for user in (alice, bob):
        arena.emu.add_member(far, user)
    arena.emu.set_use_external_apps(far, False)
    room = arena.emu.add_text_channel(far, "general")
    answer = await arena.command(alice, room, "tictactoe", opponent=bob)
    assert answer.ephemeral
    assert "public" in answer.message.text, answer.message.text
    rows = await sql(arena, "SELECT COUNT(*) FROM challenges WHERE channel_id = ?", room.id)
    assert int(rows[0][0]) == 0


async def test_a_turn_that_runs_out_shows_through_the_live_token_only(arena: Arena) -> None:
    alice, bob, carol = people(arena, "alice", "bob", "carol")
    group = arena.emu.open_group_dm(alice, [bob, carol])
    challenge = await arena.challenge(alice, bob, group, first="me")
    await arena.accept(bob, challenge)
    since = len(arena.emu.requests)
    await run_out(arena.database, challenge.id)
    await arena.sweep()
    state = arena.board(challenge)
    assert not state.live, state.text  # drawn through the Accept's webhook
    calls, channel = routes(arena, since)
    assert channel == [] and calls >= 1, (calls, channel)
    # A second game whose token is known dead: its end is stored, nothing is sent.
    second = await arena.challenge(alice, carol, group, first="me")
    await arena.accept(carol, second)
    await age_token(arena, second.id, 900)
    since = len(arena.emu.requests)
    await run_out(arena.database, second.id)
    await arena.sweep()
    calls, channel = routes(arena, since)
    assert (calls, channel) == (0, []), (calls, channel)
    assert arena.board(second).live  # shown as it was until the next click
    rows = await sql(arena, "SELECT status FROM games WHERE message_id = ?", second.id)
    assert [r[0] for r in rows] == ["finished"] or [r[0] for r in rows] == ["abandoned"], rows


async def test_a_turn_notification_is_a_follow_up_of_the_last_click(arena: Arena) -> None:
    alice, bob, carol = people(arena, "alice", "bob", "carol")
    group = arena.emu.open_group_dm(alice, [bob, carol])
    challenge = await arena.challenge(alice, bob, group, first="me")
    state = await arena.accept(bob, challenge)
    answer = await arena.click(alice, state.message, custom_id=state.cell_id(4))
    assert answer.type is CallbackType.UPDATE_MESSAGE
    await age_token(arena, challenge.id, 0)  # stored: the sweep reads it from the database
    since = len(arena.emu.requests)
    await elapse(arena.database, challenge.id, 60)  # past the grace of Bob's turn
    ping = await arena.turn_ping(bob, group, after=0)
    assert ping in answer.handle.followups, "through the webhook of Alice's move"
    assert f"/channels/@me/{group.id}/{challenge.id}" in ping.content, ping.content
    calls, channel = routes(arena, since)
    assert channel == [] and calls >= 1, (calls, channel)
    rows = await sql(
        arena, "SELECT followups FROM reach_tokens WHERE token = ?", answer.handle.token
    )
    assert [int(str(r[0])) for r in rows] == [1], rows  # counted against Discord's 5


async def test_a_restart_keeps_the_token_of_the_last_click(tmp_path: Path) -> None:
    """The token is stored with its game: after a restart, a turn that ran out still
    shows on the board through the webhook of the click before the restart."""
    async with Emulator(wait_timeout=WAIT) as emu:
        emu.install_types = {0, 1}
        guild = emu.add_guild("Arcade")
        alice, bob, carol = (emu.add_user(name) for name in ("alice", "bob", "carol"))
        emu.add_user_install(alice)
        group = emu.open_group_dm(alice, [bob, carol])
        async with BotInProcess.launch(emu, tmp_path) as bot:
            await bot.wait_until(emu.wait_for_commands("tictactoe"))
            arena = Arena(emu, guild, bot, tmp_path, database=tmp_path / "data" / "tictactoe.db")
            challenge = await arena.challenge(alice, bob, group, first="me")
            await arena.accept(bob, challenge)
            await age_token(arena, challenge.id, 0)
        async with BotInProcess.launch(emu, tmp_path) as bot:
            arena.bot = bot
            since = len(emu.requests)
            await run_out(arena.database, challenge.id)
            await arena.sweep()
            assert not arena.board(challenge).live
            calls, channel = routes(arena, since)
            assert channel == [] and calls >= 1, (calls, channel)
        assert_log_clean(bot.log())
