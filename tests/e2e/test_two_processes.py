"""Two bot processes on one PostgreSQL database, one shard each: the deployment a bot
outgrowing one process moves to (SHARD_COUNT=2, SHARD_IDS=0 and SHARD_IDS=1).

One server on each shard, and a second on shard 1 whose moderators set a 90 s turn clock
(for the game that must outlive its process's restart; the others have 30 s turns, the
shortest a server may choose, which the test runs out by moving their deadlines into the
past in the database, ``tests.overdue``). Three
launches in all, in one test: both processes at once (they migrate the new database
together), and shard 1's again after a SIGKILL. It shows, in order:

- games in both servers, each click reaching only its own shard's session (and so its own
  process, the only one holding that shard);
- two processes racing on one click: the same click delivered to shard 0's session and,
  forged, to shard 1's, nine moves running, after shard 1's process was made to believe it
  is in shard 0's server (a forged GUILD_CREATE: without it, it refuses the server). One
  move lands each time; the other click is told the board changed;
- one click delivered twice, with the same id and token, to both processes (Discord's
  gateway delivers at least once): one answer stands, the other gets 400/40060 and its
  process notes it at INFO, without an error or a traceback;
- timed-out games in both servers settled exactly once each, by their own process;
- shard 1's process killed with games of its servers about to run out: shard 0's process
  leaves them alone, the restarted process settles them, and a game half played before
  the kill goes on with the same buttons;
- each server's leaderboard, read by its own process, holding that server's results only,
  whichever process wrote them.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.launcher import BotProcess, full_collections_held_back
from discord_emulator import (
    CallbackType,
    Emulator,
    InteractionType,
    Message,
    Permission,
    User,
    shard_for,
)
from tests.overdue import elapse, run_out
from tests.pgtools import new_pg_database, read_rows

from .helpers import (
    WAIT,
    Arena,
    assert_log_clean,
    check_final,
    eventually,
    refusal,
)
from .test_ratings import expected_rows, shown_rows

TURN = 30.0
"""The turn clock (TURN_TIMEOUT_SECONDS) of every server but the slow one."""
GRACE = TURN / 5
"""How long a turn waits before its player is pinged (moved on at once: ``elapse``)."""
SETTLE = 10.0
"""Seconds a game that ran out may take to be settled: a sweep (every 1 s) on a busy
machine, or what the restart gave back of its turn and then a sweep."""
SLOW_TURN = 90
"""The slow server's turn clock, set by its moderators: long enough for its half-played
game to outlive everything before its last moves (over 30 s on a loaded machine, now
that the emulator limits like Discord)."""
X_WINS = (0, 3, 1, 4, 2)  # X and O alternate; X completes the top row
DRAW = (0, 4, 8, 2, 6, 3, 5, 7, 1)  # X and O alternate; nobody gets a line
TWICE = re.compile(r" INFO +bot\.ui\.gate: component '[^']+' was already answered \(delivered tw")
"""The line of the process whose answer came second to a click delivered twice."""
SWEPT = re.compile(r"Swept game (?P<game>[0-9]+) of server (?P<guild>[0-9]+) \((?P<state>\w+)\)")
SERVERS = (("zero", 0), ("one", 1), ("slow", 1))
"""Each server's name and shard (of 2): shard 1's process has two."""
MANAGE_SERVER = Permission.MANAGE_GUILD | Permission.USE_APPLICATION_COMMANDS


@dataclass
class TimedOut:
    """A member game left to run out of time, and who will lose it."""

    arena: Arena
    board: Message
    game_id: int
    loser: User
    winner: User


@dataclass
class Cluster:
    """The emulator, the database, the servers, and each process's log by life."""

    emu: Emulator
    url: str
    workdir: Path
    zero: Arena
    """Shard 0's server."""
    one: Arena
    """Shard 1's server."""
    slow: Arena
    """Shard 1's other server, with a 90 s turn clock."""
    logs: dict[str, int]
    """Each process life's log file, and the shard it ran."""
    forged: set[int] = field(default_factory=set)
    """The ids of the clicks forged to shard 1's session."""
    twice: set[int] = field(default_factory=set)
    """The ids of the clicks delivered to both sessions: by the formula, and again forged."""

    def swept(self) -> list[tuple[int, int, int, str]]:
        """(game, server, shard of the process that swept it, how it ended) for every
        game any process's sweep settled, in every life (its log line)."""
        found = []
        for name, shard in self.logs.items():
            text = (self.workdir / name).read_text(errors="replace")
            for line in SWEPT.finditer(text):
                found.append((int(line["game"]), int(line["guild"]), shard, line["state"]))
        return found

    async def game_row(self, game_id: int, columns: str) -> tuple[Any, ...]:
        (row,) = await read_rows(self.url, f"SELECT {columns} FROM games WHERE id = $1", game_id)
        return row


