"""Nobody can starve the search pool: a flood of Review clicks and 5x5 `impossible` games
in one server delays a 5x5 bot reply in another server by at most one search budget.

One real ``python -m bot`` with one AI worker (AI_WORKERS=1) and a real SQLite file. 50
finished 5x5 games are stored in that file before the bot starts (each review of them
is a search of up to ~0.7 s, 0.2 s on average); 50 members of the busy server click
Review on them at once while 20 members there play 5x5 `impossible` games as fast as
the bot answers. A member of the quiet server plays 5x5 `impossible` too; the delay of
the bot's replies to them (from the click to the board edited with the reply) is
measured alone, then under the flood. Run with ``-s`` to see the figures.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import time
from pathlib import Path

from bot.config import ServiceConfig
from bot.games.queries import Store
from bot.launcher import BotProcess, answered_thinking, full_collections_held_back
from bot.models import Game, GameStatus, Result
from discord_emulator import (
    CallbackType,
    Channel,
    Emulator,
    InteractionHandle,
    InteractionType,
    Message,
    User,
)
from engine import Mark

from .helpers import Arena, assert_log_clean, pick_cell

BUDGET = ServiceConfig().reply_seconds
"""One search budget: the time a 5x5 `impossible` reply may search (from its request)."""
ALLOWANCE = 0.5
"""Seconds of slack on top of one budget, for this 2-core machine: the bot's event loop,
the emulator serving 70 members and the search worker share the two cores, so under the
flood every hop of a click (gateway, REST, SQLite) is slower than alone."""
PLAYERS = 20
REVIEWS = 50
SAMPLES = 3  # replies measured alone, then under the flood


def finished_5x5(guild_id: int, channel_id: int, member: int, variant: int) -> Game:
    """A 5x5 game the member won against `easy` with four in the top row; no two alike."""
    o_moves = [5 + variant % 20, 5 + (variant + 7) % 20, 5 + (variant + 13) % 20]
    while len(set(o_moves)) < 3:
        o_moves[2] = 5 + (o_moves[2] + 1 - 5) % 20
    moves = (0, o_moves[0], 1, o_moves[1], 2, o_moves[2], 3)
    now = time.time()
    return Game(
        id=0,
        guild_id=guild_id,
        channel_id=channel_id,
        message_id=None,
        x_id=member,
        o_id=None,
        bot_level="easy",
        width=5,
        height=5,
        k=4,
        moves=moves,
        status=GameStatus.FINISHED,
        result=Result.WIN,
        winner_id=member,
        winner_mark=Mark.X,
        created_at=now,
        updated_at=now,
        turn_deadline=None,
    )


async def reply_delay(arena: Arena, user: User, board: Message, cell: int | None = None) -> float:
    """Seconds from ``user``'s click (``cell``, else a sensible one) on their 5x5 board to
    the board showing the bot's reply."""
    state = arena.board(board, 5)
    cell = pick_cell(state, 4, "X") if cell is None else cell
    started = time.perf_counter()
    click = await arena.click(user, state.message, custom_id=state.cell_id(cell))
    assert click.type is CallbackType.UPDATE_MESSAGE, click
    if answered_thinking(click.handle):
        await click.handle.edited_original()
    delay = time.perf_counter() - started
    after = arena.board(board, 5)
    assert after.marks[cell] == "X" and (after.move_no == state.move_no + 2 or not after.live)
    return delay


async def live_board(arena: Arena, user: User, channel: Channel, board: Message | None) -> Message:
    """``board`` if its game is live, else a new 5x5 `impossible` game with ``user`` first."""
    if board is not None and arena.board(board, 5).live:
        return board
    return await arena.start_bot_game(
        user, channel, size="5x5", difficulty="impossible", first="me"
    )


async def test_a_review_flood_does_not_delay_another_servers_reply(tmp_path: Path) -> None:
    with full_collections_held_back():
        async with Emulator(wait_timeout=30.0) as emu:
            busy_guild, quiet_guild = emu.add_guild("Busy"), emu.add_guild("Quiet")
            database = tmp_path / "data" / "tictactoe.db"
            busy = Arena(emu, busy_guild, None, tmp_path)  # type: ignore[arg-type]
            quiet = Arena(emu, quiet_guild, None, tmp_path)  # type: ignore[arg-type]
            reviewers = [busy.member("reviewer") for _ in range(REVIEWS)]
            archive = busy.channel("archive")
            store = await Store.open(database)
            try:
                seeded = [
                    await store.insert_game(
                        finished_5x5(busy_guild.id, archive.id, user.id, i),
                        exclusive=False,
                        per_member=1,
                        per_server=25,
                    )
                    for i, user in enumerate(reviewers)
                ]
            finally:
                await store.close()
            # Global commands (no dev server): both servers see /tictactoe.
            async with BotProcess.launch(emu, tmp_path, database=database, AI_WORKERS="1") as bot:
                await bot.wait_until(emu.wait_for_commands("tictactoe"))
                busy.bot = quiet.bot = bot
                await run_flood(emu, busy, quiet, archive, seeded, reviewers)
                code = await bot.stop()
            assert code == 0, bot.log()
            assert not emu.unrouted, emu.unrouted
            assert not emu.failed_interactions, bot.log()
            assert_log_clean(bot.log())


