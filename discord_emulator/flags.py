"""Discord's numbers: permission bits and their defaults, message flags, channel types."""

from __future__ import annotations

from enum import IntEnum, IntFlag

__all__ = [
    "ALL_PERMISSIONS",
    "DEFAULT_BOT_PERMISSIONS",
    "DEFAULT_EVERYONE_PERMISSIONS",
    "DM_APP_PERMISSIONS",
    "PRIVATE_APP_PERMISSIONS",
    "ChannelType",
    "MessageFlag",
    "Permission",
]


class Permission(IntFlag):
    """The permission bits the emulator looks at (any other bit may still be set and is kept)."""

    CREATE_INSTANT_INVITE = 1 << 0
    KICK_MEMBERS = 1 << 1
    BAN_MEMBERS = 1 << 2
    ADMINISTRATOR = 1 << 3
    MANAGE_CHANNELS = 1 << 4
    MANAGE_GUILD = 1 << 5
    ADD_REACTIONS = 1 << 6
    VIEW_CHANNEL = 1 << 10
    SEND_MESSAGES = 1 << 11
    MANAGE_MESSAGES = 1 << 13
    EMBED_LINKS = 1 << 14
    ATTACH_FILES = 1 << 15
    READ_MESSAGE_HISTORY = 1 << 16
    MENTION_EVERYONE = 1 << 17
    USE_EXTERNAL_EMOJIS = 1 << 18
    MANAGE_ROLES = 1 << 28
    USE_APPLICATION_COMMANDS = 1 << 31
    MANAGE_THREADS = 1 << 34  # also: view every private thread
    CREATE_PUBLIC_THREADS = 1 << 35
    CREATE_PRIVATE_THREADS = 1 << 36
    SEND_MESSAGES_IN_THREADS = 1 << 38  # what a thread asks instead of SEND_MESSAGES
    USE_EXTERNAL_APPS = 1 << 50  # off: a user-installed app's answers are forced ephemeral


ALL_PERMISSIONS = (1 << 51) - 1
DEFAULT_EVERYONE_PERMISSIONS = int(
    Permission.VIEW_CHANNEL
    | Permission.SEND_MESSAGES
    | Permission.READ_MESSAGE_HISTORY
    | Permission.ADD_REACTIONS
    | Permission.EMBED_LINKS
    | Permission.ATTACH_FILES
    | Permission.USE_EXTERNAL_EMOJIS
    | Permission.USE_APPLICATION_COMMANDS
    | Permission.USE_EXTERNAL_APPS
    | Permission.CREATE_PUBLIC_THREADS
    | Permission.CREATE_PRIVATE_THREADS
    | Permission.SEND_MESSAGES_IN_THREADS
)
DEFAULT_BOT_PERMISSIONS = DEFAULT_EVERYONE_PERMISSIONS
# What Discord reports as the app's permissions in a DM with the bot.
DM_APP_PERMISSIONS = DEFAULT_EVERYONE_PERMISSIONS
# What Discord reports in a DM between users or a group DM (docs: Interaction Object,
# app_permissions): Attach Files, Embed Links and Mention Everyone.
PRIVATE_APP_PERMISSIONS = int(
    Permission.ATTACH_FILES | Permission.EMBED_LINKS | Permission.MENTION_EVERYONE
)


class MessageFlag(IntFlag):
    CROSSPOSTED = 1 << 0
    SUPPRESS_EMBEDS = 1 << 2
    EPHEMERAL = 1 << 6
    LOADING = 1 << 7
    SUPPRESS_NOTIFICATIONS = 1 << 12
    IS_COMPONENTS_V2 = 1 << 15


class ChannelType(IntEnum):
    GUILD_TEXT = 0
    DM = 1
    GROUP_DM = 3
    PUBLIC_THREAD = 11
    PRIVATE_THREAD = 12
