"""The bot's answer client (``bot.rest.AnswerClient``) against real servers on 127.0.0.1:
aiohttp's web server where a well-behaved HTTP server will do, a raw asyncio server where
the test needs a misbehaving one, and TLS with a certificate made for the test."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import discord
import pytest
import pytest_asyncio
from aiohttp import web

from bot.rest import AnswerClient, ConnectionClosed

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
PAYLOAD = {"type": 7, "data": {"components": [{"type": 10, "content": "héllo <@1>"}]}}


class Server:
    """An aiohttp server on 127.0.0.1 that records every request and answers with
    ``handler``."""

    def __init__(self) -> None:
        self.handler: Handler = lambda request: self.no_content()
        self.requests: list[dict[str, Any]] = []
        self.peers: set[Any] = set()
        self.in_flight = 0
        self.most_in_flight = 0
        self.base = ""

    @staticmethod
    async def no_content() -> web.Response:
        return web.Response(status=204)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.requests.append(
            {
                "method": request.method,
                "path": request.raw_path.split("?")[0],
                "query": dict(request.query),
                "headers": dict(request.headers),
                "body": json.loads(body) if body else None,
            }
        )
        self.peers.add(request.transport.get_extra_info("peername") if request.transport else None)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return await self.handler(request)
        finally:
            self.in_flight -= 1


@pytest_asyncio.fixture
async def server() -> AsyncIterator[Server]:
    recorder = Server()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", recorder.handle)
    runner = web.AppRunner(app, keepalive_timeout=0.3)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    recorder.base = f"http://127.0.0.1:{port}/api/v10"
    yield recorder
    await runner.cleanup()


def client_for(base: str, **options: Any) -> AnswerClient:
    return AnswerClient(base, user_agent="DiscordBot (test, 1.0)", **options)


def json_answer(status: int, body: Any, **headers: str) -> web.Response:
    return web.Response(
        status=status,
        body=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **headers},
    )


async def test_a_callback_goes_out_as_json_and_no_content_comes_back(server: Server) -> None:
    client = client_for(server.base)
    assert await client.post_callback(5001, "a/b token", PAYLOAD) is None
    (seen,) = server.requests
    assert seen["method"] == "POST"
    assert seen["path"] == "/api/v10/interactions/5001/a%2Fb%20token/callback"
    assert seen["query"] == {}
    assert seen["body"] == PAYLOAD
    assert seen["headers"]["Content-Type"] == "application/json"
    assert seen["headers"]["User-Agent"] == "DiscordBot (test, 1.0)"
    assert seen["headers"]["Host"] == server.base.split("/")[2]
    await client.close()


async def test_with_response_the_json_answer_is_returned(server: Server) -> None:
    answer = {"interaction": {"id": "5001", "response_message_id": "777"}}

    async def handler(request: web.Request) -> web.Response:
        return json_answer(200, answer)

    server.handler = handler
    client = client_for(server.base)
    assert await client.post_callback(5001, "tok", PAYLOAD, with_response=True) == answer
    assert server.requests[0]["query"] == {"with_response": "true"}
    edited = await client.edit_original(42, "tok", PAYLOAD)
    assert edited == answer
    assert server.requests[1]["method"] == "PATCH"
    assert server.requests[1]["path"] == "/api/v10/webhooks/42/tok/messages/@original"
    await client.close()


async def test_one_connection_is_kept_alive_for_requests_in_turn(server: Server) -> None:
    client = client_for(server.base)
    for index in range(20):
        await client.post_callback(index + 1, "tok", PAYLOAD)
    assert len(server.requests) == 20
    assert client.connections_opened == 1
    assert len(server.peers) == 1
    await client.close()


async def test_concurrent_requests_each_get_their_own_answer(server: Server) -> None:
    async def handler(request: web.Request) -> web.Response:
        number = int(request.match_info["tail"].split("/")[3])
        await asyncio.sleep((number % 7) / 200)  # answers come back out of order
        return json_answer(200, {"number": number})

    server.handler = handler
    client = client_for(server.base)
    for _ in range(2):  # the second round reuses the first round's connections
        numbers = list(range(1, 61))
        answers = await asyncio.gather(
            *(client.post_callback(n, "tok", PAYLOAD, with_response=True) for n in numbers)
        )
        assert [answer["number"] for answer in answers] == numbers
    assert client.connections_opened <= 60
    await client.close()


async def test_at_most_max_connections_requests_are_in_flight(server: Server) -> None:
    async def handler(request: web.Request) -> web.Response:
        await asyncio.sleep(0.05)
        return web.Response(status=204)

    server.handler = handler
    client = client_for(server.base, max_connections=2)
    await asyncio.gather(*(client.post_callback(n, "tok", PAYLOAD) for n in range(1, 7)))
    assert len(server.requests) == 6
    assert server.most_in_flight == 2
    assert client.connections_opened == 2
    await client.close()


async def test_a_chunked_answer_arriving_in_pieces_is_read(server: Server) -> None:
    answer = {"id": "777", "content": "x" * 5000}
    raw = json.dumps(answer).encode()

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        for start in range(0, len(raw), 1000):
            await response.write(raw[start : start + 1000])
            await asyncio.sleep(0.01)
        await response.write_eof()
        return response

    server.handler = handler
    client = client_for(server.base)
    assert await client.edit_original(42, "tok", PAYLOAD) == answer
    assert await client.edit_original(42, "tok", PAYLOAD) == answer  # same connection after
    assert client.connections_opened == 1
    await client.close()


async def test_a_429_from_discord_is_retried_after_its_retry_after(server: Server) -> None:
    async def handler(request: web.Request) -> web.Response:
        if len(server.requests) == 1:
            body = {"message": "You are being rate limited.", "retry_after": 0.3, "global": False}
            return json_answer(429, body, Via="1.1 google")
        return web.Response(status=204)

    server.handler = handler
    client = client_for(server.base)
    started = time.monotonic()
    assert await client.post_callback(1, "tok", PAYLOAD) is None
    assert time.monotonic() - started >= 0.3
    assert len(server.requests) == 2
    assert server.requests[0]["body"] == server.requests[1]["body"] == PAYLOAD
    await client.close()


async def test_a_429_without_via_is_cloudflare_and_not_retried(server: Server) -> None:
    async def handler(request: web.Request) -> web.Response:
        return json_answer(429, {"message": "banned", "retry_after": 0.01})

    server.handler = handler
    client = client_for(server.base)
    with pytest.raises(discord.HTTPException) as caught:
        await client.post_callback(1, "tok", PAYLOAD)
    assert caught.value.status == 429
    assert len(server.requests) == 1
    await client.close()


async def test_a_5xx_is_retried_five_times_in_all(server: Server) -> None:
    pauses: list[int] = []

    def pause(attempt: int) -> float:
        pauses.append(attempt)
        return 0.0

    async def fail_twice(request: web.Request) -> web.Response:
        return web.Response(status=502 if len(server.requests) <= 2 else 204)

    server.handler = fail_twice
    client = client_for(server.base, pause=pause)
    assert await client.post_callback(1, "tok", PAYLOAD) is None
    assert len(server.requests) == 3 and pauses == [0, 1]

    async def always_fail(request: web.Request) -> web.Response:
        return json_answer(500, {"message": "500: Internal Server Error", "code": 0})

    server.handler = always_fail
    server.requests.clear()
    pauses.clear()
    with pytest.raises(discord.DiscordServerError) as caught:
        await client.post_callback(1, "tok", PAYLOAD)
    assert caught.value.status == 500
    assert len(server.requests) == 5 and pauses == [0, 1, 2, 3]
    await client.close()


@pytest.mark.parametrize(
    ("status", "body", "error", "code"),
    [
        (404, {"message": "Unknown interaction", "code": 10062}, discord.NotFound, 10062),
        (403, {"message": "Missing Access", "code": 50001}, discord.Forbidden, 50001),
        (400, {"message": "already acknowledged", "code": 40060}, discord.HTTPException, 40060),
    ],
)
async def test_errors_are_discord_py_exceptions_with_discord_error_codes(
    server: Server, status: int, body: dict[str, Any], error: type[Exception], code: int
) -> None:
    async def handler(request: web.Request) -> web.Response:
        return json_answer(status, body)

    server.handler = handler
    client = client_for(server.base)
    with pytest.raises(error) as caught:
        await client.post_callback(1, "tok", PAYLOAD)
    assert type(caught.value) is error
    assert caught.value.status == status  # type: ignore[attr-defined]
    assert caught.value.code == code  # type: ignore[attr-defined]
    assert body["message"] in str(caught.value)
    assert len(server.requests) == 1
    # A refusal leaves the connection usable.
    server.handler = lambda request: server.no_content()
    assert await client.post_callback(1, "tok", PAYLOAD) is None
    assert client.connections_opened == 1
    await client.close()


async def test_a_connection_the_server_closed_while_idle_is_replaced(server: Server) -> None:
    client = client_for(server.base)
    await client.post_callback(1, "tok", PAYLOAD)
    await asyncio.sleep(0.6)  # past the server's keep-alive timeout (0.3 s)
    assert await client.post_callback(2, "tok", PAYLOAD) is None
    assert client.connections_opened == 2
    assert len(server.requests) == 2
    await client.close()


async def test_a_connection_idle_too_long_is_not_reused(server: Server) -> None:
    client = client_for(server.base, idle_seconds=0.05)
    await client.post_callback(1, "tok", PAYLOAD)
    await asyncio.sleep(0.1)
    await client.post_callback(2, "tok", PAYLOAD)
    assert client.connections_opened == 2
    await client.close()


async def test_a_hung_try_times_out_and_its_connection_is_dropped(server: Server) -> None:
    release = asyncio.Event()

    async def hang_once(request: web.Request) -> web.Response:
        if len(server.requests) == 1:
            await release.wait()
        return web.Response(status=204)

    server.handler = hang_once
    client = client_for(server.base, attempt_seconds=0.2)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await client.post_callback(1, "tok", PAYLOAD)
    assert time.monotonic() - started < 2
    assert await client.post_callback(2, "tok", PAYLOAD) is None
    assert client.connections_opened == 2  # the hung one was not reused
    await client.close()
    release.set()


async def test_a_closed_client_refuses_and_closes_its_connections(server: Server) -> None:
    client = client_for(server.base)
    await client.post_callback(1, "tok", PAYLOAD)
    await client.close()
    with pytest.raises(RuntimeError, match="closed"):
        await client.post_callback(2, "tok", PAYLOAD)
    assert len(server.requests) == 1


def test_a_base_that_is_not_http_is_refused() -> None:
    with pytest.raises(ValueError, match="http"):
        client_for("ftp://example.com/api")
    with pytest.raises(ValueError, match="http"):
        client_for("not a url")


# -- a misbehaving server --------------------------------------------------------------


class RawServer:
    """An HTTP/1.1 server written out by hand; ``answer(n)`` says what to do with the
    n-th request (1-based): bytes to send back, or None to close without answering. With
    ``hang_up`` it closes the connection after each answer."""

    def __init__(self, answer: Callable[[int], bytes | None]) -> None:
        self.answer = answer
        self.hang_up = False
        self.requests = 0
        self.connections = 0
        self.base = ""

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                self.requests += 1
                out = self.answer(self.requests)
                if out is None:
                    break
                writer.write(out)
                await writer.drain()
                if self.hang_up:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


NO_CONTENT = b"HTTP/1.1 204 No Content\r\n\r\n"


@pytest_asyncio.fixture
async def raw() -> AsyncIterator[Callable[[Callable[[int], bytes | None]], RawServer]]:
    servers: list[asyncio.Server] = []

    async def start(answer: Callable[[int], bytes | None]) -> RawServer:
        raw_server = RawServer(answer)
        server = await asyncio.start_server(raw_server.serve, "127.0.0.1", 0)
        servers.append(server)
        raw_server.base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/api/v10"
        return raw_server

    yield start  # type: ignore[misc]
    for server in servers:
        server.close()
        await server.wait_closed()


async def test_a_reused_connection_closed_without_an_answer_is_retried_once(raw: Any) -> None:
    server = await raw(lambda n: None if n == 2 else NO_CONTENT)
    client = client_for(server.base)
    await client.post_callback(1, "tok", PAYLOAD)
    assert await client.post_callback(2, "tok", PAYLOAD) is None
    assert server.requests == 3 and server.connections == 2
    await client.close()


async def test_a_fresh_connection_closed_without_an_answer_is_an_error(raw: Any) -> None:
    server = await raw(lambda n: None)
    client = client_for(server.base)
    with pytest.raises(ConnectionClosed):
        await client.post_callback(1, "tok", PAYLOAD)
    assert server.requests == 1
    await client.close()


async def test_an_answer_cut_short_is_an_error_and_not_retried(raw: Any) -> None:
    cut = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"
    server = await raw(lambda n: NO_CONTENT if n == 1 else cut)
    client = client_for(server.base)
    await client.post_callback(1, "tok", PAYLOAD)
    server.hang_up = True
    with pytest.raises(ConnectionClosed):
        await client.post_callback(2, "tok", PAYLOAD)
    assert server.requests == 2  # something came back: it may have been acted on
    await client.close()


async def test_an_unreadable_answer_is_an_error(raw: Any) -> None:
    server = await raw(lambda n: b"SPDY/9 what\r\n\r\n")
    client = client_for(server.base)
    with pytest.raises(ConnectionClosed, match="unreadable"):
        await client.post_callback(1, "tok", PAYLOAD)
    await client.close()


async def test_a_server_that_says_close_gets_a_new_connection_next_time(raw: Any) -> None:
    closing = b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"
    server = await raw(lambda n: closing)
    client = client_for(server.base)
    for number in range(3):
        assert await client.post_callback(number + 1, "tok", PAYLOAD) is None
    assert client.connections_opened == 3 and server.requests == 3
    await client.close()


# -- TLS ---------------------------------------------------------------------------------


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed key and certificate for "localhost", made by the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    command += ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"]
    command += ["-addext", "subjectAltName=DNS:localhost"]
    subprocess.run(command, check=True, capture_output=True)
    return key, cert


async def test_https_with_the_servers_certificate_checked(
    server: Server, certificate: tuple[Path, Path]
) -> None:
    key, cert = certificate
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert, key)
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", server.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_context)
    await site.start()
    port = runner.addresses[0][1]
    try:
        trusting = ssl.create_default_context(cafile=str(cert))
        # The name checked is the URL's, so a certificate for localhost needs "localhost".
        client = client_for(f"https://localhost:{port}/api/v10", ssl_context=trusting)
        assert await client.post_callback(1, "tok", PAYLOAD) is None
        assert await client.post_callback(2, "tok", PAYLOAD) is None
        assert client.connections_opened == 1
        await client.close()
        stranger = client_for(f"https://localhost:{port}/api/v10")  # the system's CAs only
        with pytest.raises(ssl.SSLCertVerificationError):
            await stranger.post_callback(3, "tok", PAYLOAD)
        await stranger.close()
        assert len(server.requests) == 2
    finally:
        await runner.cleanup()
