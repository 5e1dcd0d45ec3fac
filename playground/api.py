"""The page and its JSON API, served by aiohttp. Every request names the member acting or
reading (``as``: a member id); errors answer ``{"error": "..."}`` with 400 (what Discord's
client would refuse) or 404 (an unknown member, channel or message).

    GET  /api/state[?as=ID]                  server, channels, members, names (+ unread)
    GET  /api/channels/CID/messages?as=ID    the channel as that member sees it
    GET  /api/commands?as=ID&channel=CID     the commands offered to them, localized
    POST /api/commands      {as, channel, name, options}       run a slash command
    POST /api/user-commands {as, channel, name, target}        a user context-menu command
                                                               (target: a member or the bot)
    POST /api/click         {as, message, custom_id}           click a button
    POST /api/read          {as, channel}                      mark a channel read
    POST /api/locale        {as, locale}                       a member's client language
    POST /api/server-locale {locale}                           the server's language
    GET  /api/events        server-sent events: "changed" with a revision number

docs/playground.md describes the shapes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from aiohttp import web

from discord_emulator import Channel, InteractionHandle, User, UserActionError
from discord_emulator.client import run_user_command

from .guard import Hosts, guard
from .view import channel_view, commands_view, mark_read, message_view, state_view
from .world import World

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
HEARTBEAT = 15.0
CSP = "default-src 'self'; img-src 'self' data:"
"""Scripts and styles only from the page's own files: no inline script could ever run."""
STATIC = ("index.html", "app.js", "composer.js", "draw.js", "markdown.js", "texts.js", "style.css")


class Events:
    """Tells every open page that something changed; pages then fetch what they show."""

    def __init__(self) -> None:
        self.revision = 0
        self._changed = asyncio.Event()
        self.closing = False

    def changed(self) -> None:
        self.revision += 1
        self._changed.set()

    async def next(self, seen: int) -> int:
        while self.revision == seen and not self.closing:
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), HEARTBEAT)
            if self.revision == seen:
                return seen  # a heartbeat
        return self.revision

    def close(self) -> None:
        self.closing = True
        self._changed.set()


WORLD = web.AppKey("world", World)
EVENTS = web.AppKey("events", Events)


class BadRequest(Exception):
    pass


def _error(status: int, text: str) -> web.Response:
    return web.json_response({"error": text}, status=status)


@web.middleware
async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except (UserActionError, BadRequest, ValueError) as exc:
        return _error(400, str(exc))
    except LookupError as exc:
        return _error(404, str(exc).strip("'\""))


def _member(world: World, raw: Any, field: str = "as", *, bot: bool = False) -> User:
    if raw is None or not str(raw).isdigit():
        raise BadRequest(f"'{field}' must be a member id (see /api/state)")
    return world.member(raw, bot=bot)


def _channel(world: World, raw: Any, viewer: User) -> Channel:
    """A channel the page lists for ``viewer`` (a server's, their DM, their group DM)."""
    channel = world.emu.channel(raw) if raw is not None and str(raw).isdigit() else None
    if channel is None or not world.shows(channel, viewer):
        raise LookupError(f"no channel {raw} for {viewer.name}")
    return channel


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequest("the body must be a JSON object") from exc
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return body


async def _outcome(world: World, handle: InteractionHandle) -> web.Response:
    """Wait for the bot's acknowledgement (or "This interaction failed") and say which."""
    response = await handle.response()
    message = None
    if response.message is not None:
        message = message_view(world, response.message, handle.user)
    return web.json_response(
        {
            "interaction": str(handle.id),
            "failed": response.failed,
            "failure": handle.failure_text,
            "callback_type": None if response.type is None else int(response.type),
            "message": message,
        }
    )


async def get_state(request: web.Request) -> web.Response:
    world = request.app[WORLD]
    raw = request.query.get("as")
    viewer = None if raw is None else _member(world, raw)
    return web.json_response(state_view(world, viewer))


async def get_messages(request: web.Request) -> web.Response:
    world = request.app[WORLD]
    viewer = _member(world, request.query.get("as"))
    channel = _channel(world, request.match_info["channel"], viewer)
    return web.json_response(channel_view(world, channel, viewer))


async def get_commands(request: web.Request) -> web.Response:
    world = request.app[WORLD]
    viewer = _member(world, request.query.get("as"))
    channel = _channel(world, request.query.get("channel"), viewer)
    return web.json_response(commands_view(world, viewer, channel))


