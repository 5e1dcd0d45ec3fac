"""The bot as a child process (``python -m bot``) against an emulator: for tools only.

The tests that need a real process (signals, restarts, two processes on one database),
the playground and the benchmarks start the bot through this module; the bot itself
never imports it. It imports nothing of the bot's and nothing of discord.py: the
emulator is typed by what is used of it (``Endpoints``, ``Emulated``), which
``discord_emulator.Emulator`` provides.

    async with Emulator() as emu:
        guild = emu.add_guild("Arcade")
        async with BotProcess.launch(emu, workdir, dev_guild=guild) as bot:
            ...                      # connected, and its commands synced in ``guild``
        assert bot.returncode == 0   # left the block: SIGTERM, then waited for the exit

The bot's stdout and stderr go to ``bot.log_path`` (``bot.log()`` reads it), so a tool
that fails can show what the bot said. ``BotProcess.start`` starts without waiting;
``wait_ready`` waits; ``stop`` sends SIGTERM (or another signal) and kills after a grace.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

__all__ = [
    "HOME",
    "PACE",
    "BotExited",
    "BotProcess",
    "Emulated",
    "Endpoints",
    "ai_paused",
    "ai_workers",
    "answered_thinking",
    "bot_env",
    "children",
    "descendants",
    "full_collections_held_back",
]

T = TypeVar("T")

HOME = Path(__file__).resolve().parents[1]
"""The folder holding this ``bot`` package (a checkout or site-packages): the child's
PYTHONPATH, so that it runs the same bot as the tool."""
PACE = {"LOG_LEVEL": "INFO", "SWEEP_INTERVAL_SECONDS": "1", "SHUTDOWN_GRACE_SECONDS": "5"}
"""What a tool's bot runs with unless told otherwise: its log at INFO, a sweep every
second (what waits for one comes soon) and 5 s to shut down."""
CONNECTION = ("DISCORD_", "DATABASE_", "DEV_GUILD_ID", "SHARD_")
"""Variables an inherited environment loses: they would point the bot at real Discord,
another database or other shards."""


class Endpoints(Protocol):
    """Where the bot connects: the emulator's REST base, gateway and token."""

    @property
    def api_base(self) -> str: ...

    @property
    def gateway_url(self) -> str: ...

    @property
    def bot_token(self) -> str: ...


class Emulated(Endpoints, Protocol):
    """What waiting for the bot reads of the emulator (``discord_emulator.Emulator``)."""

    @property
    def command_syncs(self) -> int: ...

    def dispatched(self, event: str) -> list[Any]: ...

    def wait_for(self, predicate: Callable[[], bool]) -> Awaitable[None]: ...

    def wait_for_shards(
        self, shard_count: int, shard_ids: Iterable[int] | None = None
    ) -> Awaitable[None]: ...

    def wait_for_commands(self, *names: str, guild: Any = None) -> Awaitable[Any]: ...


class HasId(Protocol):
    @property
    def id(self) -> int: ...


class BotExited(AssertionError):
    """The bot exited, or did not within its grace; the message ends with its log.

    An AssertionError, so that a test shows it as a failure with the bot's words."""


def bot_env(
    emu: Endpoints,
    database: Path | str,
    *,
    dev_guild: HasId | None = None,
    inherit: bool = False,
    **settings: str,
) -> dict[str, str]:
    """The environment that points the bot at ``emu`` and the SQLite file ``database``.

    By default nothing is inherited but PATH, and ``PACE`` applies; with ``inherit`` the
    caller's environment passes, less what would point the bot elsewhere (``CONNECTION``).
    ``dev_guild`` gets the commands at every start; ``settings`` come last.
    """
    if inherit:
        env = {k: v for k, v in os.environ.items() if not k.startswith(CONNECTION)}
    else:
        env = {"PATH": os.environ.get("PATH", ""), **PACE}
    path = env.get("PYTHONPATH") if inherit else None
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HOME), path) if p)
    env.update(
        PYTHONUNBUFFERED="1",
        DISCORD_TOKEN=emu.bot_token,
        DISCORD_API_BASE=emu.api_base,
        DISCORD_GATEWAY_URL=emu.gateway_url,
        DATABASE_PATH=str(database),
    )
    if dev_guild is not None:
        env["DEV_GUILD_ID"] = str(dev_guild.id)
    env.update(settings)
    return env


