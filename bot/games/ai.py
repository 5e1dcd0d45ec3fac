"""The bot's moves, computed in a pool of worker processes so searches never block the loop.

``compute_move`` is the top-level (hence picklable) function the pool runs. Boards travel
as plain moves and shape, the result as a cell index. The pool is made with the
"forkserver" context where the platform has it and "spawn" elsewhere, never "fork": the
bot's process has threads (aiosqlite's, the executor's), and forking a threaded process
can copy a held lock into the child. Workers import the engine and play one throwaway
move when they start, so the first real move does not pay for imports and table builds.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import math
import multiprocessing
import os
import random
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine import Board
from engine.levels import LEVELS, choose_move, get_level

if TYPE_CHECKING:
    from engine.analysis import Review

WORKER_NICENESS = 19
"""Where SCHED_IDLE is missing, how much lower the workers' CPU priority is than the bot's."""

MIN_BUDGET = 0.05
"""Seconds the bot's search always gets, however late its deadline has passed. Perfect's
iterative deepening checks the clock only every 2,048 nodes, so even a spent budget
finishes a few plies (depth 4 or more on 5x5 k=4): enough to take an immediate win and
block an immediate threat, which the first ply already decides."""

__all__ = [
    "MIN_BUDGET",
    "compute_move",
    "create_pool",
    "move_seed",
    "review_game",
    "search_budget",
    "warm_up",
    "warm_up_pool",
]


def move_seed(game_id: int, move_no: int) -> int:
    """The rng seed for the bot's move ``move_no`` in game ``game_id``: replays repeat it."""
    digest = hashlib.blake2b(f"ttt:{game_id}:{move_no}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def search_budget(level_budget: float, deadline: float, now: float) -> float:
    """Seconds to search when ``now`` is the time and ``deadline`` the reply's due time.

    The time left, capped at ``level_budget`` and never below MIN_BUDGET (also when the
    deadline has passed or is minus infinity); ValueError if ``deadline`` is NaN.
    """
    if math.isnan(deadline):
        raise ValueError("the deadline must be a time.monotonic() instant, not NaN")
    return max(MIN_BUDGET, min(level_budget, deadline - now))


def compute_move(
    width: int,
    height: int,
    k: int,
    moves: Sequence[int],
    level: str,
    seed: int,
    deadline: float | None = None,
) -> int:
    """The cell (0-based) the bot plays after ``moves`` at ``level``, deterministic in ``seed``.

    ``deadline`` is a ``time.monotonic()`` instant (system-wide, so the requesting process
    may take it) by which the reply is due: time spent queued for a worker comes off the
    level's search budget (see ``search_budget``). That budget only binds where the
    engine searches to a time budget (``impossible`` on boards over 16 cells), and there
    the move depends on the machine's speed, with or without a deadline.
    """
    board = Board.from_moves(moves, width, height, k)
    budget = None
    if deadline is not None:
        budget = search_budget(get_level(level).budget, deadline, time.monotonic())
    return choose_move(board, level, random.Random(seed), budget=budget)


def compute_move_on(board: Board, level: str, seed: int) -> int:
    """``compute_move`` for a position already at hand, with no deadline: for replies
    made on the event loop (table lookups), which need no pickling to a worker."""
    return choose_move(board, level, random.Random(seed))


def review_game(moves: Sequence[int], width: int, height: int, k: int) -> Review:
    """The engine's post-game review (may search; run it in the pool)."""
    from engine.reviewing import review

    return review(tuple(moves), width, height, k)


def warm_up() -> int:
    """Import everything and build the 3x3 tables by playing one move at every level."""
    cell = 0
    for level in LEVELS:
        cell = compute_move(3, 3, 3, (), level, 0)
    return cell


def _exit_with_parent() -> None:
    """Exit as soon as the process that made the pool is gone (even if it was SIGKILLed).

    A pool worker otherwise outlives a killed bot, blocked forever on its task queue,
    and keeps the forkserver alive with it.
    """
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    parent.join()  # returns when the parent's sentinel pipe closes
    os._exit(0)


def _lower_priority() -> None:
    """Let the bot's own process, and anything else on the machine, run before searches.

    Clicks are answered on the bot's event loop and must not wait for a core while a
    search holds it; searches run to a deadline anyway. On Linux the workers use
    SCHED_IDLE (a woken bot preempts them at once); elsewhere the lowest nice level.
    """
    with contextlib.suppress(OSError, AttributeError):  # not on every platform
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        return
    with contextlib.suppress(OSError, AttributeError):
        os.nice(WORKER_NICENESS)


def _initializer() -> None:
    _lower_priority()
    threading.Thread(target=_exit_with_parent, name="exit-with-parent", daemon=True).start()
    warm_up()


def create_pool(workers: int = 1) -> concurrent.futures.ProcessPoolExecutor:
    """A process pool whose workers are warmed up as they start (forkserver or spawn)."""
    if workers < 1:
        raise ValueError(f"the AI pool needs at least one worker, not {workers}")
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if context.get_start_method() == "forkserver":
        context.set_forkserver_preload(["engine", "engine.levels", "bot.games.ai"])
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_initializer
    )


async def warm_up_pool(executor: concurrent.futures.Executor, workers: int) -> None:
    """Start every worker now (pools start them lazily) and wait until each has warmed up."""
    loop = asyncio.get_running_loop()
    await asyncio.gather(*(loop.run_in_executor(executor, warm_up) for _ in range(max(1, workers))))