def _option_values(world: World, command: dict[str, Any], given: Any, user: User) -> dict[str, Any]:
    """The page sends users, channels and roles as ids; the emulator takes the objects."""
    if not isinstance(given, dict):
        raise BadRequest("options must be an object of option names to values")
    types = {o["name"]: o["type"] for o in command.get("options") or []}
    values: dict[str, Any] = {}
    for name, value in given.items():
        kind = types.get(name)
        if kind in (6, 9) and isinstance(value, str) and value.isdigit():
            found = world.emu.user(value) or world.guild.roles.get(int(value))
            if found is None:
                raise LookupError(f"no user or role {value}")
            values[name] = found
        elif kind == 7 and isinstance(value, str):
            values[name] = _channel(world, value, user)
        elif kind == 8 and isinstance(value, str) and value.isdigit():
            values[name] = world.guild.roles[int(value)]
        else:
            values[name] = value
    return values


async def post_command(request: web.Request) -> web.Response:
    world = request.app[WORLD]
    body = await _body(request)
    user = _member(world, body.get("as"))
    channel = _channel(world, body.get("channel"), user)
    name = str(body.get("name") or "")
    scope = None if channel.guild is None else channel.guild.id
    command = world.emu.commands.find(name.split()[0] if name.split() else "", scope)
    options = _option_values(world, command or {}, body.get("options") or {}, user)
    handle = await world.emu.run_command(user, channel, name, **options)
    return await _outcome(world, handle)


async def post_user_command(request: web.Request) -> web.Response:
    world = request.app[WORLD]
    body = await _body(request)
    user = _member(world, body.get("as"))
    channel = _channel(world, body.get("channel"), user)
    target = _member(world, body.get("target"), "target", bot=True)
    handle = await run_user_command(world.emu, user, channel, str(body.get("name")), target)
    return await _outcome(world, handle)


async def post_click(request: web.Request) -> web.Response:
    world = request.app[WORLD]
    body = await _body(request)
    user = _member(world, body.get("as"))
    raw = str(body.get("message") or "")
    message = world.emu.message(raw) if raw.isdigit() else None
    if message is None or message.deleted or not world.shows(message.channel, user):
        raise LookupError(f"no message {body.get('message')}")
    custom_id = body.get("custom_id")
    if not isinstance(custom_id, str):
        raise BadRequest("custom_id names the button")
    handle = await world.emu.click(user, message, custom_id=custom_id)
    return await _outcome(world, handle)


async def post_read(request: web.Request) -> web.Response:
    world = request.app[WORLD]
    body = await _body(request)
    user = _member(world, body.get("as"))
    channel = _channel(world, body.get("channel"), user)
    if mark_read(world, user, channel):
        world.changed()
        request.app[EVENTS].changed()
    return web.json_response({"unread_mentions": 0})


async def post_locale(request: web.Request) -> web.Response:
    world = request.app[WORLD]
    body = await _body(request)
    user = _member(world, body.get("as"))
    world.emu.set_user_locale(user, body.get("locale"))
    world.changed()
    request.app[EVENTS].changed()
    return web.json_response({"locale": world.emu.locale_of(user)})


async def post_server_locale(request: web.Request) -> web.Response:
    world = request.app[WORLD]
    body = await _body(request)
    world.emu.set_guild_locale(world.guild, str(body.get("locale")))
    return web.json_response({"locale": world.guild.locale})


async def get_events(request: web.Request) -> web.StreamResponse:
    events = request.app[EVENTS]
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    seen = events.revision
    with contextlib.suppress(ConnectionResetError):  # the page went away
        await response.write(f"event: changed\ndata: {seen}\n\n".encode())
        while not events.closing:
            now = await events.next(seen)
            await asyncio.sleep(0.03)  # one fetch for a burst of changes
            if now == seen:
                await response.write(b": still here\n\n")
            else:
                seen = events.revision
                await response.write(f"event: changed\ndata: {seen}\n\n".encode())
    return response


def _static(name: str, content_type: str) -> Handler:
    async def serve(_request: web.Request) -> web.Response:
        text = resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")
        return web.Response(
            text=text,
            content_type=content_type,
            headers={
                "Cache-Control": "no-cache",
                "Content-Security-Policy": CSP,
                "X-Content-Type-Options": "nosniff",
            },
        )

    return serve


def make_app(world: World, events: Events, hosts: Hosts) -> web.Application:
    """The page and its API, answering only as ``hosts`` (see guard.py)."""
    app = web.Application(middlewares=[guard(hosts), errors])
    app[WORLD] = world
    app[EVENTS] = events
    app.router.add_get("/", _static("index.html", "text/html"))
    for name in STATIC[1:]:
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        app.router.add_get(f"/static/{name}", _static(name, kind))
    app.router.add_get("/api/state", get_state)
    app.router.add_get("/api/channels/{channel}/messages", get_messages)
    app.router.add_get("/api/commands", get_commands)
    app.router.add_post("/api/commands", post_command)
    app.router.add_post("/api/user-commands", post_user_command)
    app.router.add_post("/api/click", post_click)
    app.router.add_post("/api/read", post_read)
    app.router.add_post("/api/locale", post_locale)
    app.router.add_post("/api/server-locale", post_server_locale)
    app.router.add_get("/api/events", get_events)
    return app
