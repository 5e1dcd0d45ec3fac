"""Data that stays right, end to end: old buttons after a server's erasure, deleted boards,
challenges and channels, and the bot removed from its server (on SQLite, then PostgreSQL).

The bot learns of deleted channels and servers from the gateway (CHANNEL_DELETE,
THREAD_DELETE, GUILD_DELETE: the servers' intent) and waits for the line it logs for each;
it gets no message events, so a deleted board or challenge is found when an edit of it
meets Unknown Message (the sweep's, or a busy channel's refusal's).
The module's last test removes the bot from the (module's own) server and adds it back,
so it runs last here.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import time
from pathlib import Path

import discord
import pytest

from bot.games.reposts import MAX_REPOSTS
from discord_emulator import Channel, Emulator, Message, Permission, User
from tests.e2e.inprocess import BotInProcess
from tests.overdue import elapse, outage, run_out
from tests.pgtools import read_rows

from .helpers import WAIT, Arena, check_final, eventually, refusal, snapshot

pytestmark = pytest.mark.asyncio(loop_scope="module")
POSTGRESQL = True  # the upkeep module on PostgreSQL too (tests/e2e/conftest.py)

# A player is pinged once their turn waited a second (moved on in the database).
# Games here are often ended before anyone moves: no wait after that (test_fair_play.py
# tests it).
BOT_ENV = {"PING_GRACE_SECONDS": "1", "ABANDON_COOLDOWN_SECONDS": "0"}
GONE = "doesn't exist any more"
CLOSED = "no longer open"


async def record(arena: Arena, viewer: User, channel: Channel, member: User) -> str:
    """The member's record against members, as /tictactoe-stats shows it."""
    text = (await arena.command(viewer, channel, "tictactoe-stats", member=member)).message.text
    return next(line for line in text.splitlines() if "Versus members" in line)


async def can_start(arena: Arena, user: User, channel: Channel) -> None:
    """``user`` starts a bot game (so they hold no seat elsewhere: one game per member),
    then stops it."""
    board = await arena.start_bot_game(user, channel, difficulty="easy", first="me")
    assert arena.board(board).live
    await arena.command(user, channel, "tictactoe-stop")


async def logged(arena: Arena, text: str) -> None:
    """Wait for the bot to log ``text``."""
    try:
        await eventually(arena.emu, lambda: text in arena.bot.log(), f"the bot logs {text!r}")
    except AssertionError:
        raise AssertionError(f"the bot did not log {text!r}:\n{arena.bot.log()[-3000:]}") from None


async def recorded(arena: Arena, table: str, message_id: int) -> None:
    """Wait until the bot has recorded ``message_id`` as its game's or challenge's (it
    does right after posting it; a deletion before that finds nothing to end)."""
    assert arena.database is not None
    mark = "?" if isinstance(arena.database, Path) else "$1"
    query = f"SELECT 1 FROM {table} WHERE message_id = {mark}"
    for _ in range(int(WAIT / 0.05)):
        if await read_rows(arena.database, query, message_id):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"message {message_id} was never recorded in {table}")


def requests_to(arena: Arena, channel: Channel, since: int) -> list[str]:
    prefix = f"/channels/{channel.id}/"
    return [f"{r.method} {r.path}" for r in arena.emu.requests[since:] if r.path.startswith(prefix)]


def reposted(arena: Arena, channel: Channel, old: Message) -> Message:
    """The board the bot posted again in ``channel`` after ``old`` was deleted."""
    boards = [
        m
        for m in arena.emu.messages(channel)
        if m.author is arena.emu.bot and m.id > old.id and m.components_v2
    ]
    assert len(boards) == 1, boards
    return boards[0]


async def test_the_bot_gets_no_message_events(arena: Arena) -> None:
    """Only the servers' intent: no member's message reaches the bot."""
    assert arena.emu.gateway.intents == discord.Intents(guilds=True).value


