"""User installs, DMs, group DMs and servers without the bot, as strict as Discord: where a
command may run, what the payload says, what the bot may not call, how long its token lives,
how many follow-ups it may send and when its answers are forced private."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import discord
import pytest
from discord import app_commands

from discord_emulator import Channel, Emulator, Guild, Permission, User, UserActionError
from discord_emulator.client import offered_commands
from discord_emulator.persist import restore, snapshot
from tests.emulator.helpers import TIMEOUT, EmuBot, counter_view, running

ANYWHERE = {"guilds": True, "users": True}
EVERY_CONTEXT = {"guilds": True, "dms": True, "private_channels": True}


class AnywhereBot(EmuBot):
    """EmuBot plus commands declared with discord.py's public install/context decorators."""

    def add_commands(self) -> None:
        super().add_commands()
        tree = self.tree
        self.interactions: list[discord.Interaction] = []

        @tree.command(description="Works anywhere")
        @app_commands.allowed_installs(**ANYWHERE)
        @app_commands.allowed_contexts(**EVERY_CONTEXT)
        async def anywhere(interaction: discord.Interaction) -> None:
            self.interactions.append(interaction)
            await interaction.response.send_message("here I am", view=counter_view(0))

        @tree.command(description="Server installs only")
        @app_commands.allowed_installs(guilds=True, users=False)
        @app_commands.allowed_contexts(**EVERY_CONTEXT)
        async def serveronly(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("server")

        @tree.command(description="Many follow-ups")
        @app_commands.allowed_installs(**ANYWHERE)
        @app_commands.allowed_contexts(**EVERY_CONTEXT)
        async def chatty(interaction: discord.Interaction) -> None:
            self.interactions.append(interaction)
            await interaction.response.send_message("first")


@dataclass
class World:
    emu: Emulator
    bot: AnywhereBot
    alice: User  # installed the app to her account
    bob: User
    carol: User
    home: Guild  # added the bot
    games: Channel
    far: Guild  # never added the bot
    room: Channel
    group: Channel  # alice, bob, carol
    pair: Channel  # alice and bob
    dm: Channel  # alice and the bot


@pytest.fixture
async def world() -> AsyncIterator[World]:
    async with Emulator(install_types={0, 1}) as emu:
        alice, bob, carol = (emu.add_user(n) for n in ("alice", "bob", "carol"))
        emu.add_user_install(alice)
        home = emu.add_guild("Home")
        games = emu.add_text_channel(home, "games")
        far = emu.add_guild("Elsewhere", bot_member=False)
        room = emu.add_text_channel(far, "general")
        for user in (alice, bob, carol):
            emu.add_member(home, user)
            emu.add_member(far, user)
        bot = AnywhereBot()
        async with running(emu, bot):
            await emu.wait_for_commands("anywhere", "chatty")
            yield World(
                emu=emu,
                bot=bot,
                alice=alice,
                bob=bob,
                carol=carol,
                home=home,
                games=games,
                far=far,
                room=room,
                group=emu.open_group_dm(alice, [bob, carol]),
                pair=emu.open_dm(alice, bob),
                dm=emu.dm_channel(alice),
            )
        assert emu.unrouted == []


async def last_interaction(world: World, count: int) -> discord.Interaction:
    """The ``count``-th interaction the bot's commands got, once it has it."""
    bot = world.bot
    await world.emu.wait_for(lambda: len(bot.interactions) >= count)
    return bot.interactions[count - 1]


async def test_sync_defaults_and_declared_installs(world: World) -> None:
    synced = {c["name"]: c for c in world.emu.commands.list(None)}
    assert synced["anywhere"]["integration_types"] == [0, 1]
    assert synced["anywhere"]["contexts"] == [0, 1, 2]
    assert synced["serveronly"]["integration_types"] == [0]
    # Unset: the app's install types; contexts stay null (a server and the bot's DM).
    assert synced["ping"]["integration_types"] == [0, 1] and synced["ping"]["contexts"] is None


async def test_contexts_and_installs_are_enforced(world: World) -> None:
    emu, alice, bob = world.emu, world.alice, world.bob
    for channel in (world.group, world.pair, world.room):
        await (await emu.run_command(alice, channel, "anywhere")).response()
        with pytest.raises(UserActionError, match="not installed"):
            await emu.run_command(bob, channel, "anywhere")  # bob never installed it
        with pytest.raises(UserActionError):
            await emu.run_command(alice, channel, "serveronly")
    with pytest.raises(UserActionError, match="private channel"):
        await emu.run_command(alice, world.group, "ping")  # contexts unset: not in group DMs
    with pytest.raises(UserActionError, match="private channel"):
        await emu.run_command(alice, world.group, "moderate")
    with pytest.raises(UserActionError, match="bot's DM"):
        await emu.run_command(alice, world.dm, "moderate")  # guild_only: dm_permission false
    assert (await (await emu.run_command(bob, emu.dm_channel(bob), "ping")).response()).message
    with pytest.raises(UserActionError, match="cannot see"):
        await emu.run_command(world.carol, world.pair, "anywhere")
    offered = {c["name"] for c in offered_commands(emu, alice, world.group)}
    assert offered == {"anywhere", "chatty"}
    assert {c["name"] for c in offered_commands(emu, bob, world.group)} == set()
    emu.remove_user_install(alice)
    with pytest.raises(UserActionError, match="not installed"):
        await emu.run_command(alice, world.room, "anywhere")


async def test_payload_fields(world: World) -> None:
    emu, alice = world.emu, world.alice
    cases: list[tuple[Channel, int, dict[str, str]]] = [
        (world.games, 0, {"0": str(world.home.id), "1": str(alice.id)}),
        (world.room, 0, {"1": str(alice.id)}),
        (world.dm, 1, {"0": "0", "1": str(alice.id)}),
        (world.group, 2, {"1": str(alice.id)}),
        (world.pair, 2, {"1": str(alice.id)}),
    ]
    for count, (channel, context, owners) in enumerate(cases, start=1):
        handle = await emu.run_command(alice, channel, "anywhere")
        payload: dict[str, Any] = handle.payload
        assert payload["context"] == context, channel
        assert payload["authorizing_integration_owners"] == owners
        assert payload["channel"]["id"] == str(channel.id)
        assert payload["entitlements"] == []
        assert int(payload["app_permissions"]) > 0
        if channel.guild is None:
            assert payload["user"]["id"] == str(alice.id)
            assert "member" not in payload and "guild_id" not in payload
        else:
            assert payload["member"]["user"]["id"] == str(alice.id)
            assert payload["guild"]["id"] == payload["guild_id"] == str(channel.guild.id)
        interaction = await last_interaction(world, count)
        assert interaction.is_user_integration()
        in_its_server = channel.guild is not None and "0" in owners
        assert interaction.is_guild_integration() == in_its_server
        assert interaction.channel is not None and interaction.channel.id == channel.id
        await handle.response()
    group = world.group.to_payload()
    assert group["type"] == 3 and group["owner_id"] == str(alice.id)
    assert len(group["recipients"]) == 3
    private = int(emu.interactions[max(emu.interactions)].payload["app_permissions"])
    assert private == int(
        Permission.ATTACH_FILES | Permission.EMBED_LINKS | Permission.MENTION_EVERYONE
    )


async def test_friends_click_and_see_answers_the_bot_hears_nothing(world: World) -> None:
    emu, alice, bob, carol = world.emu, world.alice, world.bob, world.carol
    answer = (await (await emu.run_command(alice, world.group, "anywhere")).response()).message
    assert answer is not None and not answer.ephemeral
    for user in (alice, bob, carol):
        assert answer in emu.messages(world.group, viewer=user)
    click = await emu.click(bob, answer, index=0)  # bob never installed the app
    assert click.payload["authorizing_integration_owners"] == {"1": str(alice.id)}
    assert click.payload["context"] == 2 and click.payload["user"]["id"] == str(bob.id)
    await click.response()
    assert answer.content == "Count: 1"
    await emu.send_message(carol, world.group, "nice")
    await emu.send_message(alice, world.room, "hello")
    in_far = (await (await emu.run_command(alice, world.room, "anywhere")).response()).message
    assert in_far is not None
    seen = {d["channel_id"] for d in emu.dispatched("MESSAGE_CREATE")}
    seen |= {d["channel_id"] for d in emu.dispatched("MESSAGE_UPDATE")}
    assert not seen & {str(world.group.id), str(world.room.id)}
    with pytest.raises(UserActionError):
        emu.open_group_dm(alice, [emu.bot])


async def test_channel_routes_answer_403_without_access(world: World) -> None:
    emu = world.emu
    bot = world.bot
    before = emu.rate_limits.invalid_requests
    for channel in (world.group, world.pair, world.room):
        target = bot.get_partial_messageable(channel.id)
        with pytest.raises(discord.Forbidden) as caught:
            await asyncio.wait_for(target.send("hi"), TIMEOUT)
        assert caught.value.code == 50001
        with pytest.raises(discord.Forbidden):
            await asyncio.wait_for(target.fetch_message(1), TIMEOUT)
        with pytest.raises(discord.Forbidden):
            await asyncio.wait_for(target.typing().__aenter__(), TIMEOUT)
        with pytest.raises(discord.Forbidden):
            await asyncio.wait_for(bot.fetch_channel(channel.id), TIMEOUT)
    assert emu.rate_limits.invalid_requests - before == 12
    sent = await asyncio.wait_for(bot.get_partial_messageable(world.dm.id).send("hi"), TIMEOUT)
    assert sent.content == "hi"  # in its own DM the bot is a recipient


async def test_webhook_routes_live_for_the_token_lifetime(world: World) -> None:
    emu = world.emu
    emu.token_lifetime = 60.0
    handle = await emu.run_command(world.alice, world.group, "anywhere")
    await handle.response()
    interaction = await last_interaction(world, 1)
    edited = await asyncio.wait_for(interaction.edit_original_response(content="v2"), TIMEOUT)
    assert edited.content == "v2"
    assert (await interaction.original_response()).content == "v2"
    extra = await asyncio.wait_for(interaction.followup.send("more", wait=True), TIMEOUT)
    await asyncio.wait_for(extra.edit(content="more!"), TIMEOUT)
    assert [m.content for m in emu.messages(world.group)] == ["v2", "more!"]
    emu.advance(61)
    for call in (
        interaction.edit_original_response(content="late"),
        interaction.followup.send("late"),
        extra.edit(content="late"),
        interaction.delete_original_response(),
    ):
        with pytest.raises(discord.HTTPException) as caught:
            await asyncio.wait_for(call, TIMEOUT)
        assert (caught.value.status, caught.value.code) == (401, 50027)


async def test_five_followups_where_only_a_user_install_applies(world: World) -> None:
    emu = world.emu
    for count, channel, cap in ((1, world.group, True), (2, world.games, False)):
        await (await emu.run_command(world.alice, channel, "chatty")).response()
        interaction = await last_interaction(world, count)
        for n in range(5):
            await asyncio.wait_for(interaction.followup.send(f"#{n}"), TIMEOUT)
        sixth = interaction.followup.send("#6")
        if not cap:  # the server installed the app too: no cap
            await asyncio.wait_for(sixth, TIMEOUT)
            continue
        with pytest.raises(discord.HTTPException) as caught:
            await asyncio.wait_for(sixth, TIMEOUT)
        assert (caught.value.status, caught.value.code) == (400, 40094)


async def test_answers_forced_private_without_use_external_apps(world: World) -> None:
    emu, alice, bob = world.emu, world.alice, world.bob
    emu.set_use_external_apps(world.far, False)
    handle = await emu.run_command(alice, world.room, "anywhere")
    answer = (await handle.response()).message
    assert handle.forced_ephemeral and answer is not None and answer.ephemeral
    assert emu.messages(world.room, viewer=bob) == []
    with pytest.raises(UserActionError, match="ephemeral"):
        await emu.click(bob, answer, index=0)
    # Where the server installed the app, or with the permission back, answers are public.
    public = (await (await emu.run_command(alice, world.games, "anywhere")).response()).message
    assert public is not None and not public.ephemeral
    emu.set_use_external_apps(world.far, True)
    shown = (await (await emu.run_command(alice, world.room, "anywhere")).response()).message
    assert shown is not None and not shown.ephemeral


async def test_snapshots_keep_private_channels_and_installs(world: World) -> None:
    state = snapshot(world.emu)
    copy = Emulator()
    restore(copy, state)
    assert copy.install_types == {0, 1} and copy.user_installs == {world.alice.id}
    group = copy.channel(world.group.id)
    assert group is not None and [u.name for u in group.recipients] == ["alice", "bob", "carol"]
    assert copy.can_view(copy.bot, group) is False
