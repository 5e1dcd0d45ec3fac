"""What the benchmarks read of a process from /proc (Linux): its CPU time, its children's
(found by ``bot.launcher.descendants``)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from bot.launcher import descendants

__all__ = [
    "children_cpu_seconds",
    "cpu_seconds",
    "parent_pid",
    "process_name",
    "thread_cpu_seconds",
    "tree_cpu_seconds",
]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (its children not included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_seconds(pid: int) -> tuple[float, float]:
    """User + system CPU time so far of a process's main thread, and of its other threads
    together (the bot's aiosqlite thread, where SQLite runs, and the default executor's)."""
    main = others = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError, IndexError, ValueError):  # it ended meanwhile
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            spent = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            if int(task.name) == pid:
                main = spent
            else:
                others += spent
    return main, others


def parent_pid(pid: int) -> int:
    """The pid of ``pid``'s parent (OSError if ``pid`` is not running)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def process_name(pid: int) -> str:
    """The name of ``pid``'s executable, as ps shows it (OSError if not running)."""
    return Path(f"/proc/{pid}/comm").read_text().strip()


def children_cpu_seconds(pid: int) -> float:
    """CPU time so far of ``pid``'s live descendants (not counted in ``cpu_seconds(pid)``)."""
    total = 0.0
    for child in descendants(pid):
        with contextlib.suppress(OSError):  # it ended meanwhile
            total += cpu_seconds(child)
    return total


def tree_cpu_seconds(pid: int) -> float:
    """CPU time so far of ``pid`` and its live descendants (a PostgreSQL server's postmaster
    and its backends, say): a child that ended meanwhile takes its time with it."""
    return cpu_seconds(pid) + children_cpu_seconds(pid)
