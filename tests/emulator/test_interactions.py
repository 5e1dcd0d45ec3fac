"""Responding to interactions: updates, dynamic items, Discord's one-response and deadline
rules, deferrals, ephemeral messages, token lifetime, and hostile payloads."""

from __future__ import annotations

import asyncio

import aiohttp
import discord
import pytest

from discord_emulator import (
    CallbackType,
    FrameWritten,
    InteractionAcknowledged,
    InteractionFailed,
    Message,
    MessageFlag,
    Observation,
    RequestArrived,
    UserActionError,
)

from .helpers import TIMEOUT, Arena


async def play(arena: Arena) -> Message:
    handle = await arena.emu.run_command(
        arena.alice, arena.channel, "play", opponent=arena.bob, mark="x"
    )
    response = await handle.response()
    assert response.message is not None
    return response.message


async def test_click_updates_message_with_dynamic_item(arena: Arena) -> None:
    emu = arena.emu
    handle = await emu.run_command(arena.alice, arena.channel, "play", opponent=arena.bob, mark="x")
    message = (await handle.response()).message
    assert message is not None
    grid = message.button_grid()
    assert [[b.label for b in row] for row in grid] == [["Count 0"], ["Off"]]
    assert grid[0][0].custom_id == "counter:0" and not grid[0][0].disabled
    assert grid[1][0].disabled

    first = await (await emu.click(arena.bob, message, row=0, col=0)).response()
    assert first.type == CallbackType.UPDATE_MESSAGE
    assert first.message is message  # updated in place
    assert message.content == "Count: 1" and message.edits == 1
    # The bot rebuilds the dynamic item from the updated message's custom_id.
    second = await (await emu.click(arena.alice, message, custom_id="counter:1")).response()
    assert second.type == CallbackType.UPDATE_MESSAGE
    assert message.text == "Count: 2"
    assert message.button_grid()[0][0].custom_id == "counter:2"
    assert emu.latest_message(arena.channel) is message
    # The click carried the whole message, components included.
    click_payload = list(emu.interactions.values())[-1].payload
    assert click_payload["message"]["components"][0]["components"][0]["custom_id"] == "counter:1"
    assert click_payload["data"] == {"custom_id": "counter:1", "component_type": 2}


async def test_disabled_and_missing_buttons_are_refused(arena: Arena) -> None:
    emu = arena.emu
    message = await play(arena)
    before = len(emu.interactions)
    with pytest.raises(UserActionError, match="disabled"):
        await emu.click(arena.alice, message, label="Off")
    with pytest.raises(UserActionError):
        await emu.click(arena.alice, message, custom_id="counter:99")
    with pytest.raises(UserActionError):
        await emu.click(arena.alice, message, row=3, col=0)
    assert len(emu.interactions) == before


async def test_second_response_gets_40060(arena: Arena) -> None:
    handle = await arena.emu.run_command(arena.alice, arena.channel, "twice")
    response = await handle.response()
    assert response.message is not None and response.message.content == "first"
    await arena.emu.wait_for(lambda: len(arena.bot.errors) >= 2)
    guard, discord_error = arena.bot.errors
    assert isinstance(guard, discord.InteractionResponded)  # discord.py's own check
    assert isinstance(discord_error, discord.HTTPException)
    assert (discord_error.status, discord_error.code) == (400, 40060)
    assert [m.content for m in arena.emu.messages(arena.channel)] == ["first"]


async def test_late_callback_gets_10062_and_the_interaction_fails(arena: Arena) -> None:
    emu = arena.emu
    emu.ack_deadline = 0.2
    arena.bot.late_delay = 0.4
    handle = await emu.run_command(arena.alice, arena.channel, "late")
    response = await handle.response()
    assert response.failed and response.type is None and response.message is None
    assert handle.failure_text == "This interaction failed"
    await emu.wait_for(lambda: bool(arena.bot.errors))
    (error,) = arena.bot.errors
    assert isinstance(error, discord.NotFound) and error.code == 10062
    assert emu.failed_interactions == [handle]
    assert emu.messages(arena.channel) == []


async def test_deadline_counts_on_the_emulator_clock(arena: Arena) -> None:
    emu = arena.emu
    emu.delay_requests("POST", "/interactions/*/callback", 0.1)
    handle = await emu.run_command(arena.alice, arena.channel, "ping")
    emu.advance(5)  # the bot is now "late" although little real time passed
    assert (await handle.response()).failed


