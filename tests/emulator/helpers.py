"""A small discord.py bot and the helpers that run it against the emulator in the test's
loop (the fixtures are in conftest.py)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import discord
import yarl
from discord import app_commands
from discord.ext import commands
from discord.gateway import DiscordWebSocket
from discord.http import Route
from discord.webhook.async_ import async_context, interaction_response_params

from discord_emulator import Channel, Emulator, Guild, Permission, Role, User

TIMEOUT = 10.0


class Counter(discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"counter:(?P<count>\d+)"):
    """A button whose whole state lives in its custom_id."""

    def __init__(self, count: int) -> None:
        super().__init__(
            discord.ui.Button(
                label=f"Count {count}",
                style=discord.ButtonStyle.primary,
                custom_id=f"counter:{count}",
            )
        )
        self.count = count

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str]
    ) -> Counter:
        return cls(int(match["count"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        await interaction.response.edit_message(
            content=f"Count: {self.count + 1}", view=counter_view(self.count + 1)
        )


def counter_view(count: int) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(Counter(count))
    view.add_item(discord.ui.Button(label="Off", custom_id="counter-off", disabled=True, row=1))
    return view


class Cell(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"cell:(?P<board>[.X]{9}):(?P<pos>\d)"
):
    """One square of a Components V2 board; the board travels in the custom_id."""

    def __init__(self, board: str, pos: int) -> None:
        mark = board[pos]
        super().__init__(
            discord.ui.Button(
                label=mark if mark != "." else "\u200b",
                custom_id=f"cell:{board}:{pos}",
                disabled=mark != ".",
                style=discord.ButtonStyle.secondary,
            )
        )
        self.board = board
        self.pos = pos

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str]
    ) -> Cell:
        return cls(match["board"], int(match["pos"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        board = self.board[: self.pos] + "X" + self.board[self.pos + 1 :]
        await interaction.response.edit_message(view=BoardView(board))


class BoardView(discord.ui.LayoutView):
    def __init__(self, board: str = "." * 9) -> None:
        super().__init__(timeout=None)
        rows = [discord.ui.ActionRow(*(Cell(board, r * 3 + c) for c in range(3))) for r in range(3)]
        self.add_item(discord.ui.Container(discord.ui.TextDisplay(f"Board {board}"), *rows))


class EmuBot(commands.Bot):
    """Records what it saw so tests can assert on the bot side too."""

    def __init__(self, intents: discord.Intents | None = None) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents or discord.Intents.default(),
            guild_ready_timeout=0.05,
        )
        self.errors: list[BaseException] = []
        self.seen: list[dict[str, Any]] = []
        self.last_interaction: discord.Interaction | None = None
        self.late_delay = 0.0
        self.add_commands()

    async def setup_hook(self) -> None:
        self.add_dynamic_items(Counter, Cell)
        self.tree.on_error = self.on_tree_error  # type: ignore[method-assign]
        await self.tree.sync()

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """discord.py sleeps 5 s before re-identifying (Discord's identify rate limit); the
        emulator has no such limit, so skip it to keep the tests fast."""

    async def on_command_error(
        self, context: commands.Context[Any], exception: commands.CommandError
    ) -> None:
        """Mentions of the bot are parsed as prefix commands; it has none, so stay quiet."""
        if not isinstance(exception, commands.CommandNotFound):
            self.errors.append(exception)

    async def on_tree_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        self.errors.append(getattr(error, "original", error))

    def add_commands(self) -> None:
        tree = self.tree

        @tree.command(description="Challenge someone")
        @app_commands.describe(opponent="Who to play", mark="Your mark", size="Board size")
        @app_commands.choices(
            mark=[
                app_commands.Choice(name="X", value="x"),
                app_commands.Choice(name="O", value="o"),
            ]
        )
        async def play(
            interaction: discord.Interaction,
            opponent: discord.Member,
            mark: str,
            size: app_commands.Range[int, 3, 5] = 3,
        ) -> None:
            self.seen.append(
                {"opponent": opponent, "mark": mark, "size": size, "user": interaction.user}
            )
            self.last_interaction = interaction
            await interaction.response.send_message(
                f"{interaction.user.mention} challenges {opponent.mention} ({mark}, {size}x{size})",
                view=counter_view(0),
                allowed_mentions=discord.AllowedMentions(users=[opponent]),
            )

        @tree.command(description="A Components V2 board")
        async def board(interaction: discord.Interaction) -> None:
            await interaction.response.send_message(view=BoardView())

        @tree.command(description="Only you see this")
        async def secret(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("psst", view=counter_view(10), ephemeral=True)

        @tree.command(description="Think, then answer")
        async def slow(interaction: discord.Interaction, private: bool = False) -> None:
            self.last_interaction = interaction
            await interaction.response.defer(ephemeral=private, thinking=True)
            await asyncio.sleep(0.05)
            await interaction.edit_original_response(content="done thinking")
            await interaction.followup.send("and one more thing", ephemeral=private)

        @tree.command(description="Answers after a delay")
        async def late(interaction: discord.Interaction) -> None:
            await asyncio.sleep(self.late_delay)
            await interaction.response.send_message("finally")

        @tree.command(description="Tries to answer twice")
        async def twice(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("first")
            try:
                await interaction.response.send_message("second")
            except discord.InteractionResponded as error:
                self.errors.append(error)
            # Bypass discord.py's guard to see what Discord itself says.
            params = interaction_response_params(4, {"content": "second"})
            try:
                await async_context.get().create_interaction_response(
                    interaction.id, interaction.token, session=interaction._session, params=params
                )
            except discord.HTTPException as error:
                self.errors.append(error)

        @tree.command(description="Pong")
        async def ping(interaction: discord.Interaction) -> None:
            self.last_interaction = interaction
            await interaction.response.send_message("pong")

        @tree.command(description="Guild only")
        @app_commands.guild_only()
        async def moderate(interaction: discord.Interaction) -> None:
            await interaction.response.send_message("moderated")


@dataclass
class Arena:
    emu: Emulator
    bot: EmuBot
    guild: Guild
    channel: Channel
    alice: User
    bob: User
    mod: User
    helper: User
    players: Role

    def bot_channel(self) -> discord.TextChannel:
        channel = self.bot.get_channel(self.channel.id)
        assert isinstance(channel, discord.TextChannel)
        return channel


@contextlib.asynccontextmanager
async def running(emu: Emulator, bot: discord.Client) -> AsyncIterator[discord.Client]:
    """Run ``bot`` against ``emu`` as a task of this loop; restores discord.py's URLs after."""
    saved = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    Route.BASE = emu.api_base
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(emu.gateway_url)
    task = asyncio.create_task(bot.start(emu.bot_token))
    try:
        ready = asyncio.create_task(bot.wait_until_ready())
        done, _ = await asyncio.wait(
            {task, ready}, timeout=TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        if task in done:
            ready.cancel()
            task.result()
            raise RuntimeError("the bot stopped before it was ready")
        if ready not in done:
            ready.cancel()
            raise TimeoutError("the bot did not get ready")
        yield bot
    finally:
        await bot.close()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(task, 5)
        Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = saved


def build_world(emu: Emulator) -> dict[str, Any]:
    alice = emu.add_user("alice")
    bob = emu.add_user("bob")
    mod = emu.add_user("mod")
    helper = emu.add_user("helperbot", bot=True)
    guild = emu.add_guild("Arcade", owner=None)
    channel = emu.add_text_channel(guild, "games")
    players = emu.add_role(guild, "players", mentionable=True)
    emu.add_member(guild, alice, roles=[players])
    emu.add_member(guild, bob)
    emu.add_member(guild, mod, permissions=Permission.MANAGE_MESSAGES)
    emu.add_member(guild, helper)
    return {
        "guild": guild,
        "channel": channel,
        "alice": alice,
        "bob": bob,
        "mod": mod,
        "helper": helper,
        "players": players,
    }
