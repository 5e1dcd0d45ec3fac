"""Where our bot's main thread spends a click, part by part, from a cProfile of a peer run.

``python -m bench.peer --profile FILE`` runs our bot once more after the timed runs, as
``python -m bench.peer_profile FILE`` (``python -m bot`` under cProfile, timing the main
thread's CPU, ``time.thread_time``, so that waiting in the event loop's poll costs
nothing), and prints this breakdown: each function's own time
(not its callees') goes to the part its file belongs to; a built-in (``{method ...}``) goes to
the part of the caller that spent most in it. The profiler slows calls down unevenly, so the
µs column spreads the unprofiled runs' median main-thread CPU per click by the shares, and is
an estimate; the SQLite thread is not in the profile (it is measured from /proc instead).
"""

from __future__ import annotations

import cProfile
import pstats
import runpy
import sys
import time
from collections import defaultdict

__all__ = ["PARTS", "breakdown", "part_of", "print_breakdown"]

PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "pings and notices",
        (
            "/bot/pings/notices.py",
            "/bot/ui/outbox.py",
            "/bot/pings/service.py",
            "/bot/pings/queries.py",
            "/bot/pings/calloff_queries.py",
        ),
    ),
    ("translation", ("/bot/i18n.py", "/babel/", "/gettext.py")),
    ("routing and admission", ("/bot/ui/router.py", "/bot/ui/gate.py")),
    (
        "store (main thread's side)",
        (
            "/queries.py",
            "_queries.py",
            "/sql.py",
            "/limits.py",
            "/bot/db/",
            "/aiosqlite/",
            "/sqlite3/",
        ),
    ),
    (
        "rendering (views, text)",
        (
            "/bot/ui/",
            "/bot/games/views.py",
            "/bot/games/render",
            "/bot/games/boards.py",
            "/bot/games/first_player.py",
            "/bot/stats/render_review.py",
            "/bot/privacy/render.py",
        ),
    ),
    (
        "service (rules of play)",
        (
            "/bot/app.py",
            "/bot/games/",
            "/bot/challenges/",
            "/bot/pings/",
            "/bot/privacy/",
            "/bot/servers/",
            "/bot/stats/",
            "/bot/upkeep/",
        ),
    ),
    ("bot, other", ("/bot/",)),
    ("engine", ("/engine/",)),
    ("discord.py", ("/discord/",)),
    (
        "aiohttp, yarl, multidict (discord.py's wire)",
        ("/aiohttp/", "/yarl/", "/multidict/", "/propcache/", "/frozenlist/", "/aiosignal/"),
    ),
    ("asyncio event loop, sockets, ssl", ("/asyncio/", "/selectors.py", "/socket.py", "/ssl.py")),
    ("logging", ("/logging/",)),
)
"""The parts, first match wins: a file is matched on its path."""
OTHER = "other (stdlib, typing, dataclasses...)"


def part_of(filename: str) -> str | None:
    """The part a source file belongs to; None for a built-in ("~")."""
    if filename == "~":
        return None
    path = filename.replace("\\", "/")
    for part, markers in PARTS:
        if any(marker in path for marker in markers):
            return part
    return OTHER


def breakdown(profile: str) -> dict[str, float]:
    """Seconds of own time per part in the profile file ``profile``."""
    stats = pstats.Stats(profile)
    raw: dict = stats.stats  # type: ignore[attr-defined]  (pstats' documented dict)
    owners: dict[tuple[str, int, str], str] = {}
    visiting: set[tuple[str, int, str]] = set()

    def owner(function: tuple[str, int, str]) -> str:
        """The part of ``function``: its file's, else its busiest caller's, up the chain
        (past recursion: a caller already on the chain is skipped)."""
        if function in owners:
            return owners[function]
        part = part_of(function[0])
        if part in (None, OTHER) and function in raw:
            visiting.add(function)
            callers = [item for item in raw[function][4].items() if item[0] not in visiting]
            if callers:
                part = owner(max(callers, key=lambda item: item[1][2])[0])
            visiting.discard(function)
        owners[function] = part or OTHER
        return owners[function]

    seconds: dict[str, float] = defaultdict(float)
    for function, (_cc, _nc, own, _cum, _callers) in raw.items():
        seconds[owner(function)] += own
    return dict(seconds)


def print_breakdown(profile: str, clicks: int, main_us_per_click: float) -> None:
    """The table: part, share of the profiled own time, estimated µs per click."""
    seconds = breakdown(profile)
    total = sum(seconds.values()) or 1.0
    print(
        f"\nour bot's main thread per click, by part (cProfile, {clicks} clicks; µs scaled"
        f" to the unprofiled median {main_us_per_click:.0f} µs):"
    )
    print(f"{'part':<46} {'share':>6} {'µs/click':>8}")
    for part, spent in sorted(seconds.items(), key=lambda item: -item[1]):
        share = spent / total
        print(f"{part:<46} {share:>6.1%} {share * main_us_per_click:>8.0f}")


def profile_bot(output: str) -> None:
    """Run ``python -m bot`` in this process under cProfile (main thread CPU time); write
    the profile to ``output`` when the bot exits, however it exits."""
    profiler = cProfile.Profile(time.thread_time)
    sys.argv = ["bot"]
    profiler.enable()
    try:
        runpy.run_module("bot", run_name="__main__", alter_sys=True)
    finally:
        profiler.disable()
        profiler.dump_stats(output)


if __name__ == "__main__":
    profile_bot(sys.argv[1])