async def test_observers_see_an_interaction_s_way_in_order(arena: Arena) -> None:
    """The public hooks a bench times clicks with: the frame on the bot's socket, its
    callback arriving, the answer applied; and a failure, when the deadline passes."""
    emu = arena.emu
    seen: list[Observation] = []
    changes: list[int] = []
    emu.observers.append(seen.append)
    emu.listeners.append(lambda: changes.append(len(seen)))
    handle = await emu.run_command(arena.alice, arena.channel, "ping")
    assert not (await handle.response()).failed
    frame, arrived, acknowledged = (
        next(o for o in seen if isinstance(o, kind) and matches(o))
        for kind, matches in (
            (FrameWritten, lambda o: o.payload.get("t") == "INTERACTION_CREATE"),
            (RequestArrived, lambda o: o.path.endswith("/callback")),
            (InteractionAcknowledged, lambda o: True),
        )
    )
    assert isinstance(frame, FrameWritten) and frame.payload["d"]["id"] == str(handle.id)
    assert isinstance(arrived, RequestArrived) and arrived.method == "POST"
    assert f"/interactions/{handle.id}/{handle.token}/callback" in arrived.path
    assert acknowledged == InteractionAcknowledged(handle.id, acknowledged.at)
    assert frame.at <= arrived.at <= acknowledged.at
    assert any(told > seen.index(acknowledged) for told in changes)  # then listeners

    emu.delay_requests("POST", "/interactions/*/callback", 0.1)
    late = await emu.run_command(arena.alice, arena.channel, "ping")
    emu.advance(5)
    assert (await late.response()).failed
    assert [o.interaction_id for o in seen if isinstance(o, InteractionFailed)] == [late.id]


async def test_defer_then_edit_and_followup(arena: Arena) -> None:
    emu = arena.emu
    handle = await emu.run_command(arena.alice, arena.channel, "slow")
    response = await handle.response()
    assert response.type == CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE
    assert response.deferred
    message = await handle.edited_original()
    assert message.content == "done thinking" and not message.loading
    (extra,) = await handle.wait_followups(1)
    assert extra.content == "and one more thing" and not extra.ephemeral
    latest = await emu.wait_for_message(
        arena.channel, lambda m: "thing" in m.content, after=message
    )
    assert latest is extra and emu.latest_message(arena.channel) is extra
    assert [m.content for m in emu.messages(arena.channel)] == [
        "done thinking",
        "and one more thing",
    ]


async def test_ephemeral_messages_are_seen_only_by_their_user(arena: Arena) -> None:
    emu, alice, bob = arena.emu, arena.alice, arena.bob
    response = await (await emu.run_command(alice, arena.channel, "secret")).response()
    secret = response.message
    assert secret is not None and response.ephemeral
    assert secret.flags & MessageFlag.EPHEMERAL and secret.visible_to == alice.id
    assert emu.ephemeral_messages(alice) == [secret]
    assert emu.ephemeral_messages(bob) == []
    assert secret in emu.messages(arena.channel, viewer=alice)
    assert secret not in emu.messages(arena.channel, viewer=bob)
    assert emu.dispatched("MESSAGE_CREATE") == []  # Discord never announces ephemeral messages
    assert secret.pings.nobody
    with pytest.raises(UserActionError, match="ephemeral"):
        await emu.click(bob, secret, index=0)
    updated = await (await emu.click(alice, secret, index=0)).response()
    assert updated.message is secret and secret.content == "Count: 11" and secret.ephemeral
    # The bot cannot reach it through channel routes either.
    history = [m async for m in arena.bot_channel().history(limit=10)]
    assert history == []

    private = await emu.run_command(alice, arena.channel, "slow", private=True)
    thinking = await private.edited_original()
    (followup,) = await private.wait_followups(1)
    assert thinking.ephemeral and followup.ephemeral
    assert {m.id for m in emu.ephemeral_messages(alice)} == {secret.id, thinking.id, followup.id}


async def test_tokens_expire_after_15_minutes(arena: Arena) -> None:
    emu = arena.emu
    handle = await emu.run_command(arena.alice, arena.channel, "ping")
    await handle.response()
    interaction = arena.bot.last_interaction
    assert interaction is not None
    edited = await asyncio.wait_for(interaction.edit_original_response(content="pong!"), TIMEOUT)
    assert edited.content == "pong!" and handle.original_edits == 1
    emu.advance(15 * 60 + 1)
    with pytest.raises(discord.HTTPException) as caught:
        await asyncio.wait_for(interaction.edit_original_response(content="too late"), TIMEOUT)
    assert (caught.value.status, caught.value.code) == (401, 50027)
    with pytest.raises(discord.HTTPException):
        await asyncio.wait_for(interaction.followup.send("too late"), TIMEOUT)
    assert handle.original is not None and handle.original.content == "pong!"


