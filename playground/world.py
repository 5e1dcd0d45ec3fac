"""The playground's Discord: a server with the bot, a few channels and members, kept in a
file; and where the app reaches without the bot (issue 36): Alice installed the app to her
account, every member has a DM with the bot, Alice, Bob and Carol share a group DM, and
they meet in a second server that never added the bot.

The first start builds it; every later start loads it from ``world.json`` in the data
folder, so the ids the bot stored (server, channels, members, its messages) name the same
things and old boards keep working. The file is written a second after a change and at
exit, atomically (a temporary file, then a rename); the world is turned into JSON on the
event loop, so it is one consistent moment, and the file written in a thread, so a large
world never holds up the page or the emulator.

A playground runs for days, so it forgets the oldest: each channel keeps its newest
:data:`MESSAGES_KEPT` messages, and the emulator's records (requests, gateway frames,
interactions) their newest :data:`RECORDS_KEPT` (``discord_emulator.trim``). A board older
than that is gone, as a board a moderator deleted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from discord_emulator import (
    Channel,
    ChannelType,
    Emulator,
    Guild,
    Permission,
    User,
    persist,
    trim,
)

log = logging.getLogger("playground")

WORLD_FILE = "world.json"
SERVER_NAME = "Playground"
BOT_NAME = "Tic-Tac-Toe"
CHANNELS = ("general", "games", "tournament")
MEMBERS = (("Alice", "en-US"), ("Bob", "ja"), ("Carol", "fr"))
"""Alice owns the server (every permission); Carol is a moderator; Bob is a member."""
OTHER_SERVER_NAME = "Friends"
OTHER_CHANNELS = ("hangout",)
"""A server that never added the bot: only Alice's user install reaches there."""
USER_INSTALLER = "Alice"
"""The member who added the app to her account ("Add to My Apps")."""
MODERATOR = "Carol"
MODERATOR_ROLE = "Moderator"
MODERATOR_PERMISSIONS = int(Permission.MANAGE_MESSAGES | Permission.MANAGE_GUILD)
"""What a server's moderators usually hold, and what this bot asks of them: Manage Messages
(stop others' games) and Manage Server (/tictactoe-settings, erasing a member's data)."""
SAVE_DELAY = 1.0
MESSAGES_KEPT = 500
"""Per channel: hours of play in a busy channel, a page's worth many times over."""
RECORDS_KEPT = 1000
"""Of each emulator record: enough to read what just happened, small enough to stay cheap."""


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


def reach_further(emu: Emulator, guild: Guild) -> None:
    """What the app reaches without the bot, added where missing (a world saved before
    user installs gets it on its next start): user installs offered and Alice's made, each
    member's DM with the bot, a group DM of the members, the second server. The commands
    an older world synced to its server only are dropped: the bot now syncs them globally,
    so that they reach DMs too."""
    emu.install_types |= {0, 1}
    people = [m.user for m in guild.members.values() if not m.user.bot]
    for person in people:
        if person.name == USER_INSTALLER:
            emu.add_user_install(person)
        emu.dm_channel(person)
    if not any(c.type is ChannelType.GROUP_DM for c in emu.channels.values()) and people:
        emu.open_group_dm(people[0], people[1:])
    if not any(g.name == OTHER_SERVER_NAME for g in emu.guilds.values()):
        other = emu.add_guild(OTHER_SERVER_NAME, owner=people[0], bot_member=False)
        for name in OTHER_CHANNELS:
            emu.add_text_channel(other, name)
        for person in people[1:]:
            emu.add_member(other, person)
    emu.commands.scopes.pop(guild.id, None)


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
        reach_further(emu, self.guild)
        self._trimming = False
        self._write_lock = threading.Lock()
        self._generation = 0
        self._written = 0
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
    def other(self) -> Guild:
        """The server that never added the bot."""
        return next(g for g in self.emu.guilds.values() if g.name == OTHER_SERVER_NAME)

    def places(self, viewer: User | None) -> list[Channel]:
        """The channels the page lists for ``viewer``: the server's, the second server's,
        then their DM with the bot and the group DMs they are in (no viewer: the servers')."""
        shown = [*self.guild.channels, *self.other.channels]
        if viewer is None:
            return shown
        shown.append(self.emu.dm_channel(viewer))
        return shown + [
            c
            for c in self.emu.channels.values()
            if c.type is ChannelType.GROUP_DM and self.emu.can_view(viewer, c)
        ]

    def shows(self, channel: Channel, viewer: User) -> bool:
        """Whether the page shows ``channel`` to ``viewer`` (else it is "unknown")."""
        return channel in self.places(viewer)

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
        """Trim and save soon (a burst of changes: one trim, one write). Trimming waits for
        the loop's next turn: the emulator may be walking a list it would shorten."""
        loop = asyncio.get_running_loop()
        if not self._trimming:
            self._trimming = True
            loop.call_soon(self.trim)
        if self._save_task is None or self._save_task.done():
            self._save_task = loop.create_task(self._save_later())

    def trim(self) -> None:
        self._trimming = False
        trim(self.emu, messages_per_channel=MESSAGES_KEPT, records=RECORDS_KEPT)

    async def _save_later(self) -> None:
        await asyncio.sleep(SAVE_DELAY)
        await self.save_in_thread()

    def _serialise(self) -> tuple[int, str]:
        state: dict[str, Any] = {
            "emulator": persist.snapshot(self.emu),
            "reads": self.reads.to_json(),
        }
        self._generation += 1
        return self._generation, json.dumps(state, ensure_ascii=False)

    def _write(self, generation: int, text: str) -> None:
        """Write ``text`` unless a newer state is already on disk (a late thread loses)."""
        with self._write_lock:
            if generation <= self._written:
                return
            temporary = self.path.with_name(self.path.name + ".tmp")
            temporary.write_text(text, encoding="utf-8")
            os.replace(temporary, self.path)
            self._written = generation

    async def save_in_thread(self) -> None:
        """The world as it is now, written without blocking the event loop."""
        await asyncio.to_thread(self._write, *self._serialise())

    def save(self) -> None:
        self._write(*self._serialise())

    async def close(self) -> None:
        if self._save_task is not None and not self._save_task.done():
            self._save_task.cancel()
        self.save()
