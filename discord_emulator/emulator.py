"""The :class:`Emulator`: the facade people use. It wires a :class:`World` to the gateway,
the REST API and the interaction registry, and offers the test-side actions: building the
world, acting as users, waiting for the bot, injecting faults, moving the clock."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, Self

from . import client
from .commands import CommandRegistry
from .dispatch import Dispatcher
from .entities import Channel, Guild, Message, User
from .events import Event
from .faults import Faults
from .gateway import Gateway
from .installs import interaction_owners
from .interactions import InteractionHandle, Interactions, InteractionType
from .messages import parse_message_payload
from .observations import Observer
from .posting import Poster
from .protocol import GatewayFrame
from .ratelimits import Limits, RateLimiter
from .rest import RestApi
from .server import ApiServer, RecordedRequest, Router
from .shards import (
    DEFAULT_MAX_GUILDS_PER_SHARD,
    GUILDS_PER_RECOMMENDED_SHARD,
    SessionStartLimit,
    shard_for,
)
from .waiting import Changes
from .webhooks import InteractionApi
from .world import World

__all__ = ["Emulator"]


class Emulator(World, Faults):
    """A small Discord: REST API v10 and gateway on 127.0.0.1, plus the test-side actions.

    Build the world (guilds, channels, users) before or after :meth:`start`; point the bot at
    :attr:`api_base` and :attr:`gateway_url` with :attr:`bot_token`. ``ack_deadline`` is how long
    the bot has to acknowledge an interaction (3 s on Discord) and ``token_lifetime`` how long
    an interaction token stays valid for webhook calls (15 minutes), both on :attr:`clock`.
    ``locale`` is the client language of users who have none of their own (``add_user``).
    ``heartbeat_interval`` is HELLO's (Discord's: 41.25 s) and ``round_trip`` how long a
    HEARTBEAT_ACK takes to come back (a network's round trip; see gateway.py).
    Every ``wait_*`` helper gives up with :class:`TimeoutError` after ``wait_timeout`` seconds
    (wrap it in ``asyncio.timeout`` for a tighter bound).

    Sharding: ``/gateway/bot`` recommends ``shards`` (default: one per 1,000 of the bot's
    guilds, and never fewer than ``max_guilds_per_shard`` allows) and reports a
    ``session_start_limit`` of ``session_start_total`` and ``max_concurrency``. An IDENTIFY
    whose session would get more than ``max_guilds_per_shard`` guilds is closed with 4011.

    ``install_types`` are the app's installation contexts: 0 server installs, 1 user
    installs (``add_user_install``); see the README's "Installs, DMs, group DMs".

    Rate limits (``limits``, on unless ``Limits.off()``): per-route buckets, the global limit,
    the invalid-request ban, all on :attr:`clock`; :attr:`rate_limits` holds their counts.

    To watch it without reaching in: ``subscribers`` get each change of the world as a
    typed event (events.py), ``listeners`` are called after every change of any kind, and
    ``observers`` get the timed moments of an interaction's way (observations.py).

    The world-building methods (``add_guild``, ``add_user``...) are :class:`World`'s, the
    fault injection (``fail_requests``, ``disconnected``...) is :class:`Faults`'.
    """

    def __init__(
        self,
        *,
        ack_deadline: float = 3.0,
        token_lifetime: float = 15 * 60.0,
        heartbeat_interval: float = 41.25,
        round_trip: float = 0.04,
        bot_name: str = "TestBot",
        host: str = "127.0.0.1",
        port: int = 0,
        locale: str = "en-US",
        wait_timeout: float = 10.0,
        shards: int | None = None,
        max_guilds_per_shard: int = DEFAULT_MAX_GUILDS_PER_SHARD,
        max_concurrency: int = 1,
        session_start_total: int = 1000,
        limits: Limits | None = None,
        install_types: Iterable[int] = (0,),
    ) -> None:
        super().__init__(bot_name=bot_name, locale=locale)
        self.install_types = set(install_types)
        if shards is not None and shards < 1:
            raise ValueError("shards must be at least 1")
        self.shards = shards
        self.session_start_limit = SessionStartLimit(
            total=session_start_total, max_concurrency=max_concurrency
        )
        self.host = host
        self._port = port
        self.commands = CommandRegistry(
            self.application_id, self.snowflakes.next, lambda: self.install_types
        )
        self.command_syncs = 0
        self.changes = Changes(wait_timeout)
        self.listeners = self.changes.listeners
        """Called (with no arguments) after every change, e.g. to push updates to a page."""
        self.observers: list[Observer] = []
        """Called with each :data:`~discord_emulator.observations.Observation`: the moments
        an interaction passes through the emulator, for a bench to time."""
        changed = self.changes.notify
        self.interaction_registry = Interactions(
            self,
            ack_deadline=ack_deadline,
            token_lifetime=token_lifetime,
            changed=changed,
            wait_for=self.wait_for,
            observers=self.observers,
        )
        self.interactions = self.interaction_registry.by_id
        self.gateway = Gateway(
            check_token=lambda token: token == self.bot_token,
            ready=lambda session: self.dispatcher.ready(session),
            guilds=lambda session: self.dispatcher.guild_creates(session),
            guild_ids=lambda: (g.id for g in self.bot_guilds()),
            started=lambda _session: self.session_start_limit.record(self.clock.now()),
            changed=changed,
            heartbeat_interval=heartbeat_interval,
            max_guilds_per_shard=max_guilds_per_shard,
            round_trip=round_trip,
            observers=self.observers,
        )
        self.dispatcher = Dispatcher(self, self.gateway, lambda: self.gateway_url)
        self.subscribers.append(self._world_event)
        self.poster = Poster(self, lambda: f"http://{self.host}:{self.server.port}")
        router = Router()
        RestApi(self, self.poster, self.interaction_registry, self).register(router)
        InteractionApi(self, self.poster, self.interaction_registry).register(router)
        self.rate_limits = RateLimiter(
            limits if limits is not None else Limits(),
            now=self.clock.now,
            wall=lambda: self.clock.utcnow().timestamp(),
        )
        self.server = ApiServer(
            router=router,
            gateway=self.gateway.handle,
            check_auth=lambda header: header == f"Bot {self.bot_token}",
            changed=changed,
            limiter=self.rate_limits,
            observers=self.observers,
        )

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> Self:
        """Bind ``host`` (a free port unless one was given) and start serving."""
        await self.server.start(self.host, self._port)
        return self

    async def stop(self) -> None:
        await self.gateway.close_all()
        await self.server.stop()
        self.interaction_registry.close()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def ack_deadline(self) -> float:
        """Seconds the bot has to acknowledge an interaction (on :attr:`clock`)."""
        return self.interaction_registry.ack_deadline

    @ack_deadline.setter
    def ack_deadline(self, seconds: float) -> None:
        self.interaction_registry.ack_deadline = seconds

    @property
    def token_lifetime(self) -> float:
        """Seconds an interaction token works for webhook calls (on :attr:`clock`)."""
        return self.interaction_registry.token_lifetime

    @token_lifetime.setter
    def token_lifetime(self, seconds: float) -> None:
        self.interaction_registry.token_lifetime = seconds

    @property
    def wait_timeout(self) -> float:
        return self.changes.timeout

    @wait_timeout.setter
    def wait_timeout(self, seconds: float) -> None:
        self.changes.timeout = seconds

    @property
    def port(self) -> int:
        if self.server.port is None:
            raise RuntimeError("the emulator is not started")
        return self.server.port

    @property
    def api_base(self) -> str:
        """Use as ``discord.http.Route.BASE``."""
        return f"http://{self.host}:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        """Use as ``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`` (as a ``yarl.URL``)."""
        return f"ws://{self.host}:{self.port}/gateway"

    # -- records ---------------------------------------------------------------------------

    @property
    def recommended_shards(self) -> int:
        """The ``shards`` that ``/gateway/bot`` answers."""
        if self.shards is not None:
            return self.shards
        per_shard = min(GUILDS_PER_RECOMMENDED_SHARD, self.gateway.max_guilds_per_shard)
        return max(1, -(-len(self.bot_guilds()) // per_shard))

    def shard_of(self, guild: Guild, shard_count: int) -> int:
        """The shard that gets ``guild``'s events when the bot runs ``shard_count`` shards."""
        return shard_for(guild.id, shard_count)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every REST request, in arrival order."""
        return self.server.requests

    @property
    def unrouted(self) -> list[RecordedRequest]:
        """Requests no route matched (answered 404 ``{"code": 0}``); should stay empty."""
        return self.server.unrouted

    @property
    def gateway_log(self) -> list[GatewayFrame]:
        """Every gateway payload sent to (``"out"``) or received from (``"in"``) the bot."""
        return self.gateway.frames

    def dispatched(self, event: str) -> list[Any]:
        """The ``d`` of every dispatch named ``event`` sent to the bot, replays included."""
        return [f.d for f in self.gateway.frames if f.direction == "out" and f.t == event]

    @property
    def failed_interactions(self) -> list[InteractionHandle]:
        return [handle for handle in self.interactions.values() if handle.failed]

    # -- waiting ---------------------------------------------------------------------------

    def _world_event(self, event: Event) -> None:
        self.dispatcher.on_event(event)
        self.changes.notify()

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds. It is re-checked after every emulator change and
        every 50 ms, so it may also look at the bot's side."""
        await self.changes.wait_for(predicate)

    async def wait_for_ready(self) -> None:
        """Wait until the bot has a live gateway session (READY or RESUMED sent)."""
        await self.wait_for(lambda: self.gateway.connected)

    async def wait_for_shards(
        self, shard_count: int, shard_ids: Iterable[int] | None = None
    ) -> None:
        """Wait until each of ``shard_ids`` (default: all of ``shard_count``) has a live session
        identified with ``[shard_id, shard_count]``."""
        wanted = set(range(shard_count) if shard_ids is None else shard_ids)

        def up() -> bool:
            live = {
                s.shard_id for s in self.gateway.live_sessions() if s.shard_count == shard_count
            }
            return wanted <= live

        await self.wait_for(up)

    async def wait_for_commands(
        self, *names: str, guild: Guild | None = None
    ) -> list[dict[str, Any]]:
        """Wait until the bot synced commands for a scope (global unless ``guild``), including
        every name in ``names`` if any are given; returns that scope's commands."""
        scope = None if guild is None else guild.id

        def synced() -> bool:
            if scope not in self.commands.scopes:
                return False
            present = {c["name"] for c in self.commands.scopes[scope]}
            return all(name in present for name in names)

        await self.wait_for(synced)
        return self.commands.list(scope)

    async def wait_for_message(
        self,
        channel: Channel,
        predicate: Callable[[Message], bool] | None = None,
        *,
        viewer: User | None = None,
        after: Message | int | None = None,
    ) -> Message:
        """Wait for a message in ``channel`` (newer than ``after``) matching ``predicate``."""
        floor = after.id if isinstance(after, Message) else (after or 0)
        found: list[Message] = []

        def check() -> bool:
            for message in reversed(self.messages(channel, viewer=viewer)):
                if message.id > floor and (predicate is None or predicate(message)):
                    found.append(message)
                    return True
            return False

        await self.wait_for(check)
        return found[-1]

    # -- user actions ------------------------------------------------------------------------

    async def run_command(
        self, user: User, channel: Channel, name: str, /, **options: Any
    ) -> InteractionHandle:
        """``user`` runs ``/name`` (``"game start"`` for subcommands) in ``channel``.

        ``name`` and option names are the default (unlocalized) ones, whatever ``user``'s
        locale: Discord sends those in the interaction, and the user's ``locale`` beside them.
        Options are checked against what the bot synced, as the Discord client does; users and
        members go in as :class:`User`, roles as :class:`Role`, channels as :class:`Channel`.
        Raises :class:`UserActionError` for anything the client would refuse.
        """
        data = client.command_data(self, user, channel, name, options)
        return self._new_interaction(user, channel, InteractionType.APPLICATION_COMMAND, data, None)

    async def run_user_command(
        self, user: User, channel: Channel, name: str, target: User
    ) -> InteractionHandle:
        """``user``, in ``channel``, opens ``target``'s member menu and picks Apps > ``name``
        (a user command, by its default name). The client offers only what was synced for
        user commands (type 2), and in a server only on its members."""
        data = client.user_command_data(self, user, channel, name, target)
        return self._new_interaction(user, channel, InteractionType.APPLICATION_COMMAND, data, None)

    async def click(
        self,
        user: User,
        message: Message | int,
        *,
        custom_id: str | None = None,
        row: int | None = None,
        col: int | None = None,
        index: int | None = None,
        label: str | None = None,
    ) -> InteractionHandle:
        """``user`` clicks a button, chosen by ``custom_id``, ``row``+``col``, ``index`` (document
        order) or ``label``. Refuses disabled, link and missing buttons, and messages the user
        cannot see (someone else's ephemeral message)."""
        data, current = client.click_data(
            self, user, message, custom_id=custom_id, row=row, col=col, index=index, label=label
        )
        return self._new_interaction(
            user, current.channel, InteractionType.MESSAGE_COMPONENT, data, current
        )

    async def send_raw_interaction(
        self,
        user: User,
        channel: Channel,
        *,
        type: int,
        data: dict[str, Any],
        message: Message | None = None,
        overrides: dict[str, Any] | None = None,
        shard: int | None = None,
    ) -> InteractionHandle:
        """Send an interaction without any client-side checks (forged ids, foreign guilds...).

        ``overrides`` replaces top-level envelope keys; a ``None`` value removes the key.
        ``shard`` delivers it to the sessions holding that shard id instead of the one the
        sharding formula picks (Discord never does: a forged delivery, e.g. for races).
        """
        return self._new_interaction(
            user, channel, InteractionType(type), data, message, overrides, shard
        )

    async def send_message(
        self, user: User, channel: Channel, content: str, **fields: Any
    ) -> Message:
        """``user`` posts a plain message (the bot gets MESSAGE_CREATE, intents permitting).

        ``fields`` are more message payload keys, e.g. ``message_reference`` for a reply."""
        client.check_post(self, user, channel)
        draft = parse_message_payload({"content": content, **fields})
        return self.poster.post(channel, user, draft)

    def delete_message(self, user: User, message: Message) -> None:
        """``user`` deletes ``message``: their own, or anyone's with Manage Messages (the bot
        gets MESSAGE_DELETE, intents permitting)."""
        client.check_delete(user, message)
        self.poster.delete(message)

    def _new_interaction(
        self,
        user: User,
        channel: Channel,
        kind: InteractionType,
        data: dict[str, Any],
        message: Message | None,
        overrides: dict[str, Any] | None = None,
        shard: int | None = None,
    ) -> InteractionHandle:
        command = self.commands.by_id(data.get("id")) if message is None else None
        owners = interaction_owners(self, user, channel, command, message)
        handle = self.interaction_registry.open(
            user, channel, kind, data, message, overrides, owners
        )
        self.dispatch_event("INTERACTION_CREATE", handle.payload, shard=shard)
        self.changes.notify()
        return handle

    # -- the clock ------------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        """Move the emulator clock forward (interaction deadlines and token lifetimes)."""
        self.clock.advance(seconds)
        self.interaction_registry.expire_late()