async def test_raw_callback_shapes(arena: Arena) -> None:
    """Unknown interaction, bad callback type and the with_response body, straight over HTTP."""
    emu = arena.emu
    emu.ack_deadline = 2.0
    arena.bot.late_delay = 0.5  # we answer before the bot does
    handle = await emu.run_command(arena.alice, arena.channel, "late")
    base = f"{emu.api_base}/interactions"
    async with aiohttp.ClientSession() as session:
        async with session.post(
            f"{base}/{handle.id}/wrong-token/callback", json={"type": 4}
        ) as resp:
            assert resp.status == 404 and (await resp.json())["code"] == 10062
        async with session.post(
            f"{base}/{handle.id}/{handle.token}/callback", json={"type": 7, "data": {}}
        ) as resp:
            assert resp.status == 400 and (await resp.json())["code"] == 50035
        url = f"{base}/{handle.id}/{handle.token}/callback?with_response=true"
        async with session.post(url, json={"type": 4, "data": {"content": "raw"}}) as resp:
            assert resp.status == 200
            body = await resp.json()
    assert body["interaction"]["id"] == str(handle.id)
    assert body["resource"]["type"] == 4
    assert body["resource"]["message"]["content"] == "raw"
    assert body["interaction"]["response_message_id"] == body["resource"]["message"]["id"]
    await emu.wait_for(lambda: bool(arena.bot.errors))  # the bot's own answer: 40060
    assert getattr(arena.bot.errors[0], "code", None) == 40060


async def test_hostile_interactions(arena: Arena) -> None:
    emu = arena.emu
    message = await play(arena)
    emu.ack_deadline = 0.3
    # A forged custom_id matching the template but absent from the message: discord.py
    # rebuilds the view from the message, finds no such button and ignores the click.
    forged = await emu.send_raw_interaction(
        arena.bob,
        arena.channel,
        type=3,
        data={"custom_id": "counter:41", "component_type": 2},
        message=message,
    )
    assert (await forged.response()).failed
    # A custom_id no handler knows: nobody answers, the user sees the interaction fail.
    unknown = await emu.send_raw_interaction(
        arena.bob,
        arena.channel,
        type=3,
        data={"custom_id": "evil", "component_type": 2},
        message=message,
    )
    assert (await unknown.response()).failed
    assert message.content.endswith("(x, 3x3)")  # untouched
    # An interaction from a guild the bot is not in.
    emu.ack_deadline = 3.0
    elsewhere = emu.add_guild("Elsewhere", bot_member=False)
    far = emu.add_text_channel(elsewhere, "far")
    outsider = emu.add_user("outsider")
    emu.add_member(elsewhere, outsider)
    with pytest.raises(UserActionError):
        await emu.run_command(outsider, far, "ping")
    data = {"id": emu.commands.find("ping", None)["id"], "name": "ping", "type": 1}  # type: ignore[index]
    stray = await emu.send_raw_interaction(outsider, far, type=2, data=data)
    assert stray.payload["guild_id"] == str(elsewhere.id)
    assert (await stray.response()).message is not None
    # The bot keeps working.
    assert (
        await (await emu.run_command(arena.alice, arena.channel, "ping")).response()
    ).message is not None


async def test_deferred_update_and_modal_over_raw_http(arena: Arena) -> None:
    """The test plays the bot for clicks the real bot ignores: type 6 then an @original edit,
    and a type 9 modal that is only recorded."""
    emu = arena.emu
    message = await play(arena)
    ignored = {"custom_id": "not-handled", "component_type": 2}
    click = await emu.send_raw_interaction(
        arena.bob, arena.channel, type=3, data=ignored, message=message
    )
    callback = f"{emu.api_base}/interactions/{click.id}/{click.token}/callback"
    original = f"{emu.api_base}/webhooks/{emu.application_id}/{click.token}/messages/@original"
    async with aiohttp.ClientSession() as session:
        async with session.post(callback, json={"type": 6}) as resp:
            assert resp.status == 204  # no with_response: nothing to say
        response = await click.response()
        assert response.type == CallbackType.DEFERRED_UPDATE_MESSAGE and response.message is message
        async with session.patch(
            original, json={"content": "edited later", "components": []}
        ) as resp:
            assert resp.status == 200
        assert (await click.edited_original()).content == "edited later"
        assert message.button_grid() == []
        async with session.post(
            f"{emu.api_base}/webhooks/{emu.application_id}/{click.token}?wait=true",
            json={"content": "psst", "flags": 64},
        ) as resp:
            assert resp.status == 200
        (whisper,) = await click.wait_followups()
        assert whisper.ephemeral and whisper.visible_to == arena.bob.id

        modal_click = await emu.send_raw_interaction(
            arena.bob, arena.channel, type=3, data=ignored, message=message
        )
        modal = {
            "custom_id": "name-form",
            "title": "Your name",
            "components": [
                {
                    "type": 1,
                    "components": [{"type": 4, "custom_id": "n", "label": "Name", "style": 1}],
                }
            ],
        }
        url = f"{emu.api_base}/interactions/{modal_click.id}/{modal_click.token}/callback"
        async with session.post(url, json={"type": 9, "data": modal}) as resp:
            assert resp.status == 204
    shown = await modal_click.response()
    assert shown.type == CallbackType.MODAL and shown.modal == modal and shown.message is None
