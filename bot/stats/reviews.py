"""Reviews of ended games: computed once in the search pool, stored, rate-limited per member.

A game's review is stored (``Store.reviews``, the engine's Review as JSON with a
``version``) the first time it is computed; concurrent clicks in one process share one
computation, and across processes the first stored wins. A review stored with a version
before REVIEW_VERSION is never shown: it counts as absent, and the new one replaces it in
the store (see docs/decisions.md#reviews-name-the-deciding-move). Small boards
(``ServiceConfig.inline_cells``) are reviewed on the spot, like the bot's replies there
(microseconds of table lookups).

The Review cooldown is a price on searches, so it applies only to reviews that need one:
a stored review, a small board's or one already being computed is free. It is claimed
in the database (so it holds across processes) only once the pool has room, and given
back if the pool turns out full after all: a busy pool costs the member nothing. Its
length is the one in force when it is claimed (a server's new setting applies to the
cooldowns claimed after the change).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable

from bot.config import ServiceConfig
from bot.errors import Busy, GameInProgress, GameNotFound, ReviewCooldown, ReviewsOff
from bot.games import ai
from bot.games.pool import Cost, SearchPool
from bot.games.queries import Store
from bot.games.replies import pool_key
from bot.games.servers import Guilds
from bot.models import Game
from bot.stats.review_queries import ReviewStore
from bot.tunables import REVIEW_COOLDOWN
from engine.analysis import Review, Slip

__all__ = ["REVIEW_VERSION", "Reviews", "decode", "encode"]

REVIEW_VERSION = 2
"""The stored review's format and meaning; ``decode`` reads only this one."""


def encode(review: Review) -> str:
    """``review`` as the JSON stored for it. It also carries version 1's own keys
    (``turning_point``: the decider; ``note``), so that a process still running the
    older code during an update reads it rather than failing."""
    data = {"version": REVIEW_VERSION, **dataclasses.asdict(review)}
    data |= {"turning_point": review.decider, "note": None}
    return json.dumps(data, separators=(",", ":"))


def decode(text: str) -> Review | None:
    """The Review stored as ``text`` (by ``encode``), or None if an older version stored
    it (its verdict may be wrong: it is computed again)."""
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("version") != REVIEW_VERSION:
        return None
    return Review(
        moves=tuple(data["moves"]),
        width=data["width"],
        height=data["height"],
        k=data["k"],
        values=tuple(data["values"]),
        decider=data["decider"],
        kind=data["kind"],
        better=tuple(data["better"]),
        slips=tuple(
            Slip(move=slip["move"], kind=slip["kind"], cells=tuple(slip["cells"]))
            for slip in data["slips"]
        ),
    )


