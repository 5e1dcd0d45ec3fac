"""The page refuses other sites, in process against the real app on 127.0.0.1: a foreign
``Host`` (DNS rebinding), a cross-site ``text/plain`` POST (the reproduction ran
``/tictactoe``), a cross-site JSON POST; the page's own requests and a tool's still work.
And no member reads another's DM with the bot."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from discord_emulator import Emulator
from playground.api import Events, make_app
from playground.guard import Hosts
from playground.world import BOT_NAME, World


@pytest.fixture
async def page(tmp_path: Path) -> AsyncIterator[tuple[TestClient[TestServer], World, str]]:
    world = World(Emulator(bot_name=BOT_NAME), tmp_path)
    hosts = Hosts()
    server = TestServer(make_app(world, Events(), hosts), host="127.0.0.1")
    async with TestClient(server) as client:
        assert server.port is not None
        hosts.serve("127.0.0.1", server.port)
        yield client, world, f"127.0.0.1:{server.port}"
    await world.close()


async def test_a_foreign_host_is_refused(page: tuple[TestClient[TestServer], World, str]) -> None:
    client, world, served = page
    port = served.split(":")[1]
    for host in (f"evil.example:{port}", "127.0.0.1:1", "evil.example"):
        answer = await client.get("/api/state", headers={"Host": host})
        assert answer.status == 421
        assert "not served as" in await answer.text()
    bob = next(m for m in world.members if m.name == "Bob")
    changing = {"Host": f"evil.example:{port}"}
    answer = await client.post(
        "/api/locale", json={"as": str(bob.id), "locale": "de"}, headers=changing
    )
    assert answer.status == 421
    assert world.emu.locale_of(bob) == "ja"
    for host in (served, f"localhost:{port}", f"[::1]:{port}"):
        assert (await client.get("/api/state", headers={"Host": host})).status == 200


async def test_a_cross_site_text_post_runs_nothing(
    page: tuple[TestClient[TestServer], World, str],
) -> None:
    client, world, _served = page
    alice = world.members[0]
    games = world.guild.channels[1]
    body = f'{{"as": "{alice.id}", "channel": "{games.id}", "name": "tictactoe"}}'
    # What a form on another site sends: no preflight for text/plain.
    answer = await client.post(
        "/api/commands",
        data=body,
        headers={
            "Content-Type": "text/plain",
            "Origin": "http://evil.example",
            "Sec-Fetch-Site": "cross-site",
        },
    )
    assert answer.status == 403
    # Even without the browser's headers, a body that is not JSON is refused.
    answer = await client.post("/api/commands", data=body, headers={"Content-Type": "text/plain"})
    assert answer.status == 415
    assert "application/json" in await answer.text()
    assert not world.emu.interactions


async def test_a_cross_site_json_post_is_refused(
    page: tuple[TestClient[TestServer], World, str],
) -> None:
    client, world, _served = page
    bob = next(m for m in world.members if m.name == "Bob")
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ):
        answer = await client.post(
            "/api/locale", json={"as": str(bob.id), "locale": "de"}, headers=headers
        )
        assert answer.status == 403, headers
        assert "cross-site" in await answer.text()
    assert world.emu.locale_of(bob) == "ja"


async def test_the_pages_own_requests_and_a_tools_work(
    page: tuple[TestClient[TestServer], World, str],
) -> None:
    client, world, served = page
    bob = next(m for m in world.members if m.name == "Bob")
    own = {"Origin": f"http://{served}", "Sec-Fetch-Site": "same-origin"}
    answer = await client.post("/api/locale", json={"as": str(bob.id), "locale": "de"}, headers=own)
    assert answer.status == 200
    assert world.emu.locale_of(bob) == "de"
    # curl or a script: no Origin, no Sec-Fetch-Site, JSON.
    answer = await client.post("/api/locale", json={"as": str(bob.id), "locale": "fr"})
    assert answer.status == 200
    assert world.emu.locale_of(bob) == "fr"


async def test_a_member_reads_only_the_dms_they_are_in(
    page: tuple[TestClient[TestServer], World, str],
) -> None:
    client, world, _served = page
    alice, bob, _carol = world.members
    dm = world.emu.dm_channel(alice)
    mine = await client.get(f"/api/channels/{dm.id}/messages", params={"as": str(alice.id)})
    assert mine.status == 200
    for path, params in (
        (f"/api/channels/{dm.id}/messages", {"as": str(bob.id)}),
        ("/api/commands", {"as": str(bob.id), "channel": str(dm.id)}),
    ):
        answer = await client.get(path, params=params)
        assert answer.status == 404, await answer.text()
    listed = (await (await client.get("/api/state", params={"as": str(bob.id)})).json())["channels"]
    assert str(dm.id) not in {c["id"] for c in listed}
    assert str(world.emu.dm_channel(bob).id) in {c["id"] for c in listed}
