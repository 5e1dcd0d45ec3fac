"""Where each command belongs, said once for every command (``anywhere``, ``server_only``).

Discord offers a command where both its installs (``integration_types``) and its
contexts allow; a command left unset would follow the app's installation settings, so
every command of the bot carries one of these two.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from discord import app_commands

__all__ = ["anywhere", "server_only"]

T = TypeVar("T")


def anywhere(command: T) -> T:
    """Installable to servers and to users; usable in servers, the bot's DM and other
    DMs and group DMs (contexts 0, 1, 2)."""
    installs: Callable[[T], T] = app_commands.allowed_installs(guilds=True, users=True)
    contexts: Callable[[T], T] = app_commands.allowed_contexts(
        guilds=True, dms=True, private_channels=True
    )
    return installs(contexts(command))


def server_only(command: T) -> T:
    """Only where a server added the bot: server install, server context."""
    installs: Callable[[T], T] = app_commands.allowed_installs(guilds=True, users=False)
    contexts: Callable[[T], T] = app_commands.allowed_contexts(
        guilds=True, dms=False, private_channels=False
    )
    return installs(contexts(command))
