"""The load bench's figures: each second's p99, and memory (``bench.load``; percentiles and
the summary of repeated runs are the harness's)."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from bench.harness import percentile

LAG = re.compile(r"Event loop lag: max ([0-9.]+) ms, p99 ([0-9.]+) ms, p50 ([0-9.]+) ms")
GC = re.compile(r"(\d+) GC runs, ([0-9.]+) ms in all, longest ([0-9.]+) ms")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def seconds_of(starts: list[float], took: list[float]) -> dict[int, list[float]]:
    """The values grouped by the whole second of the run they started in."""
    first = min(starts, default=0.0)
    seconds: dict[int, list[float]] = {}
    for start, value in zip(starts, took, strict=True):
        seconds.setdefault(int(start - first), []).append(value)
    return seconds


def full_second_p99s(seconds: dict[int, list[float]]) -> list[float]:
    """Each second's p99, for the seconds with at least 100 clicks (not the last partial)."""
    return sorted(percentile(values, 0.99) for values in seconds.values() if len(values) >= 100)


def by_second(starts: list[float], took: list[float], limit: float) -> str:
    """Whether slow clicks are spread over the run (the bot is too slow) or bunched in a
    few seconds (something stalled everything then: on this shared machine, often every
    process at once). Each whole second of the run gets its own p99."""
    seconds = seconds_of(starts, took)
    p99s = full_second_p99s(seconds) or [float("nan")]
    slow = sorted((sum(v > limit for v in values) for values in seconds.values()), reverse=True)
    in_order = " ".join(
        f"{percentile(seconds[second], 0.99) * 1e3:.0f}"
        for second in sorted(seconds)
        if len(seconds[second]) >= 100
    )
    return (
        f"3x3 p99 of each second (ms, in order): {in_order}\n"
        f"3x3 p99 of each second: median {statistics.median(p99s) * 1e3:.1f} ms,"
        f" {sum(p <= limit for p in p99s)} of {len(p99s)} seconds at most {limit * 1e3:.0f} ms;"
        f" clicks over {limit * 1e3:.0f} ms: {sum(slow)}, {sum(slow[:3])} of them in the"
        " worst 3 seconds"
    )


def seconds_within(starts: list[float], took: list[float], limit: float) -> float:
    """The share (%) of the run's full seconds whose 3x3 clicks had a p99 within limit."""
    p99s = full_second_p99s(seconds_of(starts, took))
    return 100 * sum(p <= limit for p in p99s) / len(p99s) if p99s else float("nan")
