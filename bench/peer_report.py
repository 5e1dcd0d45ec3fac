"""The peer bench's figures: one run's result, its row, and the ratio ours/peer."""

from __future__ import annotations

import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from bench.harness import percentile
from bench.peer_tables import GROUP_DM, OURS, PEER, UTARWYN


@dataclass
class Result:
    kind: str
    clicks: int
    starts: int
    wall: float
    cpu: float
    tail: float
    driver_cpu: float
    latencies: list[float]
    outside: int = 0
    """REST requests outside interaction answers in the timed window (the global budget)."""
    limited: int = 0
    """429s the bot received in it."""
    deleted_twice: int = 0
    """DELETEs answered Unknown Message in it: a message the bot had deleted already."""
    errors: int = 0
    exit_code: int | None = None
    main_cpu: float = 0.0
    """Of ``cpu``, the main thread's (the event loop): the rest is the other threads', the
    aiosqlite thread where SQLite runs, for ours."""

    @property
    def us_per_click(self) -> float:
        return self.cpu / self.clicks * 1e6

    @property
    def main_us_per_click(self) -> float:
        return self.main_cpu / self.clicks * 1e6


HEADER = (
    f"{'run':>3} {'bot':<7} {'clicks':>6} {'starts':>6} {'wall s':>6} {'clicks/s':>8}"
    f" {'p50 ms':>6} {'p99 ms':>6} {'CPU s':>6} {'µs/click':>8} {'main µs':>7} {'+1s ms':>6}"
    f" {'emu+drv s':>9}"
)


def row(number: int, r: Result) -> str:
    return (
        f"{number:>3} {r.kind:<7} {r.clicks:>6} {r.starts:>6} {r.wall:>6.1f}"
        f" {r.clicks / r.wall:>8.0f} {percentile(r.latencies, 0.5) * 1e3:>6.1f}"
        f" {percentile(r.latencies, 0.99) * 1e3:>6.1f} {r.cpu:>6.2f} {r.us_per_click:>8.0f}"
        f" {r.main_us_per_click:>7.0f} {r.tail * 1e3:>6.0f} {r.driver_cpu:>9.1f}"
        + (
            f"  (REST outside answers {r.outside / r.clicks:.2f}/click, {r.limited} 429s,"
            f" {r.deleted_twice} deleted twice)"
            if r.outside or r.limited or r.deleted_twice
            else ""
        )
        + (f"  ({r.errors} ERROR/Traceback lines in its log)" if r.errors else "")
        + (f"  (exit status {r.exit_code} after SIGTERM)" if r.exit_code else "")
    )


def describe_checkout(path: Path) -> str:
    """The commit of ``path`` (and whether it has changes), if it is a git checkout."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--", "bot", "engine"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return str(path)
    return f"{path} at {commit}{' + uncommitted changes' if dirty else ''}"


def summarise(results: list[Result]) -> None:
    ours = [r.us_per_click for r in results if r.kind == OURS]
    peer = [r.us_per_click for r in results if r.kind == PEER]
    mid_ours, mid_peer = statistics.median(ours), statistics.median(peer)
    print(
        f"\nmedian CPU per click: ours {mid_ours:.0f} µs ({len(ours)} runs),"
        f" peer {mid_peer:.0f} µs ({len(peer)} runs)"
    )
    print(f"ratio ours/peer (median over median): {mid_ours / mid_peer:.2f}")
    pairs = [o / p for o, p in zip(ours, peer, strict=False)]
    print(
        "ratio ours/peer per round: "
        + " ".join(f"{ratio:.2f}" for ratio in pairs)
        + (f"; median {statistics.median(pairs):.2f}" if len(pairs) > 1 else "")
    )
    print("(<= 1.00: our bot costs no more CPU per click than the in-memory example)")
    in_dms = [r.us_per_click for r in results if r.kind == GROUP_DM]
    if in_dms:
        mid = statistics.median(in_dms)
        turns = [d / o for d, o in zip(in_dms, ours, strict=False)]
        print(
            f"ours in group DMs {mid:.0f} µs ({len(in_dms)} runs); ratio group DM / server"
            f" channel {mid / mid_ours:.2f} (per round: {' '.join(f'{t:.2f}' for t in turns)})"
        )
    utarwyn = [r.us_per_click for r in results if r.kind == UTARWYN]
    if utarwyn:
        mid = statistics.median(utarwyn)
        turns = [o / u for o, u in zip(ours, utarwyn, strict=False)]
        print(
            f"utarwyn {mid:.0f} µs ({len(utarwyn)} runs); ratio ours/utarwyn {mid_ours / mid:.2f}"
            f" (per round: {' '.join(f'{t:.2f}' for t in turns)}), utarwyn/peer"
            f" {mid / mid_peer:.2f}\n(<= 1.00: our bot costs no more CPU per click than"
            " utarwyn/discord-tictactoe)"
        )
