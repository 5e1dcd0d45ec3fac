"""CPU per click: our bot side by side with discord.py's own tic-tac-toe example.

    python bench/peer.py                       # 200 games, 10,000 timed clicks, 3 runs each
    python bench/peer.py --quick               # 20 games, 300 clicks, 1 run each (smoke test)
    python bench/peer.py --bot-path /tmp/base  # our bot from another checkout (its PYTHONPATH)
    python bench/peer.py --serve-peer          # the peer bot itself (the driver starts it)

The peer behaves as discord.py's ``examples/views/tic_tac_toe.py``: a classic
``discord.ui.View`` of nine buttons kept in memory, no database, no check of who clicks;
each click restyles its button and answers with ``interaction.response.edit_message``
(content + three action rows). Here a slash command, ``/tictactoe-peer``, starts a game; like
our bot, the peer runs with the default intents minus ``messages`` (no message events),
orjson, and the token/endpoints from DISCORD_TOKEN, DISCORD_API_BASE, DISCORD_GATEWAY_URL
and DEV_GUILD_ID. Its one addition (see ``ANNOUNCE_BOARDS``): it tells the driver, on
stdout, when a new board's view is stored, so that the first click cannot beat it. Our bot
is ``python -m bot`` with a fresh SQLite database and its own defaults (``--bot-env`` adds
settings; the tests' 1 s sweep interval is left out).

Each run starts an emulator in this process, one bot process, and ``--games`` games between
members, each in its own channel with its own two members, 20 to a server (below the default
limit of 25 live games a server: every fair-play setting of our bot stays at its default).
Ours: ``/tictactoe opponent:B size:3x3 first:me``, then B clicks Accept; peer:
``/tictactoe-peer`` by A. Then the same closed loop for both bots: one coroutine per game
clicks a cell (X, O, X... as the bots expect), waits for that click's answer, and clicks
again, until ``--clicks`` cell clicks in all. Cells are drawn uniformly among the empty ones
by a fixed-seed rng per channel, so both bots get the same games, channel by channel (where
the last click falls differs by a few). When a game ends, its coroutine starts a new one in
the same channel before its next click: for ours, the last game's O clicks Rematch (the pair
cooldown lets a finished game's first Rematch through) and the other player Accepts, sides
swapped; for the peer, its command again. That start is inside the measured window (its
wall time and CPU) but not counted as a click. The ``starts`` column counts them; a start
costs our bot two interactions and the peer one.

Measured: the bot's main process CPU (user + system, from /proc/<pid>/stat, 10 ms ticks)
from just before the first timed click to just after the last timed answer, divided by the
clicks: CPU µs per click. Our bot's AI worker processes (idle in member games) are not
counted. For context only: wall time, clicks/s, a click's latency p50/p99 (sent, to the
bot's answer applied by the emulator), ``+1s ms``, the bot's CPU in the second after the
last answer (work put off past the answers, plus upkeep; not in the per-click figure), and
``emu+drv s``, this process's CPU in the window: the emulator and driver share the cores
with the bot. The emulator's answer deadline is 30 s, not 3, so that a stall of a shared
machine shows as latency instead of ending the run; any unanswered or refused interaction,
or a board that disagrees with the driver's copy, stops the run with an error.

Runs alternate ours, peer, ours, peer... (``--runs`` of each), as the machine is shared and
noisy. The ratio ours/peer is the median CPU per click of ours over that of the peer: at most
1.00 means our bot costs no more CPU per click than the in-memory example does; 1.30 would
mean 30 % more. The ratios per pair (run 1 over run 2, 3 over 4...) show how much of the
difference is noise.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import ctypes
import logging
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Coroutine, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import discord
import yarl
from discord import app_commands
from discord.ext import commands

PEER_SCRIPT = Path(__file__).resolve()
REPO = PEER_SCRIPT.parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.peer_profile import print_breakdown  # noqa: E402 (needs REPO on the path)
from bench.procs import cpu_seconds, descendants, thread_cpu_seconds  # noqa: E402

if TYPE_CHECKING:
    from discord_emulator import (
        Emulator,
        Guild,
        InteractionHandle,
        Message,
        RecordedRequest,
    )
    from tests.bot.e2e_helpers import BotProcess

PEER_COMMAND = "tictactoe-peer"
OURS, PEER = "ours", "peer"
ACK_DEADLINE = 30.0
"""The emulator's answer deadline (Discord's is 3 s): a stall of this shared machine should
not end a run; slowness shows in the latency columns instead."""
READY_TIMEOUT = 60.0
SETUP_TIMEOUT = 300.0
STOP_TIMEOUT = 15.0
ANSWER_TIMEOUT = ACK_DEADLINE + 15.0
TABLES_PER_SERVER = 20
"""Games per server: below the default limit of 25 live games a server (bot/models.py),
so the bench runs with every fair-play limit at its default."""
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))

ANNOUNCE_BOARDS = os.environ.get("PEER_ANNOUNCE_BOARDS") == "1"
"""Set by the driver: the peer then writes each new board's message id to stdout once its
view is stored. discord.py stores a view only when the answer to the command has come
back, so a first click sent as soon as the board appears can reach the bot before that and
be dropped (no view takes it: the interaction fails). A person is never that quick; the
driver is, and waits for this line before a new board's first click."""

