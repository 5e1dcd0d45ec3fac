"""How the bot reads a click (``bot.ui.CellClick``) and lets go of a handled interaction
(``bot.ui.release``), against discord.py's own classes."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Iterator
from typing import Any

import discord
import pytest
import pytest_asyncio
from discord.enums import InteractionResponseType

from bot.ui import CELL_ID, CellClick, release

BOT_USER = {"id": "42", "username": "bot", "discriminator": "0", "avatar": None, "bot": True}
ALICE = {"id": "1001", "username": "alice", "discriminator": "0", "avatar": None}
# What a handled click leaves behind when it is freed by the collector, not on its own.
HELD_BY_THE_CYCLE = {"Interaction", "InteractionResponse", "Message", "Button", "ActionRow"}


def cell_click() -> dict[str, Any]:
    """A component interaction as the gateway delivers it: a click on a 3 x 3 board."""
    rows = [
        {
            "type": 1,
            "components": [
                {"type": 2, "style": 2, "label": "\u200b", "custom_id": f"ttt:cell:1:{3 * r + c}:0"}
                for c in range(3)
            ],
        }
        for r in range(3)
    ]
    return {
        "id": "5001",
        "application_id": BOT_USER["id"],
        "type": 3,
        "token": "token",
        "version": 1,
        "guild_id": "7",
        "channel_id": "8",
        "channel": {
            "id": "8",
            "type": 0,
            "guild_id": "7",
            "name": "games",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
        },
        "member": {
            "user": ALICE,
            "roles": [],
            "joined_at": "2026-01-01T00:00:00+00:00",
            "deaf": False,
            "mute": False,
            "flags": 0,
            "permissions": "0",
        },
        "data": {"custom_id": "ttt:cell:1:4:0", "component_type": 2},
        "message": {
            "id": "9",
            "channel_id": "8",
            "author": BOT_USER,
            "content": "",
            "timestamp": "2026-01-01T00:00:00+00:00",
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "flags": 0,
            "components": rows,
        },
        "locale": "en-US",
        "guild_locale": "en-US",
        "app_permissions": "0",
        "entitlements": [],
        "authorizing_integration_owners": {},
        "context": 0,
        "attachment_size_limit": 10 * 1024 * 1024,
    }


@pytest.fixture
def collector_paused() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def left_for_the_collector(state: Any, *, released: bool) -> set[str]:
    """The types of the objects a handled click leaves as cyclic garbage."""
    interaction = discord.Interaction(data=cell_click(), state=state)
    response = interaction.response  # what every handler does; discord.py caches it
    del response
    if released:
        release(interaction)
    del interaction
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    found = {type(obj).__name__ for obj in gc.garbage}
    gc.garbage.clear()
    gc.set_debug(0)
    gc.collect()  # really free what DEBUG_SAVEALL kept, or the next call would see it
    return found


async def test_a_released_interaction_is_freed_without_the_collector(
    collector_paused: None,
) -> None:
    client = discord.Client(intents=discord.Intents.default())
    state = client._connection
    state.user = discord.ClientUser(state=state, data=BOT_USER)  # type: ignore[arg-type]
    try:
        assert left_for_the_collector(state, released=False) >= HELD_BY_THE_CYCLE
        assert not HELD_BY_THE_CYCLE & left_for_the_collector(state, released=True)
    finally:
        await client.close()


def test_discord_py_parses_with_orjson() -> None:
    """orjson is a dependency only because discord.py picks it up by itself (README):
    if discord.py stops doing so, the dependency is dead weight and should go."""
    import orjson

    assert discord.utils.HAS_ORJSON
    assert discord.utils._from_json is orjson.loads


@pytest_asyncio.fixture
async def state() -> AsyncIterator[Any]:
    client = discord.Client(intents=discord.Intents.default())
    state = client._connection
    state.user = discord.ClientUser(state=state, data=BOT_USER)  # type: ignore[arg-type]
    try:
        yield state
    finally:
        await client.close()


CLICK_FIELDS = (
    "id",
    "token",
    "application_id",
    "guild_id",
    "channel_id",
    "user_id",
    "message_id",
    "game_id",
    "cell",
    "move_no",
)


async def test_a_cell_click_reads_the_same_from_the_gateway_as_from_discord_py(
    state: Any,
) -> None:
    data = cell_click()
    click = CellClick.from_gateway(data, state)
    assert click is not None
    assert (click.id, click.guild_id, click.channel_id, click.user_id) == (5001, 7, 8, 1001)
    assert (click.message_id, click.game_id, click.cell, click.move_no) == (9, 1, 4, 0)
    match = CELL_ID.fullmatch(data["data"]["custom_id"])
    assert match is not None
    interaction = discord.Interaction(data=data, state=state)
    through_discord_py = CellClick(state, match, interaction=interaction)
    for name in CLICK_FIELDS:
        assert getattr(click, name) == getattr(through_discord_py, name), name


async def test_a_click_in_a_dm_has_no_guild(state: Any) -> None:
    data = cell_click()
    for key in ("guild_id", "member", "channel"):
        del data[key]
    data["user"] = ALICE
    click = CellClick.from_gateway(data, state)
    assert click is not None
    assert (click.guild_id, click.user_id) == (None, 1001)
    assert click.interaction.guild_id is None  # what admit() refuses


def _with(path: tuple[str, ...], value: object) -> dict[str, Any]:
    data = cell_click()
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    "data",
    [
        _with(("data", "custom_id"), "ttt:forfeit:1"),
        _with(("data", "custom_id"), "ttt:cell:1:4"),
        _with(("data", "custom_id"), "ttt:cell:1:4:0:extra"),
        _with(("data", "custom_id"), 14),
        _with(("data",), "ttt:cell:1:4:0"),
        _with(("type",), 2),
        _with(("token",), KeyError),
        _with(("member",), KeyError),
        _with(("id",), "not a number"),
    ],
    ids=[
        "another-button",
        "short-id",
        "long-id",
        "id-not-text",
        "data-not-a-dict",
        "a-command",
        "no-token",
        "no-user",
        "bad-snowflake",
    ],
)
async def test_anything_else_is_left_to_discord_py(state: Any, data: dict[str, Any]) -> None:
    assert CellClick.from_gateway(data, state) is None


async def test_an_interaction_built_after_the_answer_knows_it_was_answered(state: Any) -> None:
    """An error after the board answer (a 5x5 reply's edit failing) is told with a
    follow-up: the Interaction built for it must know the response is done."""
    click = CellClick.from_gateway(cell_click(), state)
    assert click is not None and not click.is_answered()
    click._answered = InteractionResponseType.message_update  # what update() records
    assert click.is_answered()
    assert click.interaction.response.is_done()
