"""The peer: discord.py's own tic-tac-toe example as a bot, for ``bench.peer`` to compare
our bot with (``python -m bench.peer_bot``, started by the driver).

It behaves as discord.py's ``examples/views/tic_tac_toe.py``: a classic ``discord.ui.View``
of nine buttons kept in memory, no database, no check of who clicks; each click restyles its
button and answers with ``interaction.response.edit_message`` (content + three action
rows). A slash command, ``/tictactoe-peer``, starts a game; like our bot, the peer runs
with the default intents minus ``messages`` (no message events), orjson, and the
token/endpoints from DISCORD_TOKEN, DISCORD_API_BASE, DISCORD_GATEWAY_URL and DEV_GUILD_ID
(unset: its command is global). Its one addition (see ``ANNOUNCE_BOARDS``): it tells the
driver, on stdout, when a new board's view is stored, so that the first click cannot beat it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING

import discord
import yarl
from discord import app_commands
from discord.ext import commands

if TYPE_CHECKING:
    pass

PEER_COMMAND = "tictactoe-peer"
ANNOUNCE_BOARDS = os.environ.get("PEER_ANNOUNCE_BOARDS") == "1"
"""Set by the driver: the peer then writes each new board's message id to stdout once its
view is stored. discord.py stores a view only when the answer to the command has come
back, so a first click sent as soon as the board appears can reach the bot before that and
be dropped (no view takes it: the interaction fails). A person is never that quick; the
driver is, and waits for this line before a new board's first click."""

log = logging.getLogger("peer")


class PeerCell(discord.ui.Button["PeerBoard"]):
    """One square of the peer's board; it knows where it sits."""

    def __init__(self, x: int, y: int) -> None:
        # A button needs a label: a zero-width space until someone plays here.
        super().__init__(style=discord.ButtonStyle.secondary, label="\u200b", row=y)
        self.x = x
        self.y = y

    async def callback(self, interaction: discord.Interaction) -> None:
        board = self.view
        assert board is not None
        if board.board[self.y][self.x] != PeerBoard.EMPTY:
            return  # already played: like the example, no answer at all
        mark = board.current_player
        board.board[self.y][self.x] = mark
        self.disabled = True
        if mark == PeerBoard.CROSS:
            self.style, self.label = discord.ButtonStyle.danger, "X"
            board.current_player = PeerBoard.NOUGHT
            content = "It is now O's turn"
        else:
            self.style, self.label = discord.ButtonStyle.success, "O"
            board.current_player = PeerBoard.CROSS
            content = "It is now X's turn"
        result = board.result()
        if result is not None:
            content = {PeerBoard.CROSS: "X won!", PeerBoard.NOUGHT: "O won!"}.get(
                result, "It's a tie!"
            )
            for item in board.children:
                if isinstance(item, discord.ui.Button):
                    item.disabled = True
            board.stop()
        await interaction.response.edit_message(content=content, view=board)


class PeerBoard(discord.ui.View):
    """The whole game, in memory: whose turn it is and a 3x3 grid of marks."""

    EMPTY, CROSS, NOUGHT, TIE = 0, -1, 1, 2

    def __init__(self) -> None:
        super().__init__()  # the default 180 s timeout, as in the example
        self.current_player = self.CROSS
        self.board = [[self.EMPTY] * 3 for _ in range(3)]
        for y in range(3):
            for x in range(3):
                self.add_item(PeerCell(x, y))

    def result(self) -> int | None:
        """CROSS (X) or NOUGHT (O) if that mark has a full line, TIE on a full board, else None."""
        grid = self.board
        lines = [list(row) for row in grid]
        lines += [[grid[y][x] for y in range(3)] for x in range(3)]
        lines += [[grid[i][i] for i in range(3)], [grid[i][2 - i] for i in range(3)]]
        for line in lines:
            if sum(line) == 3 * self.CROSS:
                return self.CROSS
            if sum(line) == 3 * self.NOUGHT:
                return self.NOUGHT
        if all(mark != self.EMPTY for row in grid for mark in row):
            return self.TIE
        return None


class PeerBot(commands.Bot):
    """The example's bot, started by a slash command instead of a prefix command."""

    def __init__(self, guild_id: int | None) -> None:
        intents = discord.Intents.default()
        intents.messages = False  # as our bot: no message events at all
        super().__init__(command_prefix=commands.when_mentioned, intents=intents)
        self.guild_id = guild_id

    async def setup_hook(self) -> None:
        @app_commands.command(name=PEER_COMMAND, description="Tic-tac-toe, X goes first")
        async def start_game(interaction: discord.Interaction) -> None:
            response = await interaction.response.send_message(
                "Tic Tac Toe: X goes first", view=PeerBoard()
            )
            if ANNOUNCE_BOARDS:  # the view is stored now: it will take the board's clicks
                sys.stdout.write(f"{response.message_id}\n")
                sys.stdout.flush()

        guild = discord.Object(self.guild_id) if self.guild_id is not None else None
        self.tree.add_command(start_game, guild=guild)
        await self.tree.sync(guild=guild)


async def serve_peer() -> None:
    """Run the peer bot until SIGTERM or SIGINT, then close it."""
    token = os.environ["DISCORD_TOKEN"]
    if api_base := os.environ.get("DISCORD_API_BASE"):
        discord.http.Route.BASE = api_base.rstrip("/")
    if gateway := os.environ.get("DISCORD_GATEWAY_URL"):
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway)
    guild_id = int(os.environ["DEV_GUILD_ID"]) if os.environ.get("DEV_GUILD_ID") else None
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with PeerBot(guild_id) as bot:
        runner = asyncio.create_task(bot.start(token))
        stopper = asyncio.create_task(stop.wait())
        await asyncio.wait({runner, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if runner.done():
            runner.result()  # it stopped by itself: raise why
            return
        log.info("Shutting down")
        await bot.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(runner, timeout=10)


def main() -> None:
    plain = logging.Formatter("%(asctime)s %(levelname)-8s %(name)s: %(message)s")
    discord.utils.setup_logging(level=logging.INFO, formatter=plain, root=True)
    asyncio.run(serve_peer())


if __name__ == "__main__":
    main()
