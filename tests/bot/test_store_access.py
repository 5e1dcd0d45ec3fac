"""Who may use the store's one connection when (``bot.db.sqlite.Access``).

Stand-alone statements may be in flight together; a transaction has the connection to
itself, waits for the statements already in flight, holds back new ones, and queued
transactions go back to back. Cancelled callers never leave the gate shut.
"""

from __future__ import annotations

import asyncio

from bot.db.sqlite import Access


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_statements_share_and_a_transaction_waits_for_them() -> None:
    access = Access()
    events: list[str] = []
    release = asyncio.Event()

    async def statement(name: str) -> None:
        async with access.shared():
            events.append(f"{name} in")
            await release.wait()
            events.append(f"{name} out")

    async def transaction() -> None:
        async with access.exclusive():
            events.append("tx in")

    first = asyncio.create_task(statement("a"))
    second = asyncio.create_task(statement("b"))
    await settle()
    assert events == ["a in", "b in"]  # both at once
    tx = asyncio.create_task(transaction())
    await settle()
    late = asyncio.create_task(statement("c"))
    await settle()
    assert "tx in" not in events and "c in" not in events  # tx waits; c waits behind it
    release.set()
    await asyncio.gather(first, second, tx, late)
    assert events.index("tx in") > max(events.index("a out"), events.index("b out"))
    assert events.index("c in") > events.index("tx in")


async def test_queued_transactions_run_back_to_back() -> None:
    access = Access()
    order: list[str] = []
    gate = asyncio.Event()

    async def transaction(name: str) -> None:
        async with access.exclusive():
            order.append(name)
            await gate.wait()

    async def statement() -> None:
        async with access.shared():
            order.append("statement")

    one = asyncio.create_task(transaction("one"))
    await settle()
    two = asyncio.create_task(transaction("two"))
    await settle()
    waiting = asyncio.create_task(statement())
    await settle()
    gate.set()
    await asyncio.gather(one, two, waiting)
    assert order == ["one", "two", "statement"]


async def test_a_cancelled_transaction_does_not_leave_statements_waiting() -> None:
    access = Access()
    holding = asyncio.Event()
    done = asyncio.Event()

    async def holder() -> None:
        async with access.exclusive():
            holding.set()
            await done.wait()

    async def waiter() -> None:
        async with access.exclusive():
            raise AssertionError("cancelled before its turn")

    first = asyncio.create_task(holder())
    await holding.wait()
    queued = asyncio.create_task(waiter())
    await settle()
    queued.cancel()
    await asyncio.gather(queued, return_exceptions=True)
    done.set()
    await first
    async with asyncio.timeout(1):  # the gate is open again
        async with access.shared():
            pass


async def test_a_transaction_cancelled_while_statements_drain_lets_go() -> None:
    access = Access()
    release = asyncio.Event()

    async def statement() -> None:
        async with access.shared():
            await release.wait()

    running = asyncio.create_task(statement())
    await settle()
    tx = asyncio.create_task(access.acquire())
    await settle()
    tx.cancel()
    await asyncio.gather(tx, return_exceptions=True)
    release.set()
    await running
    async with asyncio.timeout(1):
        async with access.shared():
            pass
        async with access.exclusive():
            pass
