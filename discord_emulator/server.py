"""HTTP plumbing of the emulator: routing, rate limits, request records, injected faults,
JSON answers.

Bodies are JSON or multipart (``payload_json`` plus ``files[n]``). Answers carry
``Content-Type: application/json`` exactly, since discord.py parses JSON only then, and
``Via``, as Discord's do (discord.py takes a 429 without it for a Cloudflare ban).
"""

from __future__ import annotations

import asyncio
import fnmatch
import math
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

from .errors import APIError
from .observations import Observer, RequestArrived, tell
from .ratelimits import RateLimiter
from .wire import decode_json, encode_json

__all__ = [
    "NO_CONTENT",
    "ApiCall",
    "ApiServer",
    "Fault",
    "RecordedRequest",
    "Router",
    "snowflake",
    "truthy",
]

NO_CONTENT: Any = object()
"""Return this from a handler to answer 204 No Content."""


@dataclass(frozen=True)
class RecordedRequest:
    """One REST request the emulator received and what it answered.

    ``path`` is relative to the API base (``/channels/1/messages``), or the whole URL path
    for a request outside it. ``fault`` names the injected fault that answered, if any
    (``"cloudflare"`` for a refusal during an invalid-request ban); ``scope`` is a 429's
    ``X-RateLimit-Scope``; ``at`` is when it was answered, on the emulator clock.
    """

    method: str
    path: str
    query: dict[str, str]
    json: Any
    status: int
    response: Any
    fault: str | None = None
    scope: str | None = None
    at: float = 0.0


@dataclass
class Fault:
    """An injected failure for requests matching ``method`` and ``path``.

    ``path`` is a glob over the path relative to the API base (``*`` also crosses ``/``) or a
    compiled regex (searched). It answers the next ``times`` matching requests: with
    ``status`` (500, or 429 carrying ``retry_after`` and ``scope``: ``user``, ``shared``, or
    ``global`` with ``is_global``), or, with ``delay``, by holding each request that long
    before handling it normally. A matching request still counts toward its bucket and the
    global limit, and an injected 401, 403 or non-shared 429 toward the invalid-request ban.
    """

    method: str
    path: str | re.Pattern[str]
    times: int = 1
    status: int | None = None
    retry_after: float = 0.0
    is_global: bool = False
    scope: str = "user"
    delay: float = 0.0
    hits: int = 0

    @property
    def exhausted(self) -> bool:
        return self.hits >= self.times

    def matches(self, method: str, path: str) -> bool:
        if self.exhausted or self.method.upper() not in (method, "*"):
            return False
        if isinstance(self.path, re.Pattern):
            return self.path.search(path) is not None
        return fnmatch.fnmatchcase(path, self.path)


@dataclass
class ApiCall:
    """A routed request as handlers see it."""

    method: str
    path: str
    params: dict[str, str]
    query: dict[str, str]
    json: Any
    files: list[dict[str, Any]] = field(default_factory=list)
    headers: Mapping[str, str] = field(default_factory=dict)


Handler = Callable[[ApiCall], Awaitable[Any]]


@dataclass(frozen=True)
class _Route:
    method: str
    template: str
    pattern: re.Pattern[str]
    handler: Handler
    auth: bool


class Router:
    """Maps ``METHOD /path/{param}`` templates to handlers, first match wins."""

    def __init__(self) -> None:
        self.routes: list[_Route] = []

    def add(self, method: str, template: str, handler: Handler, *, auth: bool = True) -> None:
        pieces = re.split(r"\{(\w+)\}", template)
        regex = "".join(
            re.escape(piece) if i % 2 == 0 else f"(?P<{piece}>[^/]+)"
            for i, piece in enumerate(pieces)
        )
        self.routes.append(_Route(method, template, re.compile(f"^{regex}$"), handler, auth))

    def match(self, method: str, path: str) -> tuple[_Route, dict[str, str]] | None:
        for route in self.routes:
            if route.method != method:
                continue
            found = route.pattern.match(path)
            if found:
                return route, found.groupdict()
        return None


