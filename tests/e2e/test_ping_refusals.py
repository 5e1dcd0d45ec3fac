"""Refusals of turn notifications, across a restart: a ping sent through the channel (no
click's token to follow up: it died with the last process) that Discord refuses is
recorded and not tried again in that turn, the channel is backed off and logged once,
and a refused delete forgets nothing. Clicks' follow-ups need no channel permission, so
the next turn's ping still reaches its player.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from pathlib import Path

from bot.launcher import BotProcess
from discord_emulator import Channel, Emulator
from tests.pgtools import read_rows

from .helpers import WAIT, Arena, assert_log_clean, eventually

GRACE = 2.0
ENV = {"TURN_TIMEOUT_SECONDS": "60", "PING_GRACE_SECONDS": f"{GRACE:g}"}


def channel_sends(emu: Emulator, channel: Channel) -> list[int]:
    path = f"/channels/{channel.id}/messages"
    return [r.status for r in emu.requests if r.method == "POST" and r.path == path]


async def test_refused_pings_and_deletes_are_not_retried_nor_forgotten(
    tmp_path: Path, database_env: dict[str, str]
) -> None:
    async with Emulator(wait_timeout=WAIT) as emu:
        guild = emu.add_guild("Arcade")
        database = tmp_path / "data" / "tictactoe.db"
        target = database_env.get("DATABASE_URL", database)

        def launch() -> AbstractAsyncContextManager[BotProcess]:
            return BotProcess.launch(
                emu, tmp_path, dev_guild=guild, database=database, **ENV, **database_env
            )

        async with launch() as bot:
            arena = Arena(emu, guild, bot, tmp_path)
            alice, bob = arena.member("alice"), arena.member("bob")
            pinged, quiet = arena.channel(), arena.channel()
            # A game whose ping stands when the bot stops...
            first = await arena.member_game(alice, bob, pinged)
            await arena.move(alice, first, 4)
            ping = await arena.turn_ping(bob, pinged, after=0)
            for _ in range(100):
                if await read_rows(target, "SELECT message_id FROM turn_pings") == [(ping.id,)]:
                    break
                await asyncio.sleep(0.05)
            # ... and one whose player is not yet due a ping.
            carol, dave = arena.member("carol"), arena.member("dave")
            second = await arena.member_game(carol, dave, quiet)
            await arena.move(carol, second, 4)
            assert await bot.stop() == 0
        assert arena.turn_pings(quiet, deleted=True) == []

        refused_delete = emu.fail_requests(
            "DELETE", f"/channels/{pinged.id}/messages/{ping.id}", status=403
        )
        emu.fail_requests("POST", f"/channels/{quiet.id}/messages", status=403, times=100)
        async with launch() as bot:
            arena.bot = bot
            # Dave's turn began in the last life: his ping goes to the channel, refused.
            await eventually(emu, lambda: channel_sends(emu, quiet) == [403], "the try", WAIT)
            # Bob moves: his ping, a follow-up of the last life's click, goes through the
            # channel, refused too.
            await arena.move(bob, first, 0)
            await eventually(emu, lambda: refused_delete.exhausted, "the refused delete", WAIT)
            await asyncio.sleep(GRACE + 3.0)  # sweeps
            assert channel_sends(emu, quiet) == [403], "not again in that turn"
            deletes = [
                r for r in emu.requests if r.method == "DELETE" and r.path.endswith(str(ping.id))
            ]
            assert len(deletes) == 1, "the channel is backed off"
            assert not arena.current(ping).deleted
            rows = await read_rows(target, "SELECT message_id FROM turn_pings")
            assert (ping.id,) in rows, "forgotten only once deleted"
            # Dave moves: Carol's ping follows up his click, whatever the channel allows.
            await arena.move(dave, second, 0)
            await arena.turn_ping(carol, quiet, after=0)
            assert channel_sends(emu, quiet) == [403]
            assert await bot.stop() == 0
        log = bot.log()
        assert log.count(f"Channel {quiet.id} refused") == 1
        assert log.count(f"Channel {pinged.id} refused") == 1
        assert_log_clean(log)
