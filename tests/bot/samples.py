"""Messages' worst-case inputs, built once for the tests that draw every kind of message
(``test_i18n_lengths``: each fits Discord's limits; ``test_i18n_complete``: each goes
through the catalogs): 5 x 5 boards, the longest snowflakes, counts no server reaches,
every status of a game and of a challenge, every kind of review."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

from bot.models import (
    DELETED_MEMBER,
    Challenge,
    ChallengeStatus,
    First,
    Game,
    GameStatus,
    RatingChange,
    Result,
)
from engine import Mark
from engine.analysis import (
    LOST_GAME,
    MISSED_WIN,
    MISTAKE,
    SLIP_BLOCK,
    SLIP_WIN,
    THREW_WIN,
    UNKNOWN,
    Review,
    Slip,
)

BIG = 2**63 - 1  # the longest snowflake: 19 digits in every mention
ALICE, BOB = BIG, BIG - 1
NOW = 4_102_444_800.0  # 2100: timestamps as long as they get this century
MANY = 10**9  # a count no server reaches, so every count fits with room to spare

_ROWS = ("XXOOX", "OOXXO", "XXOOX", "OOXXO", "XXOOX")  # a full 5 x 5 board, no 4 in a row
_X = [row * 5 + col for row in range(5) for col in range(5) if _ROWS[row][col] == "X"]
_O = [row * 5 + col for row in range(5) for col in range(5) if _ROWS[row][col] == "O"]
FULL_5X5 = tuple(cell for pair in zip(_X, _O, strict=False) for cell in pair) + tuple(_X[12:])
"""25 legal moves of a 5 x 5, 4-in-a-row game that nobody wins: every cell drawn."""

ENDINGS = (
    (Result.WIN, Mark.X),
    (Result.WIN, Mark.O),
    (Result.DRAW, None),
    (Result.FORFEIT, Mark.O),
    (Result.TIMEOUT, Mark.X),
    (Result.ABANDONED, None),
)
"""Every way a game ends, with the winner's mark."""

REVIEW_KINDS = ("unknown", "missed", "threw", "mistake", "lost", "none", "partial", "slips")
RISE, FALL = RatingChange(1.0, 99_999.0), RatingChange(99_999.0, 1.0)
"""Rating changes longer than any Elo rating makes."""


def game(
    locale: str,
    *,
    level: str | None = None,
    status: GameStatus = GameStatus.ACTIVE,
    result: Result | None = None,
    winner: Mark | None = None,
    moves: int = 24,
    x_id: int | None = ALICE,
) -> Game:
    """A game as render sees it (render draws what it is given; no rules are checked)."""
    o_id = None if level is not None else BOB
    return Game(
        id=MANY,
        guild_id=BIG,
        channel_id=BIG,
        message_id=BIG,
        x_id=x_id,
        o_id=o_id,
        bot_level=level,
        width=5,
        height=5,
        k=4,
        moves=FULL_5X5[:moves],
        status=status,
        result=result,
        winner_id=None if winner is None else BIG,
        winner_mark=winner,
        created_at=NOW,
        updated_at=NOW,
        turn_deadline=NOW if status.is_live else None,
        locale=locale,
    )


def every_game(locale: str, levels: Iterable[str | None]) -> Iterator[Game]:
    """For each level (None: between members) a live game with the player on move, one
    waiting for the bot, and one of each ending; then a forfeit by a deleted member. The
    live games come again with three in a row, which the first player wins by force (the
    board says who that is): once with the member first, once with the bot."""
    for level in levels:
        yield game(locale, level=level)
        yield dataclasses.replace(game(locale, level=level), k=3)
        if level is not None:
            yield dataclasses.replace(game(locale, level=level), k=3, x_id=None, o_id=ALICE)
        yield game(locale, level=level, status=GameStatus.BOT_TO_MOVE, moves=23)
        for result, winner in ENDINGS:
            status = GameStatus.ABANDONED if result is Result.ABANDONED else GameStatus.FINISHED
            ended = game(locale, level=level, status=status, result=result, winner=winner, moves=25)
            yield ended
            if level is None and status is GameStatus.FINISHED:  # rated: the changes shown
                yield dataclasses.replace(ended, x_rating=RISE, o_rating=FALL)
    yield game(locale, status=GameStatus.FINISHED, result=Result.FORFEIT, winner=Mark.O, x_id=0)
    yield game(locale, status=GameStatus.ABANDONED, result=Result.ABANDONED, moves=1)  # aborted


def every_challenge(locale: str) -> Iterator[Challenge]:
    """A 5 x 5 challenge in each status, and each again from a deleted member."""
    for status in ChallengeStatus:
        challenge = Challenge(
            id=MANY,
            guild_id=BIG,
            channel_id=BIG,
            message_id=BIG,
            challenger_id=ALICE,
            opponent_id=BOB,
            width=5,
            height=5,
            k=4,
            first=First.RANDOM,
            status=status,
            created_at=NOW,
            expires_at=NOW,
            locale=locale,
        )
        yield challenge
        yield dataclasses.replace(challenge, challenger_id=DELETED_MEMBER)


def review_of(played: Game, kind: str) -> Review:
    """A review of a full 5 x 5 game (``kind``, one of REVIEW_KINDS): no move settled; a
    missed win, a thrown win or a mistake at the last move, with three better moves; no
    move changing the result; only the last moves settled; or the longest: every other
    move unsettled, every move a slip naming three cells and a settled change."""
    values: tuple[str, ...]
    decider, how, better, slips = None, None, (), ()
    if kind == "unknown":
        values = (UNKNOWN,) * 25 + ("draw",)
    elif kind == "none":
        values = ("X wins",) * 26
    elif kind == "partial":
        values = (UNKNOWN,) * 20 + ("X wins",) * 6
    elif kind == "slips":
        values = ("draw", UNKNOWN) * 11 + ("X wins", "draw", "X wins", "O wins")
        decider, how, better = 24, THREW_WIN, (20, 21, 22)
        slips = tuple(
            Slip(i, SLIP_WIN if i % 2 else SLIP_BLOCK, (10, 11, 12)[: 1 + i % 3]) for i in range(25)
        )
    else:
        values = ("X wins",) * 24 + ("draw", "draw")
        how = {"missed": MISSED_WIN, "threw": THREW_WIN, "mistake": MISTAKE, "lost": LOST_GAME}
        how = how[kind]
        decider, better = 24, (20, 21, 22)
    return Review(played.moves, 5, 5, 4, values, decider, how, better, slips)