def launch(
    emu: Emulator, workdir: Path, url: str, logs: dict[str, int], shard: int, log_name: str
) -> contextlib.AbstractAsyncContextManager[BotProcess]:
    """``python -m bot`` running shard ``shard`` of 2 on the database at ``url``."""
    logs[log_name] = shard
    env = {"DATABASE_URL": url, "TURN_TIMEOUT_SECONDS": f"{TURN:g}"}
    return BotProcess.launch(emu, workdir, shards=(2, [shard]), log_name=log_name, **env)


async def polled(url: str, query: str, key: Any, value: Any) -> None:
    """Wait until ``query`` (with ``key``) returns the one row ``(value,)``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while await read_rows(url, query, key) != [(value,)]:
        if loop.time() > deadline:
            raise AssertionError(f"not within {WAIT:g} s: {query} ({key}) -> {value}")
        await asyncio.sleep(0.02)


def channel_edits(emu: Emulator, message: Message) -> int:
    """How many times the bot edited ``message`` through the channel endpoint: what a
    sweep, a restart or a refreshed stale click does (an answer to a click goes through
    the interaction instead)."""
    path = f"/channels/{message.channel.id}/messages/{message.id}"
    return sum(r.method == "PATCH" and r.path == path and r.status == 200 for r in emu.requests)


def standing_pings(arena: Arena, board: Message) -> list[Message]:
    """The turn notifications standing in the channel of ``board``'s game."""
    return arena.turn_pings(board.channel)


def pinged(arena: Arena, board: Message, user: User) -> bool:
    """Whether exactly one turn notification stands for ``board``'s game, for ``user``."""
    return [p.content.startswith(f"<@{user.id}>") for p in standing_pings(arena, board)] == [True]


# -- games -----------------------------------------------------------------------------------


async def play_member_game(arena: Arena, moves: tuple[int, ...]) -> tuple[Message, User, User]:
    """A member game between two new members played through ``moves`` (X first):
    the board, X (the challenger) and O."""
    x, o, channel = arena.member("x"), arena.member("o"), arena.channel()
    board = await arena.member_game(x, o, channel)
    for n, cell in enumerate(moves):
        await arena.move(x if n % 2 == 0 else o, board, cell)
    return board, x, o


async def play_games(arena: Arena) -> None:
    """A member game won by X, and a game against the bot, in ``arena``'s server."""
    board, x, o = await play_member_game(arena, X_WINS)
    state = arena.board(board)
    assert check_final(state, 3) == "X" and f"<@{x.id}> won" in state.text, state.text
    arena.elo.add(x.id, o.id, 1.0)
    alice = arena.member("alice")
    versus_bot = await arena.start_bot_game(alice, arena.channel(), first="me")
    check_final(await arena.play_out(alice, versus_bot, "X"), 3)


async def leave_to_time_out(url: str, arena: Arena, *, x_moves: bool) -> TimedOut:
    """A member game left alone once both players moved (so that the time-out counts):
    the challenger (X) will run out of time, or with ``x_moves`` his opponent, after X's
    second move."""
    board, x, o = await play_member_game(arena, (4, 0, 8) if x_moves else (4, 0))
    loser, winner = (o, x) if x_moves else (x, o)
    await elapse(url, board.id, GRACE)
    # Its turn notification is sent after the click's answer, and then recorded: wait
    # for both, so that a process killed next does not die in between (that would leave
    # the notification standing: nothing knows it was sent).
    await eventually(arena.emu, lambda: pinged(arena, board, loser), "the turn ping", WAIT)
    (ping,) = standing_pings(arena, board)
    game_id = arena.board(board).game_id
    await polled(url, "SELECT message_id FROM turn_pings WHERE game_id = $1", game_id, ping.id)
    return TimedOut(arena, board, game_id, loser, winner)


