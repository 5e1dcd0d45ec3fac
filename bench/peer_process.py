"""The bot processes of the peer bench: ours (``python -m bot``) or the peer
(``python -m bench.peer_bot``), started, waited for and stopped, none left behind."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from discord_emulator import (
        Emulator,
    )
    from tests.e2e.processes import BotProcess

from bench.peer_bot import PEER_COMMAND
from bench.peer_tables import OURS, Boards, RunError
from bench.procs import descendants

READY_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0


def start_time(pid: int) -> int | None:
    """When the process started (clock ticks since boot): with its pid, its identity."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


SPAWNED: dict[int, int | None] = {}
"""Bot processes (and their workers) this driver started, with their start times."""


def kill_if_ours(pid: int) -> None:
    """SIGKILL ``pid`` if it is still the process we started (pids get reused)."""
    started = SPAWNED.pop(pid, None)
    if started is not None and start_time(pid) == started:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@atexit.register
def _kill_leftovers() -> None:
    """Last resort (an error between start and stop): no process of ours outlives us."""
    for pid in list(SPAWNED):
        kill_if_ours(pid)


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM if this driver dies, even by SIGKILL."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@contextlib.asynccontextmanager
async def bot_process(
    kind: str,
    emu: Emulator,
    env: dict[str, str],
    workdir: Path,
    boards: Boards | None = None,
    profile: Path | None = None,
) -> AsyncIterator[BotProcess]:
    """Start one bot (ours or the peer); yield once it is connected and its command is
    synced (globally); on exit SIGTERM it (killed after 15 s) and any workers it left.
    With ``boards``, the peer's stdout goes there (see ``ANNOUNCE_BOARDS``); with
    ``profile``, our bot runs under cProfile, which writes that file when it exits."""
    from tests.e2e.processes import BotProcess

    if kind == OURS:
        main = ["bench.peer_profile", str(profile)] if profile is not None else ["bot"]
        argv, command = [sys.executable, "-m", *main], "tictactoe"
    else:
        argv, command = [sys.executable, "-m", "bench.peer_bot"], PEER_COMMAND
    log_path = workdir / f"{kind}.log"
    log_file = log_path.open("ab")
    if boards is not None:
        env = {**env, "PEER_ANNOUNCE_BOARDS": "1"}
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=workdir,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=log_file if boards is None else asyncio.subprocess.PIPE,
        stderr=log_file,
        preexec_fn=_die_with_parent,
    )
    SPAWNED[process.pid] = start_time(process.pid)
    bot = BotProcess(process, log_path, log_file)
    reader = None
    if boards is not None:
        assert process.stdout is not None
        reader = asyncio.create_task(boards.read(process.stdout))
    try:
        try:
            async with asyncio.timeout(READY_TIMEOUT):
                await bot.wait_until(emu.wait_for(lambda: bool(emu.dispatched("READY"))))
                await bot.wait_until(emu.wait_for_commands(command))
        except (AssertionError, TimeoutError):  # it exited, or never got ready
            how = "exited" if process.returncode is not None else "timed out"
            tail = "\n".join(bot.log().splitlines()[-15:])
            raise RunError(
                f"the {kind} bot did not get ready ({how}); the end of its log:\n{tail}"
            ) from None
        yield bot
    finally:
        if reader is not None:
            reader.cancel()
        workers = descendants(process.pid)
        SPAWNED.update((pid, start_time(pid)) for pid in workers)
        try:
            await bot.stop(within=STOP_TIMEOUT)
        except AssertionError:
            raise RunError(f"the {kind} bot did not exit within {STOP_TIMEOUT:g} s") from None
        finally:
            SPAWNED.pop(process.pid, None)
            await asyncio.sleep(0.2)  # its workers end with it
            for pid in workers:
                kill_if_ours(pid)
