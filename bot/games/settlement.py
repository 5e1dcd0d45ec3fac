"""What a game's end changes besides its row: ratings, records, streaks (pure functions).

``settle`` is the one rule the store runs inside the transaction that ends a game, so a
result, the ratings (kept with the game too, for its board) and the streaks are written
together, exactly once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from bot.games import ratings
from bot.games.rules import is_rated
from bot.models import Game, GameStatus, PlayerRow, RatingChange, Record, Settlement
from bot.reach import by_channel

__all__ = ["settle"]


def _score(game: Game, user_id: int) -> float:
    """1 for a win, 0.5 for a draw, 0 for a loss, from ``user_id``'s side."""
    if game.winner_mark is None:
        return 0.5
    return 1.0 if game.player_of(game.winner_mark) == user_id else 0.0


def _record(score: float) -> Record:
    return Record(wins=int(score == 1.0), losses=int(score == 0.0), draws=int(score == 0.5))


def _streak(current: int, score: float) -> int:
    """Wins in a row count up from 1, losses down from -1; a draw resets to 0."""
    if score == 1.0:
        return current + 1 if current > 0 else 1
    if score == 0.0:
        return current - 1 if current < 0 else -1
    return 0


def _after(row: PlayerRow, score: float, rating: ratings.Rating | None) -> PlayerRow:
    """A member's row after one game: streaks always; rating and record if it was rated."""
    streak = _streak(row.current_streak, score)
    best = max(row.best_streak, streak)
    if rating is None:
        return dataclasses.replace(row, current_streak=streak, best_streak=best, rank=None)
    won = _record(score)
    return PlayerRow(
        rating=rating.value,
        rated_games=rating.games,
        record=Record(
            row.record.wins + won.wins, row.record.losses + won.losses, row.record.draws + won.draws
        ),
        current_streak=streak,
        best_streak=best,
    )


def _own_record(game: Game, rows: Mapping[int, PlayerRow]) -> Settlement:
    """A game between members outside servers that added the bot (``bot.reach``): in
    both players' own records and streaks, never in a rating. The players table keeps
    ``rated_games`` equal to the record, so there it counts the record's games while the
    rating stays where it started (no ranking there, and stats show none)."""
    assert game.x_id is not None and game.o_id is not None
    players = []
    for member in (game.x_id, game.o_id):
        row, score = rows[member], _score(game, member)
        won = _record(score)
        record = Record(
            row.record.wins + won.wins, row.record.losses + won.losses, row.record.draws + won.draws
        )
        after = dataclasses.replace(
            _after(row, score, None), record=record, rated_games=row.rated_games + 1
        )
        players.append((member, after))
    return Settlement(rated=False, players=tuple(players))


def settle(game: Game, rows: Mapping[int, PlayerRow]) -> Settlement:
    """What ``game``'s ending changes besides its row, given its members' current rows.

    Between members a finished game on a rated variant (``is_rated``) is rated (Elo, see
    ``ratings``) and counted in both records and streaks; on an unrated variant it
    changes nothing. Outside servers that added the bot it counts in both records
    and streaks, unrated (``_own_record``). Against the bot it counts in the member's
    record for that level and in their streak, not in their rating. A stopped,
    called-off or aborted game (abandoned: ``rules.end``) changes nothing.
    """
    if game.status is not GameStatus.FINISHED:
        return Settlement()
    if not game.is_bot_game and not by_channel(game.guild_id):
        return _own_record(game, rows)
    if not game.is_bot_game and not is_rated(game):
        return Settlement()
    if game.is_bot_game:
        (member,) = game.human_ids
        score = _score(game, member)
        assert game.bot_level is not None
        return Settlement(
            rated=False,
            players=((member, _after(rows[member], score, None)),),
            bot_record=(member, game.bot_level, _record(score)),
        )
    assert game.x_id is not None and game.o_id is not None
    x_row, o_row = rows[game.x_id], rows[game.o_id]
    x_score = _score(game, game.x_id)
    x_rating, o_rating = ratings.rate(
        ratings.Rating(x_row.rating, x_row.rated_games),
        ratings.Rating(o_row.rating, o_row.rated_games),
        x_score,
    )
    return Settlement(
        rated=True,
        players=(
            (game.x_id, _after(x_row, x_score, x_rating)),
            (game.o_id, _after(o_row, 1.0 - x_score, o_rating)),
        ),
        ratings=(
            RatingChange(x_row.rating, x_rating.value),
            RatingChange(o_row.rating, o_rating.value),
        ),
    )
