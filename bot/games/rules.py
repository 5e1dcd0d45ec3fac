"""The rules of play as pure functions: checking options, moving, ending, settling results.

Nothing here awaits or touches the database: the service loads a row, asks these
functions for the next state, and writes it with a guarded statement. What an ending
changes besides the game (ratings, records, streaks) is ``bot.games.settlement``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from bot.errors import (
    AlreadyPlaying,
    CellTaken,
    ChallengePending,
    ChannelBusy,
    ChannelNotAllowed,
    GameOver,
    InvalidCell,
    InvalidSettings,
    NotAPlayer,
    NotYourTurn,
    StaleBoard,
    TooManyGames,
)
from bot.i18n import N_, Nn_
from bot.models import Challenge, First, Game, GameStatus, GuildSettings, Result
from bot.reach import by_channel
from bot.refs import Channel, Command, Member, Place, Places
from bot.tunables import GAMES_PER_MEMBER, SERVER_GAMES
from engine import MAX_SIDE, MIN_K, MIN_SIDE, Mark
from engine.levels import LEVELS
from engine.values import is_fair

if TYPE_CHECKING:
    from bot.games.queries import ChannelView

__all__ = [
    "ABORT_MOVES",
    "advance",
    "busy",
    "check_allowed_channel",
    "check_channel",
    "check_move",
    "end",
    "first_from",
    "first_move_pending",
    "is_abort",
    "is_overdue",
    "is_rated",
    "loses_rating",
    "new_game",
    "no_level_with_opponent",
    "on_its_message",
    "place_of",
    "rated_variant",
    "time_out",
    "too_many_games",
    "validate_options",
    "win_length",
]

STOP_COMMAND = Command(N_("tictactoe-stop"))
"""The command that ends a game: a refusal names it as its reader's client shows it (the
cogs' command names are entries of the same catalogs)."""


DEFAULT_WIN_LENGTH = {3: 3, 4: 4, 5: 4}
"""Marks in a row to win when the player does not say, by the board's shorter side."""


def no_level_with_opponent(level: str | None, opponent_id: int) -> None:
    """InvalidSettings if a difficulty is given with an opponent: refused before anything
    happens (nobody is pinged), as the player may have meant either game."""
    if level is not None:
        raise InvalidSettings(
            N_(
                "A difficulty is for games against me: leave it out to challenge {member}, or"
                " leave out the opponent to play me.",
                member=Member(opponent_id),
            )
        )


def win_length(width: int, height: int, k: int | None) -> int:
    """``k``, or the board's usual win length if None."""
    if k is None:
        return DEFAULT_WIN_LENGTH.get(min(width, height), min(max(width, height), MIN_K + 1))
    return k


def validate_options(width: int, height: int, k: int, level: str | None = None) -> None:
    """InvalidSettings unless the board shape (and the bot's level, if given) can be played."""
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidSettings(
                N_("The board width must be a whole number.")
                if name == "width"
                else N_("The board height must be a whole number.")
            )
        if not MIN_SIDE <= value <= MAX_SIDE:
            params = {"low": MIN_SIDE, "high": MAX_SIDE, "value": value}
            raise InvalidSettings(
                N_("The board width must be from {low} to {high}, not {value}.", **params)
                if name == "width"
                else N_("The board height must be from {low} to {high}, not {value}.", **params)
            )
    longest = max(width, height)
    whole = isinstance(k, int) and not isinstance(k, bool)
    if whole and k > longest:
        raise InvalidSettings(
            N_(
                "A win length of {k} doesn't fit on a {size} board; use at most {side}.",
                k=k,
                size=f"{width}x{height}",
                side=longest,
            )
        )
    if not whole or not MIN_K <= k <= longest:
        raise InvalidSettings(
            N_(
                "The win length must be from {low} to {high} on a {width}x{height} board, not {k}.",
                low=MIN_K,
                high=longest,
                width=width,
                height=height,
                k=k,
            )
        )
    if level is not None and level not in LEVELS:
        raise InvalidSettings(
            N_(
                "Unknown level {level}: choose one of {choices}.",
                level=repr(level),
                choices=", ".join(LEVELS),
            )
        )


def first_from(first: First | str) -> First:
    try:
        return First(first)
    except ValueError:
        choices = ", ".join(f.value for f in First)
        raise InvalidSettings(
            N_(
                "Who starts must be one of {choices}, not {first}.",
                choices=choices,
                first=repr(first),
            )
        ) from None


