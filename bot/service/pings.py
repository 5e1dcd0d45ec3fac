"""Turn notifications in member games: which message to send, replace, remind with or delete.

Editing a message notifies nobody in Discord, so the player to move is told by a new
message that mentions only them, sent by the Discord layer after each move (and after
Accept). At most one stands per game: each new one replaces the last, and the game's
end removes it. The rank rules (a ping for an older move never replaces a newer one;
whoever loses a race deletes its own message) are in ``bot.store.pings``.

The reminder: once per turn, a new ping (so it notifies again) at most ``REMINDER_LEAD``
seconds, and at most a fifth of the turn, before the deadline. The sweep finds it due
up to one sweep interval earlier than that, so a sweep cannot step over it (with a 5 s
sweep and a 300 s turn it comes 60-65 s before the deadline), but never in the first
half of the turn. Games against the bot never ping: their player just clicked.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.models import Game, GameStatus
from bot.service.config import ServiceConfig
from bot.store import Claim, StandingPing, Store

__all__ = ["REMINDER_LEAD", "Claim", "TurnPings"]

REMINDER_LEAD = 60.0
"""The longest a reminder comes before the deadline (a fifth of the turn if shorter)."""


def pings_for(game: Game) -> bool:
    """Whether ``game`` is a member game (the only kind that pings)."""
    return not game.is_bot_game


class TurnPings:
    def __init__(self, store: Store, config: ServiceConfig, clock: Callable[[], float]) -> None:
        self._store = store
        self._config = config
        self._clock = clock

    async def news(self, game: Game, *, reminder: bool = False) -> tuple[bool, StandingPing | None]:
        """Whether a ping announcing ``game``'s current turn (or its reminder) should be
        sent (a member game still active at that move, and no such ping stands yet), and
        the ping standing now: deleted before the new one is sent, so that one at most
        stands at any moment (but in a race, whose loser deletes its own)."""
        if not pings_for(game) or game.status is not GameStatus.ACTIVE:
            return False, None
        return await self._store.pings.news(game.id, game.move_no, reminder)

    async def record(self, game: Game, message_id: int, *, reminder: bool = False) -> Claim:
        """Record the ping just sent as ``message_id`` for ``game``'s current turn.

        ``won``: it stands now, and ``replaced`` (if any) is the message to delete; else
        it lost to a ping of a higher rank or to the game moving on, and the caller
        deletes ``message_id``.
        """
        player = game.current_player_id
        assert player is not None, "only a member game waiting for a player pings"
        ping = StandingPing(game.id, game.channel_id, message_id, player, game.move_no, reminder)
        return await self._store.pings.claim(ping)

    async def clear(self, game: Game) -> tuple[int, int] | None:
        """An ended game's standing ping, forgotten: (channel id, message id) to delete."""
        if game.is_live or not pings_for(game):
            return None
        return await self._store.pings.take_ended(game.id)

    async def reminders_due(self, sweep_interval: float) -> list[Game]:
        """The member games whose player is due the reminder (see the module's doc), in
        this process's servers if the config has ``shards``."""
        return await self._store.pings.reminders_due(
            self._clock(), max_lead=REMINDER_LEAD, early=sweep_interval, shards=self._config.shards
        )

    async def left_behind(self) -> list[Game]:
        """Ended games whose ping still stands (their end was not followed by its
        removal: a crash in between), in this process's servers; ``clear`` each."""
        found: list[Game] = []
        for game_id in await self._store.pings.left_behind(shards=self._config.shards):
            game = await self._store.get_game(game_id)
            if game is not None:
                found.append(game)
        return found
