"""``python -m playground``: the bot in a Discord of its own, played from a browser.

Starts the emulator (a server, three channels, three members) on a free loopback port,
the real bot as ``python -m bot`` against it, and the page on http://127.0.0.1:8000.
The page's address is printed on a line of its own once the bot is ready. Ctrl-C (or
SIGTERM) stops the bot, saves the world and exits; the next start, with the same
``--data`` folder, finds the same server, messages and games.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import logging
import signal
import sys
from pathlib import Path

from aiohttp import web

from bot.launcher import BotExited, BotProcess, bot_env
from discord_emulator import Emulator

from .api import Events, make_app
from .guard import Hosts
from .world import BOT_NAME, World

log = logging.getLogger("playground")

READY_TIMEOUT = 60.0
"""How long the bot may take to connect and sync its commands."""
STOP_WITHIN = 20.0
"""How long the bot may take to stop after SIGTERM before it is killed."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m playground",
        description="Play the bot in a browser, against a Discord emulator: no account, no token.",
    )
    parser.add_argument("--port", type=int, default=8000, help="the page's port (default 8000)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address the page listens on (default 127.0.0.1: this machine only), and the"
        " one name besides the loopback names it answers under: give the name or address"
        " people will type. Anyone who reaches the page can act as every member.",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=Path("playground-data"),
        help="the folder for the world, the bot's database and its log (default"
        " ./playground-data); the next start with it finds the same games",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port: {args.port} is not a port number")
    return args


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def page_url(host: str, port: int) -> str:
    try:
        shown = f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    except ValueError:
        shown = host
    return f"http://{shown}:{port}/"


async def run(args: argparse.Namespace) -> int:
    folder: Path = args.data
    emu = Emulator(bot_name=BOT_NAME, wait_timeout=READY_TIMEOUT)
    world = World(emu, folder)
    events = Events()
    emu.listeners.append(events.changed)
    hosts = Hosts()
    runner = web.AppRunner(make_app(world, events, hosts), shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        print(
            f"error: cannot serve the page on {args.host}:{args.port}: {exc.strerror}."
            " Is another playground running? Choose another --port.",
            file=sys.stderr,
        )
        return 2
    port = runner.addresses[0][1]
    hosts.serve(args.host, port)
    if not _loopback(args.host):
        print(
            f"warning: the page is served on {args.host}: anyone who can reach it can act as"
            " every member of the playground.",
            file=sys.stderr,
        )
    await emu.start()
    print(
        f"{'Loaded' if not world.fresh else 'Created'} the server {world.guild.name!r}"
        f" in {folder}; starting the bot (its log: {folder / 'bot.log'})...",
        flush=True,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # In the data folder (so it reads no .env of the user's with a real token), its SQLite
    # file and log there, the user's other settings (TURN_TIMEOUT_SECONDS...) passed on;
    # in a session of its own, so that a Ctrl-C reaches the playground only, which then
    # stops the bot with SIGTERM (its orderly shutdown) and waits for it.
    # Commands are synced globally (no DEV_GUILD_ID), as a user-installable app's must be
    # to reach DMs, group DMs and the server without the bot; at every start (--sync), so
    # the page always offers the running code's commands.
    env = bot_env(emu, folder / "tictactoe.db", inherit=True)
    env.setdefault("SHUTDOWN_GRACE_SECONDS", "5")
    bot = await BotProcess.start(env, folder, "--sync", emu=emu, new_session=True)
    status = 0
    try:
        waiting = bot.wait_ready(emu, command="tictactoe", within=READY_TIMEOUT)
        ready = asyncio.ensure_future(waiting)
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait({ready, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if ready.done():
            stopping.cancel()
            ready.result()
            print(page_url(args.host, port), flush=True)
            exited = asyncio.ensure_future(bot.process.wait())
            stopping = asyncio.ensure_future(stop.wait())
            await asyncio.wait({exited, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if exited.done():
                raise BotExited(f"the bot exited with status {bot.returncode}")
        else:
            ready.cancel()
    except (BotExited, TimeoutError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else "the bot was not ready within a minute"
        print(f"error: {reason}; the end of its log:\n{bot.log_tail()}", file=sys.stderr)
        status = 1
    finally:
        print("Stopping...", file=sys.stderr, flush=True)
        try:
            await bot.stop(within=STOP_WITHIN)
        except BotExited:
            print(f"the bot did not stop within {STOP_WITHIN:g} s: killed", file=sys.stderr)
        events.close()
        await world.close()
        await runner.cleanup()
        await emu.stop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return status


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.data = args.data.resolve()
    args.data.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(run(args))
    return 130


if __name__ == "__main__":
    sys.exit(main())
