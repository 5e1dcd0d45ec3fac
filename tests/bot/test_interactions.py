"""discord.py's own machinery the bot relies on without calling it by name."""

from __future__ import annotations

import discord


def test_discord_py_parses_with_orjson() -> None:
    """orjson is a dependency only because discord.py picks it up by itself (README): if
    discord.py stops doing so, the dependency is dead weight and should go."""
    assert discord.utils.HAS_ORJSON
