"""What the page refuses: other sites driving it from a visitor's browser.

Anyone who can send the page a request can act as every member, so a web page elsewhere
must not be able to. Two ways in are closed here:

- DNS rebinding: a foreign name made to resolve to 127.0.0.1 reaches the page as the same
  origin, but its requests carry that name in ``Host``. Only the names the page is served
  under are accepted (the loopback names and the ``--host`` given, each with the port);
  anything else gets 421.
- Cross-site requests: a form or a ``fetch`` from another site can POST without the
  browser asking first, if the body is ``text/plain`` or a form. A changing request must be
  ``application/json`` (415 otherwise), which a cross-site page can only send after a CORS
  preflight this server never grants, and must not come from another origin: a browser
  always sends ``Origin`` on a cross-site POST, and ``Sec-Fetch-Site`` on every request,
  so either one naming another site gets 403. A request with neither comes from a tool
  (curl, a script), not a browser, and is allowed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import hdrs, web
from aiohttp.typedefs import Middleware

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def _named(host: str) -> str:
    """``host`` as a Host header writes it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class Hosts:
    """The ``Host`` values the page answers: filled once the port is known."""

    def __init__(self) -> None:
        self.allowed: set[str] = set()

    def serve(self, host: str, port: int) -> None:
        """Accept the loopback names and ``host`` on ``port``; port 80 may go unwritten."""
        for name in {*LOOPBACK, _named(host.lower())}:
            self.allowed.add(f"{name}:{port}")
            if port == 80:
                self.allowed.add(name)

    def origins(self) -> set[str]:
        return {f"http://{host}" for host in self.allowed}


def _refuse(status: int, reason: str) -> web.Response:
    return web.Response(status=status, text=reason + "\n")


def guard(hosts: Hosts) -> Middleware:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.headers.get(hdrs.HOST, "").lower()
        if host not in hosts.allowed:
            return _refuse(421, f"this playground is not served as {host or 'no Host'}")
        if request.method in CHANGING:
            origin = request.headers.get(hdrs.ORIGIN)
            site = request.headers.get("Sec-Fetch-Site")
            if origin is not None and origin.lower() not in hosts.origins():
                return _refuse(403, "cross-site requests are refused: wrong Origin")
            if site is not None and site not in ("same-origin", "none"):
                return _refuse(403, f"cross-site requests are refused: Sec-Fetch-Site {site}")
            if request.content_type != "application/json":
                return _refuse(415, "changing requests must be Content-Type: application/json")
        return await handler(request)

    return middleware
