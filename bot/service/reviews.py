"""Reviews of ended games: computed once in the search pool, stored, rate-limited per member."""

from __future__ import annotations

from collections.abc import Callable

from bot.service.config import ServiceConfig
from bot.store import Store

__all__ = ["Reviews"]


class Reviews:
    def __init__(self, store: Store, config: ServiceConfig, clock: Callable[[], float]) -> None:
        self._store = store
        self._config = config
        self._clock = clock