class Reviews:
    def __init__(
        self,
        store: Store,
        config: ServiceConfig,
        clock: Callable[[], float],
        pool: SearchPool,
        guilds: Guilds,
    ) -> None:
        self._store = store
        self._review_store = ReviewStore(store.db)
        self._guilds = guilds
        self._config = config
        self._clock = clock
        self._pool = pool
        self._computing: dict[int, asyncio.Task[Review]] = {}

    async def close(self) -> None:
        """Wait for the reviews being computed (their clickers may have gone)."""
        while pending := list(self._computing.values()):
            await asyncio.gather(*pending, return_exceptions=True)

    async def at_once(
        self, game_id: int, guild_id: int | None = None, *, enabled: bool = True
    ) -> tuple[Game, Review] | None:
        """The ended game and its review if that costs no search (stored, or a small
        board's), else None: then ``review`` searches for it (the Discord layer defers
        first). Raises what ``review`` raises about the game itself."""
        game = await self._ended_game(game_id, guild_id, enabled)
        return await self._without_search(game)

    async def review(
        self,
        game_id: int,
        user_id: int,
        guild_id: int | None = None,
        *,
        cooldown: float | None = None,
        enabled: bool | None = None,
        on_search: Callable[[], Awaitable[object]] | None = None,
    ) -> tuple[Game, Review]:
        """The ended game and the engine's review of it, for ``user_id``.

        ``cooldown`` (seconds) and ``enabled`` (False: Review is off) are the server's
        settings (read from ``guild_id`` when None; without it, the config's).
        Raises ReviewsOff, GameNotFound, GameInProgress, then for a review that needs a
        search Busy (the pool's reviews queue is full) or ReviewCooldown. Once those
        checks passed and the review must wait for a search, ``on_search`` is awaited
        first (the Discord layer defers its answer there), so refusals come before it;
        Busy can still follow it, if the pool filled up meanwhile.
        """
        if guild_id is not None and (cooldown is None or enabled is None):
            settings = await self._guilds.get(guild_id)
            cooldown = settings[REVIEW_COOLDOWN] if cooldown is None else cooldown
            enabled = settings.reviews if enabled is None else enabled
        game = await self._ended_game(game_id, guild_id, enabled is not False)
        found = await self._without_search(game)
        if found is not None:
            return found
        claimed: float | None = None
        task = self._computing.get(game.id)
        if task is None:
            if not self._pool.has_room(Cost.REVIEW, pool_key(game)):
                raise Busy()
            claimed = await self._claim_cooldown(game.guild_id, user_id, cooldown)
            task = self._computing.get(game.id)  # another click may have started it meanwhile
            if task is None:
                task = asyncio.create_task(self._compute(game))
                self._computing[game.id] = task
                task.add_done_callback(lambda _: self._computing.pop(game.id, None))
            elif claimed is not None:
                await self._release_cooldown(game.guild_id, user_id, claimed)
                claimed = None
        try:
            if on_search is not None:
                await on_search()
            return game, await asyncio.shield(task)
        except Busy:
            if claimed is not None:
                await self._release_cooldown(game.guild_id, user_id, claimed)
            raise

    async def _ended_game(self, game_id: int, guild_id: int | None, enabled: bool) -> Game:
        if not enabled:
            raise ReviewsOff()
        game = await self._store.get_game(game_id)
        if game is None or (guild_id is not None and game.guild_id != guild_id):
            raise GameNotFound()
        if game.is_live:
            raise GameInProgress()
        return game

    async def _without_search(self, game: Game) -> tuple[Game, Review] | None:
        stored = await self._review_store.get(game.id)
        found = None if stored is None else decode(stored)
        if found is not None:
            return game, found
        if game.cells <= self._config.inline_cells:
            review = ai.review_game(game.moves, game.width, game.height, game.k)
            return game, await self._kept(game.id, review)
        return None

    async def _kept(self, game_id: int, review: Review) -> Review:
        """Store ``review`` unless a current one is stored already (then that one wins),
        replacing an older version's; return the one stored."""
        stored = await self._review_store.get(game_id)
        found = None if stored is None else decode(stored)
        if found is not None:
            return found
        kept = await self._review_store.put(game_id, encode(review), replacing=stored)
        return decode(kept) or review

    async def _claim_cooldown(self, guild_id: int, user_id: int, seconds: float | None) -> float:
        """Start the member's cooldown; ReviewCooldown if one is running. Returns its end."""
        seconds = self._config[REVIEW_COOLDOWN] if seconds is None else seconds
        now = self._clock()
        until = now + max(0.0, seconds)
        running = await self._review_store.claim_cooldown(guild_id, user_id, now, until)
        if running is not None:
            raise ReviewCooldown(running)
        return until

    async def _release_cooldown(self, guild_id: int, user_id: int, until: float) -> None:
        await self._review_store.release_cooldown(guild_id, user_id, until, self._clock())

    async def _compute(self, game: Game) -> Review:
        """Search in the pool (Busy if its reviews queue is full), store, return the stored."""
        review = await self._pool.run(
            Cost.REVIEW,
            ai.review_game,
            game.moves,
            game.width,
            game.height,
            game.k,
            server=pool_key(game),
        )
        return await self._kept(game.id, review)
