"""The peer bench's players: one table per game, the answers they wait for, and the
checks that each answer shows the board the driver expects (``bench.peer``)."""

from __future__ import annotations

import asyncio
import random
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from discord_emulator import (
        Emulator,
        Guild,
        InteractionHandle,
        Message,
    )

from bench import harness
from bench.harness import RunError
from bench.peer_bot import PEER_COMMAND

OURS, PEER, UTARWYN = "ours", "peer", "utarwyn"
GROUP_DM = "ours-dm"
"""Our bot, each game in a group DM of its two players (the app installed to the first's
account, the bot a member of nothing there: interactions alone)."""
UTARWYN_LABELS = ("-", "X", "O")
"""utarwyn's cell labels: empty, X (the challenger), O."""
ACK_DEADLINE = 30.0
"""The emulator's answer deadline (Discord's is 3 s): a stall of this shared machine should
not end a run; slowness shows in the latency columns instead."""
ANSWER_TIMEOUT = ACK_DEADLINE + 15.0
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class Boards:
    """The bot's announcements that a message takes clicks: the peer's once per board (see
    ``ANNOUNCE_BOARDS``), utarwyn's once per collector it sets on a message (see
    ``bench/utarwyn/run.js``), counted by message id."""

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.futures: dict[int, list[tuple[int, asyncio.Future[None]]]] = {}

    async def read(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            if not line.strip().isdigit():
                continue  # not an announcement (nothing else should be written there)
            message_id = int(line)
            count = self.counts[message_id] = self.counts.get(message_id, 0) + 1
            waiting = self.futures.pop(message_id, [])
            for needed, future in waiting:
                if needed <= count and not future.done():
                    future.set_result(None)
            if left := [(n, f) for n, f in waiting if n > count]:
                self.futures[message_id] = left

    async def wait(self, message_id: int, count: int = 1) -> None:
        """Wait (at most ``ANSWER_TIMEOUT``) until the bot announced ``message_id``
        ``count`` times."""
        if self.counts.get(message_id, 0) >= count:
            return
        future = asyncio.get_running_loop().create_future()
        self.futures.setdefault(message_id, []).append((count, future))
        try:
            async with asyncio.timeout(ANSWER_TIMEOUT):
                await future
        except TimeoutError:
            raise RunError(f"the bot never announced message {message_id} ({count})") from None


class Answers(harness.Answers):
    """The harness's waits on answers, with the peer's board announcements."""

    def __init__(self, emu: Emulator, boards: Boards | None = None) -> None:
        super().__init__(emu)
        self.boards = boards
        """For the peer: its boards are clickable only once announced."""

    async def wait(self, handle: InteractionHandle, expected: int) -> Message:
        """Wait for ``handle``'s answer; RunError unless it is callback type ``expected``."""
        try:
            await self.answered(handle, ANSWER_TIMEOUT)
        except TimeoutError:
            raise RunError(f"{handle!r}: no answer nor failure in {ANSWER_TIMEOUT:g} s") from None
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
    if kind == UTARWYN:
        return {
            int(button["custom_id"]): button
            for row in message.components
            if row.get("type") == 1
            for button in row.get("components", ())
            if button.get("custom_id", "").isdigit()
        }
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
        self.players = (emu.add_user(f"t{index}a"), emu.add_user(f"t{index}b"))
        if kind == GROUP_DM:
            emu.add_user_install(self.players[0])
            self.channel = emu.open_group_dm(self.players[0], [self.players[1]])
        else:
            self.channel = emu.add_text_channel(guild, f"table-{index}")
            for user in self.players:
                emu.add_member(guild, user)
        self.rng = random.Random(f"{seed}:{index}")
        self.cells = [0] * 9
        self.message_id = 0
        self.x = 0
        """Which of ``players`` is X (a rematch swaps them)."""
        self.over = True
        self.starts = 0
        self.games = 0
        """Games started at this table, set-up included (``starts`` counts the timed ones)."""

    async def start(self, answers: Answers) -> None:
        """A new game. Ours: the first is ``/tictactoe`` and the opponent's Accept; the
        next ones are Rematch (which the pair cooldown lets through, once per finished
        game) and the other player's Accept, with sides swapped. The peer: its command."""
        from discord_emulator import CallbackType

        emu, players = self.emu, self.players
        if self.kind == PEER:
            handle = await emu.run_command(players[0], self.channel, PEER_COMMAND)
            message = await answers.wait(handle, CallbackType.CHANNEL_MESSAGE_WITH_SOURCE)
        elif self.kind == UTARWYN:
            message = await self.start_utarwyn(answers)
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
        if self.kind == PEER and answers.boards is not None:
            await answers.boards.wait(message.id)
        if len(cell_buttons(message, self.kind)) != 9:
            raise RunError(f"no 3x3 board in {message!r}")
        self.message_id, self.cells, self.over = message.id, [0] * 9, False
        self.starts += 1
        self.games += 1

    async def start_utarwyn(self, answers: Answers) -> Message:
        """utarwyn's game: ``/tictactoe opponent:B``, B's Accept (``yes``); the board then
        comes as an edit of the command's answer, and takes clicks once its collector is
        set (it tells, see ``Boards``). The challenger is X; who moves first is drawn.
        Its last game leaves its list after the final answer: it tells that too (both
        players' ids), and only then is the next game asked for."""
        from discord_emulator import CallbackType

        emu, players = self.emu, self.players
        assert answers.boards is not None
        await answers.boards.wait(players[0].id, self.games)  # the last game has ended
        handle = await emu.run_command(players[0], self.channel, "tictactoe", opponent=players[1])
        challenge = await answers.wait(handle, CallbackType.CHANNEL_MESSAGE_WITH_SOURCE)
        if not challenge.components:
            raise RunError(f"utarwyn refused a new game in {self.channel!r}: {challenge!r}")
        await answers.boards.wait(challenge.id)  # its collector takes the Accept
        accept = await emu.click(players[1], challenge, custom_id="yes")
        await answers.wait(accept, CallbackType.UPDATE_MESSAGE)  # the board, "loading"
        # Then it edits in whose turn it is, and sets the first move's collector.
        await answers.boards.wait(challenge.id, 2)
        message = emu.message(challenge.id)
        assert message is not None
        # It draws who moves first: the board names them (a mention); A is X, B is O.
        self.x = 1 if f"<@{players[1].id}>" in message.content else 0
        return message

    async def click(self, answers: Answers) -> float:
        """The player on move clicks the next cell; returns the seconds to the answer."""
        from discord_emulator import CallbackType

        message = self.emu.message(self.message_id)
        assert message is not None
        free = [cell for cell, mark in enumerate(self.cells) if not mark]
        cell = self.rng.choice(free)
        mover = (9 - len(free)) % 2
        if self.kind == UTARWYN and answers.boards is not None:
            # One collector for the Accept, then one per move, each set after the answer.
            await answers.boards.wait(message.id, 11 - len(free))
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
        if self.kind == UTARWYN:
            labels = [b.get("label") for _, b in sorted(cell_buttons(message, self.kind).items())]
            # Mark 1 is the first mover's, who is players[self.x]; A plays X, B plays O.
            expected = [UTARWYN_LABELS[mark and 1 + ((mark - 1) ^ self.x)] for mark in self.cells]
            if labels != expected:
                raise RunError(f"{labels} on {message!r} after {self.cells}")
        elif self.over:
            buttons = cell_buttons(message, self.kind).items()
            # Marks stay enabled (at full colour); an empty cell must not be playable.
            left = [c for c, b in buttons if not b.get("disabled") and not self.cells[c]]
            if left:
                raise RunError(f"the game is over but cells {left} are open on {message!r}")
        if self.kind == PEER and message.content != peer_content(self.cells, mover):
            raise RunError(f"{message.content!r} on {message!r} after {self.cells}")
        return took