async def check_timed_out(cluster: Cluster, game: TimedOut, *, process: int) -> None:
    """``game`` was lost on time: its board edited by one sweep, its row ended once (each
    player's one rated game), by the process running shard ``process`` and no other."""
    arena, board = game.arena, game.board
    await eventually(cluster.emu, lambda: not arena.board(board).live, "the timeout", SETTLE)
    state = arena.board(board)
    assert f"<@{game.loser.id}> ran out of time" in state.text, state.text
    check_final(state, 3)
    # Twice: the check that the board still exists, then the result.
    assert channel_edits(cluster.emu, board) == 2, "one sweep edits the board"
    row = await cluster.game_row(game.game_id, "status, result, winner_id, rated")
    assert row == ("finished", "timeout", game.winner.id, 1), row
    rated = await read_rows(
        cluster.url,
        "SELECT user_id, rated_games, wins FROM players"
        " WHERE guild_id = $1 AND user_id IN ($2, $3)",
        arena.guild.id,
        game.winner.id,
        game.loser.id,
    )
    assert sorted(rated) == sorted([(game.winner.id, 1, 1), (game.loser.id, 1, 0)]), rated
    swept = [
        (guild, shard, how) for found, guild, shard, how in cluster.swept() if found == game.game_id
    ]
    assert swept == [(arena.guild.id, process, "timeout")], f"game {game.game_id}: {swept}"
    await eventually(
        cluster.emu, lambda: not standing_pings(arena, board), "the ping removed at the end", WAIT
    )
    arena.elo.add(game.winner.id, game.loser.id, 1.0)


# -- the race --------------------------------------------------------------------------------


async def race(cluster: Cluster) -> None:
    """A game in shard 0's server played with every click delivered to both processes at
    once (which one lands it varies from move to move and run to run)."""
    arena, emu = cluster.zero, cluster.emu
    assert emu.forge_guild_create(arena.guild, shard=1)
    x, o, channel = arena.member("x"), arena.member("o"), arena.channel("race")
    board = await arena.member_game(x, o, channel)
    game_id = arena.board(board).game_id
    for n, cell in enumerate(DRAW):
        player, mark = (x, "X") if n % 2 == 0 else (o, "O")
        assert await cluster.game_row(game_id, "move_no") == (n,)
        # The losing process's refresh may still be redrawing the last move: click on
        # the board once it shows the stored one.
        await eventually(emu, lambda n=n: arena.board(board).move_no == n, "the board", WAIT)
        state = arena.board(board)
        message = arena.current(board)
        click = {"custom_id": state.cell_id(cell), "component_type": 2}
        routed = emu.click(player, message, custom_id=click["custom_id"])
        forged = emu.send_raw_interaction(
            player,
            channel,
            type=InteractionType.MESSAGE_COMPONENT,
            data=click,
            message=message,
            shard=1,
        )
        # Both are on their way before either process reads its socket; who goes first
        # alternates.
        if n % 2 == 0:
            handles = [await routed, await forged]
        else:
            handles = list(reversed([await forged, await routed]))
        cluster.forged.add(handles[1].id)
        answers = [await arena.answer(handle) for handle in handles]
        landed = [i for i, a in enumerate(answers) if a.type is CallbackType.UPDATE_MESSAGE]
        assert len(landed) == 1, f"move {n}: one click lands, not {answers}"
        text = await refusal(answers[1 - landed[0]])
        told = "already over" if n == len(DRAW) - 1 else "board changed"
        assert told in text, f"move {n}: the other click is told why: {text!r}"
        assert await cluster.game_row(game_id, "move_no") == (n + 1,), "exactly one move"

        await eventually(emu, lambda n=n: arena.board(board).move_no == n + 1, "the move", WAIT)
        after = arena.board(board)
        changed = [i for i, before in enumerate(state.marks) if after.marks[i] != before]
        assert changed == [cell] and after.marks[cell] == mark, after.marks
    state = arena.board(board)
    assert check_final(state, 3) == "" and "draw" in state.text.lower(), state.text
    # The losing processes redrew the board from the database (Boards.refresh); a refused
    # click's refresh is dropped while one of the same game is under way in its process
    # (that one reads the game again after each edit), so there may be fewer than moves.
    await eventually(emu, lambda: channel_edits(emu, board) >= 1, "refreshes", WAIT)
    # Played at once: nobody was pinged (a ping waits for the turn's grace).
    assert arena.turn_pings(board.channel, deleted=True) == []
    row = await cluster.game_row(game_id, "status, result, move_no, rated")
    assert row == ("finished", "draw", 9, 1), row
    arena.elo.add(x.id, o.id, 0.5)


