"""Races against one bot process: over 1,000 moments where several actions hit one game at once.

Kinds: the player on move double-clicks (the same or another cell), both players click at
once, a click races a forfeit (the answer to Forfeit's question), a click races
/tictactoe-stop, and a click races the turn
running out (the shortest turn clock a server may choose, 30 s, whose deadline the test
moves to within a moment of now, and a 1 s sweep). After all of them: at most one click
was accepted per game and move number, every accepted click is in the database, every
other click got an ephemeral answer, no interaction failed, and the database is whole.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

import pytest

from discord_emulator import CallbackType, Channel, Limits, Message, User
from tests.e2e.helpers import assert_log_clean
from tests.overdue import run_out

from .arena import (
    CELL_ID,
    Arena,
    acknowledged_moves,
    check_database,
    free_cells,
    moves_of,
    player_on_move,
)


class RaceTable:
    def __init__(self, arena: Arena, seed: int, *, against_bot: bool) -> None:
        self.arena = arena
        self.channel: Channel = arena.channel()
        self.players: tuple[User, ...] = (
            (arena.member(),) if against_bot else (arena.member(), arena.member())
        )
        self.rng = random.Random(seed)
        self.board: Message | None = None
        self.races = 0
        self.stale = 0

    async def answered(self, handle: Any) -> Any:
        async with asyncio.timeout(6):
            response = await handle.response()
        assert not response.failed
        return response

    async def new_game(self) -> None:
        emu, first = self.arena.emu, self.players[0]
        options: dict[str, Any] = {"first": "me"}
        if len(self.players) == 1:
            options["difficulty"] = self.rng.choice(("easy", "hard"))
        else:
            options["opponent"] = self.players[1]
        response = await self.answered(
            await emu.run_command(first, self.channel, "tictactoe", **options)
        )
        assert response.message is not None and not response.ephemeral, response.message
        if len(self.players) == 2:
            accept = await emu.click(self.players[1], response.message, label="Accept")
            assert (await self.answered(accept)).type == CallbackType.UPDATE_MESSAGE
        self.board = emu.message(response.message.id)

    async def race(self) -> None:
        """One race on the current game; a new game first if it is over."""
        emu = self.arena.emu
        board = emu.message(self.board.id) if self.board is not None else None
        free = free_cells(board) if board is not None else []
        if board is None or not free:
            await self.new_game()
            return
        edits = board.edits
        mover = next((p for p in self.players if p.id == player_on_move(board)), None)
        forfeit = next((b for b in board.buttons() if b.label == "Forfeit"), None)
        assert mover is not None and forfeit is not None, (board.text, board.buttons())
        other = self.players[-1] if mover is self.players[0] else self.players[0]
        first, second = self.rng.choice(free), self.rng.choice(free)
        kind = self.rng.choice(("double", "double", "both", "forfeit", "stop", "timeout"))
        if len(self.players) == 1 and kind in ("both", "timeout"):
            kind = "double"
        actions = []
        if kind == "timeout":  # the turn is running out: due from 0.1 s on to 0.2 s ago
            ago = self.rng.uniform(-0.1, 0.2)
            await run_out(self.arena.database, board.id, ago=ago, missing_ok=True)

        def press(user: User, custom_id: Any) -> Any:
            """A click on the board as both users saw it (no client-side checks between)."""
            data = {"custom_id": custom_id, "component_type": 2}
            return emu.send_raw_interaction(user, self.channel, type=3, data=data, message=board)

        question, answer_at = None, 0
        if kind == "forfeit":  # Forfeit asks first; its answer is what races the click
            asking = await press(other, forfeit.custom_id)
            if (await self.answered(asking)).type != CallbackType.DEFERRED_UPDATE_MESSAGE:
                self.races += 1  # refused (the game ended meanwhile): nothing to race
                self.stale += 1
                await emu.wait_for(lambda: emu.message(board.id).edits > edits)  # type: ignore[union-attr]
                return
            (question,) = await asking.wait_followups(1)
        actions.append(press(mover, first.custom_id))
        if kind == "double" or kind == "timeout":
            actions.append(press(mover, second.custom_id))
        elif kind == "both":
            actions.append(press(other, second.custom_id))
        elif question is not None:  # sent first or second: either may land first
            answer_at = self.rng.randrange(2)
            actions.insert(answer_at, emu.click(other, question, index=0))
        else:
            actions.append(emu.run_command(other, self.channel, "tictactoe-stop"))
        handles = await asyncio.gather(*actions)
        responses = await asyncio.gather(*(self.answered(h) for h in handles))
        updates = [r for r in responses if r.type == CallbackType.UPDATE_MESSAGE]
        for response in responses:
            if response.type != CallbackType.UPDATE_MESSAGE:
                assert response.message is not None
                assert response.ephemeral or kind == "stop", (kind, response.message.text)
        if question is not None and responses[answer_at].type == CallbackType.UPDATE_MESSAGE:
            # The game ended by the answer, which the board shows after it (redrawn
            # through the Forfeit click's token): the next race starts from there.
            await emu.wait_for(
                lambda: not any(b.label == "Forfeit" for b in emu.message(board.id).buttons())
            )  # type: ignore[union-attr]
        texts = [r.message.text for r in responses if r.message is not None]
        assert len(updates) <= 1 or kind == "forfeit", (kind, texts)
        if kind in ("double", "both") and not updates:
            # Only if the board was out of date: an answer overtaken by an earlier one
            # (the clicker is then told, and the board redrawn).
            assert all("over" in t or "board changed" in t for t in texts), (kind, texts)
            self.stale += 1
            # As a player would, look again once the board is brought up to date (the
            # bot redraws it after such a refusal) rather than click the stale one again.
            await emu.wait_for(lambda: emu.message(board.id).edits > edits)  # type: ignore[union-attr]
        self.races += 1


async def test_a_thousand_races(arena: Arena) -> None:
    await run_races(arena, races=1000, tables=24)


@pytest.mark.slow
async def test_many_races(arena: Arena) -> None:
    await run_races(arena, races=5000, tables=32)


async def run_races(arena: Arena, *, races: int, tables: int) -> None:
    emu = arena.emu
    # Limits off, as the test is about races and not throughput: every refused click makes
    # the bot redraw its board through the channel (Boards.refresh), so 24 tables racing
    # about 4 times a second each ask for some 34 edits a second, far past 5 edits per 5 s
    # per channel. With the limits on, redraws fell up to 5 s behind, the boards the
    # races clicked on were stale (45% of races instead of 9%), and discord.py met 460
    # 429s in 40 s (invalid requests: a Cloudflare ban after 15 minutes of this). Turn
    # them back on once redraws a newer one supersedes are dropped (issue 22, point 6).
    emu.rate_limits.limits = Limits.off()
    async with arena.bot(TURN_TIMEOUT_SECONDS="30") as bot:
        playing = [RaceTable(arena, i, against_bot=i % 4 == 0) for i in range(tables)]
        per_table = -(-races // tables)

        async def run(table: RaceTable) -> None:
            while table.races - table.stale < per_table:
                await table.race()

        await asyncio.gather(*(run(table) for table in playing))
        # Stale races (the board was already out of date, mostly because its turn had
        # just run out) are answered correctly but race nothing: they do not count, and
        # they must stay a minority. After one, a table waits for the bot's redraw (paced
        # to its share of the global limit, 40 a second) before it clicks again, as a
        # player would: clicking a stale board again and again made hundreds of them
        # (431 and 488 for 1,000 real races; some 130 since). Stale races must not
        # outnumber the real ones.
        assert sum(t.races - t.stale for t in playing) >= races
        assert sum(t.stale for t in playing) < races
        await asyncio.sleep(0.3)

        games = check_database(arena.database)
        per_move: Counter[tuple[int, int]] = Counter()
        for handle in emu.interactions.values():
            found = CELL_ID.match(str(handle.payload.get("data", {}).get("custom_id", "")))
            if found and handle.callback_type == CallbackType.UPDATE_MESSAGE:
                per_move[(int(found["game"]), int(found["move"]))] += 1
        doubled = [key for key, count in per_move.items() if count > 1]
        assert not doubled, f"two clicks accepted for one move: {doubled}"
        for (game_id, move_no), cell in acknowledged_moves(emu).items():
            assert moves_of(games[game_id])[move_no] == cell
        results = Counter(row["result"] for row in games.values())
        assert results["forfeit"] and results["abandoned"] and results["timeout"], results
        assert not emu.failed_interactions
        assert not emu.unrouted
    assert_log_clean(bot.log())
