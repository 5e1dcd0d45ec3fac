"""Logging in, syncing commands, and the client-side checks of running a command."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import discord
import pytest

from discord_emulator import CallbackType, Emulator, Intent, UserActionError

from .helpers import TIMEOUT, Arena, running


async def test_login_ready_and_sync(arena: Arena) -> None:
    emu = arena.emu
    paths = [(r.method, r.path) for r in emu.requests[:3]]
    assert paths == [
        ("GET", "/users/@me"),
        ("GET", "/oauth2/applications/@me"),
        ("PUT", f"/applications/{emu.application_id}/commands"),
    ]
    assert emu.gateway.identifies == 1
    ready = emu.dispatched("READY")[0]
    assert ready["resume_gateway_url"] == emu.gateway_url
    assert [g["id"] for g in ready["guilds"]] == [str(arena.guild.id)]
    assert emu.gateway.intents == discord.Intents.default().value
    # Without the members intent only the bot's own member comes with GUILD_CREATE.
    (guild_create,) = emu.dispatched("GUILD_CREATE")
    assert [m["user"]["id"] for m in guild_create["members"]] == [str(emu.bot.id)]

    assert arena.bot.user is not None and arena.bot.user.id == emu.bot.id
    assert arena.bot.application_id == emu.application_id
    assert arena.bot_channel().name == "games"
    names = {c["name"] for c in emu.commands.list(None)}
    assert {"play", "board", "secret", "slow", "late", "twice", "ping", "moderate"} <= names
    fetched = await asyncio.wait_for(arena.bot.tree.fetch_commands(), TIMEOUT)
    assert {c.name for c in fetched} == names
    # Re-syncing keeps command ids stable.
    ids = {c["name"]: c["id"] for c in emu.commands.list(None)}
    await asyncio.wait_for(arena.bot.tree.sync(), TIMEOUT)
    assert {c["name"]: c["id"] for c in emu.commands.list(None)} == ids


async def test_guild_scoped_sync(arena: Arena) -> None:
    bot = arena.bot
    guild = discord.Object(arena.guild.id)
    bot.tree.copy_global_to(guild=guild)
    await asyncio.wait_for(bot.tree.sync(guild=guild), TIMEOUT)
    listed = await arena.emu.wait_for_commands("play", guild=arena.guild)
    assert all(c["guild_id"] == str(arena.guild.id) for c in listed)
    # The guild copy wins over the global command of the same name.
    handle = await arena.emu.run_command(arena.alice, arena.channel, "ping")
    assert handle.payload["data"]["guild_id"] == str(arena.guild.id)
    assert (await handle.response()).message is not None


async def test_wrong_token_rest_401_and_gateway_4004(emu: Emulator) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.get(
            f"{emu.api_base}/users/@me", headers={"Authorization": "Bot nope"}
        ) as resp:
            assert resp.status == 401
            assert resp.headers["Content-Type"] == "application/json"
            assert await resp.json() == {"message": "401: Unauthorized", "code": 0}
        async with session.ws_connect(emu.gateway_url + "?v=10&encoding=json") as ws:
            hello = json.loads((await ws.receive(timeout=TIMEOUT)).data)
            assert hello["op"] == 10 and hello["d"]["heartbeat_interval"] > 0
            await ws.send_json({"op": 2, "d": {"token": "nope", "intents": 513, "properties": {}}})
            closing = await ws.receive(timeout=TIMEOUT)
            assert closing.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
            assert ws.close_code == 4004

    client = discord.Client(intents=discord.Intents.default())
    from discord.http import Route

    saved = Route.BASE
    Route.BASE = emu.api_base
    try:
        with pytest.raises(discord.LoginFailure):
            await asyncio.wait_for(client.login("bad-token"), TIMEOUT)
    finally:
        Route.BASE = saved
        await client.close()


async def test_command_options_are_validated_like_the_client(arena: Arena) -> None:
    emu, alice, bob, channel = arena.emu, arena.alice, arena.bob, arena.channel
    refused = [
        lambda: emu.run_command(alice, channel, "nope"),
        lambda: emu.run_command(alice, channel, "play", mark="x"),  # missing opponent
        lambda: emu.run_command(alice, channel, "play", opponent=bob, mark="z"),  # not a choice
        lambda: emu.run_command(alice, channel, "play", opponent=bob, mark="x", size=9),  # > max
        lambda: emu.run_command(alice, channel, "play", opponent=bob, mark="x", size="3"),  # type
        lambda: emu.run_command(alice, channel, "play", opponent="bob", mark="x"),  # not a user
        lambda: emu.run_command(alice, channel, "play", opponent=bob, mark="x", colour=1),
    ]
    for attempt in refused:
        with pytest.raises(UserActionError):
            await attempt()
    assert emu.interactions == {}  # nothing reached the bot

    handle = await emu.run_command(alice, channel, "play", opponent=bob, mark="o", size=4)
    data = handle.payload["data"]
    assert data["options"] == [
        {"type": 6, "name": "opponent", "value": str(bob.id)},
        {"type": 3, "name": "mark", "value": "o"},
        {"type": 4, "name": "size", "value": 4},
    ]
    assert data["resolved"]["users"][str(bob.id)]["username"] == "bob"
    assert str(bob.id) in data["resolved"]["members"]
    response = await handle.response()
    assert response.type == CallbackType.CHANNEL_MESSAGE_WITH_SOURCE
    seen = arena.bot.seen[-1]
    assert isinstance(seen["opponent"], discord.Member) and seen["opponent"].id == bob.id
    assert (seen["mark"], seen["size"]) == ("o", 4)
    assert isinstance(seen["user"], discord.Member) and seen["user"].id == alice.id


async def test_dm_commands(arena: Arena) -> None:
    emu = arena.emu
    dm = emu.dm_channel(arena.alice)
    response = await (await emu.run_command(arena.alice, dm, "ping")).response()
    assert response.message is not None and response.message.content == "pong"
    assert response.message.channel is dm
    assert arena.bot.last_interaction is not None and arena.bot.last_interaction.guild_id is None
    with pytest.raises(UserActionError):
        await emu.run_command(arena.alice, dm, "moderate")  # guild_only
    # A hostile client can still send it; the bot gets the DM payload as is.
    data = {"id": emu.commands.find("moderate", None)["id"], "name": "moderate", "type": 1}  # type: ignore[index]
    forged = await emu.send_raw_interaction(arena.alice, dm, type=2, data=data)
    assert forged.payload["context"] == 1 and "guild_id" not in forged.payload
    await forged.response()


async def test_members_intent_gets_every_member(emu: Emulator) -> None:
    from .helpers import EmuBot, build_world, running

    world = build_world(emu)
    intents = discord.Intents.default()
    intents.members = True
    bot = EmuBot(intents)
    async with running(emu, bot):
        assert emu.gateway.intents & Intent.GUILD_MEMBERS
        guild = bot.get_guild(world["guild"].id)
        assert guild is not None
        await emu.wait_for(lambda: guild.get_member(world["bob"].id) is not None)
        mod = guild.get_member(world["mod"].id)
        assert mod is not None and mod.guild_permissions.manage_messages
        newcomer = emu.add_user("newcomer")
        emu.add_member(world["guild"], newcomer)
        await emu.wait_for(lambda: guild.get_member(newcomer.id) is not None)
    assert emu.unrouted == []


DISCORD_INTERVAL = 41.25
"""Discord's heartbeat interval; discord.py warns "Can't keep up, websocket is N s behind"
when an ACK comes more than 10 s after its heartbeat."""
BEHIND = 10.0 / DISCORD_INTERVAL


async def test_an_hour_of_heartbeats_never_looks_behind(caplog: pytest.LogCaptureFixture) -> None:
    """An hour of idle play at Discord's interval is 88 heartbeats: here at a 0.2 s interval,
    with discord.py's warning threshold scaled by the same ratio. An ACK answered at once over
    loopback overtook discord.py's keep-alive thread about once in twenty heartbeats, which
    then measured it against the previous heartbeat: a whole interval "behind"."""
    interval = 0.2
    beats = round(3600 / DISCORD_INTERVAL)
    caplog.set_level("WARNING", logger="discord.gateway")
    async with Emulator(heartbeat_interval=interval, round_trip=0.01) as emu:
        client = discord.Client(intents=discord.Intents.default())
        async with running(emu, client):
            latencies: set[float] = set()
            async with asyncio.timeout(beats * interval * 3):
                while emu.gateway.heartbeats < beats:
                    await asyncio.sleep(interval / 5)
                    latencies.add(client.latency)
            assert len(latencies) > beats / 2, latencies
            assert max(latencies) < BEHIND * interval, sorted(latencies)[-5:]

            # Discord may ask for a heartbeat at once (op 1): just after a regular one, the
            # client answers well before its next
            before = emu.gateway.heartbeats
            for _ in range(200):  # heartbeats wake no waiter: look every 2 ms
                if emu.gateway.heartbeats > before:
                    break
                await asyncio.sleep(0.002)
            emu.gateway.request_heartbeat()
            await asyncio.sleep(interval / 4)
            assert emu.gateway.heartbeats == before + 2
            assert client.latency < BEHIND * interval
    assert not [r for r in caplog.records if r.name == "discord.gateway"], caplog.text
