"""Slow member games: who is pinged, what stands afterwards, and what it costs on the wire.

    python -m bench.slow_games                       # 1,000 games, 40 s a move
    python -m bench.slow_games --scale 0.25          # the same, every time a quarter
    python -m bench.slow_games --games 200 --move-seconds 2   # played at a normal pace

Each game is a 3 x 3 game between two new members (the challenger, X, plays first and
wins in five moves), whose player on move waits ``--move-seconds`` before every click,
Accept included; the games start spread over one move's time (and at most 20 a second),
so the clicks come evenly. The bot runs with its own defaults (a 300 s turn clock: a
ping once a turn waited 30 s), but for the sweep, which runs every second as in every
tool's bot (``bot.launcher.PACE``; the bot's own default is 5 s). With ``--scale`` every
time is multiplied by it, the sweep's 5 s included (the turn clock no shorter than the
bot's 30 s minimum and the sweep than its 1 s: a ping's timing depends on the grace, not
the turn, while moves come before either runs out).

A scenario of ``bench/harness.py``, with one kind and no baseline: its figures are
measured against their goals.

Prints, from the emulator's record of what the bot sent: the turns that waited past
the grace and the pings sent for them (the goal: exactly one per such turn, none in
a turn played sooner), the pings still standing once every game has ended (goal 0), the
429s received (goal 0), and the REST requests outside interaction answers (what
Discord's global limit of 50 a second counts) per member move and per second, beside
the exempt ones (interaction callbacks and the webhook-token routes of follow-ups).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import harness
from bench.setups import server_of, servers_needed
from bot.tunables import PING_GRACE_LONGEST, SWEEP_INTERVAL, TURN_TIMEOUT
from discord_emulator import Emulator

X_WINS = (0, 3, 1, 4, 2)  # X and O alternate; X completes the top row
TURN, SWEEP = TURN_TIMEOUT.default, SWEEP_INTERVAL.default  # the bot's defaults (the grace too)


def exempt(path: str) -> bool:
    """Whether Discord's global limit leaves a request out: interaction callbacks and the
    interactions' webhook-token routes (follow-ups, ``@original``)."""
    return path.startswith("/interactions/") or path.startswith("/webhooks/")


def is_ping(message: Any) -> bool:
    """A turn notification: the bot's plain public message that mentions someone."""
    return (
        not message.components
        and not message.ephemeral
        and message.type == 0
        and message.content.startswith("<@")
        and "your turn" in message.content
    )


class Table:
    """One game between two members, played slowly."""

    def __init__(self, emu: Emulator, guild: Any, index: int) -> None:
        self.emu = emu
        self.channel = emu.add_text_channel(guild, f"slow{index}")
        self.players = [emu.add_user(f"s{index}x"), emu.add_user(f"s{index}o")]
        for user in self.players:
            emu.add_member(guild, user)
        self.turns: list[tuple[float, float]] = []  # each turn's (start, end) on this clock
        self.failed = 0  # clicks answered "This interaction failed" (the game stops there)

    async def play(self, delay: float, wait: float) -> None:
        emu, x, o = self.emu, *self.players
        await asyncio.sleep(delay)
        handle = await emu.run_command(x, self.channel, "tictactoe", opponent=o, first="me")
        challenge = (await handle.response()).message
        if challenge is None or challenge.ephemeral:  # failed, or refused
            self.failed += 1
            return
        await asyncio.sleep(wait)
        accepted = await (await emu.click(o, challenge, label="Accept")).response()
        if accepted.failed:
            self.failed += 1
            return
        began = time.monotonic()
        for n, cell in enumerate(X_WINS):
            await asyncio.sleep(wait)
            board = emu.message(challenge.id)
            assert board is not None
            user = x if n % 2 == 0 else o
            ids = [b.custom_id for b in board.buttons() if b.custom_id.startswith("ttt:cell:")]
            custom_id = next(i for i in ids if i.split(":")[3] == str(cell))
            answer = await (await emu.click(user, board, custom_id=custom_id)).response()
            if answer.failed:
                self.failed += 1
                return
            ended = time.monotonic()
            self.turns.append((began, ended))
            began = ended

    def pings(self, *, standing: bool = False) -> list[Any]:
        messages = self.emu.messages(self.channel, include_deleted=not standing)
        return [m for m in messages if m.author is self.emu.bot and is_ping(m)]