@dataclass(frozen=True)
class Marks:
    """The emulator's counts when a process started: its own session and sync come after."""

    sessions: int = 0
    syncs: int = 0

    @classmethod
    def of(cls, emu: Emulated | None) -> Marks:
        return cls() if emu is None else cls(len(emu.dispatched("READY")), emu.command_syncs)


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the tool dies, even by SIGKILL (Linux)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class BotProcess:
    """One child process: ``python -m bot`` unless started as another ``module``."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        log_path: Path,
        log: IO[bytes],
        marks: Marks = Marks(),  # frozen
    ) -> None:
        self.process = process
        self.log_path = log_path
        self.marks = marks
        self._log = log

    @classmethod
    async def start(
        cls,
        env: Mapping[str, str],
        cwd: Path,
        *args: str,
        module: str = "bot",
        log_name: str = "bot.log",
        emu: Emulated | None = None,
        pipe_stdout: bool = False,
        new_session: bool = False,
        die_with_parent: bool = False,
    ) -> BotProcess:
        """Start ``python -m module args`` in ``cwd``; don't wait for it to connect.

        Give ``emu`` to ``wait_ready`` on it later. ``pipe_stdout``: stdout is
        ``process.stdout`` instead of the log. ``new_session``: a Ctrl-C in the terminal
        reaches the tool only, which then stops the bot. ``die_with_parent``: the child
        gets SIGTERM if the tool dies.
        """
        marks = Marks.of(emu)
        log_path = cwd / log_name
        log = log_path.open("ab")
        linux = die_with_parent and sys.platform == "linux"
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            module,
            *args,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE if pipe_stdout else log,
            stderr=log,
            start_new_session=new_session,
            preexec_fn=_die_with_parent if linux else None,
        )
        return cls(process, log_path, log, marks)

    @classmethod
    @contextlib.asynccontextmanager
    async def launch(
        cls,
        emu: Emulated,
        workdir: Path,
        *args: str,
        dev_guild: HasId | None = None,
        database: Path | None = None,
        shards: tuple[int, Iterable[int]] | None = None,
        log_name: str = "bot.log",
        ready_timeout: float = 30.0,
        stop_timeout: float = 15.0,
        **settings: str,
    ) -> AsyncIterator[BotProcess]:
        """Start the bot against ``emu`` (``bot_env``: SQLite at ``database``, by default
        ``workdir/data/tictactoe.db``); yield once it is ready (``wait_ready``); on exit
        send SIGTERM and wait for it to end.

        ``shards=(count, ids)`` runs those shards (SHARD_COUNT, SHARD_IDS). Several
        processes in one ``workdir`` need their own ``log_name``.
        """
        database = database or workdir / "data" / "tictactoe.db"
        if shards is not None:
            count, ids = shards
            shards = count, list(ids)
            settings = {"SHARD_COUNT": str(count), "SHARD_IDS": ",".join(map(str, ids))} | settings
        env = bot_env(emu, database, dev_guild=dev_guild) | settings
        bot = await cls.start(env, workdir, *args, log_name=log_name, emu=emu)
        try:
            await bot.wait_ready(emu, dev_guild=dev_guild, shards=shards, within=ready_timeout)
            yield bot
        finally:
            await bot.stop(within=stop_timeout)

    async def wait_ready(
        self,
        emu: Emulated,
        *,
        dev_guild: HasId | None = None,
        command: str | None = None,
        shards: tuple[int, Iterable[int]] | None = None,
        within: float = 30.0,
    ) -> None:
        """Until the process has a session of its own (each of ``shards``' if given) and,
        with ``dev_guild``, has synced its commands there (``command``, by default
        ``tictactoe``, among them); with ``command`` alone, until that command is among the
        global ones. Only the process of shard 0 syncs. BotExited if it exits first;
        TimeoutError after ``within`` s."""
        marks = self.marks
        async with asyncio.timeout(within):
            if shards is None:
                await self.wait_until(
                    emu.wait_for(lambda: len(emu.dispatched("READY")) > marks.sessions)
                )
            else:
                count, ids = shards
                await self.wait_until(emu.wait_for_shards(count, ids))
            if shards is not None and 0 not in shards[1]:
                return
            if dev_guild is not None:  # it syncs there at every start
                await self.wait_until(emu.wait_for(lambda: emu.command_syncs > marks.syncs))
                name = command or "tictactoe"
                await self.wait_until(emu.wait_for_commands(name, guild=dev_guild))
            elif command is not None:
                await self.wait_until(emu.wait_for_commands(command))

    async def wait_until(self, waiting: Awaitable[T]) -> T:
        """Await ``waiting``; BotExited (with the log) if the process exits first."""
        task = asyncio.ensure_future(waiting)
        exited = asyncio.ensure_future(self.process.wait())
        try:
            done, _ = await asyncio.wait({task, exited}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            exited.cancel()
            if not task.done():
                task.cancel()
        if task in done:
            return task.result()
        raise BotExited(f"the bot exited with {self.process.returncode}:\n{self.log()}")

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    async def stop(self, sig: int = signal.SIGTERM, *, within: float = 15.0) -> int:
        """Send ``sig`` (if still running) and wait for the exit; after ``within`` s,
        SIGKILL it and raise BotExited."""
        if self.running:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(sig)
            try:
                await asyncio.wait_for(self.process.wait(), within)
            except TimeoutError:
                await self.kill()
                message = f"the bot did not exit within {within:g} s:\n{self.log()}"
                raise BotExited(message) from None
        self._log.close()
        assert self.process.returncode is not None
        return self.process.returncode

    async def kill(self) -> int:
        """SIGKILL, as a crash or the OOM killer would; waits for the exit."""
        if self.running:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        code = await self.process.wait()
        self._log.close()
        return code

    def log(self) -> str:
        """What the bot wrote to stderr/stdout so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = 15) -> str:
        return "\n".join(self.log().splitlines()[-lines:])


