"""The gateway websocket: HELLO, IDENTIFY/READY, RESUME with replay, heartbeats, faults.

Any number of bot sessions may exist at once (shards, possibly from different processes; see
shards.py for the routing rules). Each numbers its own dispatches and keeps them so a RESUME can
replay what its client missed; while no connection is attached they are only buffered. A new
IDENTIFY does not end older sessions, as on Discord: a session ends when it is invalidated.
Frames go out as plain JSON text (discord.py asks for zlib-stream but accepts text).

Heartbeats: HELLO gives the interval (Discord's is 41250 ms); each HEARTBEAT is answered with a
HEARTBEAT_ACK one network round trip later (``round_trip``), as Discord's ACK crosses the
internet. An instant ACK over loopback can overtake discord.py's keep-alive thread, which
records the send time only after the send completes: it then measures the ACK against the
previous heartbeat and logs "Can't keep up, websocket is 41.3s behind". The gateway may also
ask for a heartbeat at once with op 1 (:meth:`Gateway.request_heartbeat`).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from .observations import FrameWritten, Observer, tell
from .protocol import GatewayFrame, GatewayOp, Intent
from .shards import parse_shard, shard_for
from .wire import decode_json, encode_json

__all__ = ["Gateway", "GatewayFrame", "GatewayOp", "Intent", "Session"]


@dataclass
class _Close:
    code: int
    reason: str


@dataclass(eq=False)
class _Connection:
    ws: web.WebSocketResponse
    queue: asyncio.Queue[dict[str, Any] | _Close] = field(default_factory=asyncio.Queue)
    session: Session | None = None
    closing: bool = False


@dataclass(eq=False)
class Session:
    """One gateway session. ``shard`` is what IDENTIFY sent (None: unsharded, i.e. [0, 1])."""

    id: str
    intents: int
    shard: list[int] | None
    seq: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    connection: _Connection | None = None
    resumable: bool = True

    @property
    def shard_id(self) -> int:
        return self.shard[0] if self.shard else 0

    @property
    def shard_count(self) -> int:
        return self.shard[1] if self.shard else 1

    @property
    def live(self) -> bool:
        """Identified or resumed, and its socket is open."""
        return self.resumable and self.connection is not None

    def owns(self, guild_id: int | None) -> bool:
        """Whether this session gets the events of ``guild_id`` (None: events without a guild,
        which only shard 0 gets)."""
        if guild_id is None:
            return self.shard_id == 0
        return shard_for(guild_id, self.shard_count) == self.shard_id

    def dispatched(self, event: str) -> list[Any]:
        """The ``d`` of every dispatch named ``event`` this session was given."""
        return [p["d"] for p in self.events if p["t"] == event]


class Gateway:
    """Serves ``/gateway`` and routes dispatches to the bot's session.

    ``check_token`` validates IDENTIFY/RESUME tokens; ``ready`` and ``guilds`` build the READY
    payload and the GUILD_CREATE payloads for a new session; ``guild_ids`` lists the bot's guilds
    (for the 4011 check against ``max_guilds_per_shard``); ``started`` is told of every new
    session; ``changed`` is called after every state change so waiters can re-check;
    ``observers`` are told of each frame written (:class:`FrameWritten`).
    """

    def __init__(
        self,
        *,
        check_token: Callable[[str], bool],
        ready: Callable[[Session], dict[str, Any]],
        guilds: Callable[[Session], list[dict[str, Any]]],
        guild_ids: Callable[[], Iterable[int]],
        started: Callable[[Session], None],
        changed: Callable[[], None],
        heartbeat_interval: float,
        max_guilds_per_shard: int,
        round_trip: float = 0.04,
        observers: list[Observer] | None = None,
    ) -> None:
        self._check_token = check_token
        self._ready = ready
        self._guilds = guilds
        self._guild_ids = guild_ids
        self._started = started
        self._changed = changed
        self.observers = observers if observers is not None else []
        self.heartbeat_interval = heartbeat_interval
        self.round_trip = round_trip
        self.max_guilds_per_shard = max_guilds_per_shard
        self.sessions: dict[str, Session] = {}
        self.session: Session | None = None
        """The most recently identified session (the only one for an unsharded bot)."""
        self.frames: list[GatewayFrame] = []
        self.identifies = 0
        self.resumes = 0
        self.invalid_sessions = 0
        self.heartbeats = 0
        self._open = asyncio.Event()
        self._open.set()
        self._connections: set[_Connection] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    # -- state -----------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """True when some session is live: identified or resumed, and its socket is open."""
        return any(session.live for session in self.sessions.values())

    def live_sessions(self, shard_id: int | None = None) -> list[Session]:
        """Live sessions, oldest first; with ``shard_id``, only those holding that shard id
        (an unsharded session is shard 0)."""
        return [
            session
            for session in self.sessions.values()
            if session.live and (shard_id is None or session.shard_id == shard_id)
        ]

    @property
    def intents(self) -> int:
        """The intents of the most recently identified session."""
        return self.session.intents if self.session else 0

    # -- dispatching -----------------------------------------------------------------------

    def targets(self, guild_id: int | None, intent: int | None = None) -> list[Session]:
        """The sessions a DISPATCH about ``guild_id`` (None: no guild) goes to, or is buffered
        for: every valid session whose shard owns it and which asked for ``intent``."""
        return [
            session
            for session in self.sessions.values()
            if session.resumable
            and session.owns(guild_id)
            and (intent is None or bool(session.intents & intent))
        ]

    def accepts(self, intent: int, guild_id: int | None = None) -> bool:
        """Whether a DISPATCH about ``guild_id`` needing ``intent`` would be sent (or buffered)
        now."""
        return bool(self.targets(guild_id, intent))

    def dispatch(
        self,
        event: str,
        data: dict[str, Any],
        *,
        intent: int | None = None,
        guild_id: int | str | None = None,
    ) -> bool:
        """Send (or buffer for replay) a DISPATCH to the sessions that get it by the sharding
        formula. The guild is ``guild_id``, else ``data["guild_id"]``; none means shard 0.

        Returns False when it was dropped: no valid session owns it or has ``intent``.
        """
        if guild_id is None:
            guild_id = data.get("guild_id")
        sessions = self.targets(None if guild_id is None else int(guild_id), intent)
        for session in sessions:
            self.emit(session, event, data)
        return bool(sessions)

    def deliver(self, event: str, data: dict[str, Any], *, shard_id: int) -> bool:
        """Send a DISPATCH to every valid session holding ``shard_id``, whatever the formula
        says. Discord never does this: it lets tests forge a delivery to the wrong shard."""
        sessions = [s for s in self.sessions.values() if s.resumable and s.shard_id == shard_id]
        for session in sessions:
            self.emit(session, event, data)
        return bool(sessions)

    def emit(self, session: Session, event: str, data: Any) -> None:
        """Number a DISPATCH in ``session``, keep it for replay, and send it if connected."""
        session.seq += 1
        payload = {"op": GatewayOp.DISPATCH.value, "t": event, "s": session.seq, "d": data}
        session.events.append(payload)
        if session.connection is not None:
            self._send(session.connection, payload)

    def _send(self, conn: _Connection, payload: dict[str, Any]) -> None:
        if conn.closing:
            return
        session_id = conn.session.id if conn.session else None
        self.frames.append(
            GatewayFrame(
                "out",
                payload["op"],
                payload.get("t"),
                payload.get("s"),
                payload.get("d"),
                session_id,
            )
        )
        conn.queue.put_nowait(payload)

    def _close(self, conn: _Connection, code: int, reason: str) -> None:
        if conn.closing:
            return
        conn.queue.put_nowait(_Close(code, reason))
        conn.closing = True
        session = conn.session
        if session is not None and session.connection is conn:
            session.connection = None
        self._changed()

    # -- faults ----------------------------------------------------------------------------

    def _chosen(self, shard_id: int | None) -> list[Session]:
        sessions = [
            s
            for s in self.sessions.values()
            if s.resumable and (shard_id is None or s.shard_id == shard_id)
        ]
        if not sessions:
            raise RuntimeError(f"the bot has no gateway session (shard {shard_id})")
        return sessions

    def drop(
        self, *, resumable: bool = True, code: int = 4000, shard_id: int | None = None
    ) -> None:
        """Close the sockets of the bot's sessions (those holding ``shard_id``, or all). A
        resumable drop keeps each session for RESUME; otherwise the sessions are invalidated and
        the client's RESUME is answered with INVALID_SESSION."""
        for session in self._chosen(shard_id):
            if not resumable:
                session.resumable = False
            if session.connection is not None:
                self._close(session.connection, code, "emulated disconnect")

    def request_reconnect(self, *, shard_id: int | None = None) -> None:
        """Send op 7 RECONNECT to the live sessions (holding ``shard_id``, or all); each client
        closes and RESUMEs."""
        sessions = self.live_sessions(shard_id)
        if not sessions:
            raise RuntimeError("the bot is not connected")
        for session in sessions:
            assert session.connection is not None
            self._send(session.connection, {"op": GatewayOp.RECONNECT.value, "d": None})

    def request_heartbeat(self, *, shard_id: int | None = None) -> None:
        """Send op 1 HEARTBEAT to the live sessions (holding ``shard_id``, or all): Discord's
        way to ask a client for a heartbeat now, without waiting for its interval."""
        sessions = self.live_sessions(shard_id)
        if not sessions:
            raise RuntimeError("the bot is not connected")
        for session in sessions:
            assert session.connection is not None
            self._send(session.connection, {"op": GatewayOp.HEARTBEAT.value, "d": None})

    def hold(self) -> None:
        """Accept new sockets but keep them waiting before HELLO until :meth:`release`."""
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    async def close_all(self) -> None:
        for conn in list(self._connections):
            self._close(conn, 1001, "emulator stopping")
        self.release()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=2)

    # -- the websocket ---------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True, max_msg_size=0)
        await ws.prepare(request)
        conn = _Connection(ws)
        self._connections.add(conn)
        writer = asyncio.create_task(self._writer(conn))
        self._tasks.add(writer)
        writer.add_done_callback(self._tasks.discard)
        try:
            await self._open.wait()
            if not conn.closing:
                interval_ms = int(self.heartbeat_interval * 1000)
                self._send(
                    conn, {"op": GatewayOp.HELLO.value, "d": {"heartbeat_interval": interval_ms}}
                )
            async for msg in ws:
                if msg.type is not WSMsgType.TEXT:
                    continue
                try:
                    frame = decode_json(msg.data)
                except ValueError:
                    frame = None
                if not isinstance(frame, dict):
                    self._close(conn, 4002, "Decode error")
                    break
                self._receive(conn, frame)
        finally:
            self._connections.discard(conn)
            session = conn.session
            if session is not None and session.connection is conn:
                session.connection = None
            conn.closing = True
            conn.queue.put_nowait(_Close(1000, ""))
            self._changed()
        return ws

    async def _writer(self, conn: _Connection) -> None:
        while True:
            item = await conn.queue.get()
            if conn.ws.closed:
                return
            try:
                if isinstance(item, _Close):
                    await conn.ws.close(code=item.code, message=item.reason.encode())
                    return
                text = encode_json(item)
                if self.observers:
                    tell(self.observers, FrameWritten(item, time.perf_counter()))
                await conn.ws.send_str(text)
            except (ConnectionError, RuntimeError):
                return

    def _receive(self, conn: _Connection, frame: dict[str, Any]) -> None:
        op = frame.get("op")
        data = frame.get("d")
        session_id = conn.session.id if conn.session else None
        self.frames.append(
            GatewayFrame("in", op if isinstance(op, int) else -1, None, None, data, session_id)
        )
        if op == GatewayOp.HEARTBEAT:
            self.heartbeats += 1
            ack = {"op": GatewayOp.HEARTBEAT_ACK.value, "d": None}
            asyncio.get_running_loop().call_later(self.round_trip, self._send, conn, ack)
        elif op == GatewayOp.IDENTIFY:
            self._identify(conn, data if isinstance(data, dict) else {})
        elif op == GatewayOp.RESUME:
            self._resume(conn, data if isinstance(data, dict) else {})
        elif op in (
            GatewayOp.PRESENCE_UPDATE,
            GatewayOp.VOICE_STATE_UPDATE,
            GatewayOp.REQUEST_GUILD_MEMBERS,
        ):
            if conn.session is None:
                self._close(conn, 4003, "Not authenticated.")
        else:
            self._close(conn, 4001, "Unknown opcode.")

    def _identify(self, conn: _Connection, data: dict[str, Any]) -> None:
        if conn.session is not None:
            self._close(conn, 4005, "Already authenticated.")
            return
        if not self._check_token(str(data.get("token", ""))):
            self._close(conn, 4004, "Authentication failed.")
            return
        intents = data.get("intents")
        if not isinstance(intents, int) or intents < 0:
            self._close(conn, 4013, "Invalid intent(s).")
            return
        shard = None
        if data.get("shard") is not None:
            parsed = parse_shard(data["shard"])
            if parsed is None:
                self._close(conn, 4010, "Invalid shard.")
                return
            shard = list(parsed)
        session = Session(id=secrets.token_hex(16), intents=intents, shard=shard)
        owned = sum(1 for guild_id in self._guild_ids() if session.owns(guild_id))
        if owned > self.max_guilds_per_shard:
            self._close(conn, 4011, "Sharding required.")
            return
        self.sessions[session.id] = session
        self.session = session
        self._started(session)
        conn.session = session
        session.connection = conn
        self.emit(session, "READY", self._ready(session))
        for guild in self._guilds(session):
            self.emit(session, "GUILD_CREATE", guild)
        self.identifies += 1
        self._changed()

    def _resume(self, conn: _Connection, data: dict[str, Any]) -> None:
        session = self.sessions.get(str(data.get("session_id")))
        valid = (
            session is not None
            and session.resumable
            and data.get("session_id") == session.id
            and self._check_token(str(data.get("token", "")))
            # Events before the oldest kept one were trimmed (retention.py): no replay.
            and (not session.events or (data.get("seq") or 0) >= session.events[0]["s"] - 1)
        )
        if not valid or session is None:
            self.invalid_sessions += 1
            self._send(conn, {"op": GatewayOp.INVALID_SESSION.value, "d": False})
            self._changed()
            return
        if session.connection is not None and session.connection is not conn:
            self._close(session.connection, 4009, "Session resumed elsewhere.")
        conn.session = session
        session.connection = conn
        last_seen = data.get("seq") or 0
        for payload in session.events:
            if payload["s"] > last_seen:
                self._send(conn, payload)
        self.emit(session, "RESUMED", {})
        self.resumes += 1
        self._changed()
