"""The playground's world file, in process: a world saved by an older playground loads
with what this one gives its members."""

from __future__ import annotations

from pathlib import Path

import pytest

from discord_emulator import Emulator, Permission
from playground.world import BOT_NAME, MODERATOR, MODERATOR_ROLE, World


def test_an_older_worlds_moderator_may_open_the_settings(tmp_path: Path) -> None:
    first = World(Emulator(bot_name=BOT_NAME), tmp_path)
    role = next(r for r in first.guild.roles.values() if r.name == MODERATOR_ROLE)
    role.permissions = int(Permission.MANAGE_MESSAGES)  # what the first playgrounds gave
    first.save()

    again = World(Emulator(bot_name=BOT_NAME), tmp_path)
    assert not again.fresh
    carol = next(u for u in again.members if u.name == MODERATOR)
    granted = again.guild.permissions_of(carol)
    assert granted & Permission.MANAGE_GUILD and granted & Permission.MANAGE_MESSAGES
    bob = next(u for u in again.members if u.name == "Bob")
    assert not again.guild.permissions_of(bob) & Permission.MANAGE_GUILD


def test_the_bot_is_a_menus_target_but_never_the_acting_member(tmp_path: Path) -> None:
    world = World(Emulator(bot_name=BOT_NAME), tmp_path)
    bot = world.emu.bot
    assert bot.id in world.guild.members and bot not in world.members
    with pytest.raises(LookupError):
        world.member(bot.id)
    assert world.member(bot.id, bot=True) is bot
