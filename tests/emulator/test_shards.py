"""Sharding at the protocol level: IDENTIFY's shard, per-shard routing, 4010/4011, /gateway/bot.

These tests speak the gateway protocol with a bare websocket so they can see exactly which
frames each session gets; test_shards_discordpy.py runs real discord.py clients.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from discord_emulator import Emulator, Guild, Intent, UserActionError

from .helpers import TIMEOUT

INTENTS = Intent.GUILDS | Intent.GUILD_MESSAGES | Intent.DIRECT_MESSAGES


class RawShard:
    """One gateway connection driven by hand."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any] | None:
        """The next frame, or None once the socket is closed."""
        msg = await self.ws.receive(timeout=TIMEOUT)
        if msg.type is not aiohttp.WSMsgType.TEXT:
            return None
        frame: dict[str, Any] = msg.json()
        self.frames.append(frame)
        return frame

    async def until(self, event: str) -> dict[str, Any]:
        """Read frames up to the first DISPATCH named ``event``; returns its ``d``."""
        while (frame := await self.receive()) is not None:
            if frame["op"] == 0 and frame["t"] == event:
                return dict(frame["d"])
        raise AssertionError(f"closed ({self.ws.close_code}) before {event}")

    def seen(self, event: str) -> list[dict[str, Any]]:
        return [f["d"] for f in self.frames if f["op"] == 0 and f["t"] == event]

    @property
    def last_seq(self) -> int:
        return max(f["s"] for f in self.frames if f["op"] == 0)


async def connect(
    http: aiohttp.ClientSession, emu: Emulator, first: dict[str, Any]
) -> tuple[RawShard, aiohttp.ClientWebSocketResponse]:
    ws = await http.ws_connect(emu.gateway_url + "?v=10&encoding=json")
    shard = RawShard(ws)
    hello = await shard.receive()
    assert hello is not None and hello["op"] == 10
    await ws.send_json(first)
    return shard, ws


async def identify(
    http: aiohttp.ClientSession, emu: Emulator, shard: Any = None, *, intents: int = INTENTS
) -> RawShard:
    data: dict[str, Any] = {"token": emu.bot_token, "intents": intents, "properties": {}}
    if shard is not None:
        data["shard"] = shard
    raw, _ = await connect(http, emu, {"op": 2, "d": data})
    return raw


async def close_code_of(http: aiohttp.ClientSession, emu: Emulator, shard: Any) -> int | None:
    raw = await identify(http, emu, shard)
    while await raw.receive() is not None:
        pass
    return raw.ws.close_code


def two_shard_world(emu: Emulator) -> dict[str, Guild]:
    guilds = {
        "a0": emu.add_guild("a0", shard=(0, 2)),
        "b1": emu.add_guild("b1", shard=(1, 2)),
        "c0": emu.add_guild("c0", shard=(0, 2)),
        "d1": emu.add_guild("d1", shard=(1, 2)),
    }
    for name, guild in guilds.items():
        emu.add_text_channel(guild, f"{name}-games")
    return guilds


def test_guilds_are_made_on_the_chosen_shard(emu: Emulator) -> None:
    for count in (1, 2, 3, 7):
        for shard_id in range(count):
            guild = emu.add_guild(f"g{shard_id}/{count}", shard=(shard_id, count))
            assert (guild.id >> 22) % count == shard_id == emu.shard_of(guild, count)
    ids = list(emu.guilds)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)  # still fresh, increasing snowflakes
    with pytest.raises(ValueError):
        emu.add_guild("nowhere", shard=(2, 2))


