"""Real discord.py clients on shards: an AutoShardedBot holding both shards of two, one asking
/gateway/bot for its count, and two plain bots holding one shard each (as two processes would).
"""

from __future__ import annotations

from typing import Any

import discord
from discord.ext import commands

from discord_emulator import Channel, Emulator, Guild, User

from .helpers import running


class Pinger:
    """A /ping that records which guild (None: a DM) each answer went to."""

    tree: discord.app_commands.CommandTree[Any]
    answered: list[int | None]

    def add_ping(self) -> None:
        self.answered = []

        @self.tree.command(description="Pong")
        async def ping(interaction: discord.Interaction) -> None:
            self.answered.append(interaction.guild_id)
            await interaction.response.send_message("pong")

    async def setup_hook(self) -> None:
        await self.tree.sync()

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """discord.py waits 5 s between IDENTIFYs (Discord's per-bucket identify limit); the
        emulator does not enforce it, so skip the wait to keep the tests fast."""


class ShardedBot(Pinger, commands.AutoShardedBot):
    def __init__(self, **shards: Any) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=discord.Intents.default(),
            guild_ready_timeout=0.05,
            **shards,
        )
        self.add_ping()


class OneShardBot(Pinger, commands.Bot):
    def __init__(self, shard_id: int, shard_count: int) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=discord.Intents.default(),
            guild_ready_timeout=0.05,
            shard_id=shard_id,
            shard_count=shard_count,
        )
        self.add_ping()


def world(emu: Emulator) -> tuple[dict[str, Guild], User]:
    guilds = {name: emu.add_guild(name, shard=(int(name[-1]), 2)) for name in ("a0", "b1", "c0")}
    alice = emu.add_user("alice")
    for guild in guilds.values():
        emu.add_text_channel(guild, "games")
        emu.add_member(guild, alice)
    return guilds, alice


async def ping(emu: Emulator, user: User, channel: Channel) -> None:
    response = await (await emu.run_command(user, channel, "ping")).response()
    assert not response.failed and response.message is not None
    assert response.message.content == "pong"


def interaction_guilds(emu: Emulator, shard_id: int) -> list[str | None]:
    (session,) = emu.gateway.live_sessions(shard_id)
    return [d.get("guild_id") for d in session.dispatched("INTERACTION_CREATE")]


async def test_auto_sharded_bot_with_both_shards(emu: Emulator) -> None:
    guilds, alice = world(emu)
    bot = ShardedBot(shard_ids=[0, 1], shard_count=2)
    async with running(emu, bot):
        await emu.wait_for_shards(2)
        await emu.wait_for_commands("ping")
        assert sorted(bot.shards) == [0, 1]
        assert sorted(s.shard or [] for s in emu.gateway.live_sessions()) == [[0, 2], [1, 2]]
        assert {g.id for g in bot.guilds} == {g.id for g in guilds.values()}
        for guild in guilds.values():
            seen = bot.get_guild(guild.id)
            assert seen is not None and seen.shard_id == emu.shard_of(guild, 2)
        for name in ("b1", "a0"):
            await ping(emu, alice, guilds[name].channels[0])
        await ping(emu, alice, emu.dm_channel(alice))
    assert bot.answered == [guilds["b1"].id, guilds["a0"].id, None]
    by_shard = {s.shard_id: s for s in emu.gateway.sessions.values()}
    assert [d.get("guild_id") for d in by_shard[1].dispatched("INTERACTION_CREATE")] == [
        str(guilds["b1"].id)
    ]
    assert [d.get("guild_id") for d in by_shard[0].dispatched("INTERACTION_CREATE")] == [
        str(guilds["a0"].id),
        None,
    ]
    assert emu.unrouted == []


async def test_auto_sharded_bot_takes_the_recommended_count() -> None:
    async with Emulator(shards=3) as emu:
        guilds, _ = world(emu)
        bot = ShardedBot()
        async with running(emu, bot):
            await emu.wait_for_shards(3)
            assert bot.shard_count == 3 and sorted(bot.shards) == [0, 1, 2]
            assert {g.id for g in bot.guilds} == {g.id for g in guilds.values()}
            for guild in guilds.values():
                seen = bot.get_guild(guild.id)
                assert seen is not None and seen.shard_id == emu.shard_of(guild, 3)
        assert ("GET", "/gateway/bot") in [(r.method, r.path) for r in emu.requests]


async def test_two_single_shard_clients_split_the_guilds(emu: Emulator) -> None:
    guilds, alice = world(emu)
    zero, one = OneShardBot(0, 2), OneShardBot(1, 2)
    async with running(emu, zero), running(emu, one):
        await emu.wait_for_shards(2)
        await emu.wait_for_commands("ping")
        assert {g.id for g in zero.guilds} == {guilds["a0"].id, guilds["c0"].id}
        assert {g.id for g in one.guilds} == {guilds["b1"].id}
        for name in ("a0", "b1", "c0"):
            await ping(emu, alice, guilds[name].channels[0])
        await ping(emu, alice, emu.dm_channel(alice))
        # A guild the bot joins later shows up on its shard's client only.
        late = emu.add_guild("late", shard=(1, 2))
        await emu.wait_for(lambda: one.get_guild(late.id) is not None)
        assert zero.get_guild(late.id) is None
        assert interaction_guilds(emu, 1) == [str(guilds["b1"].id)]
    assert zero.answered == [guilds["a0"].id, guilds["c0"].id, None]
    assert one.answered == [guilds["b1"].id]
    assert emu.unrouted == []
