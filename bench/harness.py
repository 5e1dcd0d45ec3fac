"""The harness the bot's benches run on: a scenario starts the bot (``bot.launcher``) against
an emulator in this process, drives it with scripted players, and prints its figures and
their ratios to a baseline measured in the same invocation.

A scenario (``Scenario``) names the kinds it runs, the baseline first (our bot and
discord.py's example for ``bench.peer``; the engines and processes of ``bench.load
--compare-setups``; one for ``bench.slow_games``), runs one of them (``run_once``: a fresh
emulator, bot process and database) and reports. ``play`` runs the kinds in turns, as the
machine is shared and noisy, each run in an event loop of its own. The rest is what every
scenario needs: the bot processes, waiting for the bot's answers without waking every
player at each emulator change, stopping a run at the first refused request, and the
figures (percentiles, medians, ratios).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import statistics
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from bot.launcher import BotExited, BotProcess, bot_env, descendants
from discord_emulator import (
    Emulator,
    InteractionAcknowledged,
    InteractionFailed,
    InteractionHandle,
    Observation,
    RecordedRequest,
)

__all__ = [
    "Answers",
    "BotExited",
    "RunError",
    "Scenario",
    "all_of",
    "bot",
    "bots",
    "compare",
    "errors_in",
    "guarded",
    "percentile",
    "play",
    "summarise",
    "tolerated",
    "watch",
]

K = TypeVar("K")
F = TypeVar("F")
F_co = TypeVar("F_co", covariant=True)
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0


class RunError(RuntimeError):
    """The bot did not answer as expected; the run's figures would mean nothing."""


# -- the scenario ---------------------------------------------------------------------------


class Scenario(Protocol[K, F_co]):
    def kinds(self) -> Sequence[K]:
        """What is measured in turns, the baseline first."""
        ...

    async def run_once(self, kind: K, number: int) -> F_co:
        """Run number ``number`` (from 1) of ``kind``: prints what it prints, returns its
        figures."""
        ...


def play(scenario: Scenario[K, F], rounds: int, *, rotate: bool = False) -> dict[K, list[F]]:
    """``rounds`` runs of each kind, in turns (``rotate``: each round starts one kind
    later, so none is always first); each run in an event loop of its own, cancelled by
    SIGTERM."""
    kinds = list(scenario.kinds())
    results: dict[K, list[F]] = {kind: [] for kind in kinds}
    number = 0
    for index in range(rounds):
        shift = index % len(kinds) if rotate else 0
        for kind in kinds[shift:] + kinds[:shift]:
            number += 1
            results[kind].append(
                asyncio.run(_cancelled_by_sigterm(scenario.run_once(kind, number)))
            )
    return results


async def _cancelled_by_sigterm(run: Coroutine[Any, Any, F]) -> F:
    main = asyncio.current_task()
    assert main is not None
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, main.cancel)
    try:
        return await run
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


# -- the bot processes ----------------------------------------------------------------------


