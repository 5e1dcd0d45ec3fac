"""Calling a rated game off: one player proposes ending it unrated, the other agrees (it
ends unrated, as a stop would: ``Endings.end``) or plays on.

One proposal stands per game, and it holds only at the move it was made at, so it cannot
be accepted after the position changed for the worse. A declined proposal's player may
propose again only ``CALLOFF_WAIT_MOVES`` moves later. Its message is deleted once it
lapses (the game moved on or ended).
"""

from __future__ import annotations

from collections.abc import Callable

from bot.errors import CallOffUnavailable, GameOver, NotAPlayer
from bot.games import rules, writes
from bot.games.endings import Endings
from bot.games.queries import Store
from bot.i18n import N_, Nn_
from bot.models import CallOff, Game, Result
from bot.pings.calloff_queries import CallOffStore

__all__ = ["CALLOFF_WAIT_MOVES", "CallOffs"]

CALLOFF_WAIT_MOVES = 4
"""Moves after a declined proposal before its player may propose calling that game off
again: two of theirs and two of the other's, so the other player, who said no, is asked
at most once every four moves (twice at most on 3 x 3), and never at the very next turn,
where the position has barely changed."""


class CallOffs:
    def __init__(self, store: Store, endings: Endings, clock: Callable[[], float]) -> None:
        self._store = store
        self._calloff_store = CallOffStore(store.db)
        self._endings = endings
        self._clock = clock

    async def propose(
        self, game_id: int, user_id: int, guild_id: int | None
    ) -> tuple[Game, CallOff | None]:
        """Record ``user_id``'s proposal to end the game unrated: the game as it stands,
        and the lapsed proposal it replaced (its message to delete), if any. One stands
        per game: CallOffUnavailable while one made at this move waits for its answer."""
        game = await writes.load_game(self._store, game_id, guild_id)
        if not game.is_live:
            raise GameOver()
        if user_id not in game.human_ids:
            raise NotAPlayer()
        if not rules.loses_rating(game):
            unrated = N_(
                "Ending this game costs no rating: /{command} ends it.", command=rules.STOP_COMMAND
            )
            raise CallOffUnavailable(unrated)
        again_at = await self._calloff_store.again_at(game_id, user_id)
        if again_at is not None and game.move_no < again_at:
            raise CallOffUnavailable(
                Nn_(
                    "Your last proposal to call this game off was declined; you can propose"
                    " again after {n} more move.",
                    "Your last proposal to call this game off was declined; you can propose"
                    " again after {n} more moves.",
                    again_at - game.move_no,
                )
            )
        lapsed = await self._calloff_store.get(game_id)
        if not await self._calloff_store.propose(game_id, user_id, game.move_no, self._clock()):
            raise CallOffUnavailable(
                N_("A proposal to call this game off is already waiting for an answer.")
            )
        if lapsed is not None and lapsed.message_id is None:
            lapsed = None
        return game, lapsed

    async def lapsed(self) -> list[tuple[CallOff, int]]:
        """Proposals that lapsed (their game moved on or ended), with their channel: each
        message to delete, then ``forget``."""
        return await self._calloff_store.lapsed()

    async def forget(self, proposal: CallOff) -> None:
        await self._calloff_store.drop_exact(proposal)

    async def set_message(self, game_id: int, proposer_id: int, message_id: int) -> None:
        await self._calloff_store.set_message(game_id, proposer_id, message_id)

    async def answer(self, game_id: int, user_id: int, agree: bool, guild_id: int | None) -> Game:
        """The other player agrees (the game ends unrated) or plays on (the proposal goes).

        CallOffUnavailable if there is no proposal, the game moved on since it was made,
        or ``user_id`` is not the player it was put to.
        """
        proposal = await self._calloff_store.get(game_id)
        if proposal is None:
            raise CallOffUnavailable(N_("There's no proposal to call this game off any more."))
        game = await writes.load_game(self._store, game_id, guild_id)
        if user_id not in game.human_ids:
            raise NotAPlayer()
        if user_id == proposal.proposer_id:
            raise CallOffUnavailable(N_("It's for the other player to answer your proposal."))
        if not agree:
            again_at = proposal.move_no + CALLOFF_WAIT_MOVES
            await self._calloff_store.declined(proposal, again_at)
            return game

        def decide(game: Game, now: float) -> Game:
            if game.move_no != proposal.move_no:
                raise CallOffUnavailable(
                    N_("The game moved on since that proposal; the player can ask again.")
                )
            return rules.end(game, Result.ABANDONED, None, now)

        ended = await self._endings.end(game_id, guild_id, None, decide)
        await self._calloff_store.drop(game_id)
        return ended