def check_channel(
    view: ChannelView,
    actor: int,
    members: Iterable[int],
    *,
    exclusive: bool,
    challenges: bool = True,
) -> None:
    """Raise if a game between ``members`` can't start in the channel ``view`` shows.

    A member with a pending challenge or a live game there is named (``actor`` is "you");
    with ``exclusive`` (one game per channel) any live game, or pending challenge, blocks.
    ``challenges=False`` leaves pending challenges out (accepting one of them). Each
    refusal links what is in the way.
    """
    members = tuple(members)
    pending = view.challenges if challenges else ()
    for challenge in pending:
        for member in members:
            if member in (challenge.challenger_id, challenge.opponent_id):
                raise ChallengePending.in_channel(member, actor, place_of(challenge))
    for game in view.games:
        for member in members:
            if member in game.human_ids:
                raise AlreadyPlaying.in_game(member, actor, place_of(game))
    if exclusive and (view.games or pending):
        raise busy(view.games, pending)


def busy(games: Sequence[Game], challenges: Sequence[Challenge] = ()) -> ChannelBusy:
    """The refusal in a channel taken by ``games`` (the first is linked), or else by the
    pending ``challenges``."""
    if games:
        return ChannelBusy(place_of(games[0]), game=games[0])
    return ChannelBusy(place_of(challenges[0]) if challenges else None)


def place_of(item: Game | Challenge) -> Place:
    """Where ``item``'s board (or challenge) is, for a refusal to point at."""
    return Place(item.guild_id, item.channel_id, item.message_id)


def on_its_message(recorded: int | None, clicked: int | None) -> bool:
    """Whether a click on message ``clicked`` is a click on the game's or challenge's own
    message ``recorded``. Unknown on either side (a message not recorded yet, a click from
    no message) passes: the id in the button is then all there is to go by."""
    return recorded is None or clicked is None or recorded == clicked


def check_allowed_channel(
    settings: GuildSettings, channel_id: int, parent_id: int | None = None
) -> None:
    """ChannelNotAllowed unless the server lets games start in ``channel_id`` (a thread
    of ``parent_id``: where that channel is allowed)."""
    if not settings.allows_channel(channel_id, parent_id):
        where = Places(tuple(Channel(channel) for channel in settings.channels))
        raise ChannelNotAllowed(N_("Games on this server are played in {where}.", where=where))


def too_many_games(
    member: int | None, actor: int, games: Sequence[Game], settings: GuildSettings
) -> TooManyGames:
    """The refusal when a limit leaves no room: ``member`` None is the server's cap;
    ``games`` are the live games in the way (the first few are linked)."""
    links = Places(tuple(place_of(game) for game in games[:3]))
    if member is None:
        return TooManyGames(
            Nn_(
                "This server already has {n} live game, the most its moderators allow; try"
                " again when it ends: {links}",
                "This server already has {n} live games, the most its moderators allow; try"
                " again when one ends. The oldest: {links}",
                settings[SERVER_GAMES],
                links=links,
            )
        )
    limit = settings[GAMES_PER_MEMBER]
    if member == actor:
        return TooManyGames(
            Nn_(
                "You're already in a game on this server: {links}.",
                "You're already in {n} games on this server, the most it allows: {links}.",
                limit,
                links=links,
            )
        )
    return TooManyGames(
        Nn_(
            "{member} is already in a game on this server ({links}); challenge them when"
            " they're free.",
            "{member} is already in {n} games on this server ({links}); challenge them when"
            " they're free.",
            limit,
            member=Member(member),
            links=links,
        )
    )


def new_game(
    guild_id: int,
    channel_id: int,
    *,
    x_id: int | None,
    o_id: int | None,
    bot_level: str | None,
    width: int,
    height: int,
    k: int,
    now: float,
    turn_timeout: float,
    message_id: int | None = None,
    rematch_of: int | None = None,
    locale: str | None = None,
    first_move_timeout: float | None = None,
) -> Game:
    """A game before its first move (its id is the store's to give). A None player is the
    bot: if it is X, the game starts owing the bot's move, with no turn clock. ``locale``
    is the server's, for its shared messages. The first move gets ``first_move_timeout``
    (the server's first-move clock) if shorter than the turn clock."""
    bot_first = x_id is None
    first_clock = min(turn_timeout, first_move_timeout or turn_timeout)
    return Game(
        id=0,
        guild_id=guild_id,
        channel_id=channel_id,
        message_id=message_id,
        x_id=x_id,
        o_id=o_id,
        bot_level=bot_level,
        width=width,
        height=height,
        k=k,
        moves=(),
        status=GameStatus.BOT_TO_MOVE if bot_first else GameStatus.ACTIVE,
        result=None,
        winner_id=None,
        winner_mark=None,
        created_at=now,
        updated_at=now,
        turn_deadline=None if bot_first else now + first_clock,
        rematch_of=rematch_of,
        turn_seconds=turn_timeout,
        locale=locale,
    )


def rated_variant(width: int, height: int, k: int) -> bool:
    """Whether games between members on this board are rated: only the variants that are
    a draw under perfect play (``engine.values``), where moving first wins nothing by
    force, so a rating cannot be farmed by choosing a won variant and the first move."""
    return is_fair(width, height, k)