async def delivered_twice(cluster: Cluster) -> None:
    """One click in shard 0's server delivered to both processes as one interaction: the
    same payload, id and token, re-sent to shard 1's session (after ``race``, that process
    takes the server for its own)."""
    arena, emu = cluster.zero, cluster.emu
    x, o, channel = arena.member("x"), arena.member("o"), arena.channel("twice")
    board = await arena.member_game(x, o, channel)
    game_id = arena.board(board).game_id
    handle = await emu.click(x, arena.current(board), custom_id=arena.board(board).cell_id(4))
    assert emu.dispatch_event("INTERACTION_CREATE", handle.payload, shard=1)
    cluster.twice.add(handle.id)
    callback = f"/interactions/{handle.id}/{handle.token}/callback"
    await arena.answer(handle)
    await eventually(emu, lambda: arena.board(board).move_no == 1, "the move", WAIT)

    def answers() -> list[int]:
        return sorted(r.status for r in emu.requests if r.path == callback)

    await eventually(emu, lambda: len(answers()) == 2, "the second answer", WAIT)
    assert answers()[0] < 300 and answers()[1] == 400, answers()
    assert await cluster.game_row(game_id, "move_no") == (1,), "exactly one move"

    def noted() -> int:
        return sum(len(TWICE.findall((cluster.workdir / n).read_text())) for n in cluster.logs)

    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while noted() != 1:  # log files wake no emulator waiter: poll them
        assert loop.time() < deadline, f"not within {WAIT:g} s: the 40060 noted at INFO"
        await asyncio.sleep(0.05)


# -- the test --------------------------------------------------------------------------------


async def test_two_processes_on_one_postgresql_database(tmp_path: Path, pg_server: Any) -> None:
    with full_collections_held_back(), new_pg_database(pg_server) as url:
        # Waits are bounded by ``eventually`` and the launches' ready_timeout (30 s, for
        # a loaded machine), not by the emulator's own limit.
        async with Emulator(wait_timeout=3 * WAIT, max_concurrency=2) as emu:
            guilds = [emu.add_guild(name, shard=(n, 2)) for name, n in SERVERS]
            logs: dict[str, int] = {}
            async with contextlib.AsyncExitStack() as stack:
                # Both at once: they migrate the new database together.
                entering = [
                    stack.enter_async_context(launch(emu, tmp_path, url, logs, n, f"shard-{n}.log"))
                    for n in (0, 1)
                ]
                launched = await asyncio.gather(*entering, return_exceptions=True)
                for outcome in launched:
                    if isinstance(outcome, BaseException):
                        raise outcome
                zero, one = launched
                assert isinstance(zero, BotProcess) and isinstance(one, BotProcess)
                cluster = Cluster(
                    emu,
                    url,
                    tmp_path,
                    Arena(emu, guilds[0], zero, tmp_path),
                    Arena(emu, guilds[1], one, tmp_path),
                    Arena(emu, guilds[2], one, tmp_path),
                    logs,
                )
                await emu.wait_for_commands(
                    "tictactoe", "tictactoe-leaderboard"
                )  # synced by shard 0's
                again = await scenario(cluster, stack, one)
            assert (zero.returncode, one.returncode, again.returncode) == (0, -signal.SIGKILL, 0)
            for name in logs:
                assert_log_clean((tmp_path / name).read_text(errors="replace"))
            assert emu.command_syncs == 1, "only the process of shard 0 syncs"
            assert not emu.unrouted, emu.unrouted
            assert not emu.failed_interactions, emu.failed_interactions


