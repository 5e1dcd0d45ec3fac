"""IDENTIFYs paced as Discord allows: ``max_concurrency`` per 5 s, one per bucket
``shard_id % max_concurrency``, and no wait that the limit does not need.

On a clock the test moves: each sleep advances it, so the sleeps are the waits.
(tests/e2e/test_shards.py starts two shards of a real bot against the emulator.)
"""

from __future__ import annotations

import itertools
import logging

import pytest

from bot.settings import Settings
from bot.ui.shards import IDENTIFY_SPACING, IdentifyPacer, owned_shards, syncs_commands

from .helpers import FakeClock


class Limits:
    """``/gateway/bot``'s ``max_concurrency``, counting the times it was asked."""

    def __init__(self, value: int | Exception) -> None:
        self.value = value
        self.asked = 0

    async def __call__(self) -> int:
        self.asked += 1
        if isinstance(self.value, Exception):
            raise self.value
        return self.value


def pacer(limits: Limits, clock: FakeClock, slept: list[float]) -> IdentifyPacer:
    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.advance(seconds)

    return IdentifyPacer(limits, clock=clock, sleep=sleep)


async def identify_all(pacer: IdentifyPacer, clock: FakeClock, shard_ids: range) -> list[float]:
    """Identify each shard in turn, as discord.py launches them; when each went."""
    sent = []
    for shard_id in shard_ids:
        await pacer.wait(shard_id)
        sent.append(clock.now)
        clock.advance(0.1)  # the socket, HELLO and IDENTIFY of that shard
    return sent


async def test_a_single_shard_neither_waits_nor_asks(clock: FakeClock) -> None:
    limits, slept = Limits(1), []
    await identify_all(pacer(limits, clock, slept), clock, range(1))
    assert slept == [] and limits.asked == 0


@pytest.mark.parametrize(
    ("concurrency", "shards", "waits"),
    [
        (1, 4, 3),  # one bucket: 5 s between each
        (2, 4, 1),  # shards 0 and 1 at once, then 2 and 3 five seconds later
        (4, 4, 0),
        (16, 16, 0),  # a large bot's bucket count: every shard in one go
    ],
)
async def test_each_bucket_identifies_once_per_five_seconds(
    clock: FakeClock, concurrency: int, shards: int, waits: int
) -> None:
    limits, slept = Limits(concurrency), []
    sent = await identify_all(pacer(limits, clock, slept), clock, range(shards))
    assert limits.asked == (1 if shards > 1 else 0)
    assert len(slept) == waits
    for bucket in range(concurrency):
        same_bucket = [t for i, t in enumerate(sent) if i % concurrency == bucket]
        for earlier, later in itertools.pairwise(same_bucket):
            assert later - earlier >= IDENTIFY_SPACING
    # Never later than needed: the last shard went as soon as its bucket allowed.
    assert sent[-1] - sent[0] <= IDENTIFY_SPACING * waits + 0.1 * shards


async def test_a_reidentify_waits_only_for_what_is_left(clock: FakeClock) -> None:
    limits, slept = Limits(1), []
    paced = pacer(limits, clock, slept)
    await paced.wait(0)
    clock.advance(1.5)
    await paced.wait(0)  # the session was invalidated soon after: 3.5 s more
    assert slept == [pytest.approx(3.5)]
    clock.advance(600)
    await paced.wait(0)  # long after: at once
    assert len(slept) == 1 and limits.asked == 1


async def test_if_the_limit_cannot_be_read_one_at_a_time(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    limits, slept = Limits(OSError("unreachable")), []
    with caplog.at_level(logging.WARNING):
        await identify_all(pacer(limits, clock, slept), clock, range(3))
    assert len(slept) == 2 and limits.asked == 1
    assert "one at a time" in caplog.text


TOKEN = "x" * 40


@pytest.mark.parametrize(
    ("env", "count", "ids", "syncs"),
    [
        ({}, None, None, True),
        ({"SHARD_COUNT": "4"}, None, None, True),  # every shard here: every server
        ({"SHARD_COUNT": "4", "SHARD_IDS": "0-1"}, 4, (0, 1), True),
        ({"SHARD_COUNT": "4", "SHARD_IDS": "2-3"}, 4, (2, 3), False),
        ({"SHARD_COUNT": "4", "SHARD_IDS": "0-3"}, 4, (0, 1, 2, 3), True),
    ],
)
def test_what_a_process_owns_and_whether_it_syncs(
    env: dict[str, str], count: int | None, ids: tuple[int, ...] | None, syncs: bool
) -> None:
    settings = Settings.from_env({"DISCORD_TOKEN": TOKEN, **env})
    shards = owned_shards(settings)
    found = None if shards is None else (shards.count, shards.ids)
    assert found == (None if count is None else (count, ids))
    assert syncs_commands(settings) is syncs
