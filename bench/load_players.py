"""The load bench's players: one game per channel, clicked by the player on move, and
the timestamps that split each click's time (``bench.load``; their waits are the
harness's ``Answers``)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from typing import Any

from bench.harness import Answers
from bot.launcher import answered_thinking
from discord_emulator import (
    Emulator,
    FrameWritten,
    InteractionAcknowledged,
    Observation,
    RequestArrived,
)

LEVELS = ("easy", "medium", "hard", "impossible")


class Stages:
    """Per-click stage timestamps, from the emulator's ``observers``.

    ``written``: the INTERACTION_CREATE frame serialised by the gateway writer (it goes to
    the socket right after); ``called``: the bot's callback request reached the emulator's
    handler; ``acked``: the callback was validated and applied. With the click's start and
    the moment the player saw the answer, a click's time splits into emulator gateway queue,
    bot (plus both sides' sockets), emulator callback handling, and the player's wake-up.
    """

    def __init__(self, emu: Emulator) -> None:
        self.written: dict[int, float] = {}
        self.called: dict[int, float] = {}
        self.acked: dict[int, float] = {}
        self._emu = emu

    def install(self) -> None:
        self._emu.observers.append(self._observe)

    def uninstall(self) -> None:
        with contextlib.suppress(ValueError):
            self._emu.observers.remove(self._observe)

    def _observe(self, seen: Observation) -> None:
        match seen:
            case FrameWritten(payload, at) if payload.get("t") == "INTERACTION_CREATE":
                self.written[int(payload["d"]["id"])] = at
            case RequestArrived(_, path, at) if path.endswith("/callback"):
                self.called[int(path.rsplit("/", 3)[1])] = at
            case InteractionAcknowledged(interaction_id, at):
                self.acked.setdefault(interaction_id, at)


def free_cells(message: Any) -> list[str]:
    """The custom_ids of a board's enabled cells, read straight from its action rows.

    ``Message.buttons()`` builds an object for every button of every message: it was a
    tenth of this process's CPU, which the bot then had to share two cores with.
    """
    return [
        button["custom_id"]
        for row in message.components
        if row.get("type") == 1
        for button in row.get("components", ())
        if not button.get("disabled") and button.get("custom_id", "").startswith("ttt:cell:")
    ]


class LostTable(Exception):
    """A new game's start in this table failed: the table leaves the run."""


class Game:
    def __init__(
        self,
        emu: Emulator,
        waits: Answers,
        guild: object,
        index: int,
        rng: random.Random,
        *,
        big: bool = True,
    ) -> None:
        self.emu = emu
        self.waits = waits
        self.channel = emu.add_text_channel(guild, f"g{index}")  # type: ignore[arg-type]
        self.rng = rng
        kind = index % 10
        self.size = "5x5" if kind == 9 and big else "3x3"
        self.level = "impossible" if kind == 9 and index % 50 == 9 else LEVELS[index % 4]
        if self.size == "5x5" and self.level != "impossible":
            self.level = "hard"
        self.members = kind in (3, 6, 8)
        self.players = [emu.add_user(f"p{index}a"), emu.add_user(f"p{index}b")]
        for user in self.players:
            emu.add_member(guild, user)  # type: ignore[arg-type]
        self.board: int | None = None
        self.finished = 0
        self.lost = False
        """Whether a new game's start failed ("This interaction failed": the bot did not
        answer within 3 s); the table then leaves the run, counted."""

    async def start(self) -> None:
        emu, alice, bob = self.emu, *self.players
        options: dict[str, object] = {"size": self.size, "first": "me"}
        if self.members:
            options["opponent"] = bob
        else:
            options["difficulty"] = self.level
        handle = await emu.run_command(alice, self.channel, "tictactoe", **options)
        await self.waits.answered(handle)
        response = await handle.response()
        if response.failed:
            self.lost = True
            raise LostTable(self)
        assert response.message is not None and not response.ephemeral, response
        if self.members:
            accept = await emu.click(bob, response.message, label="Accept")
            await self.waits.answered(accept)
            if (await accept.response()).failed:
                self.lost = True
                raise LostTable(self)
        self.board = response.message.id

    async def replace_if_over(self) -> None:
        """Start a new game in this channel if the current one is over: between members
        by the Rematch button (a new challenge to the same member within the cooldown is
        refused; the first rematch of a finished game is exempt), else a new /tictactoe."""
        message = self.emu.message(self.board) if self.board is not None else None
        assert message is not None
        if free_cells(message):
            return
        self.finished += 1
        if not self.members or not any(b.label == "Rematch" for b in message.buttons()):
            await self.start()
            return
        asker, other = self.players
        click = await self.emu.click(asker, message, label="Rematch")
        await self.waits.answered(click)
        answer = await click.response()
        if answer.failed:
            self.lost = True
            raise LostTable(self)
        challenge = answer.message
        assert challenge is not None and not challenge.ephemeral, answer
        accept = await self.emu.click(other, challenge, label="Accept")
        await self.waits.answered(accept)
        if (await accept.response()).failed:
            self.lost = True
            raise LostTable(self)
        self.board = challenge.id

    async def click(
        self, stats: dict[str, list[float]], stages: Stages, split: list[tuple[float, ...]]
    ) -> None:
        """One click by the player on move (a new game first if this one is over)."""
        emu = self.emu
        while True:
            message = emu.message(self.board) if self.board is not None else None
            assert message is not None
            free = free_cells(message)
            if not free:
                await self.replace_if_over()
                continue
            text = message.text
            user = next((u for u in self.players if f"<@{u.id}>, your move" in text), None)
            if user is not None:
                break
            await asyncio.sleep(0.01)  # the bot's reply is still on its way
        started = time.perf_counter()
        handle = await emu.click(user, message, custom_id=self.rng.choice(free))
        await self.waits.answered(handle)
        seen = time.perf_counter()
        response = await handle.response()
        written = stages.written.pop(handle.id, started)
        called = stages.called.pop(handle.id, written)
        acked = stages.acked.pop(handle.id, None)
        # The click's time ends when "Discord" (the emulator) has the bot's answer, not
        # when this process's coroutine gets round to noticing it (its own loop's lag).
        took = (seen if acked is None else acked) - started
        if response.failed:
            stats["failed"].append(seen - started)
        elif answered_thinking(handle):  # the move shown now, the bot's reply in an edit
            stats["5x5"].append(took)
            await self.waits.until(lambda: handle.original_edits >= 1 or handle.failed)
            stats["5x5 edit"].append(time.perf_counter() - started)
            stats["5x5 reply"].append(stats["5x5 edit"][-1])
        else:
            if self.size == "5x5":  # the reply came with the click
                stats["5x5 reply"].append(took)
            stats[self.size].append(took)
            stats[f"{self.size} at"].append(started)
            if self.members:
                stats["member moves"].append(took)
            if self.size == "3x3" and acked is not None:
                stats["3x3 seen"].append(seen - started)
                split.append((written - started, called - written, acked - called, seen - acked))