log = logging.getLogger("peer")


# -- the peer bot (``--serve-peer``) --------------------------------------------------------


class PeerCell(discord.ui.Button["PeerBoard"]):
    """One square of the peer's board; it knows where it sits."""

    def __init__(self, x: int, y: int) -> None:
        # A button needs a label: a zero-width space until someone plays here.
        super().__init__(style=discord.ButtonStyle.secondary, label="\u200b", row=y)
        self.x = x
        self.y = y

    async def callback(self, interaction: discord.Interaction) -> None:
        board = self.view
        assert board is not None
        if board.board[self.y][self.x] != PeerBoard.EMPTY:
            return  # already played: like the example, no answer at all
        mark = board.current_player
        board.board[self.y][self.x] = mark
        self.disabled = True
        if mark == PeerBoard.CROSS:
            self.style, self.label = discord.ButtonStyle.danger, "X"
            board.current_player = PeerBoard.NOUGHT
            content = "It is now O's turn"
        else:
            self.style, self.label = discord.ButtonStyle.success, "O"
            board.current_player = PeerBoard.CROSS
            content = "It is now X's turn"
        result = board.result()
        if result is not None:
            content = {PeerBoard.CROSS: "X won!", PeerBoard.NOUGHT: "O won!"}.get(
                result, "It's a tie!"
            )
            for item in board.children:
                if isinstance(item, discord.ui.Button):
                    item.disabled = True
            board.stop()
        await interaction.response.edit_message(content=content, view=board)


class PeerBoard(discord.ui.View):
    """The whole game, in memory: whose turn it is and a 3x3 grid of marks."""

    EMPTY, CROSS, NOUGHT, TIE = 0, -1, 1, 2

    def __init__(self) -> None:
        super().__init__()  # the default 180 s timeout, as in the example
        self.current_player = self.CROSS
        self.board = [[self.EMPTY] * 3 for _ in range(3)]
        for y in range(3):
            for x in range(3):
                self.add_item(PeerCell(x, y))

    def result(self) -> int | None:
        """CROSS (X) or NOUGHT (O) if that mark has a full line, TIE on a full board, else None."""
        grid = self.board
        lines = [list(row) for row in grid]
        lines += [[grid[y][x] for y in range(3)] for x in range(3)]
        lines += [[grid[i][i] for i in range(3)], [grid[i][2 - i] for i in range(3)]]
        for line in lines:
            if sum(line) == 3 * self.CROSS:
                return self.CROSS
            if sum(line) == 3 * self.NOUGHT:
                return self.NOUGHT
        if all(mark != self.EMPTY for row in grid for mark in row):
            return self.TIE
        return None


class PeerBot(commands.Bot):
    """The example's bot, started by a slash command instead of a prefix command."""

    def __init__(self, guild_id: int | None) -> None:
        intents = discord.Intents.default()
        intents.messages = False  # as our bot: no message events at all
        super().__init__(command_prefix=commands.when_mentioned, intents=intents)
        self.guild_id = guild_id

    async def setup_hook(self) -> None:
        @app_commands.command(name=PEER_COMMAND, description="Tic-tac-toe, X goes first")
        async def start_game(interaction: discord.Interaction) -> None:
            response = await interaction.response.send_message(
                "Tic Tac Toe: X goes first", view=PeerBoard()
            )
            if ANNOUNCE_BOARDS:  # the view is stored now: it will take the board's clicks
                sys.stdout.write(f"{response.message_id}\n")
                sys.stdout.flush()

        guild = discord.Object(self.guild_id) if self.guild_id is not None else None
        self.tree.add_command(start_game, guild=guild)
        await self.tree.sync(guild=guild)


