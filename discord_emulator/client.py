"""What a Discord client shows a user of the bot's commands, and the user context menu.

The client lists the commands a member may use where they are (contexts, default member
permissions, Use Application Commands), in their client language; right-clicking a
member offers the bot's USER commands under Apps, and choosing one sends an interaction
whose ``target_id`` is that member.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .commands import _Resolver, check_command_access
from .errors import UserActionError
from .interactions import InteractionHandle, InteractionType
from .locales import localized_view

if TYPE_CHECKING:
    from .emulator import Emulator
    from .world import Channel, User

__all__ = ["CHAT_INPUT", "MESSAGE", "USER", "offered_commands", "run_user_command"]

CHAT_INPUT, USER, MESSAGE = 1, 2, 3


def offered_commands(
    emu: Emulator, user: User, channel: Channel, *, kind: int = CHAT_INPUT
) -> list[dict[str, Any]]:
    """The commands of type ``kind`` that ``user``'s client offers in ``channel``, as
    ``GET .../commands`` answers them for the user's locale (``name_localized`` and
    ``description_localized`` beside the default names, on options and choices too).
    A guild command hides a global one of the same name, as in the client."""
    guild = channel.guild
    scopes: list[int | None] = [guild.id, None] if guild is not None else [None]
    seen: set[str] = set()
    offered: list[dict[str, Any]] = []
    for scope in scopes:
        for command in emu.commands.scopes.get(scope, []):
            if command["type"] != kind or command["name"] in seen:
                continue
            seen.add(command["name"])
            try:
                check_command_access(command, guild=guild, user=user)
            except UserActionError:
                continue
            offered.append(localized_view(command, emu.locale_of(user)))
    return sorted(offered, key=lambda c: c.get("name_localized") or c["name"])


async def run_user_command(
    emu: Emulator, user: User, channel: Channel, name: str, target: User
) -> InteractionHandle:
    """``user`` right-clicks ``target`` in ``channel`` and picks the USER command ``name``
    (its default name) under Apps. Raises :class:`UserActionError` as the client would."""
    guild = channel.guild
    if not emu.can_view(user, channel):
        raise UserActionError(f"{user.name} cannot see #{channel.name}")
    if guild is not None and emu.bot.id not in guild.members:
        raise UserActionError(f"the bot is not in {guild.name}")
    command = emu.commands.find(name, guild.id if guild else None, kind=USER)
    if command is None:
        raise UserActionError(f"no user command {name!r} for {user.name} here")
    check_command_access(command, guild=guild, user=user)
    resolver = _Resolver(guild=guild, resolved={})
    resolver.user(target)
    data: dict[str, Any] = {
        "id": command["id"],
        "name": command["name"],
        "type": USER,
        "target_id": str(target.id),
        "resolved": resolver.resolved,
    }
    if "guild_id" in command:
        data["guild_id"] = command["guild_id"]
    return await emu.send_raw_interaction(
        user, channel, type=int(InteractionType.APPLICATION_COMMAND), data=data
    )