async def test_two_shards_get_only_their_guilds_and_interactions(emu: Emulator) -> None:
    guilds = two_shard_world(emu)
    alice = emu.add_user("alice")
    for guild in guilds.values():
        emu.add_member(guild, alice)
    async with aiohttp.ClientSession() as http:
        zero = await identify(http, emu, [0, 2])
        ready0 = await zero.until("READY")
        one = await identify(http, emu, [1, 2])
        ready1 = await one.until("READY")
        await emu.wait_for_shards(2)

        assert ready0["shard"] == [0, 2] and ready1["shard"] == [1, 2]
        ids = {name: str(g.id) for name, g in guilds.items()}
        assert [g["id"] for g in ready0["guilds"]] == [ids["a0"], ids["c0"]]
        assert [g["id"] for g in ready1["guilds"]] == [ids["b1"], ids["d1"]]
        assert ready0["session_id"] != ready1["session_id"]
        for raw, names in ((zero, ["a0", "c0"]), (one, ["b1", "d1"])):
            for name in names:
                assert (await raw.until("GUILD_CREATE"))["id"] == ids[name]
        # Each session numbers its own dispatches from 1.
        assert zero.last_seq == one.last_seq == 3

        # Interactions, messages and new guilds reach only the owning shard; DMs only shard 0.
        for name in ("b1", "a0", "d1"):
            channel = guilds[name].channels[0]
            data = {"id": "1", "name": "ping", "type": 1}
            await emu.send_raw_interaction(alice, channel, type=2, data=data)
            await emu.send_message(alice, channel, f"hello {name}")
        await emu.send_message(alice, emu.dm_channel(alice), "hello bot")
        await emu.send_raw_interaction(
            alice, emu.dm_channel(alice), type=2, data={"id": "1", "name": "ping", "type": 1}
        )
        late = emu.add_guild("late1", shard=(1, 2))
        # Read each socket up to the last event it should get, then look at all it got.
        assert (await one.until("GUILD_CREATE"))["id"] == str(late.id)
        while len(zero.seen("INTERACTION_CREATE")) < 2:
            await zero.until("INTERACTION_CREATE")
        on_wire = [d.get("guild_id") for d in zero.seen("INTERACTION_CREATE")]
        assert on_wire == [ids["a0"], None]  # None: the DM
        on_wire = [d.get("guild_id") for d in one.seen("INTERACTION_CREATE")]
        assert on_wire == [ids["b1"], ids["d1"]]

    # What each session was given (sent or buffered), as the emulator recorded it.
    sessions = {s.shard_id: s for s in emu.gateway.sessions.values()}
    assert [d.get("guild_id") for d in sessions[0].dispatched("INTERACTION_CREATE")] == [
        ids["a0"],
        None,
    ]
    assert [d["content"] for d in sessions[0].dispatched("MESSAGE_CREATE")] == [
        "",  # no MESSAGE_CONTENT intent: guild message content is hidden
        "hello bot",
    ]
    assert [d["guild_id"] for d in sessions[1].dispatched("MESSAGE_CREATE")] == [
        ids["b1"],
        ids["d1"],
    ]
    assert [d["id"] for d in sessions[1].dispatched("GUILD_CREATE")][-1] == str(late.id)
    assert str(late.id) not in [d["id"] for d in sessions[0].dispatched("GUILD_CREATE")]


async def test_sessions_of_the_same_shard_and_other_counts_each_get_their_share(
    emu: Emulator,
) -> None:
    """Discord lets sessions overlap (same shard twice, or another shard count): each simply
    gets what the formula gives it, and a new IDENTIFY does not end the older sessions."""
    guilds = two_shard_world(emu)
    async with aiohttp.ClientSession() as http:
        first = await identify(http, emu, [1, 2])
        await first.until("READY")
        second = await identify(http, emu, [1, 2])
        await second.until("READY")
        whole = await identify(http, emu)  # unsharded: everything
        ready = await whole.until("READY")
        assert len(ready["guilds"]) == 4 and "shard" not in ready
        assert len(emu.gateway.live_sessions()) == 3
        assert len(emu.gateway.live_sessions(1)) == 2
        assert emu.dispatch_event("TYPING_START", {"guild_id": str(guilds["d1"].id)})
        for raw in (first, second, whole):
            assert (await raw.until("TYPING_START"))["guild_id"] == str(guilds["d1"].id)


@pytest.mark.parametrize(
    "shard",
    [[2, 2], [5, 3], [-1, 2], [0, 0], [0, -1], [0], [0, 1, 2], "0,1", [0.0, 1], [True, 2]],
)
async def test_invalid_shard_closes_4010(emu: Emulator, shard: Any) -> None:
    emu.add_guild("Arcade")
    async with aiohttp.ClientSession() as http:
        assert await close_code_of(http, emu, shard) == 4010
    assert emu.gateway.identifies == 0 and emu.gateway.sessions == {}


