"""The gateway protocol's numbers and records: opcodes, intents, and a logged frame."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Literal

__all__ = ["GatewayFrame", "GatewayOp", "Intent"]


class GatewayOp(IntEnum):
    DISPATCH = 0
    HEARTBEAT = 1
    IDENTIFY = 2
    PRESENCE_UPDATE = 3
    VOICE_STATE_UPDATE = 4
    RESUME = 6
    RECONNECT = 7
    REQUEST_GUILD_MEMBERS = 8
    INVALID_SESSION = 9
    HELLO = 10
    HEARTBEAT_ACK = 11


class Intent(IntEnum):
    GUILDS = 1 << 0
    GUILD_MEMBERS = 1 << 1
    GUILD_MESSAGES = 1 << 9
    DIRECT_MESSAGES = 1 << 12
    MESSAGE_CONTENT = 1 << 15


@dataclass(frozen=True)
class GatewayFrame:
    """One gateway payload, as sent to the bot (``"out"``) or received from it (``"in"``)."""

    direction: Literal["in", "out"]
    op: int
    t: str | None
    s: int | None
    d: Any
    session_id: str | None
