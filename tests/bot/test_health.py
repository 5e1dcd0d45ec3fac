"""The channel-health record and the invalid-request breaker (``bot.ui.health``), and the
outbox's checked path (``Outbox.call``), on a fake clock: no Discord, no sleeps."""

from __future__ import annotations

import logging

import discord
import pytest

from bot.ui.health import (
    BACKED_OFF_NOW,
    BACKOFF,
    BREAKER,
    BREAKER_LIMIT,
    BREAKER_WINDOW,
    MAX_BACKOFF,
    UNVIEWABLE,
    Breaker,
    Health,
)
from bot.ui.outbox import Blocked, Outbox

CHANNEL, OTHER, MESSAGE = 101, 102, 9001


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Response:
    """What discord.py's HTTPException reads of a response."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.reason = "refused"


def error(status: int, code: int = 0) -> discord.HTTPException:
    kind = {403: discord.Forbidden, 404: discord.NotFound}.get(status, discord.HTTPException)
    return kind(Response(status), {"code": code, "message": "no"})  # type: ignore[arg-type]


def test_a_refused_channel_backs_off_growing_and_a_success_clears_it() -> None:
    clock = Clock()
    health = Health(clock=clock)
    assert health.reachable(CHANNEL)
    health.record(CHANNEL, None, error(403, 50001))
    assert health.why_not(CHANNEL) == BACKED_OFF_NOW
    assert health.reachable(OTHER), "only that channel"
    lengths = []
    for _ in range(8):
        start = clock.now
        while not health.reachable(CHANNEL):
            clock.now += 60
        lengths.append(clock.now - start)
        health.record(CHANNEL, None, error(403, 50001))
    assert lengths[0] == pytest.approx(BACKOFF, abs=60)
    assert lengths[1] == pytest.approx(2 * BACKOFF, abs=60)
    assert lengths[-1] == pytest.approx(MAX_BACKOFF, abs=60)
    clock.now += MAX_BACKOFF
    health.succeeded(CHANNEL)
    health.record(CHANNEL, None, error(401))
    clock.now += BACKOFF
    assert health.reachable(CHANNEL), "after a success it starts again from the first step"


def test_unknown_message_backs_off_the_message_and_not_its_channel() -> None:
    health = Health(clock=Clock())
    health.record(CHANNEL, MESSAGE, error(404, 10008))
    assert health.reachable(CHANNEL)
    assert not health.reachable(CHANNEL, MESSAGE)
    assert health.gone(MESSAGE) and not health.gone(MESSAGE + 1)
    health.record(CHANNEL, MESSAGE, error(404, 10003))
    assert not health.reachable(CHANNEL), "Unknown Channel backs the channel off"


def test_other_failures_back_nothing_off_nor_count() -> None:
    health = Health(clock=Clock())
    for status in (400, 500, 503):
        health.record(CHANNEL, MESSAGE, error(status))
    assert health.reachable(CHANNEL, MESSAGE)
    assert health.invalid == 0
    health.record(CHANNEL, None, error(429))
    assert health.invalid == 1 and health.reachable(CHANNEL), "a 429 counts, backs nothing off"


def test_a_channel_the_bot_cannot_view_is_never_reachable() -> None:
    seen: list[tuple[int, int | None]] = []

    def viewable(channel_id: int, guild_id: int | None) -> bool:
        seen.append((channel_id, guild_id))
        return channel_id != CHANNEL

    health = Health(viewable=viewable, clock=Clock())
    assert health.why_not(CHANNEL, MESSAGE, 7) == UNVIEWABLE
    assert health.reachable(OTHER, None, 7)
    assert seen == [(CHANNEL, 7), (OTHER, 7)]
    assert not health.allows(CHANNEL)
    assert health.blocked == 1


def test_a_board_not_redrawn_is_recorded_until_drawn() -> None:
    health = Health(clock=Clock())
    assert health.redrawable(CHANNEL, MESSAGE)
    health.unredrawn(MESSAGE)
    assert health.out_of_date(MESSAGE) and not health.redrawable(CHANNEL, MESSAGE)
    health.drawn(MESSAGE)
    assert health.redrawable(CHANNEL, MESSAGE)


def test_the_breaker_trips_at_its_limit_logs_once_and_reopens_after_its_window(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    breaker = Breaker(clock=clock)
    health = Health(clock=clock, breaker=breaker)
    caplog.set_level(logging.INFO, logger="bot.ui.health")
    for n in range(BREAKER_LIMIT - 1):
        health.record(10_000 + n, None, error(403))
        clock.now += 1.0
    assert not breaker.open and health.reachable(OTHER)
    health.record(OTHER, None, error(403))
    assert breaker.open and breaker.trips == 1
    assert health.why_not(OTHER + 1) == BREAKER, "every channel stops"
    for _ in range(50):  # more refusals while open (an interaction's, say): no new trip
        health.invalid_elsewhere()
    clock.now += BREAKER_WINDOW - 1
    assert breaker.open
    clock.now += 1
    assert not breaker.open and health.reachable(OTHER + 1)
    trips = [r for r in caplog.records if "stop for" in r.getMessage()]
    closes = [r for r in caplog.records if "breaker closed" in r.getMessage()]
    assert len(trips) == 1 and len(closes) == 1
    health.record(OTHER + 2, None, error(403))
    assert not breaker.open, "closed afresh: the old count is gone"


def test_the_breaker_counts_a_sliding_window() -> None:
    clock = Clock()
    breaker = Breaker(limit=10, window=100.0, clock=clock)
    for _ in range(100):  # 9 within any 100 s: never trips
        breaker.invalid()
        clock.now += 100.0 / 9 + 0.01
    assert not breaker.open and breaker.trips == 0


def test_the_bound_is_far_below_discords_ban() -> None:
    assert BREAKER_LIMIT <= 1000 // 4 and BREAKER_WINDOW == 600.0


async def test_the_checked_path_refuses_records_and_paces() -> None:
    clock = Clock()
    outbox = Outbox(1000.0, Health(clock=clock))
    calls: list[int] = []

    async def refused() -> None:
        calls.append(CHANNEL)
        raise error(403, 50001)

    async def fine() -> str:
        calls.append(OTHER)
        return "sent"

    with pytest.raises(discord.Forbidden):
        await outbox.call(CHANNEL, refused)
    with pytest.raises(Blocked) as blocked:
        await outbox.call(CHANNEL, refused)
    assert blocked.value.reason == BACKED_OFF_NOW
    assert await outbox.call(OTHER, fine) == "sent"
    assert calls == [CHANNEL, OTHER], "the backed-off channel was not called"
    assert outbox.requests == 2, "a refused call takes no slot"
    assert outbox.health.invalid == 1 and outbox.health.blocked == 1
