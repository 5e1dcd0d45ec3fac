"""A finished game between members played again: Rematch pressed by one player, or both.

The first press challenges the other player, sides swapped; the second press, by the
other player, accepts that challenge instead of being refused as a second one. A game has
at most one pending rematch (the unique index challenges_pending_per_rematch), so when
both press at once, in one process or two, the database lets one challenge in and the
other press accepts it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.challenges.queries import ChallengeQueries
from bot.challenges.service import Challenges
from bot.errors import ChallengeExpired, ChallengeNotFound, ChallengePending
from bot.games.queries import Store
from bot.games.refusals import RematchTaken
from bot.i18n import N_
from bot.models import Challenge, First, Game

__all__ = ["Rematched", "Rematches"]


@dataclass(frozen=True, slots=True)
class Rematched:
    """A Rematch press that accepted the other player's pending rematch: the challenge,
    answered (its message to redraw), and the game it started."""

    challenge: Challenge
    game: Game


class Rematches:
    def __init__(self, challenges: Challenges, store: Store, clock: Callable[[], float]) -> None:
        self._challenges = challenges
        self._store = store
        self._challenge_queries = ChallengeQueries(store.db)
        self._clock = clock

    async def rematch(
        self, game: Game, user_id: int, *, locale: str | None, parent_id: int | None
    ) -> Challenge | Rematched:
        """``user_id`` asks to play the ended member game ``game`` again, sides swapped:
        accept the other player's pending rematch of it if there is one (also when it
        came in while this press was on its way), else challenge them."""
        other = game.o_id if user_id == game.x_id else game.x_id
        assert other is not None
        for _attempt in range(2):
            theirs = await self._theirs(game, user_id)
            if theirs is not None:
                return theirs
            try:
                return await self._challenges.create(
                    game.guild_id,
                    game.channel_id,
                    user_id,
                    other,
                    width=game.width,
                    height=game.height,
                    k=game.k,
                    first=First.OPPONENT if user_id == game.x_id else First.ME,
                    rematch_of=game,
                    locale=locale,
                    parent_id=parent_id,
                )
            except RematchTaken:
                continue  # one came in meanwhile (the database decided): look again
            except ChallengePending:
                theirs = await self._theirs(game, user_id)
                if theirs is None:
                    raise
                return theirs
        raise ChallengePending(
            N_("You already asked for a rematch of this game; it's waiting for an answer.")
        )

    async def _theirs(self, game: Game, user_id: int) -> Rematched | None:
        """The other player's pending rematch of ``game``, accepted by ``user_id``; None
        if there is none open (a lapsed one, anyone's, is expired on the way)."""
        pending = await self._challenge_queries.pending_rematch(game.id)
        if pending is None:
            return None
        now = self._clock()
        if now >= pending.expires_at:
            await self._challenge_queries.expire_challenge(pending.id, now)
            return None
        if pending.opponent_id != user_id:
            return None
        try:
            started = await self._challenges.accept_challenge(
                pending.id, user_id, game.guild_id, None
            )
        except (ChallengeExpired, ChallengeNotFound):
            return None  # withdrawn or expired meanwhile: this press challenges instead
        return Rematched(*started)
