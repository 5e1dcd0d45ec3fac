"""``python -m bot``: read the settings, open the database, run until SIGTERM or SIGINT.

Errors an admin can fix (a missing or rejected token, an unusable database path, a bad
setting) end the process with one line on stderr naming the setting, and exit status 2
for a bad setting or 1 otherwise; tracebacks are kept for bugs (in the log).

The token and the database's passwords stay out of sight: ``.env`` is read from the
working folder only and never copied into ``os.environ``, DISCORD_TOKEN and DATABASE_URL
are removed from ``os.environ`` once read (so no child process, such as the search
pool's workers, inherits them), and everything the process logs, tracebacks and
warnings included, goes through a handler that redacts them: the token, and every
password the database connection may use, in whatever form (``database_secrets``).

``discord.Client.run`` would not close the bot on SIGTERM, so this module runs its own
event loop and turns both signals into an orderly ``bot.close()``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import logging
import os
import signal
import sqlite3
import stat
import sys
import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TextIO
from urllib.parse import quote

import aiohttp
import discord
import yarl
from dotenv import dotenv_values

from bot.errors import StorageError
from bot.settings import Settings, SettingsError, database_secrets

if TYPE_CHECKING:  # imported when running: a bad setting should not need the whole bot
    from bot.games.queries import Store
    from bot.ui.client import TicTacToeBot

log = logging.getLogger("bot")

EXIT_OK, EXIT_FAILURE, EXIT_BAD_SETTINGS = 0, 1, 2
GIL_SWITCH_INTERVAL = 0.0005
"""Seconds a busy event loop may keep the GIL from the SQLite thread (Python's default is
5 ms). Every query returns through that thread, so each may wait this long under load (see
docs/decisions.md#a-short-gil-switch-interval)."""


class FatalError(Exception):
    """A start-up failure the admin can fix; its text is the one line shown to them."""


REDACTED = "[token]"
REDACTED_PASSWORD = "[password]"
LOG_FORMAT = "%(asctime)s %(levelname)-8s %(name)s: %(message)s"
LOG_DATE_FORMAT = "%Y-%m-%d %H:%M:%S"


class RedactingHandler(logging.StreamHandler[TextIO]):
    """Writes records to stderr with the token (and ``passwords``) replaced in the whole
    formatted text.

    Redacting the finished text, rather than ``record.msg``, also covers tracebacks, stack
    traces and exceptions whose text holds a secret. A record that fails to format is
    reported by ``handleError`` with its arguments, so that report is redacted too.
    """

    def __init__(self, secret: str, passwords: Collection[str] = ()) -> None:
        super().__init__(sys.stderr)
        self.secret = secret
        self.passwords = tuple(passwords)
        self.setFormatter(logging.Formatter(LOG_FORMAT, LOG_DATE_FORMAT))

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record), self.secret, self.passwords)

    def handleError(self, record: logging.LogRecord) -> None:
        report = io.StringIO()
        with contextlib.redirect_stderr(report):
            super().handleError(record)
        sys.stderr.write(redact(report.getvalue(), self.secret, self.passwords))


def redact(text: str, secret: str, passwords: Collection[str] = ()) -> str:
    """``text`` with the token and each password replaced, the longest first (so that a
    password holding another is replaced whole), also as they appear percent-encoded."""
    if secret:
        text = text.replace(secret, REDACTED)
    forms = {form for password in passwords for form in (password, quote(password, safe=""))}
    for form in sorted(forms, key=len, reverse=True):
        if form:
            text = text.replace(form, REDACTED_PASSWORD)
    return text


def _not_about_voice(record: logging.LogRecord) -> bool:
    """discord.py warns at start-up that voice needs extra libraries; there is no voice here."""
    return not (
        record.name == "discord.client" and "voice will NOT be supported" in str(record.msg)
    )


def configure_logging(settings: Settings, passwords: Collection[str] = ()) -> None:
    """Every record to stderr through a ``RedactingHandler``, including those that find
    no handler (``logging.lastResort``)."""
    handler = RedactingHandler(settings.token, passwords)
    handler.addFilter(_not_about_voice)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(settings.log_level_number)
    # discord.py's HTTP and gateway chatter is only useful when debugging it.
    logging.getLogger("discord").setLevel(max(settings.log_level_number, logging.INFO))
    last_resort = RedactingHandler(settings.token, passwords)  # for those that do not propagate
    last_resort.setLevel(logging.WARNING)
    logging.lastResort = last_resort


