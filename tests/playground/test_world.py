"""The playground's world file, in process: a world saved by an older playground loads
with what this one gives its members; a long run keeps the newest messages only; the file
is written whole, in a thread."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from discord_emulator import ChannelType, Emulator, Permission, persist
from playground.view import state_view
from playground.world import (
    BOT_NAME,
    MESSAGES_KEPT,
    MODERATOR,
    MODERATOR_ROLE,
    OTHER_SERVER_NAME,
    WORLD_FILE,
    World,
)


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


def files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


async def test_a_long_run_keeps_the_newest_messages_and_records(tmp_path: Path) -> None:
    world = World(Emulator(bot_name=BOT_NAME), tmp_path)
    emu = world.emu
    alice = world.members[0]
    general, games = world.guild.channels[0], world.guild.channels[1]
    for i in range(MESSAGES_KEPT + 150):
        await emu.send_message(alice, general, f"hello {i}")
    first = general.messages[0]
    await emu.send_message(alice, games, "one")
    await asyncio.sleep(0)  # the trim runs on the loop's next turn
    assert len(general.messages) == MESSAGES_KEPT
    assert general.messages[-1].content == f"hello {MESSAGES_KEPT + 149}"
    assert emu.message(first.id) is None
    assert [m.content for m in games.messages] == ["one"]
    await world.close()


async def test_the_world_is_written_in_a_thread_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = World(Emulator(bot_name=BOT_NAME), tmp_path)
    alice = world.members[0]
    for i in range(50):
        await world.emu.send_message(alice, world.guild.channels[0], f"hello {i}")
    writers: list[int] = []
    write = World._write

    def noted(self: World, generation: int, text: str) -> None:
        writers.append(threading.get_ident())
        write(self, generation, text)

    monkeypatch.setattr(World, "_write", noted)
    await world.save_in_thread()
    assert writers and threading.get_ident() not in writers
    saved = json.loads((tmp_path / WORLD_FILE).read_text(encoding="utf-8"))
    assert set(saved) == {"emulator", "reads"}
    again = World(Emulator(bot_name=BOT_NAME), tmp_path)
    assert [m.content for m in again.guild.channels[0].messages][-1] == "hello 49"
    assert files(tmp_path) == [WORLD_FILE]  # no temporary file left behind


def test_the_app_reaches_dms_a_group_dm_and_a_server_without_the_bot(tmp_path: Path) -> None:
    """Alice installed the app to her account; each member has a DM with the bot; the three
    share a group DM; the second server never added the bot. A world saved before all this
    gets it on its next start, and drops the commands it had synced to its server only."""
    first = World(Emulator(bot_name=BOT_NAME), tmp_path)
    state = persist.snapshot(first.emu)
    for key in ("private_channels", "install_types", "user_installs"):
        del state[key]  # what an older playground saved
    state["guilds"] = state["guilds"][:1]
    state["commands"] = [{"guild": first.guild.id, "commands": []}]
    (tmp_path / WORLD_FILE).write_text(json.dumps({"emulator": state, "reads": []}))

    again = World(Emulator(bot_name=BOT_NAME), tmp_path)
    emu = again.emu
    alice, bob, carol = again.members
    assert emu.install_types == {0, 1} and emu.user_installs == {alice.id}
    assert again.other.name == OTHER_SERVER_NAME and emu.bot.id not in again.other.members
    assert {m.user.name for m in again.other.members.values()} == {"Alice", "Bob", "Carol"}
    assert again.guild.id not in emu.commands.scopes
    (group,) = [c for c in again.places(bob) if c.type is ChannelType.GROUP_DM]
    assert group.recipients == [alice, bob, carol]
    dms = [c for c in again.places(bob) if c.is_bot_dm]
    assert dms == [emu.dm_channel(bob)]
    assert not again.shows(emu.dm_channel(alice), bob)
    view = state_view(again, bob)
    kinds = [(c["kind"], c["place"], c["bot"]) for c in view["channels"]]
    assert kinds == [
        *[("text", "Playground", True)] * 3,
        ("text", OTHER_SERVER_NAME, False),
        ("dm", None, True),
        ("group_dm", None, False),
    ]
    assert view["channels"][-1]["name"] == "Alice, Bob, Carol"
    assert view["channels"][-2]["name"] == BOT_NAME
