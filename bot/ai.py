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
import hashlib
import multiprocessing
import os
import random
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine import Board
from engine.levels import LEVELS, choose_move

if TYPE_CHECKING:
    from engine.analysis import Review

__all__ = ["compute_move", "create_pool", "move_seed", "review_game", "warm_up", "warm_up_pool"]


def move_seed(game_id: int, move_no: int) -> int:
    """The rng seed for the bot's move ``move_no`` in game ``game_id``: replays repeat it."""
    digest = hashlib.blake2b(f"ttt:{game_id}:{move_no}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def compute_move(
    width: int, height: int, k: int, moves: Sequence[int], level: str, seed: int
) -> int:
    """The cell (0-based) the bot plays after ``moves`` at ``level``, deterministic in ``seed``."""
    board = Board.from_moves(moves, width, height, k)
    return choose_move(board, level, random.Random(seed))


def review_game(moves: Sequence[int], width: int, height: int, k: int) -> Review:
    """The engine's post-game review (may search; run it in the pool)."""
    from engine.analysis import review

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


def _initializer() -> None:
    threading.Thread(target=_exit_with_parent, name="exit-with-parent", daemon=True).start()
    warm_up()


def create_pool(workers: int = 1) -> concurrent.futures.ProcessPoolExecutor:
    """A process pool whose workers are warmed up as they start (forkserver or spawn)."""
    if workers < 1:
        raise ValueError(f"the AI pool needs at least one worker, not {workers}")
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if context.get_start_method() == "forkserver":
        context.set_forkserver_preload(["engine", "engine.levels", "bot.ai"])
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_initializer
    )


async def warm_up_pool(executor: concurrent.futures.Executor, workers: int) -> None:
    """Start every worker now (pools start them lazily) and wait until each has warmed up."""
    loop = asyncio.get_running_loop()
    await asyncio.gather(*(loop.run_in_executor(executor, warm_up) for _ in range(max(1, workers))))
