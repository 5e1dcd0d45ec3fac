"""Ending a game before it is played out: forfeits and stops (calling a game off, which
ends it too: ``bot.pings.calloffs``).

No escape from a rated loss: a player who stops a rated game (between members) once both
players have moved loses it by forfeit. It ends unrated ("abandoned") when a moderator
who is not playing in it stops it, when both players agree (one proposes calling it off,
the other accepts: ``CallOffs``), and, however it ends, before both
players moved (an abort: ``rules.is_abort``). A proposal holds only at the move it was
made at, so it cannot be accepted after the position changed for the worse.

A player who stops or forfeits a game without having moved in it waits a little before
the next (``bot.games.walkaways``).

Forfeit is a private question first (``ask_forfeit``): its answer carries the move it was
asked at and when it lapses (``FORFEIT_CONFIRM_SECONDS``), and ``forfeit`` refuses it
after either, changing nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.errors import (
    ConfirmationExpired,
    GameNotFound,
    GameOver,
    NotAPlayer,
    PermissionDenied,
    RatedStop,
    StaleBoard,
)
from bot.games import rules, walkaways, writes
from bot.games.locks import KeyedLocks
from bot.games.queries import Store
from bot.i18n import N_
from bot.models import Game, Result
from bot.refs import Member

__all__ = ["FORFEIT_CONFIRM_SECONDS", "Endings", "may_stop"]

FORFEIT_CONFIRM_SECONDS = 60.0
"""How long the question "Forfeit this game?" may be answered (and only at its move)."""


def may_stop(game: Game, user_id: int, *, is_moderator: bool) -> bool:
    """Whether ``user_id`` may use /tictactoe-stop on ``game``: its players, and
    moderators (Manage Messages in the channel). (A player of a rated game both players
    have moved in is then asked to forfeit or call it off.)"""
    return user_id in game.human_ids or is_moderator


class Endings:
    def __init__(self, store: Store, locks: KeyedLocks, clock: Callable[[], float]) -> None:
        self._store = store
        self._locks = locks
        self._clock = clock

    async def end(
        self,
        game_id: int,
        guild_id: int | None,
        move_no: int | None,
        decide: Callable[[Game, float], Game],
        message_id: int | None = None,
    ) -> Game:
        """End the live game with ``decide`` (which checks the user and returns the ended
        game). With ``move_no`` a game that moved on gives StaleBoard; without, the latest
        state is ended (retrying if another process wrote first)."""
        async with self._locks[game_id]:
            for _attempt in range(5):
                now = self._clock()
                game = await writes.load_game(self._store, game_id, guild_id, message_id)
                await writes.settle_if_overdue(self._store, game, now)
                if not game.is_live:
                    raise GameOver()
                ended = decide(game, now)
                if move_no is not None and move_no != game.move_no:
                    raise StaleBoard()
                written = await writes.write(self._store, ended, game)
                if written is not None:
                    return written
                if move_no is not None:
                    break
            raise await writes.conflict(self._store, game_id, guild_id)

    async def ask_forfeit(
        self, game_id: int, user_id: int, guild_id: int | None, message_id: int | None
    ) -> tuple[Game, float]:
        """The game a player asks to forfeit (Forfeit on its board, ``message_id``), and
        until when their answer holds; nothing changes. GameOver (with the game, if its
        clock just ran out) or NotAPlayer as for a move."""
        now = self._clock()
        game = await writes.load_game(self._store, game_id, guild_id, message_id)
        await writes.settle_if_overdue(self._store, game, now)
        if not game.is_live:
            raise GameOver()
        if game.mark_of(user_id) is None:
            raise NotAPlayer()
        return game, now + FORFEIT_CONFIRM_SECONDS

    async def forfeit(
        self,
        game_id: int,
        user_id: int,
        guild_id: int | None = None,
        message_id: int | None = None,
        *,
        move_no: int | None = None,
        until: float | None = None,
    ) -> Game:
        """The player gives up and loses (rated between members; an abort before both
        players moved). ``message_id``: the board clicked (GameNotFound if it is not the
        game's). ``move_no`` and ``until``: the question answered (``ask_forfeit``) was
        asked at that move and lapses then: StaleBoard or ConfirmationExpired after."""

        def decide(game: Game, now: float) -> Game:
            mark = game.mark_of(user_id)
            if mark is None:
                raise NotAPlayer()
            if until is not None and now > until:
                raise ConfirmationExpired(
                    N_(
                        "This question has expired; nothing changed. Click Forfeit again if"
                        " you mean it."
                    )
                )
            if move_no is not None and move_no != game.move_no:
                raise StaleBoard(
                    N_(
                        "The game moved on since you were asked; nothing changed. Click Forfeit"
                        " again if you still mean it."
                    )
                )
            return rules.end(game, Result.FORFEIT, mark, now)

        ended = await self.end(game_id, guild_id, move_no, decide, message_id)
        await walkaways.record(self._store.db, ended, user_id, ended.updated_at)
        return ended

    async def stop(
        self,
        guild_id: int,
        channel_id: int,
        user_id: int,
        *,
        is_moderator: bool,
        move_no: int | None = None,
    ) -> Game:
        """``/tictactoe-stop``: end the channel's live game unrated, where the rules allow.

        With several live games in the channel, the one ``user_id`` plays in, else the
        newest. A player of a rated game both players have moved in gets RatedStop
        (nothing changes): they may forfeit, or propose calling it off. A moderator who
        plays in the game is a player here.
        """
        games = await self._store.live_games(guild_id, channel_id)
        if not games:
            raise GameNotFound(N_("There's no game in progress in this channel."))
        target = next((g for g in games if user_id in g.human_ids), games[0])

        def decide(game: Game, now: float) -> Game:
            if not may_stop(game, user_id, is_moderator=is_moderator):
                raise PermissionDenied()
            playing = user_id in game.human_ids
            if playing and rules.loses_rating(game):
                other = game.o_id if user_id == game.x_id else game.x_id
                assert other is not None  # a rated game is between two members
                raise RatedStop(
                    N_(
                        "This game is rated and both players have moved, so stopping it counts"
                        " as a loss for you. You can forfeit, or ask {member} to call it off"
                        " (unrated).",
                        member=Member(other),
                    ),
                    game=game,
                    until=now + FORFEIT_CONFIRM_SECONDS,
                )
            return rules.end(game, Result.ABANDONED, None, now)

        ended = await self.end(target.id, guild_id, move_no, decide)
        await walkaways.record(self._store.db, ended, user_id, ended.updated_at)
        return ended
