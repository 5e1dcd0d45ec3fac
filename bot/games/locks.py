"""Per-key asyncio locks (one game, one channel), dropped when nobody holds or waits."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Hashable

__all__ = ["KeyedLocks"]


class KeyedLocks:
    """``locks[key]`` is the lock for ``key``, made on first use.

    They only spare the database pointless conflicts within this process: every rule
    that must hold (a move lands once, one live game per channel) is guarded in SQL.
    """

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[Hashable, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    def __getitem__(self, key: Hashable) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[key] = lock
        return lock
