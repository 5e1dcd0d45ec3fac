"""Helpers of the fault tests: the real bot under crashes and abuse.

Every test gets an ``arena`` (the fixture is in conftest.py): a running emulator with
one guild, and helpers to make channels and members. ``bot()`` runs the bot in the
test's loop with fast settings (one AI worker); ``process()`` and ``start_bot()``
launch ``python -m bot`` (a 1 s sweep) for the tests whose subject is the process:
SIGKILL and SIGTERM.
After every test the ``no_orphans`` fixture checks that no process started by the test
survives it: each one carries the test's tmp path in its environment
(``DATABASE_PATH``), the AI pool's forkserver and workers included, so they are found in
``/proc`` even after the bot was SIGKILLed.

The database is read here with plain ``sqlite3`` in read-only mode, independently of the
code under test.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.launcher import BotProcess, bot_env
from discord_emulator import Button, CallbackType, Channel, Emulator, Guild, Message, User
from engine import Board
from tests.e2e.helpers import MARKS
from tests.e2e.inprocess import BotInProcess

CELL_ID = re.compile(r"\Attt:cell:(?P<game>[0-9]+):(?P<cell>[0-9]+):(?P<move>[0-9]+)\Z")
ANY_CELL = re.compile(r"\Attt:(?:cell|taken|over):(?P<game>[0-9]+):(?P<cell>[0-9]+)(?::[0-9]+)?\Z")
"""A board cell's custom_id: an empty cell to play, a live board's mark, a finished board's."""
YOUR_MOVE = re.compile(r"<@([0-9]+)>, your move")

FAST_ENV = {
    "AI_WORKERS": "1",
    "SWEEP_INTERVAL_SECONDS": "1",
    "SHUTDOWN_GRACE_SECONDS": "5",
    # These tests replay games between the same few members as fast as they can, and
    # leave games unfinished on purpose: the limits are off here (they are tested in
    # tests/bot/test_fair_play.py, test_limits_race.py and tests/e2e/test_fair_play.py).
    "CHALLENGE_COOLDOWN_SECONDS": "0",
    "DECLINE_COOLDOWN_SECONDS": "0",
    "ABANDON_COOLDOWN_SECONDS": "0",
    "GAMES_PER_MEMBER": "5",
    "SERVER_GAMES": "100",
}


# -- the arena -------------------------------------------------------------------------------


@dataclass
class Arena:
    """An emulator with one guild the bot is in, and where the test's files go."""

    emu: Emulator
    guild: Guild
    workdir: Path
    database: Path
    _names: Iterator[int] = field(default_factory=lambda: iter(range(1, 1_000_000)))

    def channel(self, guild: Guild | None = None) -> Channel:
        return self.emu.add_text_channel(guild or self.guild, f"games-{next(self._names)}")

    def member(self, guild: Guild | None = None, **kwargs: Any) -> User:
        """A new user who is a member of ``guild`` (the arena's by default)."""
        user = self.emu.add_user(f"player-{next(self._names)}")
        self.emu.add_member(guild or self.guild, user, **kwargs)
        return user

    @contextlib.asynccontextmanager
    async def bot(self, *, sync: bool = False, **env: str) -> AsyncIterator[BotInProcess]:
        """The bot in the test's loop, connected and with its commands synced to the guild
        (``sync``: globally too, for other guilds, as ``--sync`` does)."""
        async with BotInProcess.launch(
            self.emu,
            self.workdir,
            dev_guild=self.guild,
            database=self.database,
            force_sync=sync,
            **{**FAST_ENV, **env},
        ) as bot:
            yield bot

    @contextlib.asynccontextmanager
    async def process(self, *args: str, **env: str) -> AsyncIterator[BotProcess]:
        """The bot process, connected and with its commands synced to the guild
        (``"--sync"`` in ``args``: globally too, for other guilds)."""
        async with BotProcess.launch(
            self.emu,
            self.workdir,
            *args,
            dev_guild=self.guild,
            database=self.database,
            **{**FAST_ENV, **env},
        ) as bot:
            yield bot

    async def start_bot(self, **env: str) -> BotProcess:
        """Launch the bot without a context (for tests that kill it); wait until it serves.

        Its commands must already be synced (an earlier ``bot()`` or ``start_bot()``).
        """
        sessions = len(self.emu.dispatched("READY"))
        process = await BotProcess.start(
            bot_env(self.emu, self.database, dev_guild=self.guild, **{**FAST_ENV, **env}),
            self.workdir,
        )
        async with asyncio.timeout(30):
            await process.wait_until(
                self.emu.wait_for(
                    lambda: (
                        len(self.emu.dispatched("READY")) > sessions and self.emu.gateway.connected
                    )
                )
            )
        return process


# -- processes -------------------------------------------------------------------------------