def _start_time(pid: int) -> int | None:
    """When the process started (clock ticks since boot): with its pid, its identity."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


SPAWNED: dict[int, int | None] = {}
"""Bot processes (and their workers) a scenario started, with their start times."""


def _kill_if_ours(pid: int) -> None:
    """SIGKILL ``pid`` if it is still the process we started (pids get reused)."""
    started = SPAWNED.pop(pid, None)
    if started is not None and _start_time(pid) == started:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


@atexit.register
def _kill_leftovers() -> None:
    """Last resort (an error between start and stop): no process of ours outlives us."""
    for pid in list(SPAWNED):
        _kill_if_ours(pid)


@contextlib.asynccontextmanager
async def bot(
    emu: Emulator,
    workdir: Path,
    env: Mapping[str, str],
    *args: str,
    module: str = "bot",
    command: str = "tictactoe",
    shards: tuple[int, list[int]] | None = None,
    log_name: str = "bot.log",
    pipe_stdout: bool = False,
) -> AsyncIterator[BotProcess]:
    """One bot process (``python -m module args``; our bot unless told), yielded once it
    is connected and, unless it runs shards without 0, ``command`` is among the global
    commands; on exit SIGTERM (killed after 15 s, BotExited), and any search worker it
    left killed. It gets SIGTERM if this process dies."""
    process = await BotProcess.start(
        env,
        workdir,
        *args,
        module=module,
        log_name=log_name,
        emu=emu,
        pipe_stdout=pipe_stdout,
        die_with_parent=True,
    )
    SPAWNED[process.pid] = _start_time(process.pid)
    try:
        try:
            await process.wait_ready(emu, command=command, shards=shards, within=READY_TIMEOUT)
        except (BotExited, TimeoutError):
            how = "exited" if process.returncode is not None else "timed out"
            raise RunError(
                f"the bot (python -m {module}) did not get ready ({how}); the end of its log:\n"
                + process.log_tail()
            ) from None
        yield process
    finally:
        workers = descendants(process.pid)
        SPAWNED.update((pid, _start_time(pid)) for pid in workers)
        try:
            await process.stop(within=STOP_TIMEOUT)
        finally:
            SPAWNED.pop(process.pid, None)
            if workers:
                await asyncio.sleep(0.2)  # its workers end with it
            for pid in workers:
                _kill_if_ours(pid)


@contextlib.asynccontextmanager
async def bots(
    emu: Emulator,
    workdir: Path,
    env: Mapping[str, str],
    shards: Sequence[tuple[int, list[int]] | None] = (None,),
    database: Path | None = None,
) -> AsyncIterator[list[BotProcess]]:
    """Our bot as one process per item of ``shards`` (the process of shard 0 first: it
    syncs the commands), each with its own log, on SQLite at ``database`` unless ``env``
    has a DATABASE_URL; all stopped on exit. ``env``: the bot's settings, over
    ``bot.launcher.PACE``."""
    database = database or workdir / "bench.db"
    async with contextlib.AsyncExitStack() as stack:
        started = []
        for number, owned in enumerate(shards):
            settings = dict(env)
            if owned is not None:
                count, ids = owned
                settings |= {"SHARD_COUNT": str(count), "SHARD_IDS": ",".join(map(str, ids))}
            log_name = "bot.log" if len(shards) == 1 else f"bot{number}.log"
            full = bot_env(emu, database) | settings
            launch = bot(emu, workdir, full, shards=owned, log_name=log_name)
            started.append(await stack.enter_async_context(launch))
        yield started


# -- waiting for the bot --------------------------------------------------------------------


class Answers:
    """Wakes the coroutine waiting on an interaction when the emulator applies its answer.

    ``InteractionHandle.response()`` and ``Emulator.wait_for`` re-check every waiter at
    every emulator change, which with hundreds of games in flight costs this process more
    than the clicks (and it shares the cores with the bot): here each click waits on its
    own future, woken by its handle's answer or failure alone (the emulator's
    ``observers``); only the few waits on later edits (``until``) are re-checked at each
    change (its ``listeners``). ``at`` keeps when each answer was applied (a click's
    latency ends there).
    """

    def __init__(self, emu: Emulator) -> None:
        self.by_handle: dict[int, list[asyncio.Future[None]]] = {}
        self.waiting: dict[int, tuple[Callable[[], bool], asyncio.Future[None]]] = {}
        self.at: dict[int, float] = {}
        self._emu = emu

    def install(self) -> None:
        self._emu.listeners.append(self._recheck)
        self._emu.observers.append(self._observe)

    def uninstall(self) -> None:
        with contextlib.suppress(ValueError):
            self._emu.observers.remove(self._observe)
        with contextlib.suppress(ValueError):
            self._emu.listeners.remove(self._recheck)

    def _recheck(self) -> None:
        waiting = self.waiting
        for key, (check, future) in list(waiting.items()):
            if check() and not future.done():
                future.set_result(None)
                del waiting[key]

    def _observe(self, seen: Observation) -> None:
        if isinstance(seen, InteractionAcknowledged):
            self.at[seen.interaction_id] = seen.at
        elif not isinstance(seen, InteractionFailed):
            return
        for future in self.by_handle.pop(seen.interaction_id, ()):
            if not future.done():
                future.set_result(None)

    async def answered(self, handle: InteractionHandle, within: float = 120.0) -> None:
        """Wait until the bot answered ``handle`` or it failed; TimeoutError after
        ``within`` s."""
        if not handle.pending:
            return
        future = asyncio.get_running_loop().create_future()
        self.by_handle.setdefault(handle.id, []).append(future)
        async with asyncio.timeout(within):
            await future

    async def until(self, check: Callable[[], bool], within: float = 120.0) -> None:
        """Wait until ``check()`` holds; TimeoutError after ``within`` s."""
        if check():
            return
        future = asyncio.get_running_loop().create_future()
        key = id(future)
        self.waiting[key] = (check, future)
        try:
            async with asyncio.timeout(within):
                await future
        finally:
            self.waiting.pop(key, None)


def tolerated(request: RecordedRequest) -> bool:
    """Refusals that do not stop a run: a 429 (discord.py waits and retries), and Unknown
    Message on deleting a message the bot had deleted already."""
    if request.status == 429:
        return True
    return (
        request.status == 404
        and request.method == "DELETE"
        and isinstance(request.response, dict)
        and request.response.get("code") == 10008
    )


async def watch(emu: Emulator, processes: Sequence[BotProcess]) -> None:
    """Fail the run at once if the emulator refused one of the bot's requests (an invalid
    message, say: the click would otherwise wait out the answer deadline) or a bot exits."""
    seen = 0
    while True:
        await asyncio.sleep(0.2)
        requests = emu.requests
        for request in requests[seen:]:
            if request.status >= 400 and not tolerated(request):
                raise RunError(
                    f"the emulator refused {request.method} {request.path}: {request.status}"
                    f" {str(request.response)[:500]}\nrequest body: {str(request.json)[:500]}"
                )
        seen = len(requests)
        for process in processes:
            if process.returncode is not None:
                raise RunError(f"the bot exited with {process.returncode}")


async def guarded(
    emu: Emulator, processes: Sequence[BotProcess], work: Any, limit: float, what: str
) -> Any:
    """Await ``work`` within ``limit`` seconds, stopped early by :func:`watch`."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.create_task(watch(emu, processes))
    try:
        async with asyncio.timeout(limit):
            await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    except TimeoutError:
        raise RunError(f"{what} took over {limit:g} s") from None
    finally:
        for pending in (task, watcher):
            if not pending.done():
                pending.cancel()
                with contextlib.suppress(BaseException):
                    await pending
    if watcher.done() and not watcher.cancelled():
        watcher.result()  # raises
    return task.result()


