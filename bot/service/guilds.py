"""Per-server settings (within the bot's bounds), cooldowns and challenge consent."""

from __future__ import annotations

from collections.abc import Callable

from bot.service.config import ServiceConfig
from bot.store import Store

__all__ = ["Guilds"]


class Guilds:
    def __init__(self, store: Store, config: ServiceConfig, clock: Callable[[], float]) -> None:
        self._store = store
        self._config = config
        self._clock = clock
