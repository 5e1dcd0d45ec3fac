"""Component limits (classic 5x5, Components V2's 40) and a V2 layout driven by clicks."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import discord
import pytest
from discord.http import Route

from discord_emulator import CallbackType, MessageFlag, UserActionError

from .helpers import TIMEOUT, Arena


def button(custom_id: str, label: str = "b") -> dict[str, Any]:
    return {"type": 2, "style": 1, "label": label, "custom_id": custom_id}


CHANNELS = itertools.count()


def rows(count: int, width: int) -> list[dict[str, Any]]:
    return [
        {"type": 1, "components": [button(f"b{r}-{c}") for c in range(width)]} for r in range(count)
    ]


async def post(arena: Arena, payload: dict[str, Any]) -> Any:
    """Post ``payload`` in a channel of its own: the checks here send more than one
    channel's limit of 5 messages in 5 s, which discord.py would wait out in real time."""
    channel = arena.emu.add_text_channel(arena.guild, f"post-{next(CHANNELS)}")
    route = Route("POST", "/channels/{channel_id}/messages", channel_id=channel.id)
    return await asyncio.wait_for(arena.bot.http.request(route, json=payload), TIMEOUT)


async def rejected(arena: Arena, payload: dict[str, Any]) -> dict[str, Any]:
    """Post ``payload`` expecting a 400 50035; returns the ``errors`` object Discord sent."""
    with pytest.raises(discord.HTTPException) as caught:
        await post(arena, payload)
    assert (caught.value.status, caught.value.code) == (400, 50035)
    errors: dict[str, Any] = arena.emu.requests[-1].response["errors"]
    return errors


async def test_classic_messages_hold_five_rows_of_five(arena: Arena) -> None:
    accepted = await post(arena, {"content": "grid", "components": rows(5, 5)})
    message = arena.emu.message(accepted["id"])
    assert message is not None and len(message.button_grid()) == 5
    assert all(len(row) == 5 for row in message.button_grid())

    errors = await rejected(arena, {"content": "x", "components": rows(6, 1)})
    assert errors["components"]["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"
    errors = await rejected(arena, {"content": "x", "components": rows(1, 6)})
    assert errors["components"]["0"]["components"]["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"
    errors = await rejected(arena, {"content": "x", "components": [button("bare")]})  # not in a row
    assert "type" in errors["components"]["0"]
    errors = await rejected(
        arena,
        {"content": "x", "components": [{"type": 10, "content": "V2 only"}]},  # V2 type, no flag
    )
    assert "components" in errors


async def test_custom_id_length_and_uniqueness(arena: Arena) -> None:
    errors = await rejected(
        arena, {"content": "x", "components": [{"type": 1, "components": [button("x" * 101)]}]}
    )
    entry = errors["components"]["0"]["components"]["0"]["custom_id"]["_errors"][0]
    assert entry["code"] == "BASE_TYPE_MAX_LENGTH"
    await post(
        arena, {"content": "ok", "components": [{"type": 1, "components": [button("x" * 100)]}]}
    )
    errors = await rejected(
        arena,
        {
            "content": "x",
            "components": [{"type": 1, "components": [button("same"), button("same")]}],
        },
    )
    entry = errors["components"]["0"]["components"]["1"]["custom_id"]["_errors"][0]
    assert entry["code"] == "COMPONENT_CUSTOM_ID_DUPLICATED"


async def test_components_v2_total_limit_and_legacy_fields(arena: Arena) -> None:
    v2 = int(MessageFlag.IS_COMPONENTS_V2)

    def container(texts: int) -> dict[str, Any]:
        return {
            "type": 17,
            "components": [{"type": 10, "content": f"line {i}"} for i in range(texts)],
        }

    ok = await post(arena, {"flags": v2, "components": [container(39)]})  # 1 + 39 = 40
    assert arena.emu.message(ok["id"]).components_v2  # type: ignore[union-attr]
    errors = await rejected(arena, {"flags": v2, "components": [container(40)]})  # 41
    assert errors["components"]["_errors"][0]["code"] == "COMPONENT_MAX_TOTAL_COMPONENTS_EXCEEDED"
    # Nested buttons count too: 8 rows of 4 buttons plus 8 rows = 40 is fine, one more is not.
    await post(arena, {"flags": v2, "components": rows(8, 4)})
    await rejected(arena, {"flags": v2, "components": [*rows(8, 4), {"type": 10, "content": "x"}]})
    errors = await rejected(arena, {"flags": v2, "content": "hi", "components": [container(1)]})
    assert (
        errors["content"]["_errors"][0]["code"]
        == "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2"
    )
    # Sections take 1-3 text displays and an accessory.
    section = {"type": 9, "components": [{"type": 10, "content": "t"}], "accessory": button("acc")}
    sent = await post(arena, {"flags": v2, "components": [section, {"type": 14}]})
    message = arena.emu.message(sent["id"])
    assert message is not None and [b.custom_id for b in message.buttons()] == ["acc"]
    await rejected(
        arena,
        {"flags": v2, "components": [{"type": 9, "components": [{"type": 10, "content": "t"}]}]},
    )


async def test_layout_view_board(arena: Arena) -> None:
    emu = arena.emu
    response = await (await emu.run_command(arena.alice, arena.channel, "board")).response()
    board = response.message
    assert board is not None and board.components_v2 and board.content == ""
    assert board.text == "Board ........."
    grid = board.button_grid()
    assert [len(row) for row in grid] == [3, 3, 3]
    assert board.components[0]["type"] == 17  # everything sits in a container

    clicked = await (await emu.click(arena.bob, board, row=1, col=1)).response()
    assert clicked.type == CallbackType.UPDATE_MESSAGE and clicked.message is board
    assert board.text == "Board ....X...."
    centre = board.button_grid()[1][1]
    assert centre.label == "X" and centre.disabled
    with pytest.raises(UserActionError, match="disabled"):
        await emu.click(arena.alice, board, row=1, col=1)
    await (await emu.click(arena.alice, board, index=0)).response()
    assert board.text == "Board X...X...."
    assert board.components_v2 and board.edits == 2
