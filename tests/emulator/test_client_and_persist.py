"""What the emulator adds for long-lived use (the playground): the client's command list
and user context menu (client.py), and saving and restoring its world (persist.py)."""

from __future__ import annotations

import json

import aiohttp
import discord
import pytest
from discord import app_commands

from discord_emulator import CallbackType, Emulator, Permission, persist, trim
from discord_emulator.client import USER, offered_commands, run_user_command

from .helpers import Arena, build_world, running


class MenuBot(discord.Client):
    """A user context-menu command, and a chat command only Manage Server may see."""

    def __init__(self) -> None:
        super().__init__(intents=discord.Intents.default())
        self.tree = app_commands.CommandTree(self)
        self.targets: list[tuple[int, str]] = []

        @self.tree.context_menu(name="Wave at")
        async def wave(interaction: discord.Interaction, member: discord.Member) -> None:
            self.targets.append((member.id, interaction.locale.value))
            await interaction.response.send_message(f"You wave at {member.mention}", ephemeral=True)

        @self.tree.command(description="Server settings")
        @app_commands.default_permissions(manage_guild=True)
        async def settings(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("ok", ephemeral=True)

    async def setup_hook(self) -> None:
        await self.tree.sync()

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        return None


async def test_the_user_context_menu_and_the_offered_commands(emu: Emulator) -> None:
    world = build_world(emu)
    alice, bob, channel = world["alice"], world["bob"], world["channel"]
    owner = emu.add_user("owner")
    emu.add_member(world["guild"], owner, permissions=Permission.MANAGE_GUILD)
    emu.set_user_locale(bob, "ja")
    bot = MenuBot()
    async with running(emu, bot):
        await emu.wait_for_commands("settings")
        assert [c["name"] for c in offered_commands(emu, alice, channel)] == []
        assert [c["name"] for c in offered_commands(emu, owner, channel)] == ["settings"]
        menu = offered_commands(emu, alice, channel, kind=USER)
        assert [c["name"] for c in menu] == ["Wave at"]

        handle = await run_user_command(emu, bob, channel, "Wave at", alice)
        answer = await handle.response()
        assert answer.type == CallbackType.CHANNEL_MESSAGE_WITH_SOURCE and answer.ephemeral
        assert answer.message is not None and answer.message.visible_to == bob.id
        assert bot.targets == [(alice.id, "ja")]
        meta = answer.message.to_payload(emu.users)["interaction_metadata"]
        assert meta["name"] == "Wave at" and meta["target_user"]["id"] == str(alice.id)


async def test_a_restored_world_keeps_every_id_and_message(emu: Emulator) -> None:
    world = build_world(emu)
    alice, channel, guild = world["alice"], world["channel"], world["guild"]
    posted = await emu.send_message(alice, channel, f"hello {world['bob'].mention}")
    saved = json.loads(json.dumps(persist.snapshot(emu)))  # through JSON, as on disk

    again = Emulator()
    persist.restore(again, saved)
    assert again.bot.id == emu.bot.id and again.application_id == emu.application_id
    assert set(again.users) == set(emu.users) and set(again.channels) == set(emu.channels)
    restored_guild = again.guild(guild.id)
    assert restored_guild is not None
    assert [c.id for c in restored_guild.channels] == [c.id for c in guild.channels]
    assert restored_guild.permissions_of(world["mod"].id) == guild.permissions_of(world["mod"])
    copy = again.message(posted.id)
    assert copy is not None
    assert copy.to_payload(again.users) == posted.to_payload(emu.users)
    assert copy.pings == posted.pings
    fresh = again.snowflakes.next()
    assert fresh > max([*again.users, *again.channels, posted.id])
    async with again:
        assert again.latest_message(again.channels[channel.id]) is copy


async def test_trim_forgets_only_the_oldest(arena: Arena) -> None:
    """What the playground calls after each change: the newest messages and records stay,
    a forgotten message is Unknown Message to the bot, a live interaction is kept."""
    emu = arena.emu
    for i in range(12):
        await emu.send_message(arena.alice, arena.channel, f"hello {i}")
    old = await emu.run_command(arena.alice, arena.channel, "play", opponent=arena.bob, mark="x")
    board = (await old.response()).message
    assert board is not None
    emu.advance(emu.token_lifetime + 1)
    live = await emu.run_command(arena.bob, arena.channel, "play", opponent=arena.alice, mark="o")
    await live.response()
    first = arena.channel.messages[0]
    assert len(emu.requests) > 3 and len(emu.gateway_log) > 3

    trim(emu, messages_per_channel=5, records=1)

    assert len(arena.channel.messages) == 5 and emu.message(first.id) is None
    assert len(emu.requests) == 1 and len(emu.gateway_log) == 1
    assert all(len(s.events) <= 1 for s in emu.gateway.sessions.values())
    assert list(emu.interactions) == [live.id]  # the expired one went, the live one stays
    with pytest.raises(discord.NotFound) as gone:
        await arena.bot_channel().get_partial_message(first.id).edit(content="again")
    assert gone.value.code == 10008
    with pytest.raises(ValueError):
        trim(emu, messages_per_channel=0, records=1)


async def test_a_resume_from_before_the_trimmed_events_is_refused(arena: Arena) -> None:
    """Discord cannot replay what it no longer has: INVALID_SESSION, not a silent gap."""
    emu = arena.emu
    for i in range(3):
        await emu.send_message(arena.alice, arena.channel, f"hello {i}")
    session = emu.gateway.session
    assert session is not None and session.seq > 3
    trim(emu, messages_per_channel=5, records=1)
    async with aiohttp.ClientSession() as http, http.ws_connect(emu.gateway_url) as ws:
        hello = await ws.receive_json()
        assert hello["op"] == 10
        resume = {"token": emu.bot_token, "session_id": session.id, "seq": 1}
        await ws.send_json({"op": 6, "d": resume})
        assert (await ws.receive_json())["op"] == 9
    assert session.connection is not None  # the bot's own connection goes on
