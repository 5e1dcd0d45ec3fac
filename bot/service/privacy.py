"""A member's data on request: erasing their stats, ratings and history in a server."""

from __future__ import annotations

from collections.abc import Callable

from bot.service.config import ServiceConfig
from bot.store import Store

__all__ = ["Privacy"]


class Privacy:
    def __init__(self, store: Store, config: ServiceConfig, clock: Callable[[], float]) -> None:
        self._store = store
        self._config = config
        self._clock = clock
