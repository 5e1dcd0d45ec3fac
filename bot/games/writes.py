"""A game read for a change, and the guarded write of its next state: shared by everything
that changes a game (a move, a forfeit, a stop, the sweep).

A write lands only if the game is still where its writer read it (``Store.save_game``
and ``end_game`` guard on the move number and status), so two clicks, a click and a
sweep, or two processes can never both land; the loser is told why (``conflict``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from bot.errors import GameError, GameNotFound, GameOver, StaleBoard
from bot.games import rules, walkaways
from bot.games.queries import Store
from bot.games.settlement import settle
from bot.i18n import N_
from bot.models import Game, Ping, PlayerRow, Settlement, StandingPing

__all__ = [
    "TIME_RAN_OUT",
    "conflict",
    "load_game",
    "load_game_and_ping",
    "settle_if_overdue",
    "turn_over",
    "write",
]

TIME_RAN_OUT = N_("Time ran out for this game: it's over.")


async def load_game(
    store: Store, game_id: int, guild_id: int | None = None, message_id: int | None = None
) -> Game:
    """The game; GameNotFound if missing, (with ``guild_id``) in another guild, or
    (with ``message_id``, the clicked message) shown by another message than that."""
    return _checked(await store.get_game(game_id), guild_id, message_id)


async def load_game_and_ping(
    store: Store, game_id: int, guild_id: int | None = None, message_id: int | None = None
) -> tuple[Game, StandingPing | None]:
    """``load_game``, and the game's standing turn ping, read in the same statement."""
    game, standing = await store.game_and_ping(game_id)
    return _checked(game, guild_id, message_id), standing


async def write(store: Store, new: Game, before: Game) -> Game | None:
    """Write ``new`` if the game is still at ``before`` (else None); an ending settles
    the result, and the game comes back with the rating changes it was settled with."""
    if not (before.is_live and not new.is_live):
        return new if await store.save_game(new, before) else None
    settled: list[Settlement] = []

    def decide(rows: Mapping[int, PlayerRow]) -> Settlement:
        settled.append(settle(new, rows))
        return settled[-1]

    if not await store.end_game(new, before, decide):
        return None
    changes = settled[-1].ratings
    if changes is None:
        return new
    return dataclasses.replace(new, x_rating=changes[0], o_rating=changes[1])


async def conflict(store: Store, game_id: int, guild_id: int | None) -> GameError:
    """The error for a write that lost a race: the game ended, or it moved on."""
    game = await store.get_game(game_id)
    if game is None or (guild_id is not None and game.guild_id != guild_id):
        return GameNotFound()
    return StaleBoard() if game.is_live else GameOver()


async def settle_if_overdue(store: Store, game: Game, now: float) -> None:
    """GameOver if the player on move ran out of time, after settling the timeout.

    Whatever a user does to a game whose clock ran out (move, forfeit, stop) finds it
    lost on time, as the sweep would have left it.
    """
    if rules.is_overdue(game, now):
        ended = rules.time_out(game, now)
        written = await write(store, ended, game)
        if written is None:
            written = await load_game(store, game.id)  # settled elsewhere meanwhile
        elif rules.first_move_pending(game):
            await walkaways.record(store.db, game, game.player_of(game.turn), now)
        raise GameOver(TIME_RAN_OUT, game=written)


def turn_over(game: Game, standing: StandingPing | None) -> Ping | None:
    """``standing``, ``game``'s turn ping, if its turn is over (the game moved on or
    ended): the ping a move made stale, to delete."""
    if game.is_bot_game or standing is None:
        return None
    if game.is_live and standing.move_no == game.move_no:
        return None
    return Ping(standing.game_id, standing.channel_id, standing.message_id)


def _checked(game: Game | None, guild_id: int | None, message_id: int | None) -> Game:
    """``game``; GameNotFound if missing, (with ``guild_id``) in another guild, or (with
    ``message_id``) shown by another message."""
    if game is None or (guild_id is not None and game.guild_id != guild_id):
        raise GameNotFound()
    if not rules.on_its_message(game.message_id, message_id):
        raise GameNotFound()
    return game