def processes_marked(marker: str) -> dict[int, str]:
    """Live processes (pid -> cmdline) whose environment contains ``marker``."""
    found: dict[int, str] = {}
    needle = marker.encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as env:
                if needle not in env.read():
                    continue
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                if stat.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                    continue  # a zombie has exited; only its parent's wait() is missing
            with open(f"/proc/{entry.name}/cmdline", "rb") as cmd:
                found[int(entry.name)] = cmd.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
    return found


def wait_for_no_processes(marker: str, within: float = 5.0) -> dict[int, str]:
    """Wait until no process carries ``marker``; returns the survivors (empty when none)."""
    deadline = time.monotonic() + within
    while (alive := processes_marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


# -- the database ----------------------------------------------------------------------------


def read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to the bot's database (the bot may be running or dead)."""
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)


def db_games(path: Path) -> dict[int, sqlite3.Row]:
    conn = read_only(path)
    conn.row_factory = sqlite3.Row
    try:
        return {row["id"]: row for row in conn.execute("SELECT * FROM games ORDER BY id")}
    finally:
        conn.close()


def moves_of(row: sqlite3.Row) -> tuple[int, ...]:
    text = row["moves"]
    return tuple(int(cell) for cell in text.split(",")) if text else ()


def dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, for before/after comparisons."""
    conn = read_only(path)
    try:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        return {
            name: conn.execute(f'SELECT * FROM "{name}" ORDER BY 1').fetchall() for name in tables
        }
    finally:
        conn.close()


def check_database(path: Path) -> dict[int, sqlite3.Row]:
    """``PRAGMA integrity_check`` passes and every game row is whole and consistent.

    Whole: its moves replay legally on its board, move_no counts them, its status agrees
    with the board (a live game is not over; a game won or drawn on the board says so).
    """
    conn = read_only(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        conn.close()
    games = db_games(path)
    for game_id, row in games.items():
        moves = moves_of(row)
        assert row["move_no"] == len(moves), game_id
        board = Board.from_moves(moves, row["width"], row["height"], row["k"])
        if row["status"] in ("active", "bot_to_move"):
            assert not board.is_over, (game_id, moves)
            assert row["result"] is None
            bot_mark = None
            if row["bot_level"] is not None:
                bot_mark = "X" if row["x_id"] is None else "O"
            bots_turn = board.turn.value == bot_mark
            assert bots_turn == (row["status"] == "bot_to_move"), (game_id, row["status"])
        elif row["result"] in ("win", "draw"):
            assert board.is_over, (game_id, moves)
            outcome = board.outcome()
            assert outcome is not None
            winner = None if outcome.winner is None else outcome.winner.value
            assert row["winner_mark"] == winner, game_id
        else:
            assert not board.is_over or row["result"] == "timeout", (game_id, row["result"])
    return games


# -- boards as users see them ----------------------------------------------------------------


def cell_buttons(message: Message) -> list[Button]:
    return [b for b in message.buttons() if ANY_CELL.match(b.custom_id or "")]


def mark_shown(emoji: dict[str, Any] | None) -> str | None:
    """The mark ("X" or "O") a cell's emoji shows; None for an empty cell."""
    return MARKS.get(str((emoji or {}).get("name")))


def board_state(message: Message) -> tuple[int, int, dict[int, str]] | None:
    """(game id, move number, {cell: mark}) of a board message, or None if it isn't one."""
    cells = cell_buttons(message)
    if not cells:
        return None
    first = ANY_CELL.match(cells[0].custom_id or "")
    assert first is not None
    marks = {}
    for button in cells:
        found = ANY_CELL.match(button.custom_id or "")
        assert found is not None
        mark = mark_shown(button.emoji)
        if mark is not None:
            marks[int(found["cell"])] = mark
    return int(first["game"]), len(marks), marks


def shows(message: Message, row: sqlite3.Row) -> bool:
    """Whether ``message`` shows the stored game ``row``: its move number and every mark."""
    state = board_state(message)
    if state is None:
        return False
    game_id, move_no, marks = state
    moves = moves_of(row)
    expected = {cell: "XO"[i % 2] for i, cell in enumerate(moves)}
    live = row["status"] in ("active", "bot_to_move")
    # Marks are never disabled (Discord would fade them): playable means an empty cell.
    enabled = any(not b.disabled for b in free_or_empty(message))
    return (
        game_id == row["id"]
        and move_no == row["move_no"]
        and marks == expected
        and (enabled or not live or row["status"] == "bot_to_move")
        and (live or not enabled)
    )


def free_or_empty(message: Message) -> list[Button]:
    """The cells without a mark (disabled or not)."""
    return [b for b in cell_buttons(message) if mark_shown(b.emoji) is None]


def free_cells(message: Message) -> list[Button]:
    return [b for b in free_or_empty(message) if not b.disabled]


