"""The :class:`Emulator`: a Discord world served over HTTP + gateway, driven by tests."""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Self

from .client import (
    build_command_data,
    build_user_command_data,
    check_can_act,
    check_command_access,
    choose_button,
)
from .commands import CommandRegistry
from .components import assign_ids
from .errors import APIError, UserActionError
from .gateway import Gateway, GatewayFrame, Intent, Session
from .interactions import InteractionHandle, InteractionType, envelope, interaction_metadata
from .mentions import mention_text, resolve_pings
from .messages import Draft, parse_message_payload
from .ratelimits import Limits, RateLimiter
from .rest import RestApi
from .server import ApiServer, Fault, RecordedRequest, Router
from .shards import (
    DEFAULT_MAX_GUILDS_PER_SHARD,
    GUILDS_PER_RECOMMENDED_SHARD,
    SessionStartLimit,
    shard_for,
)
from .wire import copy_json
from .world import (
    Channel,
    Guild,
    Message,
    MessageFlag,
    Permission,
    Pings,
    Role,
    User,
    World,
    iso,
)

__all__ = ["Emulator"]


class Emulator(World):
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

    Rate limits (``limits``, on unless ``Limits.off()``): per-route buckets, the global limit,
    the invalid-request ban, all on :attr:`clock`; :attr:`rate_limits` holds their counts.
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
    ) -> None:
        super().__init__(bot_name=bot_name, locale=locale)
        if shards is not None and shards < 1:
            raise ValueError("shards must be at least 1")
        self.shards = shards
        self.session_start_limit = SessionStartLimit(
            total=session_start_total, max_concurrency=max_concurrency
        )
        self.ack_deadline = ack_deadline
        self.token_lifetime = token_lifetime
        self.wait_timeout = wait_timeout
        self.host = host
        self._port = port
        self.commands = CommandRegistry(self.application_id, self.snowflakes.next)
        self.interactions: dict[int, InteractionHandle] = {}
        self._by_token: dict[str, InteractionHandle] = {}
        self.command_syncs = 0
        self._waiters: list[asyncio.Future[None]] = []
        self.listeners: list[Callable[[], None]] = []
        """Called (with no arguments) after every change, e.g. to push updates to a page."""
        self.gateway = Gateway(
            check_token=lambda token: token == self.bot_token,
            ready=self._ready_payload,
            guilds=self._guild_payloads,
            guild_ids=lambda: (g.id for g in self.bot_guilds()),
            started=lambda _session: self.session_start_limit.record(self.clock.now()),
            changed=self._changed,
            heartbeat_interval=heartbeat_interval,
            max_guilds_per_shard=max_guilds_per_shard,
            round_trip=round_trip,
        )
        router = Router()
        RestApi(self).register(router)
        self.rate_limits = RateLimiter(
            limits if limits is not None else Limits(),
            now=self.clock.now,
            wall=lambda: self.clock.utcnow().timestamp(),
        )
        self.server = ApiServer(
            router=router,
            gateway=self.gateway.handle,
            check_auth=lambda header: header == f"Bot {self.bot_token}",
            changed=self._changed,
            limiter=self.rate_limits,
        )

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> Self:
        """Bind ``host`` (a free port unless one was given) and start serving."""
        await self.server.start(self.host, self._port)
        return self

    async def stop(self) -> None:
        await self.gateway.close_all()
        await self.server.stop()
        for handle in self.interactions.values():
            if handle._timer is not None:
                handle._timer.cancel()

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

    def _changed(self) -> None:
        waiters, self._waiters = self._waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(None)
        for listener in self.listeners:
            listener()

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds. It is re-checked after every emulator change and
        every 50 ms, so it may also look at the bot's side."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait_timeout
        while not predicate():
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"condition not met within {self.wait_timeout} s")
            future: asyncio.Future[None] = loop.create_future()
            self._waiters.append(future)
            try:
                await asyncio.wait([future], timeout=min(remaining, 0.05))
            finally:
                if future in self._waiters:
                    self._waiters.remove(future)

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
        self._check_can_act(user, channel)
        parts = name.strip().removeprefix("/").split()
        if not parts:
            raise UserActionError("empty command name")
        guild = channel.guild
        command = self.commands.find(parts[0], guild.id if guild else None)
        if command is None:
            default = self.commands.default_name_of(
                parts[0], guild.id if guild else None, self.locale_of(user)
            )
            if default is not None:
                raise UserActionError(
                    f"/{parts[0]} is how {user.name} reads /{default}; interactions carry"
                    f" default names, so run it as {default!r}"
                )
            raise UserActionError(
                f"/{parts[0]} is not a command {user.name} can see in #{channel.name}"
            )
        check_command_access(command, guild=guild, user=user)
        data = build_command_data(command, parts[1:], options, guild=guild)
        return self._new_interaction(user, channel, InteractionType.APPLICATION_COMMAND, data, None)

    async def run_user_command(
        self, user: User, channel: Channel, name: str, target: User
    ) -> InteractionHandle:
        """``user``, in ``channel``, opens ``target``'s member menu and picks Apps > ``name``
        (a user command, by its default name). The client offers only what was synced for
        user commands (type 2), and in a server only on its members."""
        self._check_can_act(user, channel)
        guild = channel.guild
        command = self.commands.find(name, guild.id if guild else None, kind=2)
        if command is None:
            raise UserActionError(f"Apps > {name!r} is not a user command {user.name} can see")
        if guild is not None and guild.member(target) is None:
            raise UserActionError(f"{target.name} is not a member of {guild.name}")
        check_command_access(command, guild=guild, user=user)
        data = build_user_command_data(command, target, guild=guild)
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
        current = message if isinstance(message, Message) else self.message(message)
        if current is None or current.deleted:
            raise UserActionError("that message does not exist (any more)")
        if not current.visible_for(user):
            raise UserActionError(f"{user.name} cannot see that ephemeral message")
        self._check_can_act(user, current.channel)
        button = choose_button(
            current, custom_id=custom_id, row=row, col=col, index=index, label=label
        )
        if button.disabled:
            raise UserActionError(f"button {button.label or button.custom_id!r} is disabled")
        if not button.clickable:
            raise UserActionError(
                f"button {button.label!r} does not send interactions (link or premium)"
            )
        data = {"custom_id": button.custom_id, "component_type": 2}
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
        if not self.can_view(user, channel):
            raise UserActionError(f"{user.name} cannot see #{channel.name}")
        guild = channel.guild
        if guild is not None and not guild.permissions_of(user) & channel.send_permission:
            raise UserActionError(f"{user.name} may not send messages in #{channel.name}")
        draft = parse_message_payload({"content": content, **fields})
        return self._post(channel, user, draft)

    def delete_message(self, user: User, message: Message) -> None:
        """``user`` deletes ``message``: their own, or anyone's with Manage Messages (the bot
        gets MESSAGE_DELETE, intents permitting)."""
        channel = message.channel
        guild = channel.guild
        if message.deleted or message.ephemeral:
            raise UserActionError(f"{message!r} cannot be deleted")
        if message.author is not user and (
            guild is None or not guild.permissions_of(user) & Permission.MANAGE_MESSAGES
        ):
            raise UserActionError(f"{user.name} may not delete others' messages here")
        self._delete(message)

    def dispatch_event(self, event: str, data: dict[str, Any], *, shard: int | None = None) -> bool:
        """Send an arbitrary gateway dispatch to the sessions that own ``data["guild_id"]``
        (shard 0 without one), or to those holding ``shard`` when given."""
        if shard is not None:
            return self.gateway.deliver(event, data, shard_id=shard)
        return self.gateway.dispatch(event, data)

    def forge_guild_create(self, guild: Guild, *, shard: int) -> bool:
        """Send ``guild``'s GUILD_CREATE, as a new session would get it, to the sessions
        holding ``shard`` whatever shard the guild is on. Discord never does this: it makes
        a process believe it is in a server of another shard, so that a click forged to it
        (``send_raw_interaction(..., shard=)``) gets past its membership check. Returns
        False when no session holds ``shard``."""
        if self.bot.id not in guild.members:
            raise UserActionError(f"the bot is not in {guild.name}")
        sessions = [
            s for s in self.gateway.sessions.values() if s.resumable and s.shard_id == shard
        ]
        for session in sessions:
            self.gateway.emit(session, "GUILD_CREATE", self._guild_payload(guild, session.intents))
        self._changed()
        return bool(sessions)

    def _check_can_act(self, user: User, channel: Channel) -> None:
        check_can_act(self, user, channel)

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
        interaction_id = self.snowflakes.next()
        token = "emu." + secrets.token_urlsafe(48)
        payload = envelope(
            emulator=self,
            interaction_id=interaction_id,
            token=token,
            type=kind,
            data=data,
            user=user,
            channel=channel,
            message=message,
            locale=self.locale_of(user),
        )
        for key, value in (overrides or {}).items():
            if value is None:
                payload.pop(key, None)
            else:
                payload[key] = value
        handle = InteractionHandle(
            self,
            id=interaction_id,
            token=token,
            type=kind,
            user=user,
            channel=channel,
            payload=payload,
            source_message=message,
            created_at=self.clock.now(),
        )
        self.interactions[interaction_id] = handle
        self._by_token[token] = handle
        handle._arm_deadline(self.ack_deadline)
        self.dispatch_event("INTERACTION_CREATE", payload, shard=shard)
        self._changed()
        return handle

    # -- faults ------------------------------------------------------------------------------

    def fail_requests(
        self, method: str, path: str | re.Pattern[str], *, status: int = 500, times: int = 1
    ) -> Fault:
        """Answer the next ``times`` matching requests with ``status`` (see :class:`Fault`)."""
        return self._add_fault(Fault(method, path, times=times, status=status))

    def rate_limit_requests(
        self,
        method: str,
        path: str | re.Pattern[str],
        *,
        retry_after: float = 0.1,
        times: int = 1,
        is_global: bool = False,
        scope: str = "user",
    ) -> Fault:
        """Answer the next ``times`` matching requests with a well-formed 429 of ``scope``
        (``user`` or ``shared``; ``is_global`` makes it a global one)."""
        return self._add_fault(
            Fault(
                method,
                path,
                times=times,
                status=429,
                retry_after=retry_after,
                is_global=is_global,
                scope=scope,
            )
        )

    def delay_requests(
        self, method: str, path: str | re.Pattern[str], seconds: float, *, times: int = 1
    ) -> Fault:
        """Hold the next ``times`` matching requests ``seconds`` before handling them."""
        return self._add_fault(Fault(method, path, times=times, delay=seconds))

    def _add_fault(self, fault: Fault) -> Fault:
        self.server.faults.append(fault)
        return fault

    def drop_connection(
        self, *, resumable: bool = True, code: int = 4000, shard: int | None = None
    ) -> None:
        """Close the bot's gateway sockets (those of sessions holding ``shard``, or all) with
        ``code``. A resumable drop keeps the session: the client RESUMEs and gets what it missed
        replayed. Otherwise the session is invalidated, its RESUME is answered with
        INVALID_SESSION and it identifies afresh."""
        self.gateway.drop(resumable=resumable, code=code, shard_id=shard)

    @asynccontextmanager
    async def disconnected(
        self, *, resumable: bool = True, shard: int | None = None
    ) -> AsyncIterator[None]:
        """Drop the bot's connections (``shard``'s, or all) and keep new ones out for the block:
        events dispatched inside are buffered (replayed on RESUME) or lost (``resumable=False``).
        On exit the bot is let back in and this waits until it is connected again."""
        self.gateway.hold()
        try:
            self.drop_connection(resumable=resumable, shard=shard)
            await self.wait_for(lambda: not self.gateway.live_sessions(shard))
            yield
        finally:
            self.gateway.release()
        await self.wait_for(lambda: bool(self.gateway.live_sessions(shard)))

    def advance(self, seconds: float) -> None:
        """Move the emulator clock forward (interaction deadlines and token lifetimes)."""
        self.clock.advance(seconds)
        for handle in self.interactions.values():
            if handle.pending:
                handle._expire_if_late()

    # -- core message operations (used by the REST handlers) ---------------------------------

    def _pings_for(
        self,
        channel: Channel,
        author: User,
        message: Message,
        allowed: dict[str, Any] | None,
        replied: int | None,
    ) -> Pings:
        """Who ``message``'s content and Text Displays mention (highlight), by the rules."""
        guild = channel.guild
        return resolve_pings(
            mention_text(message.content, message.components),
            allowed,
            guild=guild,
            author_permissions=guild.permissions_of(author) if guild else 0,
            user_exists=lambda uid: uid in self.users,
            replied_author=replied,
        )

    def _post(
        self,
        channel: Channel,
        author: User,
        draft: Draft,
        *,
        ephemeral_for: User | None = None,
        interaction: InteractionHandle | None = None,
        message_type: int = 0,
    ) -> Message:
        """Store a validated message and tell the bot about it."""
        reference = None
        replied: int | None = None
        if draft.reference is not None:
            target = self.message(draft.reference["message_id"])
            if (
                target is None
                or target.deleted
                or target.channel is not channel
                or target.visible_to is not None
            ):
                if draft.reference.get("fail_if_not_exists", True):
                    raise APIError.invalid_field(
                        ("message_reference",),
                        "MESSAGE_REFERENCE_UNKNOWN_MESSAGE",
                        "Unknown message",
                    )
            else:
                reference = {"type": 0, "message_id": str(target.id), "channel_id": str(channel.id)}
                if channel.guild is not None:
                    reference["guild_id"] = str(channel.guild.id)
                replied = target.author.id
                message_type = 19
        flags = draft.flags & ~MessageFlag.EPHEMERAL
        if ephemeral_for is not None:
            flags |= MessageFlag.EPHEMERAL
        components = copy_json(draft.components)
        assign_ids(components)
        message = Message(
            id=self.snowflakes.next(),
            channel=channel,
            author=author,
            content=draft.content,
            embeds=copy_json(draft.embeds),
            components=components,
            attachments=[self._attachment(f) for f in draft.attachments],
            flags=flags,
            type=message_type,
            tts=draft.tts,
            created_at=self.clock.utcnow(),
            visible_to=ephemeral_for.id if ephemeral_for else None,
            allowed_mentions=draft.allowed_mentions,
            reference=reference,
            nonce=draft.nonce,
        )
        message.mentions = self._pings_for(
            channel, author, message, draft.allowed_mentions, replied
        )
        if not message.ephemeral and not message.loading:
            message.pings = message.mentions
        if interaction is not None:
            message.webhook_id = self.application_id
            message.application_id = self.application_id
            message.interaction_metadata = interaction_metadata(interaction)
        channel.messages.append(message)
        self.message_index[message.id] = message
        if not message.ephemeral:
            self._message_event("MESSAGE_CREATE", message)
        self._changed()
        return message

    def _attachment(self, file: dict[str, Any]) -> dict[str, Any]:
        if "url" in file:
            return file
        attachment_id = str(self.snowflakes.next())
        return {
            "id": attachment_id,
            "filename": file["filename"],
            "size": file["size"],
            "content_type": file.get("content_type"),
            "url": f"http://{self.host}:{self.server.port}/attachments/{attachment_id}/{file['filename']}",
            "proxy_url": f"http://{self.host}:{self.server.port}/attachments/{attachment_id}/{file['filename']}",
        }

    def _edit(self, message: Message, draft: Draft) -> None:
        """Apply a validated edit; filling a deferred "thinking" message counts as posting it."""
        was_loading = message.loading
        components = copy_json(draft.components)
        assign_ids(components)
        message.content = draft.content
        message.embeds = copy_json(draft.embeds)
        message.components = components
        message.attachments = [self._attachment(f) for f in draft.attachments]
        message.flags = draft.flags & ~MessageFlag.LOADING
        message.allowed_mentions = draft.allowed_mentions
        if not was_loading:
            message.edited_at = self.clock.utcnow()
        message.edits += 1
        replied = None
        if message.reference is not None:
            target = self.message(message.reference["message_id"])
            replied = target.author.id if target else None
        message.mentions = self._pings_for(
            message.channel, message.author, message, message.allowed_mentions, replied
        )
        if was_loading and not message.ephemeral:
            message.pings = message.mentions
        if not message.ephemeral:
            self._message_event("MESSAGE_UPDATE", message)
        self._changed()

    def _delete(self, message: Message) -> None:
        message.deleted = True
        if not message.ephemeral:
            data = {"id": str(message.id), "channel_id": str(message.channel.id)}
            if message.guild is not None:
                data["guild_id"] = str(message.guild.id)
            intent = Intent.GUILD_MESSAGES if message.guild else Intent.DIRECT_MESSAGES
            self.gateway.dispatch("MESSAGE_DELETE", data, intent=intent)
        self._changed()

    def _message_event(self, event: str, message: Message) -> None:
        guild = message.guild
        intent = Intent.GUILD_MESSAGES if guild else Intent.DIRECT_MESSAGES
        sessions = self.gateway.targets(guild.id if guild else None, intent)
        if not sessions:
            return  # dropped anyway: do not build it (most bots never ask for messages)
        payload = message.to_payload(self.users)
        member = guild.member(message.author) if guild else None
        if member is not None:
            payload["member"] = member.to_payload(with_user=False)
        privileged = (
            guild is not None
            and message.author is not self.bot
            and self.bot.id not in message.mentions.users
        )
        hidden = {**payload, "content": "", "embeds": [], "attachments": [], "components": []}
        for session in sessions:
            blind = privileged and not session.intents & Intent.MESSAGE_CONTENT
            self.gateway.emit(session, event, hidden if blind else payload)

    # -- gateway payloads --------------------------------------------------------------------

    def bot_guilds(self) -> list[Guild]:
        """The guilds the bot is a member of."""
        return [g for g in self.guilds.values() if self.bot.id in g.members]

    def _ready_payload(self, session: Session) -> dict[str, Any]:
        user = {
            **self.bot.to_payload(),
            "verified": True,
            "mfa_enabled": False,
            "flags": 0,
            "email": None,
        }
        payload: dict[str, Any] = {
            "v": 10,
            "user": user,
            "guilds": [{"id": str(g.id), "unavailable": True} for g in self._guilds_of(session)],
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(self.application_id), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": [],
            "user_settings": {},
        }
        if session.shard is not None:
            payload["shard"] = session.shard
        return payload

    def _guilds_of(self, session: Session) -> list[Guild]:
        return [g for g in self.bot_guilds() if session.owns(g.id)]

    def _guild_payloads(self, session: Session) -> list[dict[str, Any]]:
        return [self._guild_payload(g, session.intents) for g in self._guilds_of(session)]

    def _guild_payload(self, guild: Guild, intents: int) -> dict[str, Any]:
        members = None if intents & Intent.GUILD_MEMBERS else [guild.members[self.bot.id]]
        return guild.to_payload(members=members, viewer=self.bot.id)

    def _world_changed(self, kind: str, obj: Any) -> None:
        gateway: Gateway | None = getattr(self, "gateway", None)
        if gateway is None:
            return
        if kind == "guild_join":
            for session in gateway.targets(obj.id):
                gateway.emit(session, "GUILD_CREATE", self._guild_payload(obj, session.intents))
            return
        if kind == "guild_leave":  # no "unavailable": removed, not an outage
            gateway.dispatch(
                "GUILD_DELETE", {"id": str(obj.id)}, intent=Intent.GUILDS, guild_id=obj.id
            )
            self._changed()
            return
        if kind == "channel_delete" and obj.is_thread:
            assert obj.guild is not None and obj.parent is not None
            if obj.guild.sees(self.bot, obj):
                data = {
                    "id": str(obj.id),
                    "guild_id": str(obj.guild.id),
                    "parent_id": str(obj.parent.id),
                    "type": int(obj.type),
                }
                gateway.dispatch("THREAD_DELETE", data, intent=Intent.GUILDS)
            self._changed()
            return
        if kind == "channel_delete":
            gateway.dispatch("CHANNEL_DELETE", obj.to_payload(), intent=Intent.GUILDS)
            self._changed()
            return
        if kind == "guild_update":
            if self.bot.id in obj.members:
                gateway.dispatch("GUILD_UPDATE", obj.to_guild_object(), intent=Intent.GUILDS)
                self._changed()
            return
        guild = (
            obj.guild
            if kind in ("member_join", "channel_create", "thread_create")
            else self.guilds[obj.guild_id]
        )
        if self.bot.id not in guild.members:
            return
        if kind == "channel_create":
            gateway.dispatch("CHANNEL_CREATE", obj.to_payload(), intent=Intent.GUILDS)
        elif kind == "thread_create":
            # Only to a bot that sees the thread (a private one: a member, or Manage Threads).
            if guild.sees(self.bot, obj):
                data = {**obj.to_payload(), "newly_created": True}
                if self.bot.id in obj.thread_members:
                    data["member"] = {
                        "id": str(obj.id),
                        "user_id": str(self.bot.id),
                        "join_timestamp": iso(self.clock.utcnow()),
                        "flags": 0,
                    }
                gateway.dispatch("THREAD_CREATE", data, intent=Intent.GUILDS)
        elif kind == "role_create" and isinstance(obj, Role):
            gateway.dispatch(
                "GUILD_ROLE_CREATE",
                {"guild_id": str(guild.id), "role": obj.to_payload()},
                intent=Intent.GUILDS,
            )
        elif kind == "member_join":
            data = {**obj.to_payload(), "guild_id": str(guild.id)}
            gateway.dispatch("GUILD_MEMBER_ADD", data, intent=Intent.GUILD_MEMBERS)
        self._changed()
