"""Injected faults: gateway drops (resumable or not), REST 500s, 429s and delays."""

from __future__ import annotations

import asyncio
import time

import aiohttp

from discord_emulator import Emulator

from .helpers import TIMEOUT, Arena


async def test_resumable_drop_replays_missed_events(arena: Arena) -> None:
    emu, bot = arena.emu, arena.bot
    resumed = asyncio.Event()

    async def on_resumed() -> None:
        resumed.set()

    bot.add_listener(on_resumed)
    async with emu.disconnected(resumable=True):
        assert not emu.gateway.connected
        missed = await emu.run_command(arena.alice, arena.channel, "ping")
        await asyncio.sleep(0.1)
        assert missed.pending  # the bot cannot see it yet
    await asyncio.wait_for(resumed.wait(), TIMEOUT)
    assert (emu.gateway.identifies, emu.gateway.resumes) == (1, 1)
    response = await missed.response()
    assert not response.failed and response.message is not None
    # Buffered while the bot was away, so the only copy on the wire is the replay.
    sent = [f for f in emu.gateway_log if f.direction == "out" and f.t == "INTERACTION_CREATE"]
    assert len(sent) == 1
    resume_frames = [f for f in emu.gateway_log if f.direction == "in" and f.op == 6]
    assert resume_frames and resume_frames[-1].d["seq"] < sent[0].s


async def test_non_resumable_drop_invalidates_and_reidentifies(arena: Arena) -> None:
    emu = arena.emu
    emu.ack_deadline = 0.3
    async with emu.disconnected(resumable=False):
        lost = await emu.run_command(arena.alice, arena.channel, "ping")
    assert emu.gateway.invalid_sessions == 1
    assert emu.gateway.identifies == 2
    invalid = [f for f in emu.gateway_log if f.direction == "out" and f.op == 9]
    assert invalid and invalid[0].d is False
    assert (await lost.response()).failed  # the event died with the session
    emu.ack_deadline = 3.0
    again = await (await emu.run_command(arena.alice, arena.channel, "ping")).response()
    assert again.message is not None and again.message.content == "pong"


async def test_plain_drop_and_reconnect_request(arena: Arena) -> None:
    emu = arena.emu
    emu.drop_connection()
    await emu.wait_for(lambda: emu.gateway.resumes == 1 and emu.gateway.connected)
    emu.gateway.request_reconnect()
    await emu.wait_for(lambda: emu.gateway.resumes == 2 and emu.gateway.connected)
    assert emu.gateway.identifies == 1
    assert (await (await emu.run_command(arena.alice, arena.channel, "ping")).response()).message


async def test_rest_500_is_retried(arena: Arena) -> None:
    emu = arena.emu
    fault = emu.fail_requests("POST", "/channels/*/messages", status=500)
    sent = await asyncio.wait_for(arena.bot_channel().send("after a 500"), TIMEOUT)
    assert sent.content == "after a 500"
    statuses = [(r.status, r.fault) for r in emu.requests if r.path.endswith("/messages")]
    assert statuses == [(500, "500"), (200, None)]
    assert fault.exhausted and fault.hits == 1
    assert [m.content for m in emu.messages(arena.channel)] == ["after a 500"]


async def test_rest_429_is_retried(arena: Arena) -> None:
    emu = arena.emu
    emu.rate_limit_requests("POST", "/channels/*/messages", retry_after=0.05)
    started = time.monotonic()
    await asyncio.wait_for(arena.bot_channel().send("after a 429"), TIMEOUT)
    assert time.monotonic() - started >= 0.05
    limited = [r for r in emu.requests if r.status == 429]
    assert len(limited) == 1 and limited[0].response["retry_after"] == 0.05
    # Interaction callbacks go through discord.py's webhook adapter, which retries too.
    emu.rate_limit_requests("POST", "/interactions/*/callback", retry_after=0.05)
    response = await (await emu.run_command(arena.alice, arena.channel, "ping")).response()
    assert response.message is not None and response.message.content == "pong"
    callbacks = [r.status for r in emu.requests if r.path.endswith("/callback")]
    assert callbacks == [429, 200]


async def test_global_429_has_discords_shape(emu: Emulator) -> None:
    """As the documentation's example: no bucket headers on a global 429, no ``code``."""
    emu.rate_limit_requests("GET", "/users/@me", retry_after=0.25, is_global=True)
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            f"{emu.api_base}/users/@me", headers={"Authorization": f"Bot {emu.bot_token}"}
        ) as resp,
    ):
        assert resp.status == 429
        assert resp.headers["Via"] == "1.1 google"
        assert resp.headers["Content-Type"] == "application/json"
        assert resp.headers["Retry-After"] == "1"
        assert resp.headers["X-RateLimit-Global"] == "true"
        assert resp.headers["X-RateLimit-Scope"] == "global"
        assert "X-RateLimit-Bucket" not in resp.headers
        assert await resp.json() == {
            "message": "You are being rate limited.",
            "retry_after": 0.25,
            "global": True,
        }
    assert emu.rate_limits.sent_429 == {"global": 1}


async def test_delayed_callback_still_succeeds_within_deadline(arena: Arena) -> None:
    emu = arena.emu
    emu.delay_requests("POST", "/interactions/*/callback", 0.2)
    started = time.monotonic()
    response = await (await emu.run_command(arena.alice, arena.channel, "ping")).response()
    assert time.monotonic() - started >= 0.2
    assert response.message is not None


async def test_callback_500_is_retried(arena: Arena) -> None:
    emu = arena.emu
    emu.fail_requests("POST", "/interactions/*/callback", status=500)
    response = await (await emu.run_command(arena.alice, arena.channel, "ping")).response()
    assert not response.failed
    assert [r.status for r in emu.requests if r.path.endswith("/callback")] == [500, 200]


async def test_unknown_routes_are_recorded(emu: Emulator) -> None:
    async with aiohttp.ClientSession() as session:
        headers = {"Authorization": f"Bot {emu.bot_token}"}
        async with session.get(f"{emu.api_base}/guilds/1/bans", headers=headers) as resp:
            assert resp.status == 404
            assert await resp.json() == {"code": 0, "message": "404: Not Found"}
    (record,) = emu.unrouted
    assert (record.method, record.path, record.status) == ("GET", "/guilds/1/bans", 404)
    assert emu.requests == [record]
