"""Our bot as it was before issue 37 item 2, the baseline of ``bench.chatter``: server
messages' events on (``Intents.default()`` less direct messages) and every deleted message
looked up (``Upkeep.message_gone``), as ``bot/ui/client.py`` did up to 2026-11-28.

    python -m bench.chatter_bot        # started by bench.chatter, like ``python -m bot``
"""

from __future__ import annotations

import sys

import discord

from bot.__main__ import main
from bot.ui import client


def _with_messages() -> discord.Intents:
    intents = discord.Intents.default()
    intents.dm_messages = False
    return intents


async def _on_raw_message_delete(
    self: client.TicTacToeBot, payload: discord.RawMessageDeleteEvent, /
) -> None:
    if payload.guild_id is not None:
        await self.service.upkeep.message_gone(
            payload.guild_id, payload.channel_id, payload.message_id
        )


if __name__ == "__main__":
    client.needed_intents = _with_messages
    client.TicTacToeBot.on_raw_message_delete = _on_raw_message_delete  # type: ignore[attr-defined]
    sys.exit(main())
