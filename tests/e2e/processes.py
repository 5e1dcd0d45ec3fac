"""Run the real bot (``python -m bot``) as a subprocess against the Discord emulator.

    async with Emulator() as emu:
        guild = emu.add_guild("Arcade")
        async with BotProcess.launch(emu, tmp_path, dev_guild=guild) as bot:
            ...                      # the bot is connected and its commands are synced
        assert bot.returncode == 0   # left the block: SIGTERM, then waited for the exit

The bot's stderr goes to ``bot.log_path`` (read it with ``bot.log()``), so a failing
test can show what the bot said.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import sys
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[2]

__all__ = ["REPO", "BotProcess", "ai_paused", "ai_workers", "bot_env"]


def bot_env(emu: Any, database: Path, *, dev_guild: Any = None, **extra: str) -> dict[str, str]:
    """The environment that points the bot at ``emu``, with nothing inherited but PATH."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(REPO),
        "PYTHONUNBUFFERED": "1",
        "DISCORD_TOKEN": emu.bot_token,
        "DISCORD_API_BASE": emu.api_base,
        "DISCORD_GATEWAY_URL": emu.gateway_url,
        "DATABASE_PATH": str(database),
        "LOG_LEVEL": "INFO",
        "SWEEP_INTERVAL_SECONDS": "1",
        "SHUTDOWN_GRACE_SECONDS": "5",
    }
    if dev_guild is not None:
        env["DEV_GUILD_ID"] = str(dev_guild.id)
    env.update(extra)
    return env


class BotProcess:
    """One ``python -m bot`` process; see the module docstring."""

    def __init__(self, process: asyncio.subprocess.Process, log_path: Path, log: IO[bytes]) -> None:
        self.process = process
        self.log_path = log_path
        self._log = log

    @classmethod
    async def start(
        cls,
        env: Mapping[str, str],
        cwd: Path,
        *args: str,
        log_name: str = "bot.log",
    ) -> BotProcess:
        """Start the process; doesn't wait for it to connect."""
        log_path = cwd / log_name
        log = log_path.open("ab")
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            *args,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
        return cls(process, log_path, log)

    @classmethod
    @contextlib.asynccontextmanager
    async def launch(
        cls,
        emu: Any,
        workdir: Path,
        *args: str,
        dev_guild: Any = None,
        database: Path | None = None,
        shards: tuple[int, Sequence[int]] | None = None,
        log_name: str = "bot.log",
        ready_timeout: float = 30.0,
        stop_timeout: float = 15.0,
        **extra_env: str,
    ) -> AsyncIterator[BotProcess]:
        """Start the bot against ``emu``; yield once it is connected (and, with ``dev_guild``,
        has synced its commands there); on exit send SIGTERM and wait for it to end.

        ``shards=(count, ids)`` runs those shards (SHARD_COUNT, SHARD_IDS) and waits until
        each has a live session; only the process of shard 0 syncs commands, so the others
        do not wait for that. Several processes in one ``workdir`` need their own
        ``log_name``; ``extra_env`` is each one's own (a database URL, say).
        """
        database = database or workdir / "data" / "tictactoe.db"
        if shards is not None:
            count, ids = shards
            extra_env = {"SHARD_COUNT": str(count), "SHARD_IDS": ",".join(map(str, ids))} | dict(
                extra_env
            )
        env = bot_env(emu, database, dev_guild=dev_guild, **extra_env)
        sessions = len(emu.dispatched("READY"))  # an earlier process may have connected
        bot = await cls.start(env, workdir, *args, log_name=log_name)
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

    async def wait_until(self, waiting: Any) -> Any:
        """Await ``waiting``, failing early (with the bot's log) if the process exits."""
        task = asyncio.ensure_future(waiting)
        exited = asyncio.ensure_future(self.process.wait())
        done, _ = await asyncio.wait({task, exited}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            exited.cancel()
            return task.result()
        task.cancel()
        raise AssertionError(f"the bot exited with {self.process.returncode}:\n{self.log()}")

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    async def stop(self, sig: int = signal.SIGTERM, *, within: float = 15.0) -> int:
        """Send ``sig`` (if still running) and wait for the exit; kill after ``within`` s."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(sig)
            try:
                await asyncio.wait_for(self.process.wait(), within)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
                self._log.close()
                message = f"the bot did not exit within {within} s:\n{self.log()}"
                raise AssertionError(message) from None
        self._log.close()
        assert self.process.returncode is not None
        return self.process.returncode

    def log(self) -> str:
        """What the bot wrote to stderr/stdout so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""


THINKING = "My move…"


def answered_thinking(handle: Any) -> bool:
    """Whether a click was answered with an update showing the bot still to move.

    That is how a click on a board whose reply needs a search is answered: the player's
    move at once, then an edit of the same message (``handle.edited_original()``) with
    the bot's reply.
    """
    if handle.callback_type != 7 or not handle.callback_data:  # UPDATE_MESSAGE
        return False
    texts = [c.get("content", "") for c in handle.callback_data.get("components", [])]
    return any(THINKING in text for text in texts)


@contextlib.contextmanager
def full_collections_held_back() -> Iterator[None]:
    """Keep the test process's own garbage collector from stalling the emulator in it.

    The emulator keeps every request and gateway frame. A full collection of a heap grown
    over earlier tests once stopped its loop for 4.2 s, and every interaction in flight
    then missed its 3 s as if the bot had. Collect once now, freeze what survives, and put
    off full collections until the block ends; young collections still run.
    """
    gc.collect()
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 1_000_000)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _children(pid: int) -> list[int]:
    """``pid``'s child processes, from /proc (Linux)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def ai_workers(bot: Any) -> list[int]:
    """The bot's search workers: the processes its forkserver forked, which are the bot's
    grandchildren (its direct children are the forkserver and the resource tracker). A
    bot in this process (``BotInProcess``): those of this process's forkserver."""
    if isinstance(bot, BotProcess):
        parents = _children(bot.process.pid)
    else:
        parents = [pid for pid in _children(os.getpid()) if _is_forkserver(pid)]
    return [worker for parent in parents for worker in _children(parent)]


def _is_forkserver(pid: int) -> bool:
    try:
        return b"multiprocessing.forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@contextlib.contextmanager
def ai_paused(bot: Any) -> Iterator[list[int]]:
    """The bot's search workers stopped (SIGSTOP) while the block runs, as a host that
    starves them would: a search sent to them stays owed until they go on (SIGCONT)."""
    workers = ai_workers(bot)
    assert workers, "the bot has no search worker yet"
    for worker in workers:
        os.kill(worker, signal.SIGSTOP)
    try:
        yield workers
    finally:
        for worker in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGCONT)
