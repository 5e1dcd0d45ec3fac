"""Where an app's commands reach: its installations and the interaction contexts.

An app is installed to servers (integration type 0, GUILD_INSTALL) and, if it offers it, to
users' accounts (type 1, USER_INSTALL). A command says where it is available
(``integration_types``) and where it may be used (``contexts``: 0 GUILD, 1 BOT_DM,
2 PRIVATE_CHANNEL). Discord's rules (docs: Application Commands -> Contexts; Interactions ->
Interaction Object; Permissions):

- ``integration_types`` left unset takes the app's installation contexts when synced
  (commands.py); ``contexts`` left unset (null) means a server or the bot's DM, never a
  private channel, and without the bot's DM if ``dm_permission`` is false;
- a command runs only where one of its installations authorizes it: a server install where
  the bot is a member (or the bot's own DM), a user install of the member running it;
- ``authorizing_integration_owners`` names them: ``{"0": guild_id}`` (``"0"`` in the bot's
  DM), ``{"1": user_id}``, both where both apply; a component click carries those of the
  interaction whose message it is on;
- where only a user install applies, in a server a member without Use External Apps gets
  private answers only, and an interaction takes at most 5 follow-ups (webhooks.py).
"""

from __future__ import annotations

from typing import Any, Protocol

from .entities import Channel, Message, User
from .errors import UserActionError
from .flags import (
    ALL_PERMISSIONS,
    DM_APP_PERMISSIONS,
    PRIVATE_APP_PERMISSIONS,
    Permission,
)


class Installs(Protocol):
    """What these rules read of the world: the bot, and who installed the app."""

    bot: User
    user_installs: set[int]


__all__ = [
    "BOT_DM",
    "GUILD",
    "GUILD_INSTALL",
    "PRIVATE_CHANNEL",
    "USER_INSTALL",
    "Installs",
    "app_permissions",
    "check_command_access",
    "command_owners",
    "component_owners",
    "context_of",
    "forced_ephemeral",
    "interaction_owners",
    "user_install_only",
]

GUILD_INSTALL, USER_INSTALL = 0, 1
GUILD, BOT_DM, PRIVATE_CHANNEL = 0, 1, 2


def context_of(channel: Channel) -> int:
    """The interaction context of ``channel``: a server's, the bot's DM, or a private one."""
    if channel.guild is not None:
        return GUILD
    return BOT_DM if channel.is_bot_dm else PRIVATE_CHANNEL


def allowed_contexts(command: dict[str, Any]) -> set[int]:
    """Where ``command`` may be used: its ``contexts``, or when unset a server and (unless
    ``dm_permission`` is false) the bot's DM."""
    contexts = command.get("contexts")
    if contexts is not None:
        return {int(c) for c in contexts}
    return {GUILD} if command.get("dm_permission") is False else {GUILD, BOT_DM}


def command_owners(
    world: Installs, user: User, channel: Channel, command: dict[str, Any]
) -> dict[str, str]:
    """The installations that authorize ``user`` running ``command`` in ``channel`` (empty:
    none does, and the client does not offer it)."""
    types = {int(t) for t in command.get("integration_types") or [GUILD_INSTALL]}
    if "guild_id" in command:  # a guild command: that server's install only
        types = {GUILD_INSTALL}
    owners: dict[str, str] = {}
    guild = channel.guild
    if GUILD_INSTALL in types:
        if guild is not None and world.bot.id in guild.members:
            owners[str(GUILD_INSTALL)] = str(guild.id)
        elif channel.is_bot_dm:
            owners[str(GUILD_INSTALL)] = "0"
    if USER_INSTALL in types and user.id in world.user_installs:
        owners[str(USER_INSTALL)] = str(user.id)
    return owners


def component_owners(world: Installs, message: Message) -> dict[str, str]:
    """The ``authorizing_integration_owners`` of a click on ``message``: those of the
    interaction it answers, else of the bot's presence where it was posted."""
    meta = message.interaction_metadata
    if meta is not None and meta.get("authorizing_integration_owners"):
        return dict(meta["authorizing_integration_owners"])
    guild = message.channel.guild
    if guild is not None:
        return {str(GUILD_INSTALL): str(guild.id)}
    return {str(GUILD_INSTALL): "0"}


def interaction_owners(
    world: Installs,
    user: User,
    channel: Channel,
    command: dict[str, Any] | None,
    message: Message | None,
) -> dict[str, str]:
    """The ``authorizing_integration_owners`` of an interaction: a click's from its message,
    a command's from its installations; for a forged one naming no synced command, whatever
    is installed there."""
    if message is not None:
        return component_owners(world, message)
    if command is not None:
        return command_owners(world, user, channel, command)
    guessed = {"integration_types": [GUILD_INSTALL, USER_INSTALL], "name": "?"}
    owners = command_owners(world, user, channel, guessed)
    if not owners and channel.guild is not None:  # forged from a server: say it is its
        owners[str(GUILD_INSTALL)] = str(channel.guild.id)
    return owners


def user_install_only(owners: dict[str, str]) -> bool:
    return set(owners) == {str(USER_INSTALL)}


def forced_ephemeral(world: Installs, user: User, channel: Channel, owners: dict[str, str]) -> bool:
    """Whether Discord makes every answer private: in a server, where only a user install
    applies and ``user`` lacks Use External Apps (docs: Permissions, USE_EXTERNAL_APPS)."""
    guild = channel.guild
    if guild is None or not user_install_only(owners):
        return False
    return not guild.permissions_of(user) & Permission.USE_EXTERNAL_APPS


def app_permissions(world: Installs, channel: Channel, owners: dict[str, str]) -> int:
    """The ``app_permissions`` of an interaction: the bot's in a server it is in; in the
    bot's DM, the DM set; in a private channel, Attach Files, Embed Links and Mention
    Everyone; in a server without the bot, what @everyone may do there."""
    guild = channel.guild
    if guild is not None:
        if world.bot.id in guild.members:
            return guild.permissions_of(world.bot)
        return guild.everyone.permissions & ALL_PERMISSIONS
    return DM_APP_PERMISSIONS if channel.is_bot_dm else PRIVATE_APP_PERMISSIONS


def check_command_access(
    world: Installs, command: dict[str, Any], *, channel: Channel, user: User
) -> dict[str, str]:
    """Refuse a command the client would not offer ``user`` in ``channel`` (its contexts,
    its installations, default member permissions, Use Application Commands); returns the
    installations that authorize it."""
    name = command["name"]
    context = context_of(channel)
    if context not in allowed_contexts(command):
        where = {GUILD: "a server", BOT_DM: "the bot's DM", PRIVATE_CHANNEL: "a private channel"}
        raise UserActionError(f"/{name} cannot be used in {where[context]}")
    owners = command_owners(world, user, channel, command)
    if not owners:
        raise UserActionError(
            f"/{name} is not installed where {user.name} is (integration types"
            f" {command.get('integration_types')}, user install: {user.id in world.user_installs})"
        )
    guild = channel.guild
    if guild is None:
        return owners
    required = command.get("default_member_permissions")
    if required is not None:
        needed = int(required)
        have = guild.permissions_of(user)
        if (needed == 0 and have != ALL_PERMISSIONS) or (have & needed) != needed:
            raise UserActionError(f"{user.name} lacks the permissions /{name} requires")
    if not guild.permissions_of(user) & Permission.USE_APPLICATION_COMMANDS:
        raise UserActionError(f"{user.name} may not use application commands here")
    return owners
