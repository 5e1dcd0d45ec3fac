"""A Discord emulator for tests and local play: REST API v10 and gateway on 127.0.0.1.

Run the real discord.py client against it, act as Discord users (run slash commands, click
buttons), and inspect what the bot did::

    async with Emulator() as emu:
        guild = emu.add_guild("Arcade")
        channel = emu.add_text_channel(guild, "games")
        alice = emu.add_user("alice")
        emu.add_member(guild, alice)
        # point discord.py at emu.api_base / emu.gateway_url, start it with emu.bot_token
        await emu.wait_for_ready()
        await emu.wait_for_commands("play")
        handle = await emu.run_command(alice, channel, "play", size=3)
        response = await handle.response()
        click = await emu.click(alice, response.message, row=0, col=0)

Modules, from plain data up to the facade (imports go that way only):

- entities and payloads: ``flags`` (permission bits, message flags, channel types),
  ``clock`` (the test clock, snowflakes), ``entities`` (users, roles, members, guilds,
  channels, messages and their JSON), ``payloads`` (GUILD_CREATE, the guild object, the
  bot's user, thread members), ``components`` (component rules and ids), ``layout``
  (buttons by row and column, a message's text), ``locales`` (locale codes, localizations);
- state and its changes: ``world`` (the :class:`World`: everything that exists, built and
  removed as Discord allows, each change emitted as an event), ``events`` (one frozen
  dataclass per kind of change), ``messages`` (payloads validated into a draft),
  ``mentions`` (who a message pings), ``posting`` (posting, editing and deleting
  messages), ``commands`` (the commands the bot synced), ``installs`` (where a command
  reaches: contexts, installations, forced private answers);
- the gateway: ``protocol`` (opcodes, intents, frames), ``gateway`` (the websocket and its
  sessions), ``shards`` (sharding rules), ``dispatch`` (events turned into dispatches);
- interactions and REST: ``envelope`` (the INTERACTION_CREATE payload), ``interactions``
  (the registry, handles),
  ``server`` (HTTP plumbing, injected faults), ``ratelimits``, ``rest`` (the bot's
  endpoints), ``webhooks`` (the interaction callback and webhook), ``wire`` (JSON),
  ``errors``;
- the facade and the test side: ``emulator`` (:class:`Emulator`: the wiring, records,
  waits and users' actions), ``faults`` (trouble made on purpose), ``client`` (what a
  user's client offers, builds and refuses), ``waiting`` (waiters and listeners),
  ``persist`` (the world saved as JSON and restored), ``retention`` (the oldest
  messages and records forgotten, for a long run), ``observations`` (the timed moments
  of an interaction's way through the emulator, for benches: ``Emulator.observers``).
"""

from .commands import OptionType
from .components import ButtonStyle, ComponentType
from .emulator import Emulator
from .entities import Channel, Guild, Member, Message, Pings, Role, User
from .errors import APIError, UserActionError
from .flags import (
    ALL_PERMISSIONS,
    DEFAULT_BOT_PERMISSIONS,
    DEFAULT_EVERYONE_PERMISSIONS,
    ChannelType,
    MessageFlag,
    Permission,
)
from .gateway import Session
from .interactions import CallbackType, InteractionHandle, InteractionResponse, InteractionType
from .layout import Button
from .locales import DEFAULT_LOCALE, LOCALES
from .observations import (
    FrameWritten,
    InteractionAcknowledged,
    InteractionFailed,
    Observation,
    RequestArrived,
)
from .protocol import GatewayFrame, Intent
from .ratelimits import BucketRule, Limits, RateLimiter
from .retention import trim
from .server import Fault, RecordedRequest
from .shards import shard_for

__all__ = [
    "ALL_PERMISSIONS",
    "DEFAULT_BOT_PERMISSIONS",
    "DEFAULT_EVERYONE_PERMISSIONS",
    "DEFAULT_LOCALE",
    "LOCALES",
    "APIError",
    "BucketRule",
    "Button",
    "ButtonStyle",
    "CallbackType",
    "Channel",
    "ChannelType",
    "ComponentType",
    "Emulator",
    "Fault",
    "FrameWritten",
    "GatewayFrame",
    "Guild",
    "Intent",
    "InteractionAcknowledged",
    "InteractionFailed",
    "InteractionHandle",
    "InteractionResponse",
    "InteractionType",
    "Limits",
    "Member",
    "Message",
    "MessageFlag",
    "Observation",
    "OptionType",
    "Permission",
    "Pings",
    "RateLimiter",
    "RecordedRequest",
    "RequestArrived",
    "Role",
    "Session",
    "User",
    "UserActionError",
    "shard_for",
    "trim",
]