def children(pid: int) -> list[int]:
    """``pid``'s child processes, from /proc (Linux); none once it ended."""
    found: list[int] = []
    with contextlib.suppress(FileNotFoundError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(FileNotFoundError):
                found += [int(c) for c in (task / "children").read_text().split()]
    return found


def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (its children, theirs...), each before its own
    children: the bot's forkserver and search workers, a database server's backends."""
    found: list[int] = []
    for child in children(pid):
        found += [child, *descendants(child)]
    return found


def ai_workers(bot: BotProcess) -> list[int]:
    """The bot's search workers: the processes its forkserver forked, which are the bot's
    grandchildren (its direct children are the forkserver and the resource tracker)."""
    return [worker for child in children(bot.pid) for worker in children(child)]


@contextlib.contextmanager
def ai_paused(bot: BotProcess) -> Iterator[list[int]]:
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


THINKING = "My move…"


def answered_thinking(handle: Any) -> bool:
    """Whether a click was answered with an update showing the bot still to move (in
    English): how the bot answers a click whose reply needs a search, the player's move at
    once, then an edit of the same message (``handle.edited_original()``) with its reply."""
    if handle.callback_type != 7 or not handle.callback_data:  # UPDATE_MESSAGE
        return False
    texts = [c.get("content", "") for c in handle.callback_data.get("components", [])]
    return any(THINKING in text for text in texts)


@contextlib.contextmanager
def full_collections_held_back() -> Iterator[None]:
    """Keep the tool's own garbage collector from stalling the emulator it runs.

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