async def serve_peer() -> None:
    """Run the peer bot until SIGTERM or SIGINT, then close it."""
    token = os.environ["DISCORD_TOKEN"]
    if api_base := os.environ.get("DISCORD_API_BASE"):
        discord.http.Route.BASE = api_base.rstrip("/")
    if gateway := os.environ.get("DISCORD_GATEWAY_URL"):
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway)
    guild_id = int(os.environ["DEV_GUILD_ID"]) if os.environ.get("DEV_GUILD_ID") else None
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with PeerBot(guild_id) as bot:
        runner = asyncio.create_task(bot.start(token))
        stopper = asyncio.create_task(stop.wait())
        await asyncio.wait({runner, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if runner.done():
            runner.result()  # it stopped by itself: raise why
            return
        log.info("Shutting down")
        await bot.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(runner, timeout=10)


# -- processes -------------------------------------------------------------------------------


def start_time(pid: int) -> int | None:
    """When the process started (clock ticks since boot): with its pid, its identity."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


SPAWNED: dict[int, int | None] = {}
"""Bot processes (and their workers) this driver started, with their start times."""


def kill_if_ours(pid: int) -> None:
    """SIGKILL ``pid`` if it is still the process we started (pids get reused)."""
    started = SPAWNED.pop(pid, None)
    if started is not None and start_time(pid) == started:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@atexit.register
def _kill_leftovers() -> None:
    """Last resort (an error between start and stop): no process of ours outlives us."""
    for pid in list(SPAWNED):
        kill_if_ours(pid)


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM if this driver dies, even by SIGKILL."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@contextlib.asynccontextmanager
async def bot_process(
    kind: str,
    emu: Emulator,
    env: dict[str, str],
    workdir: Path,
    boards: Boards | None = None,
    profile: Path | None = None,
) -> AsyncIterator[BotProcess]:
    """Start one bot (ours or the peer); yield once it is connected and its command is
    synced (globally); on exit SIGTERM it (killed after 15 s) and any workers it left.
    With ``boards``, the peer's stdout goes there (see ``ANNOUNCE_BOARDS``); with
    ``profile``, our bot runs under cProfile, which writes that file when it exits."""
    from tests.bot.e2e_helpers import BotProcess

    if kind == OURS:
        main = ["bench.peer_profile", str(profile)] if profile is not None else ["bot"]
        argv, command = [sys.executable, "-m", *main], "tictactoe"
    else:
        argv, command = [sys.executable, str(PEER_SCRIPT), "--serve-peer"], PEER_COMMAND
    log_path = workdir / f"{kind}.log"
    log_file = log_path.open("ab")
    if boards is not None:
        env = {**env, "PEER_ANNOUNCE_BOARDS": "1"}
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=workdir,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=log_file if boards is None else asyncio.subprocess.PIPE,
        stderr=log_file,
        preexec_fn=_die_with_parent,
    )
    SPAWNED[process.pid] = start_time(process.pid)
    bot = BotProcess(process, log_path, log_file)
    reader = None
    if boards is not None:
        assert process.stdout is not None
        reader = asyncio.create_task(boards.read(process.stdout))
    try:
        try:
            async with asyncio.timeout(READY_TIMEOUT):
                await bot.wait_until(emu.wait_for(lambda: bool(emu.dispatched("READY"))))
                await bot.wait_until(emu.wait_for_commands(command))
        except (AssertionError, TimeoutError):  # it exited, or never got ready
            how = "exited" if process.returncode is not None else "timed out"
            tail = "\n".join(bot.log().splitlines()[-15:])
            raise RunError(
                f"the {kind} bot did not get ready ({how}); the end of its log:\n{tail}"
            ) from None
        yield bot
    finally:
        if reader is not None:
            reader.cancel()
        workers = descendants(process.pid)
        SPAWNED.update((pid, start_time(pid)) for pid in workers)
        try:
            await bot.stop(within=STOP_TIMEOUT)
        except AssertionError:
            raise RunError(f"the {kind} bot did not exit within {STOP_TIMEOUT:g} s") from None
        finally:
            SPAWNED.pop(process.pid, None)
            await asyncio.sleep(0.2)  # its workers end with it
            for pid in workers:
                kill_if_ours(pid)


# -- the driver --------------------------------------------------------------------------------


class RunError(RuntimeError):
    """The bot did not answer as expected; the run's figures would mean nothing."""


class Boards:
    """The peer's announcements of boards ready for clicks (see ``ANNOUNCE_BOARDS``)."""

    def __init__(self) -> None:
        self.ready: set[int] = set()
        self.futures: dict[int, asyncio.Future[None]] = {}

    async def read(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            if not line.strip().isdigit():
                continue  # not an announcement (nothing else should be written there)
            message_id = int(line)
            future = self.futures.pop(message_id, None)
            if future is None:
                self.ready.add(message_id)
            elif not future.done():
                future.set_result(None)

    async def wait(self, message_id: int) -> None:
        """Wait (at most ``ANSWER_TIMEOUT``) until the peer announced ``message_id``."""
        if message_id in self.ready:
            self.ready.discard(message_id)
            return
        future = asyncio.get_running_loop().create_future()
        self.futures[message_id] = future
        try:
            async with asyncio.timeout(ANSWER_TIMEOUT):
                await future
        except TimeoutError:
            raise RunError(f"the peer never announced board {message_id}") from None


class Answers:
    """Wakes the coroutine waiting on an interaction when the emulator applies its answer.

    ``InteractionHandle.response()`` re-checks every waiter at every emulator change, which
    with 200 games in flight costs this process more than the clicks; here each click waits
    on its own future. ``at`` keeps when each answer was applied (the latency's end).
    """

    def __init__(self, boards: Boards | None = None) -> None:
        self.futures: dict[int, asyncio.Future[None]] = {}
        self.at: dict[int, float] = {}
        self.boards = boards
        """For the peer: its boards are clickable only once announced."""
        self._undo: list[tuple[Any, str, Any]] = []

    def install(self) -> None:
        from discord_emulator import interactions

        handle_class = interactions.InteractionHandle
        real_ack, real_fail = handle_class._acknowledge, handle_class._fail
        futures, at = self.futures, self.at

        def settle(handle: Any) -> None:
            future = futures.pop(handle.id, None)
            if future is not None and not future.done():
                future.set_result(None)

        def acknowledge(handle: Any, *args: Any, **kwargs: Any) -> None:
            at[handle.id] = time.perf_counter()
            real_ack(handle, *args, **kwargs)
            settle(handle)

        def fail(handle: Any) -> None:
            real_fail(handle)
            settle(handle)

        self._undo = [(handle_class, "_acknowledge", real_ack), (handle_class, "_fail", real_fail)]
        handle_class._acknowledge = acknowledge  # type: ignore[method-assign]
        handle_class._fail = fail  # type: ignore[method-assign]

    def uninstall(self) -> None:
        for owner, name, original in self._undo:
            setattr(owner, name, original)
        self._undo = []

    async def wait(self, handle: InteractionHandle, expected: int) -> Message:
        """Wait for ``handle``'s answer; RunError unless it is callback type ``expected``."""
        if handle.pending:
            future = asyncio.get_running_loop().create_future()
            self.futures[handle.id] = future
            try:
                async with asyncio.timeout(ANSWER_TIMEOUT):
                    await future
            except TimeoutError:
                raise RunError(
                    f"{handle!r}: no answer nor failure in {ANSWER_TIMEOUT:g} s"
                ) from None
        if handle.failed:
            raise RunError(f"{handle!r} was not answered within {ACK_DEADLINE:g} s")
        if handle.callback_type != expected or handle.original is None:
            raise RunError(
                f"{handle!r} answered with type {handle.callback_type}, not {expected}:"
                f" {str(handle.callback_data)[:300]}"
            )
        return handle.original


def cell_buttons(message: Message, kind: str) -> dict[int, dict[str, Any]]:
    """The board's buttons by cell (0-8, row by row), read from the raw components."""
    if kind == PEER:
        rows = [row for row in message.components if row.get("type") == 1]
        return {
            y * 3 + x: button
            for y, row in enumerate(rows)
            for x, button in enumerate(row.get("components", ()))
        }
    from discord_emulator.components import walk

    cells = {}
    for component in walk(message.components):
        custom_id = component.get("custom_id") or ""
        if component.get("type") == 2 and custom_id.startswith("ttt:cell:"):
            cells[int(custom_id.split(":")[3])] = component
    return cells


def game_over(cells: list[int]) -> bool:
    """A full line of one mark, or a full board."""
    return all(cells) or any(cells[a] and cells[a] == cells[b] == cells[c] for a, b, c in LINES)


def peer_content(cells: list[int], mover: int) -> str:
    """What the peer's board should say after ``mover`` (0: X, 1: O) played."""
    for a, b, c in LINES:
        if cells[a] and cells[a] == cells[b] == cells[c]:
            return "X won!" if cells[a] == 1 else "O won!"
    if all(cells):
        return "It's a tie!"
    return "It is now O's turn" if mover == 0 else "It is now X's turn"


class Table:
    """One channel with its two members and the games they play there, one after another.

    The table keeps its own copy of the board: its rng picks among the cells empty there, so
    the games depend on the seed alone, never on the bot; each answer is checked against it.
    """

    def __init__(self, emu: Emulator, guild: Guild, index: int, seed: int, kind: str) -> None:
        self.emu = emu
        self.kind = kind
        self.channel = emu.add_text_channel(guild, f"table-{index}")
        self.players = (emu.add_user(f"t{index}a"), emu.add_user(f"t{index}b"))
        for user in self.players:
            emu.add_member(guild, user)
        self.rng = random.Random(f"{seed}:{index}")
        self.cells = [0] * 9
        self.message_id = 0
        self.x = 0
        """Which of ``players`` is X (a rematch swaps them)."""
        self.over = True
        self.starts = 0

    async def start(self, answers: Answers) -> None:
        """A new game. Ours: the first is ``/tictactoe`` and the opponent's Accept; the
        next ones are Rematch (which the pair cooldown lets through, once per finished
        game) and the other player's Accept, with sides swapped. The peer: its command."""
        from discord_emulator import CallbackType

        emu, players = self.emu, self.players
        if self.kind == PEER:
            handle = await emu.run_command(players[0], self.channel, PEER_COMMAND)
            message = await answers.wait(handle, CallbackType.CHANNEL_MESSAGE_WITH_SOURCE)
        else:
            if self.message_id:  # a rematch, asked by the last game's O: X's turn first
                finished = self.emu.message(self.message_id)
                assert finished is not None
                self.x = 1 - self.x
                asker = players[self.x]
                handle = await emu.click(asker, finished, label="Rematch")
            else:
                options = {"opponent": players[1], "size": "3x3", "first": "me"}
                handle = await emu.run_command(players[0], self.channel, "tictactoe", **options)
            challenge = await answers.wait(handle, CallbackType.CHANNEL_MESSAGE_WITH_SOURCE)
            accept = await emu.click(players[1 - self.x], challenge, label="Accept")
            message = await answers.wait(accept, CallbackType.UPDATE_MESSAGE)
        if answers.boards is not None:
            await answers.boards.wait(message.id)
        if len(cell_buttons(message, self.kind)) != 9:
            raise RunError(f"no 3x3 board in {message!r}")
        self.message_id, self.cells, self.over = message.id, [0] * 9, False
        self.starts += 1

    async def click(self, answers: Answers) -> float:
        """The player on move clicks the next cell; returns the seconds to the answer."""
        from discord_emulator import CallbackType

        message = self.emu.message(self.message_id)
        assert message is not None
        free = [cell for cell, mark in enumerate(self.cells) if not mark]
        cell = self.rng.choice(free)
        mover = (9 - len(free)) % 2
        button = cell_buttons(message, self.kind).get(cell)
        if button is None or button.get("disabled"):
            raise RunError(f"cell {cell} is not playable on {message!r}; expected {self.cells}")
        started = time.perf_counter()
        player = self.players[mover ^ self.x]
        handle = await self.emu.click(player, message, custom_id=button["custom_id"])
        try:
            message = await answers.wait(handle, CallbackType.UPDATE_MESSAGE)
        except RunError as error:
            raise RunError(
                f"{error} (move {10 - len(free)} of a game in {self.channel!r})"
            ) from None
        took = answers.at.pop(handle.id) - started
        self.cells[cell] = 1 + mover
        self.over = game_over(self.cells)
        if self.over:
            buttons = cell_buttons(message, self.kind).items()
            # Marks stay enabled (at full colour); an empty cell must not be playable.
            left = [c for c, b in buttons if not b.get("disabled") and not self.cells[c]]
            if left:
                raise RunError(f"the game is over but cells {left} are open on {message!r}")
        if self.kind == PEER and message.content != peer_content(self.cells, mover):
            raise RunError(f"{message.content!r} on {message!r} after {self.cells}")
        return took


@dataclass
class Result:
    kind: str
    clicks: int
    starts: int
    wall: float
    cpu: float
    tail: float
    driver_cpu: float
    latencies: list[float]
    outside: int = 0
    """REST requests outside interaction answers in the timed window (the global budget)."""
    limited: int = 0
    """429s the bot received in it."""
    deleted_twice: int = 0
    """DELETEs answered Unknown Message in it: a message the bot had deleted already."""
    errors: int = 0
    exit_code: int | None = None
    main_cpu: float = 0.0
    """Of ``cpu``, the main thread's (the event loop): the rest is the other threads', the
    aiosqlite thread where SQLite runs, for ours."""

    @property
    def us_per_click(self) -> float:
        return self.cpu / self.clicks * 1e6

    @property
    def main_us_per_click(self) -> float:
        return self.main_cpu / self.clicks * 1e6


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def tolerated(request: RecordedRequest) -> bool:
    """Refusals that do not stop a run: a 429 (discord.py waits and retries; counted, see
    ``Result``), and Unknown Message on deleting a message the bot had deleted already
    (our bot deletes some turn notifications twice; counted too)."""
    if request.status == 429:
        return True
    return (
        request.status == 404
        and request.method == "DELETE"
        and isinstance(request.response, dict)
        and request.response.get("code") == 10008
    )


async def watch(emu: Emulator, bot: BotProcess) -> None:
    """Fail the run at once if the emulator refused one of the bot's requests (an invalid
    message, say: the click would otherwise wait out the answer deadline) or the bot exits."""
    seen = 0
    while True:
        await asyncio.sleep(0.2)
        requests = emu.requests
        for request in requests[seen:]:
            if request.status >= 400 and not tolerated(request):
                raise RunError(
                    f"the emulator refused {request.method} {request.path}: {request.status}"
                    f" {str(request.response)[:500]}\nrequest body: {str(request.json)[:500]}"
                )
        seen = len(requests)
        if bot.returncode is not None:
            raise RunError(f"the bot exited with {bot.returncode}")


async def guarded(emu: Emulator, bot: BotProcess, work: Any, limit: float, what: str) -> Any:
    """Await ``work`` within ``limit`` seconds, stopped early by :func:`watch`."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.create_task(watch(emu, bot))
    try:
        async with asyncio.timeout(limit):
            await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    except TimeoutError:
        raise RunError(f"{what} took over {limit:g} s") from None
    finally:
        for pending in (task, watcher):
            if not pending.done():
                pending.cancel()
                with contextlib.suppress(BaseException):
                    await pending
    if watcher.done() and not watcher.cancelled():
        watcher.result()  # raises
    return task.result()


async def all_of(coroutines: Iterable[Coroutine[Any, Any, Any]]) -> None:
    """Run the coroutines concurrently; if one fails, cancel the rest, then raise."""
    tasks = [asyncio.ensure_future(coroutine) for coroutine in coroutines]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def bench_env(emu: Emulator, workdir: Path, kind: str, options: Options) -> dict[str, str]:
    """The bot's environment: the emulator's endpoints, global commands (the games span
    several servers) and every fair-play setting at its default."""
    from tests.bot.e2e_helpers import bot_env

    env = bot_env(emu, workdir / "bench.db")
    env.pop("SWEEP_INTERVAL_SECONDS", None)  # the tests' 1 s: use the bot's own default
    env.pop("SHUTDOWN_GRACE_SECONDS", None)
    if kind == OURS:
        # This repository after the bot's: bench.peer_profile, for a profiled run.
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([str(options.bot_path), str(REPO)]))
        env.update(options.bot_env)
    return env


@dataclass
class Options:
    games: int
    clicks: int
    runs: int
    seed: int
    bot_path: Path
    bot_env: dict[str, str]
    time_limit: float
    profile: Path | None = None


async def run_once(kind: str, options: Options, profile: Path | None = None) -> Result:
    """One run of one bot: a fresh emulator, bot process and database; ``profile``: our
    bot under cProfile, writing there."""
    from discord_emulator import Emulator

    boards = Boards() if kind == PEER else None
    answers = Answers(boards)
    with tempfile.TemporaryDirectory(prefix=f"ttt-peer-{kind}-") as tmp:
        workdir = Path(tmp)
        async with Emulator(ack_deadline=ACK_DEADLINE, wait_timeout=READY_TIMEOUT) as emu:
            servers = -(-options.games // TABLES_PER_SERVER)
            guilds = [emu.add_guild(f"Bench {n}") for n in range(servers)]
            tables = [
                Table(emu, guilds[i // TABLES_PER_SERVER], i, options.seed, kind)
                for i in range(options.games)
            ]
            env = bench_env(emu, workdir, kind, options)
            bot: BotProcess | None = None
            answers.install()
            try:
                async with bot_process(kind, emu, env, workdir, boards, profile) as bot:
                    result = await measure(emu, bot, tables, answers, kind, options)
            except Exception:
                if bot is not None:
                    tail = bot.log().splitlines()[-30:]
                    print(f"-- the last lines of the {kind} bot's log:", *tail, sep="\n")
                raise
            finally:
                answers.uninstall()
            result.errors = sum(
                " ERROR " in line or "Traceback" in line for line in bot.log().splitlines()
            )
            result.exit_code = bot.returncode
    return result


async def measure(
    emu: Emulator,
    bot: BotProcess,
    tables: list[Table],
    answers: Answers,
    kind: str,
    options: Options,
) -> Result:
    """Set the games up, then time the closed loop of clicks."""
    from tests.bot.e2e_helpers import full_collections_held_back

    async def set_up() -> None:
        for chunk in range(0, len(tables), 50):
            await all_of(t.start(answers) for t in tables[chunk : chunk + 50])

    await guarded(emu, bot, set_up(), SETUP_TIMEOUT, "setting the games up")
    for table in tables:
        table.starts = 0
    await asyncio.sleep(1.0)  # let the bot finish what the set-up left it
    latencies: list[float] = []
    claimed = 0

    async def play(table: Table) -> None:
        nonlocal claimed
        while claimed < options.clicks:
            claimed += 1
            if table.over:
                await table.start(answers)
            latencies.append(await table.click(answers))

    pid = bot.process.pid
    emu.rate_limits.reset_counts()  # the timed window's REST only
    first_request = len(emu.requests)
    with full_collections_held_back():
        driver_cpu = time.process_time()
        began, cpu, (main_cpu, _) = time.perf_counter(), cpu_seconds(pid), thread_cpu_seconds(pid)
        await guarded(
            emu,
            bot,
            all_of(play(table) for table in tables),
            options.time_limit,
            f"{options.clicks} clicks",
        )
        cpu, wall = cpu_seconds(pid) - cpu, time.perf_counter() - began
        main_cpu = thread_cpu_seconds(pid)[0] - main_cpu
        driver_cpu = time.process_time() - driver_cpu
    after = cpu_seconds(pid)
    wire = emu.rate_limits.snapshot()
    deleted_twice = sum(r.status == 404 and tolerated(r) for r in emu.requests[first_request:])
    await asyncio.sleep(1.0)
    tail = cpu_seconds(pid) - after
    return Result(
        kind=kind,
        clicks=len(latencies),
        starts=sum(t.starts for t in tables),
        wall=wall,
        cpu=cpu,
        tail=tail,
        driver_cpu=driver_cpu,
        latencies=latencies,
        outside=wire["global_requests"],
        limited=sum(wire["sent_429"].values()),
        deleted_twice=deleted_twice,
        main_cpu=main_cpu,
    )


HEADER = (
    f"{'run':>3} {'bot':<4} {'clicks':>6} {'starts':>6} {'wall s':>6} {'clicks/s':>8}"
    f" {'p50 ms':>6} {'p99 ms':>6} {'CPU s':>6} {'µs/click':>8} {'main µs':>7} {'+1s ms':>6}"
    f" {'emu+drv s':>9}"
)


def row(number: int, r: Result) -> str:
    return (
        f"{number:>3} {r.kind:<4} {r.clicks:>6} {r.starts:>6} {r.wall:>6.1f}"
        f" {r.clicks / r.wall:>8.0f} {percentile(r.latencies, 0.5) * 1e3:>6.1f}"
        f" {percentile(r.latencies, 0.99) * 1e3:>6.1f} {r.cpu:>6.2f} {r.us_per_click:>8.0f}"
        f" {r.main_us_per_click:>7.0f} {r.tail * 1e3:>6.0f} {r.driver_cpu:>9.1f}"
        + (
            f"  (REST outside answers {r.outside / r.clicks:.2f}/click, {r.limited} 429s,"
            f" {r.deleted_twice} deleted twice)"
            if r.outside or r.limited or r.deleted_twice
            else ""
        )
        + (f"  ({r.errors} ERROR/Traceback lines in its log)" if r.errors else "")
        + (f"  (exit status {r.exit_code} after SIGTERM)" if r.exit_code else "")
    )


def describe_checkout(path: Path) -> str:
    """The commit of ``path`` (and whether it has changes), if it is a git checkout."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--", "bot", "engine"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return str(path)
    return f"{path} at {commit}{' + uncommitted changes' if dirty else ''}"


def summarise(results: list[Result]) -> None:
    ours = [r.us_per_click for r in results if r.kind == OURS]
    peer = [r.us_per_click for r in results if r.kind == PEER]
    mid_ours, mid_peer = statistics.median(ours), statistics.median(peer)
    print(
        f"\nmedian CPU per click: ours {mid_ours:.0f} µs ({len(ours)} runs),"
        f" peer {mid_peer:.0f} µs ({len(peer)} runs)"
    )
    print(f"ratio ours/peer (median over median): {mid_ours / mid_peer:.2f}")
    pairs = [o / p for o, p in zip(ours, peer, strict=False)]
    print(
        "ratio ours/peer per pair (runs 1/2, 3/4...): "
        + " ".join(f"{ratio:.2f}" for ratio in pairs)
        + (f"; median {statistics.median(pairs):.2f}" if len(pairs) > 1 else "")
    )
    print("(<= 1.00: our bot costs no more CPU per click than the in-memory example)")


async def drive(options: Options) -> None:
    main = asyncio.current_task()
    assert main is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main.cancel)
    print(
        "CPU per cell click, bot's main process only (our bot's AI workers not counted)\n"
        f"{options.games} games between members, {options.clicks} timed cell clicks a run,"
        f" seed {options.seed}\nnew games started during a run: in its CPU, not counted as"
        " clicks\n"
        f"ours: python -m bot from {describe_checkout(options.bot_path)}\n"
        f"peer: bench/peer.py --serve-peer (discord.py {discord.__version__}'s"
        " examples/views/tic_tac_toe.py)\n"
    )
    print(HEADER, flush=True)
    results: list[Result] = []
    for number in range(1, 2 * options.runs + 1):
        kind = OURS if number % 2 else PEER
        result = await run_once(kind, options)
        results.append(result)
        print(row(number, result), flush=True)
    summarise(results)
    if options.profile is not None:
        profiled = await run_once(OURS, options, options.profile)
        print(f"\nprofiled run: {row(2 * options.runs + 1, profiled)}")
        main = statistics.median(r.main_us_per_click for r in results if r.kind == OURS)
        print_breakdown(str(options.profile), profiled.clicks, main)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve-peer", action="store_true", help="run the peer bot itself")
    parser.add_argument("--quick", action="store_true", help="20 games, 300 clicks, 1 run each")
    parser.add_argument("--games", type=int, help="concurrent games (default 200)")
    parser.add_argument("--clicks", type=int, help="timed cell clicks per run (default 10000)")
    parser.add_argument("--runs", type=int, help="runs of each bot, alternating (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="the games' rng seed (default 1)")
    parser.add_argument(
        "--bot-path",
        type=Path,
        default=REPO,
        metavar="PATH",
        help="the checkout our bot runs from (its PYTHONPATH; default this repository)",
    )
    parser.add_argument(
        "--bot-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting for our bot, e.g. AI_WORKERS=2 (repeatable)",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="the most one run's timed clicks may take (default 600)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="after the runs, one more of ours under cProfile (written to FILE), and where"
        " its main thread spends a click, part by part",
    )
    args = parser.parse_args()
    if args.serve_peer:
        plain = logging.Formatter("%(asctime)s %(levelname)-8s %(name)s: %(message)s")
        discord.utils.setup_logging(level=logging.INFO, formatter=plain, root=True)
        asyncio.run(serve_peer())
        return
    bot_path = args.bot_path.resolve()
    if not (bot_path / "bot" / "__main__.py").is_file():
        parser.error(f"--bot-path: no bot/__main__.py in {bot_path}")
    try:
        bot_env = dict(item.split("=", 1) for item in args.bot_env)
    except ValueError:
        parser.error("--bot-env takes NAME=VALUE")
    options = Options(
        games=args.games or (20 if args.quick else 200),
        clicks=args.clicks or (300 if args.quick else 10_000),
        runs=args.runs or (1 if args.quick else 3),
        seed=args.seed,
        bot_path=bot_path,
        bot_env=bot_env,
        time_limit=args.time_limit,
        profile=args.profile.resolve() if args.profile else None,
    )
    if min(options.games, options.clicks, options.runs) < 1:
        parser.error("--games, --clicks and --runs must be at least 1")
    try:
        asyncio.run(drive(options))
    except (KeyboardInterrupt, asyncio.CancelledError):
        sys.exit("interrupted")
    except RunError as error:
        sys.exit(f"run failed: {error}")


if __name__ == "__main__":
    main()
