"""Keeping the data right over years: outages, servers left, deleted messages, pruning.

Downtime is nobody's loss. A turn clock is a wall-clock deadline, so time the bot could
not serve (it was down, the machine slept, the clock jumped forward) would count against
the player on move. The bot records that it is alive at every sweep (``beat``). At start
(``resume``), every live game's deadline and every pending challenge's expiry move on by
the whole time since the bot was last alive, so each player has at least what was left of
their turn. While running, a wall clock that moved more than the monotonic clock, past
``ALLOWANCE``, moves them on by the difference. With ``config.shards``, each process does
this for its own servers under its own shards' keys.

An outage of one shard (its gateway connection lost) or of one server (Discord says it
is unavailable) is the same for its servers: nobody there can click. While it lasts
(``outage_begins`` to ``outage_ends``), its key in ``alive`` is left out of the beat
and every sweep moves its servers' deadlines on by the time since that key was last
alive, so nothing there runs out; at its end they move on by the rest. Kept in the
database, it survives a crash (the restart's ``resume`` moves them on by the rest).

A removal the bot did not hear (it was stopped, or the shard down, when it came) is
found when a shard is ready: ``reconcile`` treats every server it holds data of there,
but is no longer in, as removed (``guild_left``).

Ending a game because it can no longer be played (the bot was removed from its server,
its board or channel was deleted) is never anyone's loss either: it ends unrated
(abandoned), which frees its slot and its players' seats.

Two steps belong to other features, which upkeep does not import: forgetting the turn
notification of a game whose channel or server is out of reach (``TurnPings.drop``), and
erasing a server left long ago as /tictactoe-forget-server would (``Privacy.erase_left``).
The composition (``bot.app``) hands them in.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

from bot.config import ServiceConfig
from bot.games import rules, writes
from bot.games.locks import KeyedLocks
from bot.games.queries import Store
from bot.models import Challenge, Game, Result, Shards
from bot.tunables import HISTORY_DAYS, LEFT_SERVER_DAYS
from bot.upkeep.queries import Pruned, UpkeepStore

__all__ = ["ALLOWANCE", "Outage", "Upkeep"]

log = logging.getLogger(__name__)

DAY = 86_400.0
ALLOWANCE = 10.0
"""Seconds the wall clock may run ahead of the monotonic clock between two sweeps before
the deadlines move (NTP's slews and steps are far smaller)."""
CHALLENGES_KEPT = 7 * DAY
"""Ended challenges are deleted this long after they ended."""
REVIEWS_KEPT = 30 * DAY
"""Stored reviews of games that ended this long ago are deleted (they can be computed again)."""
PINGS_KEPT = 7 * DAY
"""A turn notification's row whose game ended this long ago is deleted (the sweep removes
it with its message right after the game ends; this is for one it never could)."""
PRUNE_EVERY = 60.0
"""Seconds between two rounds of pruning."""
PRUNE_BATCH = 500
"""Rows of each kind deleted per round at most."""
LEFT_PER_ROUND = 5
"""Servers left long ago erased per round at most (each erasure is one transaction)."""


@dataclass(frozen=True, slots=True)
class Outage:
    """What an outage covers: the servers of ``shards`` (None: all of the process's), or
    the one server ``guild_id``; ``key`` is its row in ``alive``."""

    key: str
    shards: Shards | None
    guild_id: int | None = None


class Upkeep:
    def __init__(
        self,
        store: Store,
        config: ServiceConfig,
        clock: Callable[[], float],
        monotonic: Callable[[], float],
        locks: KeyedLocks,
        *,
        drop_ping: Callable[[int], Awaitable[None]],
        erase_left: Callable[[int], Awaitable[bool]],
    ) -> None:
        """``drop_ping(game_id)`` forgets a game's turn notification without deleting
        its message; ``erase_left(guild_id)`` erases a server's data, False (writing
        nothing) if it has live games."""
        self._store = store
        self._drop_ping = drop_ping
        self._erase_guild = erase_left
        self._upkeep_store = UpkeepStore(store.db)
        self._config = config
        self._clock = clock
        self._monotonic = monotonic
        self._locks = locks
        self._last: tuple[float, float] | None = None  # (wall, monotonic) at the last beat
        self._pruned_at: float | None = None
        self._erased_at: float | None = None
        shards = config.shards
        self.keys: tuple[str, ...] = (
            ("*",) if shards is None else tuple(f"{shards.count}:{i}" for i in shards.ids)
        )
        """This process's keys in the ``alive`` table: one per shard it runs."""
        self._down: set[Outage] = set()

    # -- alive ----------------------------------------------------------------------------

    async def resume(self) -> float:
        """At start: move deadlines and expiries on by the time since this process's
        shards were last alive; record them alive. The seconds moved (0 the first time)."""
        now = self._clock()

        def decide(last: float | None) -> float:
            return 0.0 if last is None else max(0.0, now - last)

        self._last = (now, self._monotonic())
        return await self._resume(now, decide, "the bot was down")

    async def beat(self) -> float:
        """At every sweep: record this process alive; if the wall clock jumped ahead of the
        monotonic clock since the last beat by more than ALLOWANCE, move deadlines and
        expiries on by the jump. The seconds moved."""
        now, ticks = self._clock(), self._monotonic()
        jump = 0.0
        if self._last is not None:
            jump = (now - self._last[0]) - (ticks - self._last[1])
        self._last = (now, ticks)
        shift = jump if jump > ALLOWANCE else 0.0
        for outage in list(self._down):  # nothing runs out where nobody can click
            await self._catch_up(outage, now)
        down = {outage.key for outage in self._down}
        keys = tuple(key for key in self.keys if key not in down)
        if not keys:
            return 0.0
        shards = self._config.shards
        if shards is not None and len(keys) < len(self.keys):
            shards = Shards(shards.count, tuple(i for i in shards.ids if self._key(i) not in down))
        return await self._resume(now, lambda _last: shift, "the clock jumped", keys, shards)

    async def _resume(
        self,
        now: float,
        decide: Callable[[float | None], float],
        why: str,
        keys: tuple[str, ...] | None = None,
        shards: Shards | None = None,
    ) -> float:
        if keys is None:
            keys, shards = self.keys, self._config.shards
        shift = await self._upkeep_store.resume(keys, now, decide, shards)
        if shift > 0:
            log.info("Turn clocks and challenges moved on by %.0f s: %s", shift, why)
        return shift

    # -- outages of a shard or a server ---------------------------------------------------

    def _key(self, shard_id: int) -> str:
        shards = self._config.shards
        return "*" if shards is None else f"{shards.count}:{shard_id}"

    def shard(self, shard_id: int) -> Outage:
        """The outage of one of this process's shards. A process that runs every shard
        has one key: an outage of any of its shards counts for all its servers (their
        players get the time back too, which costs nobody a game)."""
        shards = self._config.shards
        if shards is None:
            return Outage("*", None)
        return Outage(self._key(shard_id), Shards(shards.count, (shard_id,)))

    @staticmethod
    def server(guild_id: int) -> Outage:
        """The outage of one server (Discord says it is unavailable)."""
        return Outage(f"guild:{guild_id}", None, guild_id)

    @property
    def down(self) -> bool:
        """Whether an outage of a shard or a server lasts now."""
        return bool(self._down)

    async def outage_begins(self, outage: Outage) -> None:
        """Nobody can click in ``outage``'s servers from now on: their clocks stop."""
        if outage in self._down:
            return
        self._down.add(outage)
        now = self._clock()
        await self._upkeep_store.resume((outage.key,), now, lambda _last: 0.0, None)
        log.info("Outage of %s: its turn clocks and challenges stop", outage.key)

    async def outage_ends(self, outage: Outage) -> float:
        """``outage``'s servers can be reached again: their deadlines move on by the time
        since their last catch-up. The seconds moved (0 if there was no such outage)."""
        if outage not in self._down:
            return 0.0
        self._down.discard(outage)
        shift = await self._catch_up(outage, self._clock())
        if outage.guild_id is not None:
            await self._upkeep_store.forget_alive(outage.key)
        log.info(
            "Outage of %s over: turn clocks and challenges moved on by %.1f s", outage.key, shift
        )
        return shift

    async def _catch_up(self, outage: Outage, now: float) -> float:
        def decide(last: float | None) -> float:
            return 0.0 if last is None else max(0.0, now - last)

        return await self._upkeep_store.resume(
            (outage.key,), now, decide, outage.shards, outage.guild_id
        )

    # -- removals the bot did not hear ----------------------------------------------------

    async def reconcile(
        self, shards: Shards | None, present: Collection[int]
    ) -> list[tuple[int, list[Game], list[Challenge]]]:
        """A shard is ready and ``present`` are the servers the bot is in there: every
        other server of ``shards`` it holds data of was removed while the bot could not
        hear it, and goes the way of ``guild_left``. Returns what each ended."""
        removed = []
        for guild_id in sorted(await self._upkeep_store.known(shards) - set(present)):
            games, challenges = await self.guild_left(guild_id)
            removed.append((guild_id, games, challenges))
            log.info(
                "Server %s removed the bot while it could not hear: %d live game(s) ended"
                " unrated, %d challenge(s) withdrawn; its data is erased in %g days",
                guild_id,
                len(games),
                len(challenges),
                self._config[LEFT_SERVER_DAYS],
            )
        return removed

    # -- ending what can no longer be played ----------------------------------------------

    async def end_unrated(self, games: list[Game]) -> list[Game]:
        """End each live game unrated (abandoned), whoever was to move; the games ended."""
        ended: list[Game] = []
        for game in games:
            async with self._locks[game.id]:
                for _attempt in range(5):
                    current = await self._store.get_game(game.id)
                    if current is None or not current.is_live:
                        break
                    new = rules.end(current, Result.ABANDONED, None, self._clock())
                    written = await writes.write(self._store, new, current)
                    if written is not None:
                        ended.append(written)
                        break
        return ended

    async def guild_left(self, guild_id: int) -> tuple[list[Game], list[Challenge]]:
        """The bot was removed from the server: its live games end unrated, its pending
        challenges are withdrawn, and its data is erased ``left_server_days`` later
        unless the bot comes back. Returns what ended (nothing to redraw: the bot can no
        longer reach the server)."""
        await self._upkeep_store.leave(guild_id, self._clock())
        self._down.discard(self.server(guild_id))
        games, challenges = await self._close_down(guild_id)
        for game in games:  # their messages are out of reach: nothing is sent to delete them
            await self._drop_ping(game.id)
        return games, challenges

    async def guild_back(self, guild_id: int) -> bool:
        """The bot is in the server (again): its data stays. Whether it had left."""
        return await self._upkeep_store.back(guild_id)

    async def _close_down(
        self, guild_id: int, channel_id: int | None = None
    ) -> tuple[list[Game], list[Challenge]]:
        games = await self.end_unrated(await self._upkeep_store.live_games(guild_id, channel_id))
        challenges = await self._upkeep_store.withdraw(guild_id, channel_id)
        return games, challenges

    async def channel_gone(
        self, guild_id: int, channel_id: int, ended: tuple[int, ...] = ()
    ) -> tuple[list[Game], list[Challenge]]:
        """The channel was deleted: its live games end unrated and its pending challenges
        are withdrawn. Their turn notifications (and those of the ``ended`` games, which
        were in it) are forgotten, not deleted: they went with the channel, and nothing
        is sent to a channel that no longer exists."""
        games, challenges = await self._close_down(guild_id, channel_id)
        for game_id in (*ended, *(game.id for game in games)):
            await self._drop_ping(game_id)
        return games, challenges

    async def message_gone(
        self, guild_id: int, channel_id: int, message_id: int
    ) -> tuple[list[Game], list[Challenge]]:
        """A message was found deleted (an edit of it met Unknown Message): the live game
        it showed ends unrated, the pending challenge it showed is withdrawn (a rated
        game's board is posted again instead: ``bot.games.boards.Boards.gone``). One read
        of the channel's live games and pending challenges; no write if it was not ours."""
        view = await self._store.channel_view(guild_id, channel_id, 0.0)
        shown = [g for g in view.games if g.message_id == message_id]
        games = await self.end_unrated(shown)
        for game in shown:
            await self._upkeep_store.forget_message(game.id, message_id)
        challenges: list[Challenge] = []
        if any(c.message_id == message_id for c in view.challenges):
            challenges = await self._upkeep_store.withdraw(guild_id, channel_id, message_id)
        return games, challenges

    # -- pruning --------------------------------------------------------------------------

    @property
    def prunes(self) -> bool:
        """Whether this process prunes: pruning is not per server, so one process does it
        (the one running shard 0, or the only one)."""
        shards = self._config.shards
        return shards is None or 0 in shards.ids

    async def prune(self, still_member: Callable[[int], bool] | None) -> tuple[Pruned, list[int]]:
        """Once per PRUNE_EVERY: prune a batch of each kind (see ``UpkeepStore.prune``),
        and erase the servers left more than ``left_server_days`` ago, unless
        ``still_member`` says the bot is in one again; None: the bot does not know yet
        (a shard is not ready), and nothing is erased. Returns what was pruned and the
        servers erased."""
        now = self._clock()
        if self._pruned_at is not None and 0 <= now - self._pruned_at < PRUNE_EVERY:
            return Pruned(), await self.erase_left(still_member)
        self._pruned_at = now
        pruned = Pruned()
        if self.prunes:
            history = self._config[HISTORY_DAYS]
            pruned = await self._upkeep_store.prune(
                now,
                challenges_before=now - CHALLENGES_KEPT,
                pings_before=now - PINGS_KEPT,
                reviews_before=now - REVIEWS_KEPT,
                games_before=None if history is None else now - history * DAY,
                batch=PRUNE_BATCH,
            )
            if pruned.total:
                log.info("Pruned %s", pruned)
        return pruned, await self.erase_left(still_member)

    async def erase_left(self, still_member: Callable[[int], bool] | None) -> list[int]:
        """Once per PRUNE_EVERY from the first call with a ``still_member`` (None: the bot
        does not know yet which servers it is in, and nothing happens): erase the servers
        left more than ``left_server_days`` ago, but those it is in again."""
        now = self._clock()
        if still_member is None:
            return []
        if self._erased_at is not None and 0 <= now - self._erased_at < PRUNE_EVERY:
            return []
        self._erased_at = now
        return await self._erase_left(now, still_member)

    async def _erase_left(self, now: float, still_member: Callable[[int], bool]) -> list[int]:
        when = now - self._config[LEFT_SERVER_DAYS] * DAY
        due = await self._upkeep_store.left_before(when, self._config.shards, LEFT_PER_ROUND)
        erased = []
        for guild_id in due:
            if still_member(guild_id):
                await self.guild_back(guild_id)
                continue
            await self._close_down(guild_id)  # in case a game started meanwhile
            if not await self._erase_guild(guild_id):
                continue  # a game started again in between: next round
            log.info("Erased the data of server %s, which the bot left", guild_id)
            erased.append(guild_id)
        return erased


def monotonic_for(clock: Callable[[], float]) -> Callable[[], float]:
    """The monotonic clock that goes with ``clock``: the system's for the real wall clock,
    else ``clock`` itself (a test's clock moves both, so moving it is no jump)."""
    return time.monotonic if clock is time.time else clock
