"""What a user's Discord client does: the commands it offers, the interaction ``data`` it
builds for a command, the user context menu, and the buttons a click can pick.

The client lists the commands a member may use where they are (contexts, default member
permissions, Use Application Commands), in their client language; it refuses what it would
not send (unknown options, wrong types, a disabled button) with :class:`UserActionError` and
fills ``resolved``. Right-clicking a member offers the bot's USER commands under Apps, and
choosing one sends an interaction whose ``target_id`` is that member.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from .commands import MAX_SAFE_INT, CommandRegistry, OptionType
from .entities import Channel, Guild, Member, Message, Role, User
from .errors import UserActionError
from .flags import ALL_PERMISSIONS, Permission
from .installs import check_command_access
from .interactions import InteractionHandle, InteractionType
from .layout import Button, find_button
from .locales import localized_view

__all__ = [
    "CHAT_INPUT",
    "MESSAGE",
    "USER",
    "Resolver",
    "build_command_data",
    "build_user_command_data",
    "check_can_act",
    "check_command_access",
    "check_delete",
    "check_post",
    "choose_button",
    "click_data",
    "command_data",
    "offered_commands",
    "run_user_command",
    "user_command_data",
]


class Discord(Protocol):
    """What the client sees of Discord (the :class:`~discord_emulator.Emulator`)."""

    commands: CommandRegistry
    bot: User
    user_installs: set[int]

    def can_view(self, user: User, channel: Channel) -> bool: ...

    def locale_of(self, user: User) -> str: ...

    def message(self, message_id: int | str) -> Message | None: ...

    async def send_raw_interaction(
        self, user: User, channel: Channel, *, type: int, data: dict[str, Any]
    ) -> InteractionHandle: ...


CHAT_INPUT, USER, MESSAGE = 1, 2, 3


def offered_commands(
    emu: Discord, user: User, channel: Channel, *, kind: int = CHAT_INPUT
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
                check_command_access(emu, command, channel=channel, user=user)
            except UserActionError:
                continue
            offered.append(localized_view(command, emu.locale_of(user)))
    return sorted(offered, key=lambda c: c.get("name_localized") or c["name"])


async def run_user_command(
    emu: Discord, user: User, channel: Channel, name: str, target: User
) -> InteractionHandle:
    """``user`` right-clicks ``target`` in ``channel`` and picks the USER command ``name``
    (its default name) under Apps. Raises :class:`UserActionError` as the client would."""
    guild = channel.guild
    if not emu.can_view(user, channel):
        raise UserActionError(f"{user.name} cannot see #{channel.name}")
    command = emu.commands.find(name, guild.id if guild else None, kind=USER)
    if command is None:
        raise UserActionError(f"no user command {name!r} for {user.name} here")
    check_command_access(emu, command, channel=channel, user=user)
    resolver = Resolver(guild=guild, resolved={})
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


@dataclass
class Resolver:
    """Fills an interaction's ``resolved`` with the users, members, roles and channels its
    options name, as the client sends them."""

    guild: Guild | None
    resolved: dict[str, dict[str, Any]]

    def user(self, user: User) -> None:
        self.resolved.setdefault("users", {})[str(user.id)] = user.to_payload()
        member = self.guild.member(user) if self.guild else None
        if member is not None:
            self.resolved.setdefault("members", {})[str(user.id)] = member.to_payload(
                with_user=False, with_permissions=True
            )

    def role(self, role: Role) -> None:
        self.resolved.setdefault("roles", {})[str(role.id)] = role.to_payload()

    def channel(self, channel: Channel) -> None:
        payload = channel.to_payload()
        payload["permissions"] = str(ALL_PERMISSIONS)
        self.resolved.setdefault("channels", {})[str(channel.id)] = payload


def build_command_data(
    command: dict[str, Any],
    path: list[str],
    values: dict[str, Any],
    *,
    guild: Guild | None,
) -> dict[str, Any]:
    """The ``data`` of an APPLICATION_COMMAND interaction for ``/name path... option=value``.

    Raises :class:`UserActionError` for what the Discord client would refuse.
    """
    resolver = Resolver(guild=guild, resolved={})
    options = command.get("options") or []
    top: list[dict[str, Any]] = []
    holder = top
    walked = [command["name"]]
    for part in path:
        sub = next(
            (o for o in options if o["name"] == part and o["type"] in (1, 2)),
            None,
        )
        if sub is None:
            raise UserActionError(f"/{' '.join(walked)} has no subcommand {part!r}")
        entry: dict[str, Any] = {"type": sub["type"], "name": part, "options": []}
        holder.append(entry)
        holder = entry["options"]
        options = sub.get("options") or []
        walked.append(part)
    if any(o["type"] in (1, 2) for o in options):
        names = ", ".join(o["name"] for o in options)
        raise UserActionError(f"/{' '.join(walked)} needs a subcommand: one of {names}")

    known = {o["name"]: o for o in options}
    for name in values:
        if name not in known:
            raise UserActionError(f"/{' '.join(walked)} has no option {name!r}")
    for option in options:
        name = option["name"]
        if name not in values or values[name] is None:
            if option.get("required"):
                raise UserActionError(f"/{' '.join(walked)}: option {name!r} is required")
            continue
        holder.append(
            {
                "type": option["type"],
                "name": name,
                "value": _convert(option, values[name], resolver),
            }
        )

    data: dict[str, Any] = {"id": command["id"], "name": command["name"], "type": command["type"]}
    if top:
        data["options"] = top
    if resolver.resolved:
        data["resolved"] = resolver.resolved
    if "guild_id" in command:
        data["guild_id"] = command["guild_id"]
    return data


def _convert(option: dict[str, Any], value: Any, resolver: Resolver) -> Any:
    kind = option["type"]
    name = option["name"]

    def refuse(reason: str) -> UserActionError:
        return UserActionError(f"option {name!r}: {reason}")

    if kind == OptionType.STRING:
        if not isinstance(value, str):
            raise refuse(f"expected text, got {value!r}")
        shortest, longest = option.get("min_length", 0), option.get("max_length", 6000)
        if not shortest <= len(value) <= longest:
            raise refuse(f"length {len(value)} is outside {shortest}..{longest}")
    elif kind in (OptionType.INTEGER, OptionType.NUMBER):
        numeric = (int,) if kind == OptionType.INTEGER else (int, float)
        if isinstance(value, bool) or not isinstance(value, numeric):
            wanted = "an integer" if kind == OptionType.INTEGER else "a number"
            raise refuse(f"expected {wanted}, got {value!r}")
        if abs(value) > MAX_SAFE_INT:
            raise refuse("number out of range")
        low, high = option.get("min_value"), option.get("max_value")
        if (low is not None and value < low) or (high is not None and value > high):
            raise refuse(f"{value} is outside {low}..{high}")
    elif kind == OptionType.BOOLEAN:
        if not isinstance(value, bool):
            raise refuse(f"expected True/False, got {value!r}")
    elif kind == OptionType.USER:
        user = value.user if isinstance(value, Member) else value
        if not isinstance(user, User):
            raise refuse(f"expected a user, got {value!r}")
        resolver.user(user)
        return str(user.id)
    elif kind == OptionType.CHANNEL:
        if not isinstance(value, Channel):
            raise refuse(f"expected a channel, got {value!r}")
        allowed_types = option.get("channel_types")
        if allowed_types and int(value.type) not in allowed_types:
            raise refuse(f"channel type {int(value.type)} is not one of {allowed_types}")
        resolver.channel(value)
        return str(value.id)
    elif kind == OptionType.ROLE:
        if not isinstance(value, Role):
            raise refuse(f"expected a role, got {value!r}")
        resolver.role(value)
        return str(value.id)
    elif kind == OptionType.MENTIONABLE:
        target = value.user if isinstance(value, Member) else value
        if isinstance(target, User):
            resolver.user(target)
        elif isinstance(target, Role):
            resolver.role(target)
        else:
            raise refuse(f"expected a user or a role, got {value!r}")
        return str(target.id)
    else:
        raise refuse("attachment options are not supported by the emulator")

    choices = option.get("choices")
    if choices and value not in [choice["value"] for choice in choices]:
        listed = ", ".join(repr(choice["value"]) for choice in choices)
        raise refuse(f"{value!r} is not one of the choices ({listed})")
    return value


def build_user_command_data(
    command: dict[str, Any], target: User, *, guild: Guild | None
) -> dict[str, Any]:
    """The ``data`` of a user command (a member's Apps menu): the target in ``target_id``
    and ``resolved`` (its user, and its member in a guild), as the client sends it."""
    resolver = Resolver(guild=guild, resolved={})
    resolver.user(target)
    return {
        "id": command["id"],
        "name": command["name"],
        "type": command["type"],
        "target_id": str(target.id),
        "resolved": resolver.resolved,
    }


def check_can_act(discord: Discord, user: User, channel: Channel) -> None:
    """Refuse acting in a channel ``user`` cannot see. (Whether the app reaches there is
    each command's installations' business: installs.py.)"""
    if not discord.can_view(user, channel):
        raise UserActionError(f"{user.name} cannot see #{channel.name}")


def choose_button(
    message: Message,
    *,
    custom_id: str | None,
    row: int | None,
    col: int | None,
    index: int | None,
    label: str | None,
) -> Button:
    """The button a click picks, by exactly one of ``custom_id``, ``row``+``col``, ``index``
    (document order) or ``label``."""
    chosen = [
        custom_id is not None,
        row is not None or col is not None,
        index is not None,
        label is not None,
    ]
    if sum(chosen) != 1:
        raise TypeError("choose the button by exactly one of custom_id, row+col, index, label")
    if message.loading:
        raise UserActionError("the message is still loading")
    if custom_id is not None:
        button = find_button(message.components, custom_id)
        if button is None:
            raise UserActionError(f"no such button on message {message.id}")
        return button
    all_buttons = message.buttons()
    if label is not None:
        found = [b for b in all_buttons if b.label == label]
    elif index is not None:
        found = [b for b in all_buttons if b.index == index]
    else:
        if row is None or col is None:
            raise TypeError("row and col go together")
        found = [b for b in all_buttons if b.row == row and b.col == col]
    if not found:
        raise UserActionError(f"no such button on message {message.id}")
    return found[0]


def command_data(
    discord: Discord, user: User, channel: Channel, name: str, options: dict[str, Any]
) -> dict[str, Any]:
    """The ``data`` of ``user`` running ``/name`` (default names) with ``options`` in
    ``channel``, checked against what the bot synced, as the client does."""
    check_can_act(discord, user, channel)
    parts = name.strip().removeprefix("/").split()
    if not parts:
        raise UserActionError("empty command name")
    guild = channel.guild
    command = discord.commands.find(parts[0], guild.id if guild else None)
    if command is None:
        default = discord.commands.default_name_of(
            parts[0], guild.id if guild else None, discord.locale_of(user)
        )
        if default is not None:
            raise UserActionError(
                f"/{parts[0]} is how {user.name} reads /{default}; interactions carry"
                f" default names, so run it as {default!r}"
            )
        raise UserActionError(
            f"/{parts[0]} is not a command {user.name} can see in #{channel.name}"
        )
    check_command_access(discord, command, channel=channel, user=user)
    return build_command_data(command, parts[1:], options, guild=guild)


def user_command_data(
    discord: Discord, user: User, channel: Channel, name: str, target: User
) -> dict[str, Any]:
    """The ``data`` of ``user`` picking Apps > ``name`` on ``target`` in ``channel``: only
    what was synced for user commands (type 2), and in a server only on its members."""
    check_can_act(discord, user, channel)
    guild = channel.guild
    command = discord.commands.find(name, guild.id if guild else None, kind=2)
    if command is None:
        raise UserActionError(f"Apps > {name!r} is not a user command {user.name} can see")
    if guild is not None and guild.member(target) is None:
        raise UserActionError(f"{target.name} is not a member of {guild.name}")
    if guild is None and not discord.can_view(target, channel):
        raise UserActionError(f"{target.name} is not in {channel!r}")
    check_command_access(discord, command, channel=channel, user=user)
    return build_user_command_data(command, target, guild=guild)


def click_data(
    discord: Discord,
    user: User,
    message: Message | int,
    *,
    custom_id: str | None,
    row: int | None,
    col: int | None,
    index: int | None,
    label: str | None,
) -> tuple[dict[str, Any], Message]:
    """The ``data`` of ``user`` clicking a button of ``message``, and that message. Refuses
    disabled, link and missing buttons, and messages the user cannot see."""
    current = message if isinstance(message, Message) else discord.message(message)
    if current is None or current.deleted:
        raise UserActionError("that message does not exist (any more)")
    if not current.visible_for(user):
        raise UserActionError(f"{user.name} cannot see that ephemeral message")
    check_can_act(discord, user, current.channel)
    button = choose_button(current, custom_id=custom_id, row=row, col=col, index=index, label=label)
    if button.disabled:
        raise UserActionError(f"button {button.label or button.custom_id!r} is disabled")
    if not button.clickable:
        raise UserActionError(
            f"button {button.label!r} does not send interactions (link or premium)"
        )
    return {"custom_id": button.custom_id, "component_type": 2}, current


def check_post(discord: Discord, user: User, channel: Channel) -> None:
    """Refuse ``user`` posting in ``channel`` without seeing it or the right to send."""
    if not discord.can_view(user, channel):
        raise UserActionError(f"{user.name} cannot see #{channel.name}")
    guild = channel.guild
    if guild is not None and not guild.permissions_of(user) & channel.send_permission:
        raise UserActionError(f"{user.name} may not send messages in #{channel.name}")


def check_delete(user: User, message: Message) -> None:
    """Refuse ``user`` deleting ``message`` unless it is theirs or they have Manage Messages."""
    guild = message.channel.guild
    if message.deleted or message.ephemeral:
        raise UserActionError(f"{message!r} cannot be deleted")
    if message.author is not user and (
        guild is None or not guild.permissions_of(user) & Permission.MANAGE_MESSAGES
    ):
        raise UserActionError(f"{user.name} may not delete others' messages here")
