"""How the bot lets go of a handled interaction (``bot.ui.release``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import discord
import pytest

from bot.ui import release

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