def is_rated(game: Game) -> bool:
    """Whether ``game``'s result changes ratings: between members, on a rated variant,
    in a server that added the bot (``bot.reach``: not in the players' own space)."""
    return (
        not game.is_bot_game
        and by_channel(game.guild_id)
        and rated_variant(game.width, game.height, game.k)
    )


ABORT_MOVES = 2
"""A game between members ended before this many moves is aborted: until both players
have moved once, as chess servers allow (an accept by mistake, an opponent who left)."""


def is_abort(game: Game) -> bool:
    """Whether ending ``game`` now aborts it (unrated, no result, no record or streak
    changed): a game between members before both players moved. ``end`` applies it, so
    every way a game ends (forfeit, time-out, stop, call-off, upkeep) reads this rule."""
    return not game.is_bot_game and game.move_no < ABORT_MOVES


def loses_rating(game: Game) -> bool:
    """Whether a player who gives ``game`` up now loses rating: rated, and no abort."""
    return is_rated(game) and not is_abort(game)


def is_overdue(game: Game, now: float) -> bool:
    """Whether the player on move has run out of time (the sweep may not have run yet)."""
    return (
        game.status is GameStatus.ACTIVE
        and game.turn_deadline is not None
        and now >= game.turn_deadline
    )


def first_move_pending(game: Game) -> bool:
    """Whether the live ``game`` waits for its first move: the first move of the player
    who moves first (X), or in a game against the bot that moved first, the member's
    first move. That move has the first-move clock; a game that times out there is
    aborted (``time_out``), whoever it was between."""
    if not game.is_live:
        return False
    bot_first = game.is_bot_game and game.x_id is None
    return game.move_no == (1 if bot_first else 0)


def time_out(game: Game, now: float) -> Game:
    """The overdue ``game`` ended: the player on move loses by TIMEOUT, unless the first
    move never came (``first_move_pending``): then it is aborted, unrated and counted for
    nobody (against the bot too), with result TIMEOUT and no winner, so the board can
    say why."""
    if not first_move_pending(game):
        return end(game, Result.TIMEOUT, game.turn, now)
    return dataclasses.replace(
        game,
        status=GameStatus.ABANDONED,
        result=Result.TIMEOUT,
        winner_mark=None,
        winner_id=None,
        updated_at=now,
        turn_deadline=None,
    )


def check_move(game: Game, user_id: int, cell: int, move_no: int) -> None:
    """Raise why ``user_id`` may not play ``cell`` on the board they saw at ``move_no``.

    The order is what the player is told first: the game is over, it isn't theirs, the
    board moved on, it isn't their turn, the cell is off the board or taken.
    """
    if not game.is_live:
        raise GameOver()
    mark = game.mark_of(user_id)
    if mark is None:
        raise NotAPlayer()
    if move_no != game.move_no:
        raise StaleBoard()
    if game.status is GameStatus.BOT_TO_MOVE or game.turn is not mark:
        raise NotYourTurn()
    if isinstance(cell, bool) or not isinstance(cell, int) or not 0 <= cell < game.cells:
        raise InvalidCell()
    if game.board.cell(cell) is not None:
        raise CellTaken()


def advance(
    game: Game, cell: int, now: float, turn_timeout: float, first_move_timeout: float | None = None
) -> Game:
    """The game after the player on move marks ``cell`` (already checked to be legal);
    ``turn_timeout`` is the clock for games that have none of their own. A move that
    leaves the member's first move owed (the bot's first) gives it ``first_move_timeout``
    if shorter."""
    board = game.board.play(cell)
    outcome = board.outcome()
    if outcome is not None:
        winner = outcome.winner
        return game.after_move(
            board,
            status=GameStatus.FINISHED,
            result=Result.DRAW if winner is None else Result.WIN,
            winner_mark=winner,
            winner_id=None if winner is None else game.player_of(winner),
            updated_at=now,
            turn_deadline=None,
        )
    bot_next = game.is_bot_game and game.player_of(board.turn) is None
    clock = game.turn_seconds or turn_timeout
    if game.is_bot_game and game.x_id is None and game.move_no == 0 and first_move_timeout:
        clock = min(clock, first_move_timeout)
    return game.after_move(
        board,
        status=GameStatus.BOT_TO_MOVE if bot_next else GameStatus.ACTIVE,
        updated_at=now,
        turn_deadline=None if bot_next else now + clock,
    )


def end(game: Game, result: Result, loser: Mark | None, now: float) -> Game:
    """The game ended by forfeit, timeout (``loser`` loses) or abandonment (no loser);
    an abort (``is_abort``), whatever ended it, is abandoned."""
    if is_abort(game):
        result, loser = Result.ABANDONED, None
    winner = None if loser is None else loser.other
    return dataclasses.replace(
        game,
        status=GameStatus.ABANDONED if result is Result.ABANDONED else GameStatus.FINISHED,
        result=result,
        winner_mark=winner,
        winner_id=None if winner is None else game.player_of(winner),
        updated_at=now,
        turn_deadline=None,
    )