async def scenario(
    cluster: Cluster, stack: contextlib.AsyncExitStack, one: BotProcess
) -> BotProcess:
    """Everything between the first launch and the last stop; returns shard 1's second life."""
    emu, zero_server, one_server, slow = cluster.emu, cluster.zero, cluster.one, cluster.slow

    # The slow server's moderator sets a 90 s turn clock; a game there is half played.
    mod = slow.member("mod", permissions=MANAGE_SERVER)
    saved = await slow.command(
        mod, slow.channel(), "tictactoe-settings", turn_clock=f"{SLOW_TURN}s"
    )
    assert saved.ephemeral and "Turn clock: 30 s → **1 min 30 s**" in saved.message.text
    half, half_x, half_o = await play_member_game(slow, X_WINS[:3])  # O to move

    # Games in both servers at once; each click reaches only its own shard's session.
    await asyncio.gather(play_games(zero_server), play_games(one_server))
    for shard, arenas in ((0, [zero_server]), (1, [one_server, slow])):
        (session,) = emu.gateway.live_sessions(shard)
        seen = {d["guild_id"] for d in session.dispatched("INTERACTION_CREATE")}
        assert seen == {str(arena.guild.id) for arena in arenas}, (shard, seen)

    # Games left to run out in both servers; the processes race meanwhile.
    first_round = await asyncio.gather(
        *(
            leave_to_time_out(cluster.url, arena, x_moves=x_moves)
            for arena in (zero_server, one_server)
            for x_moves in (False, True)
        )
    )
    # Both processes send the race's turn notifications into one channel, through one send
    # bucket (5 per 5 s) that each one's discord.py learns on its own: a 429 can hold a
    # ping for 4 s. So the race's game gets the slow clock.
    for game in first_round:
        await run_out(cluster.url, game.board.id)
    mod = zero_server.member("mod", permissions=MANAGE_SERVER)
    where = zero_server.channel()
    await zero_server.command(mod, where, "tictactoe-settings", turn_clock=f"{SLOW_TURN}s")
    await race(cluster)
    await delivered_twice(cluster)
    await zero_server.command(mod, where, "tictactoe-settings", reset=True)
    for game in first_round:
        await check_timed_out(cluster, game, process=shard_for(game.arena.guild.id, 2))

    # Shard 1's process dies with two of its games about to run out, and one half played.
    doomed = await asyncio.gather(
        leave_to_time_out(cluster.url, one_server, x_moves=False),
        leave_to_time_out(cluster.url, one_server, x_moves=True),
    )
    buttons = [b.custom_id for b in slow.current(half).buttons()]
    assert await one.stop(signal.SIGKILL, within=WAIT) == -signal.SIGKILL
    ((first, deadline),) = await read_rows(
        cluster.url,
        "SELECT min(turn_deadline), max(turn_deadline) FROM games"
        " WHERE id IN ($1, $2) AND status = 'active'",
        *(game.game_id for game in doomed),
    )
    assert first is not None and time.time() < first, "killed before its games ran out"
    # Shard 0's process sweeps its own game, which runs out after those: so it swept
    # after they ran out too, and left them alone.
    last = await leave_to_time_out(cluster.url, zero_server, x_moves=True)
    assert (await cluster.game_row(last.game_id, "turn_deadline"))[0] > deadline
    # They run out, and so does that one, after them. (Just: the restart gives live turns
    # back the time it was down, from before the kill, which makes them live again.)
    for game in doomed:
        await run_out(cluster.url, game.board.id, ago=0.1)
    await run_out(cluster.url, last.board.id, ago=0.1)
    await check_timed_out(cluster, last, process=0)
    for game in doomed:
        assert one_server.board(game.board).live and channel_edits(emu, game.board) == 0
        row = await cluster.game_row(game.game_id, "status, result")
        assert row == ("active", None), row

    # The same settings again: the overdue games are settled, once, and the half-played
    # game goes on with the buttons drawn before the kill.
    again = await stack.enter_async_context(
        launch(emu, cluster.workdir, cluster.url, cluster.logs, 1, "shard-1-again.log")
    )
    one_server.bot = slow.bot = again
    # The restart gave their turns back the time it was down: they run out once more.
    for game in doomed:
        await check_timed_out(cluster, game, process=1)
    assert [b.custom_id for b in slow.current(half).buttons()] == buttons
    await slow.move(half_o, half, X_WINS[3])
    await slow.move(half_x, half, X_WINS[4])
    state = slow.board(half)
    assert check_final(state, 3) == "X" and f"<@{half_x.id}> won" in state.text, state.text
    slow.elo.add(half_x.id, half_o.id, 1.0)

    # Each server's leaderboard, from its own process: its own results, whoever wrote them.
    for arena in (zero_server, one_server, slow):
        viewer = arena.member("viewer")
        board = (await arena.command(viewer, arena.channel(), "tictactoe-leaderboard")).message
        assert shown_rows(board) == expected_rows(arena.elo), board.text
    players = await read_rows(
        cluster.url,
        "SELECT guild_id, count(*) FROM players WHERE rated_games > 0 GROUP BY guild_id",
    )
    assert dict(players) == {
        a.guild.id: len(a.elo.players) for a in (zero_server, one_server, slow)
    }

    # Every interaction went to its own shard's session, but the forged clicks.
    for session in emu.gateway.sessions.values():
        for data in session.dispatched("INTERACTION_CREATE"):
            if int(data["id"]) in cluster.forged:
                assert session.shard_id == 1 and int(data["guild_id"]) == zero_server.guild.id
            elif int(data["id"]) in cluster.twice and session.shard_id == 1:
                assert int(data["guild_id"]) == zero_server.guild.id
            else:
                assert shard_for(int(data["guild_id"]), 2) == session.shard_id, data
    # Exactly once, still, after all those sweeps: one sweep per timed-out game (its two
    # edits: the board's check, then the result), each by its own server's process.
    timed_out = [*first_round, *doomed, last]
    for game in timed_out:
        assert channel_edits(emu, game.board) == 2
    swept = cluster.swept()
    assert sorted(game for game, *_ in swept) == sorted(g.game_id for g in timed_out), swept
    assert all(shard_for(guild, 2) == shard for _, guild, shard, _ in swept), swept
    return again