def truthy(value: str | None) -> bool:
    """A query flag such as ``?wait=true``."""
    return (value or "").lower() in ("true", "1")


def snowflake(value: str, field: str) -> int:
    """``value`` as an id, or 400 50035 on ``field`` as Discord answers a malformed one."""
    if not value.isdigit():
        raise APIError.invalid_field(
            (field,), "NUMBER_TYPE_COERCE", f'Value "{value}" is not snowflake.'
        )
    return int(value)


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> web.Response:
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    return web.Response(status=status, body=encode_json(body).encode(), headers=all_headers)


class ApiServer:
    """An aiohttp app serving the REST API under ``prefix`` and the gateway at ``/gateway``;
    ``observers`` are told of each request as it arrives (:class:`RequestArrived`)."""

    def __init__(
        self,
        *,
        router: Router,
        gateway: Callable[[web.Request], Awaitable[web.StreamResponse]],
        check_auth: Callable[[str | None], bool],
        changed: Callable[[], None],
        limiter: RateLimiter,
        prefix: str = "/api/v10",
        observers: list[Observer] | None = None,
    ) -> None:
        self.router = router
        self.limiter = limiter
        self.prefix = prefix
        self._check_auth = check_auth
        self._changed = changed
        self.observers = observers if observers is not None else []
        self.requests: list[RecordedRequest] = []
        self.unrouted: list[RecordedRequest] = []
        self.faults: list[Fault] = []
        self.app = web.Application(client_max_size=32 * 1024 * 1024)
        self.app.router.add_get("/gateway", gateway)
        self.app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    async def start(self, host: str, port: int) -> None:
        self._runner = web.AppRunner(self.app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        # AppRunner.addresses: the bound sockets' getsockname() (the port, when 0 was asked).
        self.port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method = request.method
        raw_path = request.path
        if self.observers:
            tell(self.observers, RequestArrived(method, raw_path, time.perf_counter()))
        in_api = raw_path.startswith(self.prefix + "/")
        path = raw_path[len(self.prefix) :] if in_api else raw_path
        query = dict(request.query)
        matched = self.router.match(method, path) if in_api else None
        route, params = matched if matched is not None else (None, {})
        headers = {"Via": "1.1 google"}
        refusal = None
        if in_api:
            admission = self.limiter.admit(
                method,
                route.template if route is not None else None,
                params,
                request.headers.get("Authorization"),
            )
            refusal = admission.refusal
            if refusal is not None and refusal.scope == "cloudflare":
                return self._cloudflare(method, path, query, refusal.retry_after)
            headers.update(admission.headers)
        try:
            body, files = await _read_body(request)
        except APIError as error:
            return self._answer(
                method, path, query, None, error.status, error.body(), headers=headers
            )
        if refusal is not None:
            return self._rate_limited(
                method, path, query, body, headers, refusal.scope, refusal.retry_after
            )

        fault = next((f for f in self.faults if f.matches(method, path)), None)
        if fault is not None:
            fault.hits += 1
            if fault.delay:
                await asyncio.sleep(fault.delay)
            elif fault.status == 429:
                scope = "global" if fault.is_global else fault.scope
                return self._rate_limited(
                    method, path, query, body, headers, scope, fault.retry_after, fault="429"
                )
            elif fault.status is not None:
                body_out = {"message": f"{fault.status}: Emulated failure", "code": 0}
                return self._answer(
                    method,
                    path,
                    query,
                    body,
                    fault.status,
                    body_out,
                    fault=str(fault.status),
                    headers=headers,
                )

        if route is None:
            record = RecordedRequest(
                method,
                path,
                query,
                body,
                404,
                {"code": 0, "message": "404: Not Found"},
                at=self.limiter.now(),
            )
            self.unrouted.append(record)
            self.requests.append(record)
            self._changed()
            return json_response(404, record.response, headers)
        if route.auth and not self._check_auth(request.headers.get("Authorization")):
            return self._answer(
                method,
                path,
                query,
                body,
                401,
                {"message": "401: Unauthorized", "code": 0},
                headers=headers,
            )
        try:
            call = ApiCall(method, path, params, query, body, files, request.headers)
            result = await route.handler(call)
        except APIError as error:
            return self._answer(
                method, path, query, body, error.status, error.body(), headers=headers
            )
        if result is NO_CONTENT:
            self._record(method, path, query, body, 204, None)
            return web.Response(status=204, headers=headers)
        return self._answer(method, path, query, body, 200, result, headers=headers)

    def _record(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        status: int,
        out: Any,
        fault: str | None = None,
        scope: str | None = None,
    ) -> None:
        self.requests.append(
            RecordedRequest(
                method, path, query, body, status, out, fault, scope, self.limiter.now()
            )
        )
        self.limiter.observe(status, scope)
        self._changed()

    def _answer(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        status: int,
        out: Any,
        *,
        fault: str | None = None,
        scope: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> web.Response:
        self._record(method, path, query, body, status, out, fault, scope)
        return json_response(status, out, headers)

    def _rate_limited(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        headers: dict[str, str],
        scope: str,
        retry_after: float,
        *,
        fault: str | None = None,
    ) -> web.Response:
        """A 429 as Discord's documentation shows it: a global one carries no bucket headers,
        a shared one leaves the bucket's count as it is (the resource is limited, not the bot)."""
        retry = math.ceil(retry_after * 1000) / 1000
        if scope == "global":
            out_headers = {"Via": headers["Via"], "X-RateLimit-Global": "true"}
        else:
            out_headers = dict(headers)
            if "X-RateLimit-Bucket" in headers and scope != "shared":
                reset = float(headers["X-RateLimit-Reset"]) - float(
                    headers["X-RateLimit-Reset-After"]
                )
                out_headers["X-RateLimit-Remaining"] = "0"
                out_headers["X-RateLimit-Reset-After"] = f"{retry:.3f}"
                out_headers["X-RateLimit-Reset"] = f"{reset + retry:.3f}"
        out_headers["Retry-After"] = str(max(1, math.ceil(retry)))
        out_headers["X-RateLimit-Scope"] = scope
        shared = "The resource is being rate limited."
        out = {
            "message": shared if scope == "shared" else "You are being rate limited.",
            "retry_after": retry,
            "global": scope == "global",
        }
        return self._answer(
            method, path, query, body, 429, out, fault=fault, scope=scope, headers=out_headers
        )

    def _cloudflare(
        self, method: str, path: str, query: dict[str, str], retry_after: float
    ) -> web.Response:
        """Cloudflare's refusal while the address is banned: no ``Via``, no JSON."""
        text = "error code: 1015"
        self._record(method, path, query, None, 429, text, "cloudflare", "cloudflare")
        return web.Response(
            status=429,
            text=text,
            content_type="text/plain",
            headers={"Retry-After": str(max(1, math.ceil(retry_after)))},
        )


async def _read_body(request: web.Request) -> tuple[Any, list[dict[str, Any]]]:
    if request.content_type.startswith("multipart/"):
        payload: Any = None
        files: list[dict[str, Any]] = []
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            assert isinstance(part, BodyPartReader), "a nested multipart"  # discord.py sends none
            if part.name == "payload_json":
                payload = _parse_json(await part.read())
            elif part.filename is not None:
                data = await part.read()
                files.append(
                    {
                        "field": part.name,
                        "filename": part.filename,
                        "content_type": part.headers.get("Content-Type"),
                        "size": len(data),
                    }
                )
        return payload, files
    raw = await request.read()
    return (_parse_json(raw) if raw else None), []


def _parse_json(raw: bytes | bytearray) -> Any:
    try:
        return decode_json(raw)
    except ValueError as error:
        raise APIError(400, 50109, "The request body contains invalid JSON.") from error
