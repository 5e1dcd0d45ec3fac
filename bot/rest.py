"""A lean HTTP/1.1 client for the bot's answers to interactions.

Every click is answered with one POST to Discord's interaction callback endpoint. Sent
through discord.py's webhook adapter and aiohttp, that POST took about 430 µs of the
event loop's CPU (a loopback micro-benchmark), a fifth of the bot's CPU per click under
bench/load.py. Here the request is written out directly and the answer read by
httptools (llhttp, Node's HTTP parser): about 130 µs.

It keeps what the adapter does for these requests: keep-alive connections (TLS for
https), JSON in and out, discord.py's exceptions (``NotFound`` with Discord's error code,
``Forbidden``, ``HTTPException``, ``DiscordServerError``), and its retries: a 429 that
comes from Discord's servers (it carries a ``Via`` header) is retried after its
``retry_after``, a 5xx up to five tries in all. It adds a time limit per try and one
retry on a fresh connection when a reused one turns out closed before any answer came.
It leaves out proxies, files and multipart bodies, redirects and compressed bodies: the
bot sends none of those this way (the bot has no proxy setting).
"""

from __future__ import annotations

import asyncio
import http
import ssl
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlsplit

import discord
import httptools
import orjson

__all__ = ["AnswerClient", "ConnectionClosed"]

ATTEMPTS = 5
"""Tries per request, as discord.py's webhook adapter makes."""


def discord_pause(attempt: int) -> float:
    """Seconds to wait after try ``attempt`` (0-based) answered 5xx: discord.py's 1, 3, 5, 7."""
    return 1 + attempt * 2


class ConnectionClosed(ConnectionError):
    """The server closed the connection before the whole answer arrived."""


class _Answer:
    """One HTTP response, with what ``discord.HTTPException`` reads (status, reason)."""

    __slots__ = ("body", "headers", "keep_alive", "reason", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes, keep_alive: bool) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.keep_alive = keep_alive
        try:
            self.reason = http.HTTPStatus(status).phrase
        except ValueError:
            self.reason = ""

    def data(self) -> Any:
        """None for no body; else as discord.py's ``json_or_text`` reads it: JSON if the
        answer says so, otherwise text."""
        if not self.body:
            return None
        if self.headers.get("content-type") == "application/json":
            return orjson.loads(self.body)
        return self.body.decode("utf-8", "replace")