async def test_a_deleted_rated_board_is_posted_again_and_the_result_counts(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    moderator = arena.member("mod", permissions=Permission.MANAGE_MESSAGES)
    board = await arena.member_game(alice, bob, channel)
    for user, cell in ((alice, 4), (bob, 0)):  # both moved: the result counts
        await arena.move(user, board, cell)
    arena.emu.delete_message(moderator, arena.current(board))
    await run_out(arena.database, board.id)  # Alice's time runs out on no board
    await arena.sweep()  # the check before her time-out meets Unknown Message

    new = reposted(arena, channel, board)
    state = arena.board(new)
    assert state.live and state.marks[4] == "X" and state.marks[0] == "O", state.text
    assert new.pings.nobody and new.mentions.nobody  # pinging nobody
    await arena.sweep()  # her clock started again: nothing is settled
    assert arena.board(new).live
    for user, cell in ((alice, 2), (bob, 1), (alice, 6)):  # clicks on the new board work
        await arena.move(user, new, cell)
    assert check_final(arena.board(new), 3) == "X"
    assert await record(arena, bob, channel, alice) == "Versus members: 1W 0L 0D"


async def test_a_board_deleted_again_and_again_ends_its_game_unrated(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    moderator = arena.member("mod", permissions=Permission.MANAGE_MESSAGES)
    board = await arena.member_game(alice, bob, channel)
    for user, cell in ((alice, 4), (bob, 0)):
        await arena.move(user, board, cell)
    for _ in range(MAX_REPOSTS):
        arena.emu.delete_message(moderator, arena.current(board))
        await run_out(arena.database, board.id)
        await arena.sweep()
        board = reposted(arena, channel, board)
    arena.emu.delete_message(moderator, arena.current(board))
    await run_out(arena.database, board.id)
    await arena.sweep()
    assert [m for m in arena.emu.messages(channel) if m.id > board.id] == []
    assert await record(arena, bob, channel, alice) == "Versus members: 0W 0L 0D"
    await can_start(arena, alice, channel)  # the game is over, unrated


async def test_a_bot_games_deleted_board_ends_it_unrated_before_its_time_out(
    arena: Arena,
) -> None:
    alice, channel = arena.member("alice"), arena.channel()
    moderator = arena.member("mod", permissions=Permission.MANAGE_MESSAGES)
    board = await arena.start_bot_game(alice, channel, difficulty="easy", first="me")
    game_id = arena.board(board).game_id
    arena.emu.delete_message(moderator, arena.current(board))
    await run_out(arena.database, board.id)
    await arena.sweep()
    assert arena.database is not None
    mark = "?" if isinstance(arena.database, Path) else "$1"
    query = f"SELECT status, result FROM games WHERE id = {mark}"
    assert await read_rows(arena.database, query, game_id) == [("abandoned", "abandoned")]
    assert [m for m in arena.emu.messages(channel) if m.id > board.id] == []  # no repost


async def test_a_deleted_board_is_found_by_a_busy_channels_refusal(arena: Arena) -> None:
    """A bot game's and an aborted member game's deleted boards: a /tictactoe refused
    because of them checks the board, ends the game unrated, and starts."""
    alice, bob, carol, channel = (
        *(arena.member(n) for n in ("alice", "bob", "carol")),
        arena.channel(),
    )
    moderator = arena.member("mod", permissions=Permission.MANAGE_MESSAGES)
    board = await arena.start_bot_game(alice, channel, difficulty="easy", first="me")
    arena.emu.delete_message(moderator, arena.current(board))
    await can_start(arena, carol, channel)
    await can_start(arena, alice, arena.channel())  # her seat is free

    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    await elapse(arena.database, board.id, 1)  # the grace
    ping = await arena.turn_ping(bob, channel, after=0)
    before = snapshot(arena.current(board))
    arena.emu.delete_message(moderator, arena.current(board))
    await can_start(arena, carol, channel)
    # Its standing turn notification goes with it; nobody's record changes.
    await eventually(arena.emu, lambda: arena.current(ping).deleted, "the ping deleted", WAIT)
    assert await record(arena, bob, channel, alice) == "Versus members: 0W 0L 0D"
    await can_start(arena, bob, arena.channel())
    text = await refusal(await arena.click(bob, before, row=0, col=0))
    assert "over" in text, text


async def test_refusals_in_a_busy_channel_check_its_board_once_a_minute(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty="easy", first="me")
    path = f"/channels/{channel.id}/messages/{board.id}"
    since = len(arena.emu.requests)
    for _ in range(3):
        answer = await arena.command(bob, channel, "tictactoe")
        assert "already a game" in await refusal(answer)
    edits = [r for r in arena.emu.requests[since:] if r.method == "PATCH" and r.path == path]
    assert len(edits) == 1, edits  # the first refusal's check: the board is there
    assert arena.board(board).live
    await arena.command(alice, channel, "tictactoe-stop")


async def test_a_deleted_challenge_is_withdrawn_when_it_expires(arena: Arena) -> None:
    alice, bob, carol = arena.member("alice"), arena.member("bob"), arena.member("carol")
    channel = arena.channel()
    moderator = arena.member("mod", permissions=Permission.MANAGE_MESSAGES)
    challenge = await arena.challenge(alice, bob, channel)
    before = snapshot(challenge)
    await recorded(arena, "challenges", challenge.id)

    arena.emu.delete_message(moderator, arena.current(challenge))
    await run_out(arena.database, challenge.id)
    await arena.sweep()
    text = await refusal(await arena.click(bob, before, label="Accept"))
    assert CLOSED in text or "expired" in text, text
    await arena.challenge(alice, carol, channel)


async def test_a_deleted_channel_ends_its_games_and_withdraws_its_challenges(
    arena: Arena,
) -> None:
    alice, bob, carol, dave = (arena.member(n) for n in ("alice", "bob", "carol", "dave"))
    channel, other, elsewhere = arena.channel(), arena.channel(), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 0)
    await elapse(arena.database, board.id, 1)  # the grace
    await arena.turn_ping(bob, channel, after=0)
    await arena.challenge(carol, dave, other)  # a channel holds a game or a challenge
    since = len(arena.emu.requests)

    arena.emu.delete_channel(channel)
    arena.emu.delete_channel(other)
    await logged(arena, f"Channel {channel.id} deleted: 1 game(s) ended unrated, 0 challenge(s)")
    await logged(arena, f"Channel {other.id} deleted: 0 game(s) ended unrated, 1 challenge(s)")
    await can_start(arena, alice, elsewhere)
    await can_start(arena, bob, elsewhere)
    await arena.challenge(carol, alice, elsewhere)  # her pending challenge is gone
    assert await record(arena, carol, elsewhere, alice) == "Versus members: 0W 0L 0D"
    assert await record(arena, carol, elsewhere, bob) == "Versus members: 0W 0L 0D"
    for gone in (channel, other):
        assert requests_to(arena, gone, since) == [], "nothing is sent to a deleted channel"


async def test_old_buttons_after_forget_server_act_on_nothing_new(arena: Arena) -> None:
    """The replay of issue 23: after /tictactoe-forget-server, the next challenge and game
    got the erased ones' ids, and the old messages' buttons acted on them."""
    alice, bob = arena.member("alice"), arena.member("bob")
    moderator = arena.member("mod", permissions=Permission.MANAGE_GUILD)
    channel = arena.channel()
    bot_board = await arena.start_bot_game(alice, channel, difficulty="easy", first="me")
    old_board = snapshot(arena.current(bot_board))  # Forfeit and the cells, live
    await arena.command(alice, channel, "tictactoe-stop")
    old_challenge = snapshot(await arena.challenge(alice, bob, channel))

    question = (await arena.command(moderator, channel, "tictactoe-forget-server")).message
    await arena.click(moderator, question, label="Erase this server's data")
    assert arena.current(question).text.startswith("🗑️ Done"), arena.current(question).text

    challenge = await arena.challenge(alice, bob, channel, first="me")
    text = await refusal(await arena.click(bob, old_challenge, label="Accept"))
    assert CLOSED in text, text
    state = await arena.accept(bob, challenge)  # the new challenge was untouched
    game_id = state.game_id
    text = await refusal(await arena.click(alice, old_board, label="Forfeit"))
    assert GONE in text, text
    text = await refusal(await arena.click(alice, old_board, row=1, col=1))
    assert GONE in text, text
    # The second guard: the new game's own button, on another message than its board.
    forged = arena.board(challenge).cell_id(4)
    text = await refusal(await arena.raw_click(alice, old_board, forged))
    assert GONE in text, text
    state = arena.board(challenge)
    assert state.game_id == game_id and state.live and state.move_no == 0
    await arena.move(alice, challenge, 4)  # and it plays on
    assert arena.board(challenge).marks[4] == "X"
    await arena.forfeit(bob, challenge)


async def seconds_left(arena: Arena, message_id: int) -> float:
    """What is left of the turn of the game shown by ``message_id``, as stored."""
    assert arena.database is not None
    mark = "?" if isinstance(arena.database, Path) else "$1"
    query = f"SELECT turn_deadline FROM games WHERE message_id = {mark}"
    ((deadline,),) = await read_rows(arena.database, query, message_id)
    return float(deadline) - time.time()


async def test_a_gateway_outage_costs_nobody_their_turn(arena: Arena) -> None:
    """Issue 37's case: 30 s left on Alice's clock and the gateway down for 41 s. Before,
    the sweep in the middle of it ended the game as her rated time-out."""
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    await arena.move(bob, board, 0)  # both have moved: a time-out would count
    assert arena.database is not None
    async with arena.emu.disconnected(resumable=True):
        await logged(arena, "Outage of *: its turn clocks and challenges stop")
        # 41 s pass (in the database): her turn ran out 11 s ago, the shard was last
        # alive 41 s ago.
        await run_out(arena.database, board.id, ago=11)
        await outage(arena.database, 41)
        since = len(arena.emu.requests)
        await arena.sweep()
        assert 29 < await seconds_left(arena, board.id) <= 31
        # Nor is its board checked (the check before a time-out): nothing runs out.
        edits = [r.path for r in arena.emu.requests[since:] if r.method == "PATCH"]
        assert not [path for path in edits if path.endswith(f"/{board.id}")], edits
    await logged(arena, "Outage of * over")
    await arena.sweep()
    assert arena.board(board).live
    assert 29 < await seconds_left(arena, board.id) <= 31  # the time she had left
    await arena.move(alice, board, 8)
    await arena.forfeit(bob, board)


async def test_an_unavailable_server_costs_nobody_their_turn(arena: Arena) -> None:
    alice, bob, channel = arena.member("alice"), arena.member("bob"), arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    await arena.move(bob, board, 0)  # both have moved: a time-out would count
    assert arena.database is not None
    key = f"guild:{arena.guild.id}"
    async with arena.emu.guild_unavailable(arena.guild):
        await logged(arena, f"Outage of {key}: its turn clocks and challenges stop")
        await run_out(arena.database, board.id, ago=11)
        await outage(arena.database, 41)
        await arena.sweep()
        assert 29 < await seconds_left(arena, board.id) <= 31
    await logged(arena, f"Outage of {key} over")
    assert await read_rows(arena.database, "SELECT key FROM alive WHERE key LIKE 'guild:%'") == []
    await arena.sweep()
    assert arena.board(board).live
    await arena.move(alice, board, 8)
    await arena.forfeit(bob, board)


async def test_removals_while_the_bot_was_stopped_are_found_when_it_is_back(
    tmp_path: Path,
) -> None:
    """Issue 37, item 4, on a bot of its own (SQLite): "Gone" removes the bot while it is
    stopped; "Back", which it had left 31 days before, adds it back meanwhile. Before,
    the start-up sweep (before READY) erased "Back" and "Gone" kept its game for ever."""
    async with Emulator(wait_timeout=WAIT) as emu:
        gone, back = emu.add_guild("Gone"), emu.add_guild("Back")
        database = tmp_path / "data" / "tictactoe.db"
        boards = {}
        launch = functools.partial(BotInProcess.launch, emu, tmp_path, database=database)
        async with launch(dev_guild=gone, force_sync=True) as bot:
            for guild in (gone, back):
                arena = Arena(emu, guild, bot, tmp_path)
                alice, bob = arena.member("alice"), arena.member("bob")
                boards[guild.id] = await arena.member_game(alice, bob, arena.channel())
                await arena.move(alice, boards[guild.id], 4)
            emu.remove_bot(back)
            await eventually(emu, lambda: f"Removed from server {back.id}" in bot.log(), "left")
        with sqlite3.connect(database) as conn:
            conn.execute("UPDATE left_guilds SET left_at = left_at - ?", (31 * 86_400,))
        conn.close()
        emu.remove_bot(gone)
        emu.add_bot(back)

        async with launch() as bot:
            await bot.sweep()
            await eventually(emu, bot.client.is_ready, "every shard ready")
            await bot.sweep()
            log = bot.log()
            assert (
                f"Server {gone.id} removed the bot while it could not hear: 1 live game(s)" in log
            )
            assert f"Back in server {back.id}: its data is kept" in log
            assert f"Erased the data of server {back.id}" not in log
            query = "SELECT guild_id, status FROM games ORDER BY id"
            assert await read_rows(database, query) == [
                (gone.id, "abandoned"),
                (back.id, "abandoned"),
            ]
        # LEFT_SERVER_DAYS later (a round of erasure a minute: a start), "Gone" is erased.
        with sqlite3.connect(database) as conn:
            conn.execute("UPDATE left_guilds SET left_at = left_at - ?", (31 * 86_400,))
        conn.close()
        async with launch() as bot:
            await eventually(emu, bot.client.is_ready, "every shard ready")
            await bot.sweep()
            assert f"Erased the data of server {gone.id}" in bot.log()
            assert await read_rows(database, query) == [(back.id, "abandoned")]


async def test_removed_from_the_server_ends_its_games_unrated(arena: Arena) -> None:
    alice, bob, carol, dave = (arena.member(n) for n in ("alice", "bob", "carol", "dave"))
    channel, other = arena.channel(), arena.channel()
    await arena.member_game(alice, bob, channel)
    await arena.challenge(carol, dave, other)
    since = len(arena.emu.requests)

    arena.emu.remove_bot(arena.guild)
    await logged(
        arena,
        f"Removed from server {arena.guild.id}: 1 live game(s) ended unrated,"
        " 1 challenge(s) withdrawn; its data is erased in 30 days",
    )
    await arena.sweep()  # nothing is sent to the server it left
    # (Redraws the module's earlier tests queued may still reach their own channels.)
    assert not requests_to(arena, channel, since) + requests_to(arena, other, since)

    arena.emu.add_bot(arena.guild)
    await logged(arena, f"Back in server {arena.guild.id}: its data is kept")
    assert await record(arena, carol, channel, alice) == "Versus members: 0W 0L 0D"
    await can_start(arena, alice, channel)
    await can_start(arena, bob, channel)