async def run(games: int, move_seconds: float, scale: float | None) -> dict[str, float]:
    factor = 1.0 if scale is None else scale
    env = {"LOG_LEVEL": "WARNING", "AI_WORKERS": "1"}
    grace = PING_GRACE_LONGEST
    if scale is not None:
        grace = PING_GRACE_LONGEST * scale
        env |= {
            # No shorter than the servers' bounds allow: 30 s for a turn, 1 s for a sweep.
            "TURN_TIMEOUT_SECONDS": f"{max(TURN_TIMEOUT.low, TURN * scale):g}",
            "PING_GRACE_SECONDS": f"{grace:g}",
            "SWEEP_INTERVAL_SECONDS": f"{max(SWEEP_INTERVAL.low, SWEEP * scale):g}",
        }
    wait = move_seconds * factor
    with tempfile.TemporaryDirectory(prefix="ttt-slow-") as tmp:
        async with contextlib.AsyncExitStack() as stack:
            emu = await stack.enter_async_context(Emulator(wait_timeout=120))
            guilds = [emu.add_guild(f"Slow {n}") for n in range(servers_needed(games, 1))]
            tables = [Table(emu, guilds[server_of(i, games, len(guilds))], i) for i in range(games)]
            bots = await stack.enter_async_context(harness.bots(emu, Path(tmp), env))
            first = len(emu.requests)
            started = time.monotonic()
            # Starts spread over a move's time, and at most 20 a second (each start is a
            # command and an Accept, on a machine the bot shares with the emulator).
            spread = max(wait, games / 20)
            await asyncio.gather(*(t.play(spread * i / games, wait) for i, t in enumerate(tables)))
            played = time.monotonic() - started
            # Let the last turns' pings go, then two sweeps more for the deletes.
            await asyncio.sleep(2 * max(1.0, SWEEP * factor) + 2.0)
            requests = emu.requests[first:]
            took = time.monotonic() - started
            log = bots[0].log()
    moves = sum(len(t.turns) for t in tables)
    sent = [p for t in tables for p in t.pings()]
    standing = [p for t in tables for p in t.pings(standing=True)]
    slow_turns = sum(1 for t in tables for a, b in t.turns if b - a >= grace)
    limited = [r for r in requests if not exempt(r.path)]
    for r in limited:  # none is expected: say which, so that a figure above 0 is explained
        print(f"counted by the global limit: {r.method} {r.path} {r.status}", file=sys.stderr)
    figures = {
        "games": games,
        "member moves": moves,
        "failed interactions": sum(t.failed for t in tables),
        "turns past the grace": slow_turns,
        "pings sent": len(sent),
        "pings standing after the end": len(standing),
        "429s": sum(r.status == 429 for r in requests),
        "401/403s": sum(r.status in (401, 403) for r in requests),
        "requests counted by the global limit": len(limited),
        "  per member move": len(limited) / max(1, moves),
        "  per second (peak 1 s window)": peak(requests, limited),
        "exempt requests (callbacks, follow-ups)": len(requests) - len(limited),
        "seconds played": played,
        "seconds in all": took,
    }
    print(f"{games} member games, {move_seconds:g} s a move" + (f" x {scale:g}" if scale else ""))
    for name, value in figures.items():
        print(
            f"  {name:42} {value:10.3f}" if isinstance(value, float) else f"  {name:42} {value:10}"
        )
    kinds = Counter(f"{r.method} {re.sub(r'[0-9]+', '{id}', r.path)}" for r in limited)
    for kind, count in kinds.most_common():
        print(f"    {count:6} {kind}")
    errors = harness.errors_in(log)
    if errors:
        print("  the bot logged errors:", *errors[:5], sep="\n    ")
    warnings = [line for line in log.splitlines() if " WARNING " in line]
    if warnings:
        print(f"  the bot logged {len(warnings)} warnings, such as:", *warnings[:3], sep="\n    ")
    return figures


def peak(requests: list[Any], limited: list[Any]) -> float:
    """The most limited requests in one second, if the emulator records their times."""
    times = [r.at for r in limited if getattr(r, "at", None) is not None]
    if not times:
        return float("nan")
    times.sort()
    most, low = 0, 0
    for high, at in enumerate(times):
        while at - times[low] >= 1.0:
            low += 1
        most = max(most, high - low + 1)
    return float(most)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--move-seconds", type=float, default=40.0)
    parser.add_argument(
        "--scale", type=float, help="multiply every time (turn clock, grace, sweep, moves)"
    )
    args = parser.parse_args()
    if args.scale is not None and not 1 / 30 <= args.scale <= 1:
        parser.error("--scale must be from 1/30 (a 1 s grace) to 1")
    main_of(args.games, args.move_seconds, args.scale)


@dataclass
class SlowGames:
    """The scenario: one run, its figures against the goals (no baseline to run)."""

    games: int
    move_seconds: float
    scale: float | None

    def kinds(self) -> tuple[str]:
        return ("ours",)

    async def run_once(self, kind: str, number: int) -> dict[str, float]:
        return await run(self.games, self.move_seconds, self.scale)


def main_of(games: int, move_seconds: float, scale: float | None) -> None:
    """``python -m bench.slow_games`` (and ``bench.load --slow-games``) with these."""
    harness.play(SlowGames(games, move_seconds, scale), 1)


if __name__ == "__main__":
    main()
