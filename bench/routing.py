"""What routing a click through a ``DynamicItem`` would add to each board click.

    python -m bench.routing

discord.py dispatches a ``DynamicItem`` by rebuilding the whole clicked message as a
view (``LayoutView.from_message``) before the item's callback runs. The bot routes its
buttons by custom_id from one ``on_interaction`` listener instead (``bot/ui/router.py``),
which costs a regular-expression match. This prints the rebuild's CPU per click for a
3x3 and a 5x5 board, as a ratio of drawing the same board (``board_view``), in one run.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import discord

from bench.drawing import game as make_game
from bot.games.views import board_view

ROUNDS = 3000


def message_data(components: list[dict[str, Any]]) -> dict[str, Any]:
    """A board message as the gateway sends it with a click (Components V2)."""
    author = {"id": "42", "username": "bot", "discriminator": "0", "avatar": None, "bot": True}
    return {
        "id": "9",
        "channel_id": "8",
        "author": author,
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
        "flags": 1 << 15,
        "components": components,
    }


def per_call(fn: Any) -> float:
    started = time.process_time()
    for _ in range(ROUNDS):
        fn()
    return (time.process_time() - started) / ROUNDS


async def main() -> None:
    client = discord.Client(intents=discord.Intents.default())
    # A parsed Message needs the client's connection state; discord.py builds it the same
    # way for every interaction it receives. (Bench code: the bot itself never does this.)
    state = client._connection
    channel = discord.PartialMessageable(state=state, id=8)
    print("CPU per click (µs): rebuilding the clicked board as a view, vs drawing it")
    for moves, size in (((0, 4), (3, 3, 3)), ((0, 6, 12), (5, 5, 4))):
        game = make_game(moves, size[0], size[2])
        payload = board_view(game).to_components()
        message = discord.Message(state=state, channel=channel, data=message_data(payload))
        rebuild = per_call(lambda m=message: discord.ui.LayoutView.from_message(m, timeout=None))
        draw = per_call(lambda g=game: board_view(g).to_components())
        print(
            f"  {size[0]}x{size[1]}: from_message {rebuild * 1e6:6.0f}"
            f"  board_view {draw * 1e6:6.0f}  ratio {rebuild / draw:.2f}"
        )
    await client.close()


if __name__ == "__main__":
    asyncio.run(main())