def player_on_move(message: Message) -> int | None:
    found = YOUR_MOVE.search(message.text)
    return int(found[1]) if found else None


def walk_components(components: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every component of a message payload, depth first."""
    for component in components:
        yield component
        yield from walk_components(component.get("components") or [])
        if isinstance(component.get("accessory"), dict):
            yield component["accessory"]


def acknowledged_moves(emu: Emulator) -> dict[tuple[int, int], int]:
    """{(game id, move number): cell} of every cell click the bot answered with an update
    (type 7) that showed the clicked cell marked: what the user saw accepted."""
    accepted: dict[tuple[int, int], int] = {}
    for handle in emu.interactions.values():
        if handle.callback_type != CallbackType.UPDATE_MESSAGE:
            continue
        found = CELL_ID.match(str(handle.payload.get("data", {}).get("custom_id", "")))
        if found is None:
            continue
        game, cell, move = int(found["game"]), int(found["cell"]), int(found["move"])
        for component in walk_components((handle.callback_data or {}).get("components") or []):
            shown = ANY_CELL.match(str(component.get("custom_id", "")))
            if (
                shown is not None
                and (int(shown["game"]), int(shown["cell"])) == (game, cell)
                and mark_shown(component.get("emoji")) is not None
            ):
                accepted[(game, move)] = cell
    return accepted


# -- users who keep playing ------------------------------------------------------------------


@dataclass
class Table:
    """One channel where users keep playing: against the bot (one player) or each other."""

    arena: Arena
    channel: Channel
    players: tuple[User, ...]
    level: str = "medium"
    size: str = "3x3"
    rng_seed: int = 0
    win_length: int | None = None  # None: the command's default (the board's side)
    board: int | None = None  # the id of the message showing this table's game
    clicks: int = 0
    _rng: Any = None

    @property
    def emu(self) -> Emulator:
        return self.arena.emu

    def rng(self) -> Any:
        if self._rng is None:
            import random

            self._rng = random.Random(self.rng_seed)
        return self._rng

    async def play(self, *, pause: float = 0.0) -> None:
        """Keep acting until cancelled: new games, accepting, clicking free cells."""
        while True:
            try:
                await self.step()
            except (TimeoutError, AssertionError):  # a dead bot answers nothing
                await asyncio.sleep(0.05)
            except Exception as error:  # a button gone or disabled under our feet
                if type(error).__name__ != "UserActionError":
                    raise
            await asyncio.sleep(pause)

    def describe(self) -> str:
        """The table's board as text, for failure messages."""
        message = self.emu.message(self.board) if self.board is not None else None
        if message is None:
            return f"#{self.channel.name}: no board"
        buttons = [(b.label, b.custom_id, b.disabled) for b in message.buttons()]
        return f"#{self.channel.name} clicks={self.clicks}: {message.text!r} {buttons}"

    async def answer(self, handle: Any) -> Any:
        async with asyncio.timeout(5):
            return await handle.response()

    async def step(self) -> None:
        """One user action at this table."""
        emu = self.emu
        message = emu.message(self.board) if self.board is not None else None
        if message is None or message.deleted or message.loading:
            await self.new_game()
            return
        labels = [b.label for b in message.buttons()]
        if "Accept" in labels:
            accept = next(b for b in message.buttons() if b.label == "Accept")
            if accept.disabled:  # expired or declined while we were away
                await self.new_game()
                return
            handle = await emu.click(self.players[1], message, label="Accept")
            if (await self.answer(handle)).ephemeral:  # it expired meanwhile
                await self.new_game()
            return
        free = free_cells(message)
        if free:
            mover = player_on_move(message)
            user = next((p for p in self.players if p.id == mover), None)
            if user is None:
                await asyncio.sleep(0.05)
                return
            button = self.rng().choice(free)
            self.clicks += 1
            await self.answer(await emu.click(user, message, custom_id=button.custom_id))
            return
        if "Rematch" in labels:
            await self.new_game()
            return
        await asyncio.sleep(0.05)  # "My move…": the bot is thinking

    async def new_game(self) -> None:
        emu, first = self.emu, self.players[0]
        options: dict[str, Any] = {"size": self.size, "first": "me"}
        if self.win_length is not None:
            options["win_length"] = self.win_length
        if len(self.players) == 1:
            options["difficulty"] = self.level
        else:
            options["opponent"] = self.players[1]
        handle = await emu.run_command(first, self.channel, "tictactoe", **options)
        response = await self.answer(handle)
        if response.failed:
            return
        if response.deferred:
            async with asyncio.timeout(10):
                await handle.edited_original()
        message = response.message
        if message is None or message.ephemeral:  # a game or challenge we lost track of
            stop = await emu.run_command(first, self.channel, "tictactoe-stop")
            await self.answer(stop)
            await asyncio.sleep(0.2)
            return
        self.board = message.id