def log_stray_errors() -> None:
    """Route what Python would print to stderr by itself through logging (and so through
    the redaction): warnings, uncaught exceptions in threads, and unraisable exceptions
    (``Exception ignored in: ...``). Uncaught ones in the main thread: see ``main``."""
    logging.captureWarnings(True)
    threading.excepthook = _log_thread_exception
    sys.unraisablehook = _log_unraisable


def _log_thread_exception(args: threading.ExceptHookArgs) -> None:
    if args.exc_type is SystemExit:  # what the default hook ignores too
        return
    name = args.thread.name if args.thread is not None else "?"
    log.error("Uncaught exception in thread %s", name, exc_info=_exc_info(args))


def _log_unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    about = unraisable.err_msg or "Exception ignored in"
    log.error("%s: %r", about, unraisable.object, exc_info=_exc_info(unraisable))


def _exc_info(
    args: threading.ExceptHookArgs | sys.UnraisableHookArgs,
) -> tuple[type[BaseException], BaseException, TracebackType | None] | None:
    if args.exc_value is None:  # not seen in practice; logging would print "NoneType"
        return None
    return (args.exc_type, args.exc_value, args.exc_traceback)


def read_environment(folder: Path) -> dict[str, str]:
    """The variables to read the settings from: ``folder/.env`` (not a parent folder's),
    with the real environment winning over it. Nothing is put into ``os.environ``."""
    try:
        from_file = dotenv_values(folder / ".env")
    except (OSError, UnicodeDecodeError) as exc:
        problem = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise SettingsError(".env", f"cannot be read: {problem}") from None
    values = {name: value for name, value in from_file.items() if value is not None}
    values.update(os.environ)
    return values


def warn_if_exposed(dotenv: Path) -> None:
    """Warn if ``dotenv`` holds the token and other users of this machine may read it."""
    if os.name != "posix":  # Windows has no mode bits to check
        return
    try:
        mode = dotenv.stat().st_mode
    except OSError:
        return
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        log.warning(
            "%s holds the token and is readable by other users (mode %03o); run: chmod 600 %s",
            dotenv,
            stat.S_IMODE(mode),
            dotenv,
        )


def use_endpoints(settings: Settings) -> None:
    """Point discord.py at a proxy or an emulator instead of discord.com, if configured.

    The one place the bot sets discord.py's class attributes: ``Route.BASE`` (where REST
    requests go) and ``DiscordWebSocket.DEFAULT_GATEWAY`` (the gateway asked for when no
    other is known). Neither is documented API, so if a discord.py upgrade renames one,
    this fails at start-up instead of silently talking to discord.com.
    """
    seams = (
        (discord.http.Route, "BASE", settings.api_base, "DISCORD_API_BASE"),
        (
            discord.gateway.DiscordWebSocket,
            "DEFAULT_GATEWAY",
            settings.gateway_url,
            "DISCORD_GATEWAY_URL",
        ),
    )
    for owner, name, value, setting in seams:
        if value is None:
            continue
        if not hasattr(owner, name):
            raise FatalError(
                f"{setting}: this discord.py ({discord.__version__}) has no"
                f" {owner.__name__}.{name} to point at it; the bot needs discord.py 2.7"
            )
        setattr(owner, name, value if name == "BASE" else yarl.URL(value))


def _db_error(problem: str) -> FatalError:
    return FatalError(f"DATABASE_PATH: {problem}")


def _url_error(problem: str) -> FatalError:
    return FatalError(f"DATABASE_URL: {problem}")


def check_database_path(path: Path) -> None:
    """Create the database's folder and check access, so SQLite's errors need no decoding."""
    fail = _db_error
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise fail(f"cannot create the folder {path.parent}: {exc.strerror}") from None
    if path.is_dir():
        raise fail(f"{path} is a folder; give the path of a database file")
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        raise fail(f"{path} is not readable and writable by this user")
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise fail(f"the folder {path.parent} is not writable (SQLite keeps its journal there)")