async def test_sharding_required_closes_4011() -> None:
    async with Emulator(max_guilds_per_shard=2) as emu, aiohttp.ClientSession() as http:
        for shard_id in (0, 0, 1):
            emu.add_guild(f"g{shard_id}", shard=(shard_id, 2))
        assert await close_code_of(http, emu, None) == 4011  # 3 guilds on one session
        assert await close_code_of(http, emu, [0, 1]) == 4011
        # Two shards hold 2 and 1 guilds: accepted.
        for shard_id, owned in ((0, 2), (1, 1)):
            raw = await identify(http, emu, [shard_id, 2])
            assert len((await raw.until("READY"))["guilds"]) == owned
        # A third guild on shard 0 of 2: that shard would hold 3, more than allowed.
        emu.add_guild("g0'", shard=(0, 2))
        assert await close_code_of(http, emu, [0, 2]) == 4011
        raw = await identify(http, emu, [1, 2])  # shard 1 still holds one: accepted
        assert len((await raw.until("READY"))["guilds"]) == 1
        assert emu.gateway.identifies == 3


async def test_sharding_required_past_2500_guilds_by_default(emu: Emulator) -> None:
    for n in range(2501):
        emu.add_guild(f"g{n}", shard=(n % 2, 2))
    async with aiohttp.ClientSession() as http:
        assert await close_code_of(http, emu, None) == 4011
        raw = await identify(http, emu, [0, 2])
        assert len((await raw.until("READY"))["guilds"]) == 1251


async def test_gateway_bot_answers_the_shard_count_and_session_start_limit() -> None:
    async def gateway_bot(emu: Emulator) -> dict[str, Any]:
        async with (
            aiohttp.ClientSession() as http,
            http.get(
                f"{emu.api_base}/gateway/bot", headers={"Authorization": f"Bot {emu.bot_token}"}
            ) as resp,
        ):
            assert resp.status == 200
            answer: dict[str, Any] = await resp.json()
            return answer

    async with Emulator(shards=3, max_concurrency=16) as emu:
        answer = await gateway_bot(emu)
        assert answer["url"] == emu.gateway_url and answer["shards"] == 3
        assert answer["session_start_limit"] == {
            "total": 1000,
            "remaining": 1000,
            "reset_after": 0,
            "max_concurrency": 16,
        }
        async with aiohttp.ClientSession() as http:
            for shard_id in range(3):
                await (await identify(http, emu, [shard_id, 3])).until("READY")
        limit = (await gateway_bot(emu))["session_start_limit"]
        assert limit["remaining"] == 997
        assert 0 < limit["reset_after"] <= 24 * 60 * 60 * 1000
        emu.advance(24 * 60 * 60)
        assert (await gateway_bot(emu))["session_start_limit"]["remaining"] == 1000

    # Unless told, it recommends one shard per 1,000 guilds (fewer if the per-shard cap is lower).
    async with Emulator(max_guilds_per_shard=2) as emu:
        assert (await gateway_bot(emu))["shards"] == 1
        for n in range(5):
            emu.add_guild(f"g{n}")
        assert (await gateway_bot(emu))["shards"] == 3


async def test_resume_is_per_session(emu: Emulator) -> None:
    guilds = two_shard_world(emu)
    alice = emu.add_user("alice")
    emu.add_member(guilds["b1"], alice)
    emu.add_member(guilds["a0"], alice)
    async with aiohttp.ClientSession() as http:
        zero = await identify(http, emu, [0, 2])
        await zero.until("READY")
        one = await identify(http, emu, [1, 2])
        ready1 = await one.until("READY")
        await emu.wait_for_shards(2)
        while one.last_seq < 3:
            await one.receive()

        emu.drop_connection(shard=1)
        while await one.receive() is not None:
            pass
        assert one.ws.close_code == 4000
        assert [s.shard_id for s in emu.gateway.live_sessions()] == [0]
        # While shard 1 is away its guild's events are buffered; shard 0 carries on.
        missed = await emu.send_raw_interaction(
            alice, guilds["b1"].channels[0], type=2, data={"id": "1", "name": "ping", "type": 1}
        )
        emu.dispatch_event("TYPING_START", {"guild_id": str(guilds["a0"].id)})
        assert (await zero.until("TYPING_START"))["guild_id"] == str(guilds["a0"].id)

        resume = {
            "op": 6,
            "d": {"token": emu.bot_token, "session_id": ready1["session_id"], "seq": 3},
        }
        back, _ = await connect(http, emu, resume)
        assert (await back.until("INTERACTION_CREATE"))["id"] == str(missed.id)
        assert back.frames[-1]["s"] == 4
        await back.until("RESUMED")
        assert emu.gateway.resumes == 1 and emu.gateway.identifies == 2
        await emu.wait_for_shards(2)
        # Shard 0's numbering never saw shard 1's events.
        assert zero.last_seq == 4

        # A non-resumable drop of shard 0 only: its RESUME is refused, shard 1 is untouched.
        emu.drop_connection(shard=0, resumable=False)
        ready0 = zero.seen("READY")[0]
        again, _ = await connect(
            http,
            emu,
            {"op": 6, "d": {"token": emu.bot_token, "session_id": ready0["session_id"], "seq": 4}},
        )
        refused = await again.receive()
        assert refused is not None and refused["op"] == 9 and refused["d"] is False
        assert [s.shard_id for s in emu.gateway.live_sessions()] == [1]


