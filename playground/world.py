"""The playground's Discord: one server with a few channels and members, kept in a file.

The first start builds it; every later start loads it from ``world.json`` in the data
folder, so the ids the bot stored (server, channels, members, its messages) name the same
things and old boards keep working. The file is written a second after a change and at
exit, atomically.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_emulator import Emulator, Guild, Permission, User, persist

log = logging.getLogger("playground")

WORLD_FILE = "world.json"
SERVER_NAME = "Playground"
BOT_NAME = "Tic-Tac-Toe"
CHANNELS = ("general", "games", "tournament")
MEMBERS = (("Alice", "en-US"), ("Bob", "ja"), ("Carol", "fr"))
"""Alice owns the server (every permission); Carol is a moderator; Bob is a member."""
MODERATOR = "Carol"
MODERATOR_ROLE = "Moderator"
MODERATOR_PERMISSIONS = int(Permission.MANAGE_MESSAGES | Permission.MANAGE_GUILD)
"""What a server's moderators usually hold, and what this bot asks of them: Manage Messages
(stop others' games) and Manage Server (/tictactoe-settings, erasing a member's data)."""
SAVE_DELAY = 1.0


@dataclass
class Reads:
    """Which messages each member has seen, per channel: the unread-mention counts."""

    last_read: dict[tuple[int, int], int]

    def to_json(self) -> list[list[int]]:
        return [[user, channel, last] for (user, channel), last in self.last_read.items()]

    @classmethod
    def from_json(cls, raw: list[list[int]]) -> Reads:
        return cls({(user, channel): last for user, channel, last in raw})


def build(emu: Emulator, members: tuple[tuple[str, str], ...] = MEMBERS) -> Guild:
    """The first start's server: its owner is the first member."""
    people = [emu.add_user(name, global_name=name, locale=locale) for name, locale in members]
    guild = emu.add_guild(SERVER_NAME, owner=people[0], community=True)
    for name in CHANNELS:
        emu.add_text_channel(guild, name)
    moderators = emu.add_role(guild, MODERATOR_ROLE, permissions=MODERATOR_PERMISSIONS)
    for person in people[1:]:
        emu.add_member(guild, person, roles=[moderators] if person.name == MODERATOR else [])
    return guild


class World:
    """The emulator, its one server, the members' reads, and the file they are kept in."""

    def __init__(self, emu: Emulator, folder: Path) -> None:
        self.emu = emu
        self.path = folder / WORLD_FILE
        self.reads = Reads({})
        self._save_task: asyncio.Task[None] | None = None
        self.fresh = not self.path.exists()
        if self.fresh:
            build(emu)
        else:
            state = json.loads(self.path.read_text(encoding="utf-8"))
            persist.restore(emu, state["emulator"])
            self.reads = Reads.from_json(state["reads"])
            self._grant_moderators()
        emu.listeners.append(self.changed)

    def _grant_moderators(self) -> None:
        """A world saved before the moderators could open the settings gets that right."""
        for role in self.guild.roles.values():
            if role.name == MODERATOR_ROLE and not role.managed:
                role.permissions |= MODERATOR_PERMISSIONS

    @property
    def guild(self) -> Guild:
        return next(iter(self.emu.guilds.values()))

    @property
    def members(self) -> list[User]:
        return [m.user for m in self.guild.members.values() if not m.user.bot]

    def member(self, user_id: int | str, *, bot: bool = False) -> User:
        """A member the page may act as; with ``bot``, the bot too (a menu's target)."""
        found = self.guild.member(int(user_id))
        if found is None or (found.user.bot and not (bot and found.user is self.emu.bot)):
            raise LookupError(f"no member {user_id} in {self.guild.name}")
        return found.user

    def changed(self) -> None:
        """Save soon (coalescing a burst of changes into one write)."""
        if self._save_task is None or self._save_task.done():
            self._save_task = asyncio.get_running_loop().create_task(self._save_later())

    async def _save_later(self) -> None:
        await asyncio.sleep(SAVE_DELAY)
        self.save()

    def save(self) -> None:
        state: dict[str, Any] = {
            "emulator": persist.snapshot(self.emu),
            "reads": self.reads.to_json(),
        }
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
        temporary.replace(self.path)

    async def close(self) -> None:
        if self._save_task is not None and not self._save_task.done():
            self._save_task.cancel()
        self.save()