async def open_store(settings: Settings) -> Store:
    """Open (creating if needed) the database, or a FatalError naming the setting."""
    from bot.games.queries import Store

    if settings.database_url is None:
        check_database_path(settings.database_path)
    fail = _db_error if settings.database_url is None else _url_error
    try:
        store = await Store.open(settings.database)
    except StorageError as exc:
        raise fail(str(exc)) from None
    except (OSError, sqlite3.Error) as exc:
        raise fail(f"cannot open {settings.database_path}: {exc}") from None
    log.info("Database: %s at %s (schema %d)", store.engine, store.location, store.schema_version)
    return store


async def serve(bot: TicTacToeBot, token: str, stop: asyncio.Event | None = None) -> None:
    """Run the bot until it stops by itself or ``stop`` is set; without ``stop``, until
    SIGTERM or SIGINT asks it to (the tests run the bot in their own loop with one)."""
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT) if stop is None else ()
    stop = stop or asyncio.Event()
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    runner = asyncio.create_task(bot.start(token), name="discord")
    stopper = asyncio.create_task(stop.wait(), name="signals")
    try:
        await asyncio.wait({runner, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if runner.done():
            runner.result()  # raises what stopped it
            return
        log.info("Shutting down")
        await bot.close()
        try:
            await asyncio.wait_for(runner, timeout=10)
        except TimeoutError:
            log.warning("The gateway did not stop in time")
        except Exception:  # a signal during start-up cuts login or setup_hook short
            log.debug("Start-up interrupted by the shutdown", exc_info=True)
    finally:
        stopper.cancel()
        for sig in signals:
            loop.remove_signal_handler(sig)


async def run(settings: Settings, *, force_sync: bool = False) -> None:
    store = await open_store(settings)
    try:
        from bot.ui.client import TicTacToeBot

        async with TicTacToeBot(settings, store, force_sync=force_sync) as bot:
            await serve(bot, settings.token)
    except discord.LoginFailure:
        raise FatalError("DISCORD_TOKEN: Discord rejected the token (LoginFailure)") from None
    except StorageError as exc:
        setting = "DATABASE_PATH" if settings.database_url is None else "DATABASE_URL"
        raise FatalError(f"{setting}: {exc}") from None
    except (aiohttp.ClientConnectionError, OSError) as exc:
        where = settings.api_base or "discord.com"
        raise FatalError(f"Cannot reach Discord ({where}): {exc}") from None
    finally:
        await store.close()
    log.info("Stopped")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot", description="Run the tic-tac-toe bot.")
    parser.add_argument(
        "--sync",
        action="store_true",
        help="sync the slash commands with Discord at this start-up, even if unchanged",
    )
    args = parser.parse_args(argv)
    dotenv = Path.cwd() / ".env"
    env: dict[str, str] = {}
    passwords: set[str] = set()
    try:
        env = read_environment(dotenv.parent)
        token_from_file = "DISCORD_TOKEN" not in os.environ and bool(_token_in(env))
        os.environ.pop("DISCORD_TOKEN", None)  # no child process may inherit it
        os.environ.pop("DATABASE_URL", None)  # nor the database's password
        passwords = database_secrets(env.get("DATABASE_URL"), env)
        settings = Settings.from_env(env)
    except SettingsError as exc:
        print(f"error: {redact(str(exc), _token_in(env), passwords)}", file=sys.stderr)
        return EXIT_BAD_SETTINGS
    configure_logging(settings, passwords)
    log_stray_errors()
    if token_from_file:
        warn_if_exposed(dotenv)
    sys.setswitchinterval(GIL_SWITCH_INTERVAL)
    try:
        use_endpoints(settings)
        asyncio.run(run(settings, force_sync=args.sync))
    except FatalError as exc:
        print(f"error: {redact(str(exc), settings.token, passwords)}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:  # a second Ctrl-C during shutdown
        return EXIT_FAILURE
    except Exception:  # a bug: its traceback goes to the log, where the token is redacted
        log.critical("The bot stopped on an unexpected error", exc_info=True)
        return EXIT_FAILURE
    return EXIT_OK


def _token_in(env: Mapping[str, str]) -> str:
    return (env.get("DISCORD_TOKEN") or "").strip()


if __name__ == "__main__":
    sys.exit(main())
