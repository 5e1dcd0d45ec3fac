"""Two bot processes on one token share Discord's global limit: each paces its own
requests (those no interaction answer covers) to its share of ``SHARD_COUNT``.

Forty member games in each process's server wait for their player's move when both
processes restart: the clicks that began those turns are gone with the old processes,
so every ping goes through the channel route, all due in the same sweep. Unpaced, one
process alone sends its forty within a second on this 2-core machine; paced (20 a second
each, 40 together, under the emulator's 50) every one is sent, and none meets a 429.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from bot.launcher import BotProcess, full_collections_held_back
from discord_emulator import Emulator
from tests.pgtools import new_pg_database

from .helpers import WAIT, Arena, assert_log_clean, eventually

GAMES = 40  # per server
ENV = {"TURN_TIMEOUT_SECONDS": "600", "SERVER_GAMES": "100"}


def launch(
    emu: Emulator, workdir: Path, url: str, shard: int, life: int, grace: str
) -> contextlib.AbstractAsyncContextManager[BotProcess]:
    return BotProcess.launch(
        emu,
        workdir,
        shards=(2, [shard]),
        log_name=f"shard-{shard}-{life}.log",
        ready_timeout=3 * WAIT,
        DATABASE_URL=url,
        PING_GRACE_SECONDS=grace,
        **ENV,
    )


async def both(
    stack: contextlib.AsyncExitStack, emu: Emulator, workdir: Path, url: str, life: int, grace: str
) -> list[BotProcess]:
    return [
        await stack.enter_async_context(launch(emu, workdir, url, shard, life, grace))
        for shard in (0, 1)
    ]


def most_in_a_second(times: list[float]) -> int:
    times = sorted(times)
    most, low = 0, 0
    for high, at in enumerate(times):
        while at - times[low] >= 1.0:
            low += 1
        most = max(most, high - low + 1)
    return most


def peak(emu: Emulator, since: int) -> int:
    """The most requests the global limit counts (not callbacks nor webhook-token
    routes) that the emulator answered within one second, from request ``since`` on."""
    exempt = ("/interactions/", "/webhooks/")
    return most_in_a_second([r.at for r in emu.requests[since:] if not r.path.startswith(exempt)])


def peak_of(emu: Emulator, since: int, channel_ids: set[int]) -> int:
    """``peak`` over the requests to the channels in ``channel_ids``."""
    return most_in_a_second(
        [
            r.at
            for r in emu.requests[since:]
            if r.path.startswith("/channels/") and int(r.path.split("/")[2]) in channel_ids
        ]
    )


async def test_two_processes_stay_within_the_tokens_global_limit(
    tmp_path: Path, pg_server: Any
) -> None:
    with full_collections_held_back(), new_pg_database(pg_server) as url:
        async with Emulator(wait_timeout=3 * WAIT, max_concurrency=2) as emu:
            guilds = [emu.add_guild(f"Shard {n}", shard=(n, 2)) for n in (0, 1)]
            channels = []
            async with contextlib.AsyncExitStack() as stack:
                # First lives: nobody is pinged (an hour's grace) while the games begin.
                bots = await both(stack, emu, tmp_path, url, 1, "3600")
                await emu.wait_for_commands("tictactoe")
                for guild, bot in zip(guilds, bots, strict=True):
                    arena = Arena(emu, guild, bot, tmp_path)
                    for n in range(GAMES):
                        channel = arena.channel(f"g{n}")
                        await arena.member_game(arena.member("x"), arena.member("o"), channel)
                        channels.append((arena, channel))
                for bot in bots:
                    assert await bot.stop() == 0
            since = len(emu.requests)
            async with contextlib.AsyncExitStack() as stack:
                # Second lives: a one-second grace, and no click to follow up.
                bots = await both(stack, emu, tmp_path, url, 2, "1")
                for arena, channel in channels:
                    await eventually(
                        emu, lambda a=arena, c=channel: len(a.turn_pings(c)) == 1, "a ping", WAIT
                    )
                await asyncio.sleep(1.0)
                requests = emu.requests[since:]
                assert [r for r in requests if r.status == 429] == []
                sent = [r for r in requests if r.method == "POST" and "/messages" in r.path]
                # (One more if a ping lost a race to its game's own and was deleted.)
                assert len([r for r in sent if r.status == 200]) >= 2 * GAMES
                # Each process's pings (its server's channels) at its pace, 20 a second
                # (two more for the jitter of the answers' times), both under the limit.
                # Unpaced, one process alone sends its forty within a second here.
                for shard in (0, 1):
                    mine = {c.id for a, c in channels if a.guild is guilds[shard]}
                    assert peak_of(emu, since, mine) <= 22, shard
                assert peak(emu, since) <= 44, "two processes, 40 a second together"
                for bot in bots:
                    assert await bot.stop() == 0
            for life in (1, 2):
                for shard in (0, 1):
                    assert_log_clean((tmp_path / f"shard-{shard}-{life}.log").read_text())
