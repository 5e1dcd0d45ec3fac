"""Run the real bot in the test's own event loop against the Discord emulator.

    async with Emulator() as emu:
        guild = emu.add_guild("Arcade")
        async with BotInProcess.launch(emu, tmp_path, dev_guild=guild) as bot:
            ...                      # the bot is connected and its commands are synced
            await bot.sweep()        # one sweep now, instead of waiting for the next
        assert bot.returncode == 0   # left the block: stopped as on SIGTERM, and waited for

It is what ``python -m bot`` runs, given the same variables (``bot.launcher.bot_env``):
``Settings.from_env``, ``use_endpoints``, ``open_store``, ``TicTacToeBot`` and
``serve`` (``bot/__main__.py``), with a ``stop`` event where the process has its signal
handlers. Only the process's own concerns stay out: reading ``.env`` and the
environment, the redacting stderr handler, signals and exit codes; ``bot.launcher``
starts the process for the tests whose subject they are.

The bot's log is captured by a logging handler with the process's format, so
``bot.log()`` and ``assert_log_clean`` read it as they read a process's stderr. The
sweep runs at start-up as in the process, and then every ``SWEEP_INTERVAL_SECONDS``
(300 s, the longest allowed, unless the test sets it): tests call ``sweep()`` instead
of waiting for one.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import discord
import yarl

from bot.__main__ import GIL_SWITCH_INTERVAL, LOG_DATE_FORMAT, LOG_FORMAT, open_store, serve
from bot.__main__ import use_endpoints as point_at
from bot.launcher import bot_env
from bot.settings import Settings
from bot.ui.client import TicTacToeBot

__all__ = ["IN_PROCESS_ENV", "BotInProcess", "LogCapture"]

IN_PROCESS_ENV = {"SWEEP_INTERVAL_SECONDS": "300"}
"""What differs from a process's test settings: no sweep but the start-up one, unless
asked (``BotInProcess.sweep``)."""

STARTS = 0
"""How many bots this test process started in-process (reported at the session's end)."""


class LogCapture(logging.Handler):
    """Every record of the test process's loggers but the emulator's, formatted as the
    bot process writes them to stderr."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter(LOG_FORMAT, LOG_DATE_FORMAT))

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("discord_emulator"):
            return False
        # What the process's handler leaves out too: there is no voice here.
        return not (
            record.name == "discord.client" and "voice will NOT be supported" in str(record.msg)
        )

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(self.format(record) + "\n")
        except Exception:  # as logging.Handler does: never fail the caller
            self.handleError(record)

    def text(self) -> str:
        return "".join(self.lines)


@contextlib.contextmanager
def captured(settings: Settings) -> Any:
    """The root logger's records go to a ``LogCapture`` too, at the bot's level, as
    ``configure_logging`` sets them in the process; the levels come back afterwards."""
    capture = LogCapture()
    root, chatter = logging.getLogger(), logging.getLogger("discord")
    levels = root.level, chatter.level
    root.addHandler(capture)
    root.setLevel(settings.log_level_number)
    chatter.setLevel(max(settings.log_level_number, logging.INFO))
    try:
        yield capture
    finally:
        root.removeHandler(capture)
        root.setLevel(levels[0])
        chatter.setLevel(levels[1])


@contextlib.contextmanager
def endpoints(settings: Settings) -> Any:
    """``use_endpoints`` for this bot; discord.py's defaults come back afterwards."""
    route, gateway = discord.http.Route, discord.gateway.DiscordWebSocket
    before = route.BASE, gateway.DEFAULT_GATEWAY
    switch = sys.getswitchinterval()
    point_at(settings)
    sys.setswitchinterval(GIL_SWITCH_INTERVAL)  # as main() sets it for the process
    try:
        yield
    finally:
        route.BASE, gateway.DEFAULT_GATEWAY = before[0], yarl.URL(before[1])
        sys.setswitchinterval(switch)


class BotInProcess:
    """One bot running in this event loop; see the module docstring. The interface of
    ``BotProcess`` that the end-to-end tests use: ``log``, ``returncode``, ``stop``,
    ``wait_until``; and ``client``, the running ``TicTacToeBot``."""

    def __init__(self, client: TicTacToeBot, capture: LogCapture) -> None:
        self.client = client
        self.capture = capture
        self.stopping = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.code: int | None = None

    @classmethod
    @contextlib.asynccontextmanager
    async def launch(
        cls,
        emu: Any,
        workdir: Path,
        *,
        dev_guild: Any = None,
        database: Path | None = None,
        shards: tuple[int, Sequence[int]] | None = None,
        force_sync: bool = False,
        ready_timeout: float = 30.0,
        stop_timeout: float = 15.0,
        **extra_env: str,
    ) -> AsyncIterator[BotInProcess]:
        """Start the bot against ``emu``; yield once it is connected (and, with
        ``dev_guild``, has synced its commands there); on exit stop it as SIGTERM does
        and wait for it to end. ``force_sync`` is ``--sync``; ``shards=(count, ids)``
        runs those shards and waits until each has a live session, as
        ``BotProcess.launch`` does."""
        global STARTS
        database = database or workdir / "data" / "tictactoe.db"
        if shards is not None:
            count, ids = shards
            extra_env = {"SHARD_COUNT": str(count), "SHARD_IDS": ",".join(map(str, ids))} | dict(
                extra_env
            )
        env = bot_env(emu, database, dev_guild=dev_guild, **{**IN_PROCESS_ENV, **extra_env})
        settings = Settings.from_env(env)
        sessions = len(emu.dispatched("READY"))
        with captured(settings) as capture, endpoints(settings):
            store = await open_store(settings)
            bot = cls(TicTacToeBot(settings, store, force_sync=force_sync), capture)
            bot.task = asyncio.create_task(bot.run(store), name="bot-in-process")
            STARTS += 1
            try:
                async with asyncio.timeout(ready_timeout):
                    if shards is None:
                        ready = emu.wait_for(lambda: len(emu.dispatched("READY")) > sessions)
                    else:
                        ready = emu.wait_for_shards(*shards)
                    await bot.wait_until(ready)
                    if dev_guild is not None and (shards is None or 0 in shards[1]):
                        await bot.wait_until(emu.wait_for_commands("tictactoe", guild=dev_guild))
                yield bot
            finally:
                await bot.stop(within=stop_timeout)
                # setup_hook froze the heap for the process's life (freeze_heap); this
                # process goes on with other tests, whose garbage must stay collectable.
                gc.unfreeze()

    async def run(self, store: Any) -> None:
        """What ``bot.__main__.run`` does once the store is open, with ``stopping`` for
        the signals."""
        try:
            async with self.client:
                await serve(self.client, self.client.settings.token, self.stopping)
        except Exception:
            logging.getLogger("bot").critical(
                "The bot stopped on an unexpected error", exc_info=True
            )
            raise
        finally:
            await store.close()
        logging.getLogger("bot").info("Stopped")

    async def sweep(self, within: float = 10.0) -> None:
        """One sweep, as the sweeper's loop runs it (timeouts, expiries, turn
        notifications, pruning), and what it sent gone out (the outbox drained)."""
        await self.client.sweep_once()
        await self.client.outbox.drain(within)

    async def wait_until(self, waiting: Any) -> Any:
        """Await ``waiting``, failing early (with the bot's log) if the bot stops."""
        assert self.task is not None
        task = asyncio.ensure_future(waiting)
        done, _ = await asyncio.wait({task, self.task}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        task.cancel()
        raise AssertionError(f"the bot stopped ({self.returncode}):\n{self.log()}")

    @property
    def returncode(self) -> int | None:
        """None while it runs; then 0 if it stopped cleanly, 1 if on an error (as the
        process's exit status)."""
        if self.task is None or not self.task.done():
            return None
        if self.task.cancelled() or self.task.exception() is not None:
            return 1
        return 0

    async def stop(self, *, within: float = 15.0) -> int:
        """Stop it as SIGTERM does and wait for the end; cancel it after ``within`` s."""
        assert self.task is not None
        self.stopping.set()
        try:
            await asyncio.wait_for(asyncio.shield(self.task), within)
        except TimeoutError:
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
            raise AssertionError(f"the bot did not stop within {within} s:\n{self.log()}") from None
        except Exception:
            pass  # its traceback is in the log; returncode says 1
        code = self.returncode
        assert code is not None
        return code

    def log(self) -> str:
        """What the bot logged so far."""
        return self.capture.text()