async def test_forged_delivery_to_another_shard(emu: Emulator) -> None:
    """``shard=`` bypasses the formula: how a test makes two processes race on one click."""
    guilds = two_shard_world(emu)
    alice = emu.add_user("alice")
    emu.add_member(guilds["b1"], alice)
    channel = guilds["b1"].channels[0]
    click = {"custom_id": "cell:0", "component_type": 2}
    async with aiohttp.ClientSession() as http:
        zero = await identify(http, emu, [0, 2])
        await zero.until("READY")
        one = await identify(http, emu, [1, 2])
        await one.until("READY")
        routed = await emu.send_raw_interaction(alice, channel, type=3, data=click)
        forged = await emu.send_raw_interaction(alice, channel, type=3, data=click, shard=0)
        assert (await one.until("INTERACTION_CREATE"))["id"] == str(routed.id)
        got = await zero.until("INTERACTION_CREATE")
        assert got["id"] == str(forged.id) and got["guild_id"] == str(guilds["b1"].id)
    by_shard = {s.shard_id: s for s in emu.gateway.sessions.values()}
    assert [d["id"] for d in by_shard[1].dispatched("INTERACTION_CREATE")] == [str(routed.id)]
    assert [d["id"] for d in by_shard[0].dispatched("INTERACTION_CREATE")] == [str(forged.id)]


async def test_forged_guild_create_on_another_shard(emu: Emulator) -> None:
    """``forge_guild_create`` gives a session a guild of another shard, the payload its own
    shard's session got; nothing else changes, and only when asked."""
    guilds = two_shard_world(emu)
    async with aiohttp.ClientSession() as http:
        zero = await identify(http, emu, [0, 2])
        await zero.until("READY")
        one = await identify(http, emu, [1, 2])
        await one.until("READY")
        for _ in range(2):
            await one.until("GUILD_CREATE")
        while len(zero.seen("GUILD_CREATE")) < 2:
            await zero.until("GUILD_CREATE")
        owned = one.seen("GUILD_CREATE")[0]
        assert owned["id"] == str(guilds["b1"].id)

        assert emu.forge_guild_create(guilds["b1"], shard=0)
        forged = await zero.until("GUILD_CREATE")
        # Channels, roles, the bot's member: as on its own shard (joined_at is "now").
        assert forged.pop("joined_at") and owned.pop("joined_at")
        assert forged == owned
        assert not emu.forge_guild_create(guilds["b1"], shard=3)  # nobody holds shard 3
        stray = emu.add_guild("no bot", bot_member=False)
        with pytest.raises(UserActionError):
            emu.forge_guild_create(stray, shard=0)
        # Routing is unchanged: b1's events still go to shard 1 only.
        emu.dispatch_event("TYPING_START", {"guild_id": str(guilds["b1"].id)})
        assert (await one.until("TYPING_START"))["guild_id"] == str(guilds["b1"].id)
    by_shard = {s.shard_id: s for s in emu.gateway.sessions.values()}
    assert [d["id"] for d in by_shard[0].dispatched("GUILD_CREATE")] == [
        str(guilds["a0"].id),
        str(guilds["c0"].id),
        str(guilds["b1"].id),
    ]
    assert len(by_shard[1].dispatched("GUILD_CREATE")) == 2
    assert not by_shard[0].dispatched("TYPING_START")