class _Connection(asyncio.Protocol):
    """One keep-alive connection: one request at a time, its answer parsed as it arrives."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self.answered_any = False
        """Whether any answer (or part of one) has come on this connection."""
        self._parser = httptools.HttpResponseParser(self)
        self._waiter: asyncio.Future[_Answer] | None = None
        self._headers: dict[str, str] = {}
        self._body: list[bytes] = []

    async def exchange(self, request: bytes) -> _Answer:
        assert self.transport is not None and self._waiter is None
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        try:
            return await waiter
        finally:
            self._waiter = None

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    # -- asyncio.Protocol ----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.answered_any = True
        if self._waiter is None:  # nothing was asked: the connection is out of step
            self.close()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(ConnectionClosed(f"unreadable HTTP answer: {error}"))
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(ConnectionClosed("the server closed the connection") if exc is None else exc)

    def _fail(self, error: BaseException) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(error)

    # -- httptools callbacks -------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._headers = {}
        self._body = []

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        answer = _Answer(
            self._parser.get_status_code(),
            self._headers,
            b"".join(self._body),
            self._parser.should_keep_alive(),
        )
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(answer)


class AnswerClient:
    """JSON requests to one Discord API base (``discord.http.Route.BASE``), kept alive.

    ``pause`` gives the wait after a 5xx (tests shorten it); ``attempt_seconds`` bounds
    each try, connecting included. At most ``max_connections`` requests are in flight;
    more wait for a free one.
    """

    def __init__(
        self,
        base: str,
        *,
        user_agent: str,
        max_connections: int = 100,
        idle_seconds: float = 15.0,
        attempt_seconds: float = 10.0,
        ssl_context: ssl.SSLContext | None = None,
        pause: Callable[[int], float] = discord_pause,
    ) -> None:
        url = urlsplit(base)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"the API base must be an http(s) URL, not {base!r}")
        self._host = url.hostname
        self._port = url.port or (443 if url.scheme == "https" else 80)
        self._ssl = (ssl_context or ssl.create_default_context()) if url.scheme == "https" else None
        self._prefix = url.path.rstrip("/")
        self._head = f"Host: {url.netloc}\r\nUser-Agent: {user_agent}\r\n"
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: list[_Connection] = []
        self._idle_seconds = idle_seconds
        self._attempt_seconds = attempt_seconds
        self._pause = pause
        self._closed = False
        self.connections_opened = 0

    async def post_callback(
        self, interaction_id: int, token: str, payload: Any, *, with_response: bool = False
    ) -> Any:
        """Answer an interaction; Discord's JSON back (None for 204 No Content)."""
        query = "?with_response=true" if with_response else ""
        path = f"/interactions/{interaction_id}/{quote(token, safe='')}/callback{query}"
        return await self.request("POST", path, payload)

    async def edit_original(self, application_id: int, token: str, payload: Any) -> Any:
        """Edit an interaction's original response; the edited message's JSON back."""
        path = f"/webhooks/{application_id}/{quote(token, safe='')}/messages/@original"
        return await self.request("PATCH", path, payload)

    async def request(self, method: str, path: str, payload: Any) -> Any:
        """Send ``payload`` as JSON; the answer's JSON (or text), or discord.py's exception."""
        body = orjson.dumps(payload)
        request = (
            f"{method} {self._prefix}{path} HTTP/1.1\r\n{self._head}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        for attempt in range(ATTEMPTS):
            answer = await self._exchange(request)
            data = answer.data()
            if 200 <= answer.status < 300:
                return data
            last = attempt == ATTEMPTS - 1
            if answer.status == 429:
                # Without Via the 429 comes from Cloudflare (a ban), not Discord's limits.
                if last or "via" not in answer.headers or not isinstance(data, dict):
                    raise discord.HTTPException(answer, data)  # type: ignore[arg-type]
                await asyncio.sleep(float(data.get("retry_after", 1.0)))
                continue
            if answer.status >= 500:
                if last:
                    raise discord.DiscordServerError(answer, data)  # type: ignore[arg-type]
                await asyncio.sleep(self._pause(attempt))
                continue
            if answer.status == 403:
                raise discord.Forbidden(answer, data)  # type: ignore[arg-type]
            if answer.status == 404:
                raise discord.NotFound(answer, data)  # type: ignore[arg-type]
            raise discord.HTTPException(answer, data)  # type: ignore[arg-type]
        raise AssertionError("unreachable: the last try returns or raises")

    async def _exchange(self, request: bytes) -> _Answer:
        """One try: ``request`` on an idle connection (or a new one), its answer back."""
        async with self._slots:
            if self._closed:
                raise RuntimeError("the answer client is closed")
            connection = self._take_idle()
            try:
                async with asyncio.timeout(self._attempt_seconds):
                    if connection is not None:
                        try:
                            return self._keep(connection, await connection.exchange(request))
                        except ConnectionClosed:
                            if connection.answered_any:
                                raise
                            # Nothing came back: most likely the server closed it while it
                            # was idle, as the request went out. Try once more, afresh (were
                            # it read after all, Discord refuses the second answer).
                            connection.close()
                    connection = await self._open()
                    return self._keep(connection, await connection.exchange(request))
            except BaseException:
                if connection is not None:
                    connection.close()
                raise

    def _take_idle(self) -> _Connection | None:
        """The most recently used idle connection still open and fresh enough, if any."""
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if not connection.closed and now - connection.idle_since < self._idle_seconds:
                connection.answered_any = False
                return connection
            connection.close()
        return None

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(
            _Connection,
            self._host,
            self._port,
            ssl=self._ssl,
            server_hostname=self._host if self._ssl is not None else None,
        )
        self.connections_opened += 1
        return connection

    def _keep(self, connection: _Connection, answer: _Answer) -> _Answer:
        """Put ``connection`` back for reuse if the answer allows; ``answer`` as it is."""
        if answer.keep_alive and not connection.closed and not self._closed:
            connection.idle_since = time.monotonic()
            self._idle.append(connection)
        else:
            connection.close()
        return answer

    async def close(self) -> None:
        """Close the idle connections; later requests raise RuntimeError."""
        self._closed = True
        while self._idle:
            self._idle.pop().close()
