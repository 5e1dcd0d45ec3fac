"""Rate limits as Discord's "Rate Limits" topic describes them: headers, buckets, the global
limit and its exemptions, 429 bodies, the invalid-request ban, and discord.py pacing itself
through all of it with its own, unmodified handling."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import discord
import pytest
from multidict import CIMultiDictProxy

from discord_emulator import Emulator, Limits, Permission

from .helpers import EmuBot, build_world, running

BUCKET_HEADERS = ("Limit", "Remaining", "Reset", "Reset-After", "Bucket")


class Api:
    """Raw HTTP to the emulator, to see exactly what it answers."""

    def __init__(self, emu: Emulator, session: aiohttp.ClientSession) -> None:
        self.emu = emu
        self.session = session

    async def __call__(
        self, method: str, path: str, json: Any = None, *, auth: bool = True
    ) -> tuple[int, CIMultiDictProxy[str], Any]:
        headers = {"Authorization": f"Bot {self.emu.bot_token}"} if auth else {}
        url = f"{self.emu.api_base}{path}"
        async with self.session.request(method, url, json=json, headers=headers) as resp:
            if resp.content_type == "application/json":
                body: Any = await resp.json()
            else:
                body = await resp.text()
            return resp.status, resp.headers, body


@pytest.fixture
async def api(emu: Emulator) -> AsyncIterator[Api]:
    async with aiohttp.ClientSession() as session:
        yield Api(emu, session)


def send(channel_id: int, text: str = "hi") -> tuple[str, str, dict[str, Any]]:
    return "POST", f"/channels/{channel_id}/messages", {"content": text}


async def test_every_answer_carries_the_bucket_headers(emu: Emulator, api: Api) -> None:
    guild = emu.add_guild("Arcade")
    channel = emu.add_text_channel(guild, "games")
    mute = emu.add_guild("Mute", bot_permissions=Permission.VIEW_CHANNEL, everyone_permissions=0)
    muted = emu.add_text_channel(mute, "no-send")
    method, path, body = send(channel.id)
    status, _, sent = await api(method, path, json=body)
    assert status == 200
    answers = [
        await api("GET", "/users/@me"),
        await api(method, path, json=body),
        await api("PATCH", f"{path}/{sent['id']}", json={"content": "edited"}),
        await api("DELETE", f"{path}/{sent['id']}"),  # 204
        await api("DELETE", f"{path}/{sent['id']}"),  # 404 Unknown Message
        await api(*send(muted.id)),  # 403 Missing Permissions
        await api("GET", "/users/@me", auth=False),  # 401
    ]
    assert [status for status, _, _ in answers] == [200, 200, 200, 204, 404, 403, 401]
    for _, headers, _ in answers:
        assert headers["Via"] == "1.1 google"
        for name in BUCKET_HEADERS:
            assert f"X-RateLimit-{name}" in headers
        # The documentation: Scope and Global come only with a 429.
        assert "X-RateLimit-Scope" not in headers and "X-RateLimit-Global" not in headers
    first = answers[1][1]
    assert (first["X-RateLimit-Limit"], first["X-RateLimit-Remaining"]) == ("5", "3")
    assert 4.9 < float(first["X-RateLimit-Reset-After"]) <= 5.0
    assert abs(float(first["X-RateLimit-Reset"]) - time.time() - 5.0) < 0.5


async def test_sending_is_five_per_five_seconds_per_channel(emu: Emulator, api: Api) -> None:
    guild = emu.add_guild("Arcade")
    games, other = emu.add_text_channel(guild, "games"), emu.add_text_channel(guild, "other")
    remaining = []
    for i in range(5):
        status, headers, _ = await api(*send(games.id, f"m{i}"))
        assert status == 200
        remaining.append(headers["X-RateLimit-Remaining"])
    assert remaining == ["4", "3", "2", "1", "0"]
    status, headers, body = await api(*send(games.id, "one too many"))
    assert status == 429
    assert headers["X-RateLimit-Scope"] == "user"
    assert headers["X-RateLimit-Remaining"] == "0"
    assert 4.0 < body["retry_after"] <= 5.0
    assert body == {
        "message": "You are being rate limited.",
        "retry_after": body["retry_after"],
        "global": False,
    }
    assert headers["Retry-After"] == "5"  # whole seconds, rounded up
    # Another channel is another resource: a bucket of its own, under the same hash.
    status, other_headers, _ = await api(*send(other.id))
    assert status == 200 and other_headers["X-RateLimit-Remaining"] == "4"
    assert other_headers["X-RateLimit-Bucket"] == headers["X-RateLimit-Bucket"]
    assert [m.content for m in emu.messages(games)] == [f"m{i}" for i in range(5)]
    emu.advance(5.0)
    status, headers, _ = await api(*send(games.id, "next window"))
    assert status == 200 and headers["X-RateLimit-Remaining"] == "4"
    limits = emu.rate_limits
    assert limits.sent_429 == {"user": 1}
    assert limits.by_bucket["POST /channels/{channel_id}/messages"] == 8
    assert limits.invalid_requests == 1


async def test_429_body_is_discords(emu: Emulator, api: Api) -> None:
    """``message``, ``retry_after`` and ``global``, JSON, with ``Via`` so clients trust it."""
    channel = emu.add_text_channel(emu.add_guild("Arcade"), "games")
    for _ in range(5):
        await api(*send(channel.id))
    status, headers, body = await api(*send(channel.id))
    assert status == 429 and headers["Content-Type"] == "application/json"
    assert headers["Via"] == "1.1 google"
    assert set(body) == {"message", "retry_after", "global"}
    assert body["global"] is False and isinstance(body["retry_after"], float)
    assert float(headers["X-RateLimit-Reset-After"]) == body["retry_after"]


async def test_editing_and_deleting_have_buckets_of_their_own(emu: Emulator, api: Api) -> None:
    channel = emu.add_text_channel(emu.add_guild("Arcade"), "games")
    ids = []
    for i in range(5):
        _, send_headers, sent = await api(*send(channel.id, f"m{i}"))
        ids.append(sent["id"])
    assert (await api(*send(channel.id)))[0] == 429
    path = f"/channels/{channel.id}/messages"
    edits = [await api("PATCH", f"{path}/{ids[0]}", json={"content": str(i)}) for i in range(6)]
    assert [status for status, _, _ in edits] == [200] * 5 + [429]
    deletes = [await api("DELETE", f"{path}/{message_id}") for message_id in ids]
    deletes.append(await api("DELETE", f"{path}/{ids[0]}"))
    assert [status for status, _, _ in deletes] == [204] * 5 + [429]
    hashes = {
        send_headers["X-RateLimit-Bucket"],
        edits[0][1]["X-RateLimit-Bucket"],
        deletes[0][1]["X-RateLimit-Bucket"],
    }
    assert len(hashes) == 3
    assert 0.0 < deletes[-1][2]["retry_after"] <= 1.0  # deleting: 5 per second
    assert 4.0 < edits[-1][2]["retry_after"] <= 5.0  # editing: 5 per 5 seconds
    emu.advance(1.0)
    assert (await api("DELETE", f"{path}/{ids[0]}"))[0] == 404  # a new window: Unknown Message


async def test_global_limit_is_fifty_a_second_and_spares_interactions(
    emu: Emulator, api: Api
) -> None:
    guild = emu.add_guild("Arcade")
    channels = [emu.add_text_channel(guild, f"c{i}") for i in range(11)]
    alice = emu.add_user("alice")
    emu.add_member(guild, alice)
    click = await emu.send_raw_interaction(
        alice, channels[0], type=2, data={"id": "1", "name": "play", "type": 1}
    )
    # 55 requests on 11 channels (5 each, within every bucket) inside one second.
    paths = [f"/channels/{c.id}" for c in channels for _ in range(5)]
    answers = await asyncio.gather(*(api("GET", path) for path in paths))
    statuses = sorted(status for status, _, _ in answers)
    assert statuses == [200] * 50 + [429] * 5
    status, headers, body = next(a for a in answers if a[0] == 429)
    assert headers["X-RateLimit-Global"] == "true" and headers["X-RateLimit-Scope"] == "global"
    assert body["global"] is True and 0 < body["retry_after"] <= 1.0
    # Interaction endpoints are not bound to the global limit.
    callback = f"/interactions/{click.id}/{click.token}/callback"
    status, headers, _ = await api(
        "POST", callback, json={"type": 4, "data": {"content": "ok"}}, auth=False
    )
    assert status == 204 and "X-RateLimit-Bucket" in headers
    webhook = f"/webhooks/{emu.application_id}/{click.token}"
    status, _, _ = await api(
        "PATCH", f"{webhook}/messages/@original", json={"content": "edit"}, auth=False
    )
    assert status == 200
    status, _, _ = await api(
        "POST", f"{webhook}?wait=true", json={"content": "follow-up"}, auth=False
    )
    assert status == 200
    assert (await api("GET", "/users/@me"))[0] == 429  # still inside the spent second
    limits = emu.rate_limits
    assert (limits.global_requests, limits.exempt_requests) == (56, 3)
    assert limits.sent_429 == {"global": 6}
    emu.advance(1.0)
    assert (await api("GET", "/users/@me"))[0] == 200


async def test_invalid_requests_ban_the_address_until_it_lifts(api: Api) -> None:
    emu = api.emu
    emu.rate_limits.limits = Limits(invalid_request_limit=5, ban_seconds=30.0)
    channel = emu.add_text_channel(emu.add_guild("Arcade"), "games")
    muted = emu.add_text_channel(
        emu.add_guild("Mute", bot_permissions=0, everyone_permissions=0), "no-send"
    )
    # A shared 429 does not count against the bot.
    emu.rate_limit_requests("GET", "/users/@me", scope="shared", times=3)
    shared = [await api("GET", "/users/@me") for _ in range(3)]
    assert {s for s, _, _ in shared} == {429}
    assert shared[0][1]["X-RateLimit-Scope"] == "shared"
    assert shared[0][2]["message"] == "The resource is being rate limited."
    assert emu.rate_limits.invalid_requests == 0
    for _ in range(4):
        assert (await api(*send(muted.id)))[0] == 403
    assert not emu.rate_limits.banned
    assert (await api("GET", "/users/@me", auth=False))[0] == 401  # the fifth
    assert emu.rate_limits.banned and emu.rate_limits.bans == 1
    # Cloudflare now refuses everything, valid or not, interactions included.
    callback = ("POST", "/interactions/1/x/callback", None)
    for request in (("GET", "/users/@me", None), send(channel.id), callback):
        status, headers, body = await api(*request)
        assert status == 429 and body == "error code: 1015"
        assert "Via" not in headers and "X-RateLimit-Bucket" not in headers
        assert 29 <= int(headers["Retry-After"]) <= 30
    assert emu.rate_limits.sent_429["cloudflare"] == 3
    assert emu.rate_limits.invalid_requests == 5  # refusals never reach Discord
    assert emu.messages(channel) == []
    emu.advance(30.0)
    assert not emu.rate_limits.banned
    assert (await api(*send(channel.id)))[0] == 200
    assert emu.rate_limits.invalid_in_window() == 0  # counting starts afresh


async def test_invalid_requests_count_over_a_sliding_window(api: Api) -> None:
    emu = api.emu
    emu.rate_limits.limits = Limits(invalid_request_limit=3, invalid_request_window=60.0)
    for _ in range(2):
        assert (await api("GET", "/users/@me", auth=False))[0] == 401
    emu.advance(61.0)
    assert emu.rate_limits.invalid_in_window() == 0
    for _ in range(2):
        assert (await api("GET", "/users/@me", auth=False))[0] == 401
    assert not emu.rate_limits.banned
    assert (emu.rate_limits.invalid_requests, emu.rate_limits.invalid_in_window()) == (4, 2)


async def test_limits_can_be_turned_off(api: Api) -> None:
    emu = api.emu
    emu.rate_limits.limits = Limits.off()
    channel = emu.add_text_channel(emu.add_guild("Arcade"), "games")
    answers = [await api(*send(channel.id)) for _ in range(8)]
    assert {status for status, _, _ in answers} == {200}
    assert "X-RateLimit-Bucket" not in answers[0][1]
    assert emu.rate_limits.by_bucket["POST /channels/{channel_id}/messages"] == 8


# -- discord.py, unmodified, against the limits -------------------------------------------------


async def test_discordpy_paces_twelve_sends_to_one_channel(emu: Emulator) -> None:
    world = build_world(emu)
    bot = EmuBot()
    async with running(emu, bot):
        channel = bot.get_channel(world["channel"].id)
        assert isinstance(channel, discord.TextChannel)
        started = time.monotonic()
        await asyncio.wait_for(
            asyncio.gather(*(channel.send(f"message {i}") for i in range(12))), 30
        )
        elapsed = time.monotonic() - started
    contents = sorted(m.content for m in emu.messages(world["channel"]))
    assert contents == sorted(f"message {i}" for i in range(12))
    # 5, then 5 after the bucket resets, then 2: two full resets of the 5 s window.
    assert elapsed >= 10.0
    posts = [r for r in emu.requests if r.method == "POST" and r.path.endswith("/messages")]
    assert [r.status for r in posts] == [200] * 12  # it read the headers: no 429 at all
    assert emu.rate_limits.sent_429 == {}


async def test_discordpy_waits_out_the_global_limit(emu: Emulator) -> None:
    guild = emu.add_guild("Arcade")
    channels = [emu.add_text_channel(guild, f"c{i}") for i in range(60)]
    bot = EmuBot()
    async with running(emu, bot):
        fetched = await asyncio.wait_for(
            asyncio.gather(*(bot.fetch_channel(c.id) for c in channels)), 30
        )
    assert [c.id for c in fetched] == [c.id for c in channels]
    # discord.py cannot see the global limit coming; it sleeps on each global 429.
    assert emu.rate_limits.sent_429.keys() <= {"global"}
    assert emu.rate_limits.sent_429["global"] >= 1
    assert len([r for r in emu.requests if r.status == 200 and "/channels/" in r.path]) == 60


async def test_discordpy_stops_at_once_on_a_cloudflare_ban(emu: Emulator) -> None:
    world = build_world(emu)
    bot = EmuBot()
    async with running(emu, bot):
        emu.rate_limits.limits = Limits(invalid_request_limit=1, ban_seconds=60.0)
        emu.fail_requests("POST", "/channels/*/messages", status=403)
        channel = bot.get_channel(world["channel"].id)
        assert isinstance(channel, discord.TextChannel)
        with pytest.raises(discord.Forbidden):
            await channel.send("refused")
        assert emu.rate_limits.banned
        started = time.monotonic()
        with pytest.raises(discord.HTTPException) as raised:
            await channel.send("banned")
        assert raised.value.status == 429 and time.monotonic() - started < 1.0
        emu.advance(60.0)
        assert (await channel.send("back")).content == "back"