async def run_flood(
    emu: Emulator,
    busy: Arena,
    quiet: Arena,
    archive: Channel,
    seeded: list[Game],
    reviewers: list[User],
) -> None:
    alice, quiet_channel = quiet.member("alice"), quiet.channel()

    async def opening_reply() -> float:
        """The delay of the reply to the centre in a new game: the same full search each
        time (an opening has no forced line to cut it short), measured alone or not."""
        board = await live_board(quiet, alice, quiet_channel, None)
        delay = await reply_delay(quiet, alice, board, cell=12)
        await quiet.forfeit(alice, board, side=5)
        return delay

    alone = [await opening_reply() for _ in range(SAMPLES)]

    players = [(busy.member("player"), busy.channel()) for _ in range(PLAYERS)]
    boards: list[Message | None] = [
        await live_board(busy, user, channel, None) for user, channel in players
    ]
    stop = asyncio.Event()
    busy_replies = 0

    async def play(i: int) -> None:
        nonlocal busy_replies
        user, channel = players[i]
        while not stop.is_set():
            boards[i] = await live_board(busy, user, channel, boards[i])
            await reply_delay(busy, user, boards[i])  # type: ignore[arg-type]
            busy_replies += 1

    async def review(game: Game, user: User) -> str:
        handle: InteractionHandle = await emu.send_raw_interaction(
            user,
            archive,
            type=InteractionType.MESSAGE_COMPONENT,
            data={"custom_id": f"ttt:review:{game.id}", "component_type": 2},
            message=emu.message(boards[0].id),  # type: ignore[union-attr]
        )
        response = await handle.response()
        assert not response.failed and response.ephemeral, response
        if response.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE:  # refused at once
            assert response.message is not None
            return response.message.text
        # Deferred for a search: the review (or a late refusal) fills the private
        # "thinking" message.
        assert response.type is CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE, response
        answer = await handle.edited_original()
        assert answer.ephemeral and not handle.followups, answer
        return answer.text

    flood = [asyncio.create_task(play(i)) for i in range(PLAYERS)]
    clicks = asyncio.gather(*(review(g, u) for g, u in zip(seeded, reviewers, strict=True)))
    try:
        await asyncio.sleep(1.0)  # the flood's moves and reviews are all queued
        under = [await opening_reply() for _ in range(SAMPLES)]
    finally:
        stop.set()
        results = await asyncio.gather(*flood, return_exceptions=True)
    assert not [r for r in results if isinstance(r, BaseException)], results
    answers = await clicks  # reviews run once no move waits: now that the games paused
    reviewed = [a for a in answers if a.startswith("### Review: ")]
    refused = [a for a in answers if "lot of games" in a]
    assert len(reviewed) + len(refused) == REVIEWS, [a[:60] for a in answers]
    extra = max(under) - statistics.mean(alone)
    print(
        f"\nreply delay in the quiet server, alone: {_figures(alone)};"
        f" under the flood: {_figures(under)}; worst extra {extra:.2f} s"
        f" (allowed {BUDGET:g} s budget + {ALLOWANCE:g} s)."
        f"\nflood: {busy_replies} bot replies in the busy server, {len(reviewed)} reviews"
        f" computed, {len(refused)} refused as busy, of {REVIEWS} clicks."
    )
    assert reviewed and refused, "the flood should both compute reviews and refuse some"
    assert extra <= BUDGET + ALLOWANCE, (alone, under)

    # Afterwards: a stored review is answered at once; a member refused as busy spent no
    # cooldown, and once their review searched, their next one that needs a search waits.
    done = answers.index(reviewed[0])
    game, user = seeded[done], reviewers[done]
    again = await busy.raw_click(user, boards[0], f"ttt:review:{game.id}")  # type: ignore[arg-type]
    assert again.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE and again.ephemeral
    assert again.message.text == reviewed[0]
    first, second = [i for i, answer in enumerate(answers) if answer in refused][:2]
    user, game, other = reviewers[first], seeded[first], seeded[second]
    retry = await busy.raw_click(user, boards[0], f"ttt:review:{game.id}")  # type: ignore[arg-type]
    assert retry.type is CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE and retry.ephemeral
    assert (await retry.handle.edited_original()).text.startswith("### Review: ")
    cooldown = await busy.raw_click(user, boards[0], f"ttt:review:{other.id}")  # type: ignore[arg-type]
    assert cooldown.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE and cooldown.ephemeral
    text = cooldown.message.text
    assert re.fullmatch(r"You can ask for another review <t:[0-9]+:R>\.", text), text


def _figures(delays: list[float]) -> str:
    return ", ".join(f"{d:.2f}" for d in delays) + f" s (mean {statistics.mean(delays):.2f})"