async def all_of(coroutines: Iterable[Coroutine[Any, Any, Any]]) -> None:
    """Run the coroutines concurrently; if one fails, cancel the rest, then raise."""
    tasks = [asyncio.ensure_future(coroutine) for coroutine in coroutines]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


# -- the figures ----------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarise(results: list[dict[str, float]]) -> None:
    """Each run's headline figures and their median: the machine is shared and noisy."""
    print(f"\n{len(results)} runs (same seed, a fresh bot and database each):")
    for key in results[0]:
        values = [r[key] for r in results]
        runs = " ".join(f"{v:8.1f}" for v in values)
        print(f"{key:>16}: {runs}   median {statistics.median(values):8.1f}")


def compare(results: Mapping[str, list[dict[str, float]]], width: int = 26) -> None:
    """Each kind's median of each figure, and each median as a ratio of the first kind's
    (the baseline, run in turns with the others in this invocation)."""
    kinds = list(results)
    rounds = min(len(runs) for runs in results.values())
    first = results[kinds[0]][0]
    keys = [key for key in first if all(key in runs[0] for runs in results.values())]
    medians = {
        kind: {key: statistics.median(run[key] for run in runs) for key in keys}
        for kind, runs in results.items()
    }
    header = "".join(f"{kind:>{width}}" for kind in kinds)
    print(f"\nmedians of {rounds} runs of each setup, the setups in turns:")
    print(f"{'':>18}{header}")
    for key in keys:
        print(f"{key:>18}" + "".join(f"{medians[k][key]:>{width}.1f}" for k in kinds))
    base = kinds[0]
    print(f"\nratios to {base} (medians):")
    print(f"{'':>18}{header}")
    for key in keys:
        cells = []
        for kind in kinds:
            value, reference = medians[kind][key], medians[base][key]
            cells.append(
                f"{value / reference:>{width - 1}.2f}x" if reference else f"{'-':>{width}}"
            )
        print(f"{key:>18}" + "".join(cells))


def errors_in(log: str) -> list[str]:
    """The lines of a bot's log that say something went wrong."""
    return [line for line in log.splitlines() if " ERROR " in line or "Traceback" in line]
