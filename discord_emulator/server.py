"""HTTP plumbing of the emulator: routing, request records, injected faults, JSON answers.

Bodies are JSON or multipart (``payload_json`` plus ``files[n]``). Answers carry
``Content-Type: application/json`` exactly, since discord.py parses JSON only then.
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

from aiohttp import web

from .components import decode_json, encode_json
from .errors import APIError

__all__ = ["NO_CONTENT", "ApiCall", "ApiServer", "Fault", "RecordedRequest", "Router"]

NO_CONTENT: Any = object()
"""Return this from a handler to answer 204 No Content."""


@dataclass(frozen=True)
class RecordedRequest:
    """One REST request the emulator received and what it answered.

    ``path`` is relative to the API base (``/channels/1/messages``), or the whole URL path
    for a request outside it. ``fault`` names the injected fault that answered, if any.
    """

    method: str
    path: str
    query: dict[str, str]
    json: Any
    status: int
    response: Any
    fault: str | None = None


@dataclass
class Fault:
    """An injected failure for requests matching ``method`` and ``path``.

    ``path`` is a glob over the path relative to the API base (``*`` also crosses ``/``) or a
    compiled regex (searched). It answers the next ``times`` matching requests: with
    ``status`` (500, or 429 carrying ``retry_after``), or, with ``delay``, by holding each
    request that long before handling it normally.
    """

    method: str
    path: str | re.Pattern[str]
    times: int = 1
    status: int | None = None
    retry_after: float = 0.0
    is_global: bool = False
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
        self.routes.append(_Route(method, re.compile(f"^{regex}$"), handler, auth))

    def match(self, method: str, path: str) -> tuple[_Route, dict[str, str]] | None:
        for route in self.routes:
            if route.method != method:
                continue
            found = route.pattern.match(path)
            if found:
                return route, found.groupdict()
        return None


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> web.Response:
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    return web.Response(status=status, body=encode_json(body).encode(), headers=all_headers)


class ApiServer:
    """An aiohttp app serving the REST API under ``prefix`` and the gateway at ``/gateway``."""

    def __init__(
        self,
        *,
        router: Router,
        gateway: Callable[[web.Request], Awaitable[web.StreamResponse]],
        check_auth: Callable[[str | None], bool],
        changed: Callable[[], None],
        prefix: str = "/api/v10",
    ) -> None:
        self.router = router
        self.prefix = prefix
        self._check_auth = check_auth
        self._changed = changed
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
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method = request.method
        raw_path = request.path
        path = raw_path[len(self.prefix) :] if raw_path.startswith(self.prefix + "/") else raw_path
        query = dict(request.query)
        try:
            body, files = await _read_body(request)
        except APIError as error:
            return self._answer(method, path, query, None, error.status, error.body())

        fault = next((f for f in self.faults if f.matches(method, path)), None)
        if fault is not None:
            fault.hits += 1
            if fault.delay:
                await asyncio.sleep(fault.delay)
            elif fault.status == 429:
                return self._rate_limited(method, path, query, body, fault)
            elif fault.status is not None:
                body_out = {"message": f"{fault.status}: Emulated failure", "code": 0}
                return self._answer(
                    method, path, query, body, fault.status, body_out, fault=str(fault.status)
                )

        matched = (
            self.router.match(method, path) if raw_path.startswith(self.prefix + "/") else None
        )
        if matched is None:
            record = RecordedRequest(
                method, path, query, body, 404, {"code": 0, "message": "404: Not Found"}
            )
            self.unrouted.append(record)
            self.requests.append(record)
            self._changed()
            return json_response(404, record.response)
        route, params = matched
        if route.auth and not self._check_auth(request.headers.get("Authorization")):
            return self._answer(
                method, path, query, body, 401, {"message": "401: Unauthorized", "code": 0}
            )
        try:
            call = ApiCall(method, path, params, query, body, files, request.headers)
            result = await route.handler(call)
        except APIError as error:
            return self._answer(method, path, query, body, error.status, error.body())
        if result is NO_CONTENT:
            self._record(method, path, query, body, 204, None)
            return web.Response(status=204)
        return self._answer(method, path, query, body, 200, result)

    def _record(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        body: Any,
        status: int,
        out: Any,
        fault: str | None = None,
    ) -> None:
        self.requests.append(RecordedRequest(method, path, query, body, status, out, fault))
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
        headers: dict[str, str] | None = None,
    ) -> web.Response:
        self._record(method, path, query, body, status, out, fault)
        return json_response(status, out, headers)

    def _rate_limited(
        self, method: str, path: str, query: dict[str, str], body: Any, fault: Fault
    ) -> web.Response:
        retry = fault.retry_after
        headers = {
            "Via": "1.1 google",
            "Retry-After": str(max(1, math.ceil(retry))),
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": f"{time.time() + retry:.3f}",
            "X-RateLimit-Reset-After": f"{retry:.3f}",
            "X-RateLimit-Bucket": "emulated" + format(abs(hash((method, path))) % 16**8, "08x"),
            "X-RateLimit-Scope": "global" if fault.is_global else "user",
        }
        if fault.is_global:
            headers["X-RateLimit-Global"] = "true"
        out = {
            "message": "You are being rate limited.",
            "retry_after": retry,
            "global": fault.is_global,
            "code": 0,
        }
        return self._answer(method, path, query, body, 429, out, fault="429", headers=headers)


async def _read_body(request: web.Request) -> tuple[Any, list[dict[str, Any]]]:
    if request.content_type.startswith("multipart/"):
        payload: Any = None
        files: list[dict[str, Any]] = []
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
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
