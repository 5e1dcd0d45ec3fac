"""Turn notifications in member games: which message to send, replace, remind with or delete."""

from __future__ import annotations

from collections.abc import Callable

from bot.service.config import ServiceConfig
from bot.store import Store

__all__ = ["TurnPings"]


class TurnPings:
    def __init__(self, store: Store, config: ServiceConfig, clock: Callable[[], float]) -> None:
        self._store = store
        self._config = config
        self._clock = clock
