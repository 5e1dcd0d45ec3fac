"""No rating lost by accident (issue 34): a game between members ended before both
players moved is aborted, however it ends; Forfeit asks first, and its answer lapses; a
rated game keeps each player's rating change for its board; Rematch pressed by both
players starts the game, even when both press at once."""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import GameService
from bot.challenges.queries import ChallengeQueries
from bot.challenges.rematches import Rematched
from bot.errors import (
    ChallengePending,
    ConfirmationExpired,
    GameNotFound,
    GameOver,
    NotAPlayer,
    RatedStop,
    StaleBoard,
)
from bot.games import render, render_end, rules
from bot.games.endings import FORFEIT_CONFIRM_SECONDS
from bot.games.queries import Store
from bot.games.refusals import RematchTaken
from bot.i18n import translator
from bot.models import (
    Challenge,
    ChallengeStatus,
    First,
    Game,
    GameStatus,
    PlayerRow,
    RatingChange,
    Result,
)
from bot.stats.queries import StatsQueries
from bot.stats.render import stats_text

from .helpers import (
    ALICE,
    BOB,
    CAROL,
    CHANNEL,
    GUILD,
    FakeClock,
    make_service,
    member_game,
    play_out,
)
from .test_service import X_WINS

EN = translator(None)

ENDINGS = (
    "forfeit by X",
    "forfeit by O",
    "time-out (sweep)",
    "time-out (a late click)",
    "stop by a player",
    "stop by a moderator",
    "board deleted",
)


async def end_it(service: GameService, clock: FakeClock, game: Game, how: str) -> Game:
    """End ``game`` the way ``how`` says; the game as ended."""
    assert game.x_id is not None and game.o_id is not None
    match how:
        case "forfeit by X":
            return await service.endings.forfeit(game.id, game.x_id, GUILD)
        case "forfeit by O":
            return await service.endings.forfeit(game.id, game.o_id, GUILD)
        case "time-out (sweep)":
            clock.advance(301)
            changed, _ = await service.sweep()
            (ended,) = [g for g in changed if g.id == game.id]
            return ended
        case "time-out (a late click)":
            clock.advance(301)
            with pytest.raises(GameOver, match="Time ran out") as caught:
                await service.endings.ask_forfeit(game.id, game.x_id, GUILD, None)
            assert caught.value.game is not None
            return caught.value.game
        case "stop by a player":
            return await service.endings.stop(GUILD, CHANNEL, game.o_id, is_moderator=False)
        case "stop by a moderator":
            return await service.endings.stop(GUILD, CHANNEL, CAROL, is_moderator=True)
        case _:
            await service.set_game_message(game.id, 900)
            (ended,), _ = await service.upkeep.message_gone(GUILD, CHANNEL, 900)
            return ended


async def rows(store: Store) -> list[PlayerRow]:
    return [await StatsQueries(store.db).player(GUILD, member) for member in (ALICE, BOB)]


async def with_history(service: GameService) -> None:
    """One rated game first (Alice wins), so that ratings, records and streaks are not at
    their defaults: an abort must leave them as they are, not reset them."""
    await play_out(service, await member_game(service, ALICE, BOB), X_WINS)


# -- aborts --------------------------------------------------------------------------------


@pytest.mark.parametrize("moves", [0, 1])
@pytest.mark.parametrize("how", ENDINGS)
async def test_before_both_players_moved_every_ending_is_an_abort(
    service: GameService, store: Store, clock: FakeClock, how: str, moves: int
) -> None:
    await with_history(service)
    before = await rows(store)
    game = await play_out(service, await member_game(service, ALICE, BOB), [4, 0][:moves])
    assert rules.is_abort(game) and not rules.loses_rating(game)
    ended = await end_it(service, clock, game, how)
    # No first move in time (rules.time_out): aborted all the same, its result says why.
    no_first_move = how.startswith("time-out") and moves == 0
    assert (ended.status, ended.result, ended.winner_id, ended.winner_mark) == (
        GameStatus.ABANDONED,
        Result.TIMEOUT if no_first_move else Result.ABANDONED,
        None,
        None,
    )
    assert (ended.x_rating, ended.o_rating) == (None, None)
    stored = await service.get_game(game.id)  # (a deleted board's message is forgotten)
    assert dataclasses.replace(stored, message_id=ended.message_id) == ended
    assert await rows(store) == before  # no rating, record or streak changed
    # The board says so; the game is listed in recent games as aborted.
    said = (
        f"<@{game.x_id}> didn't make the first move in time: aborted, it doesn't count."
        if no_first_move
        else "Aborted before both players moved: it doesn't count."
    )
    assert said in render.game_text(ended, EN)
    stats = await service.stats.player_stats(GUILD, BOB)
    assert stats.recent[0].id == game.id
    assert f"aborted, against <@{ALICE}>" in stats_text(stats, EN)
    if how == "time-out (sweep)":
        assert await service.sweep() == ([], [])  # settled once


@pytest.mark.parametrize("how", ENDINGS[:4])
async def test_once_both_players_moved_the_loss_is_rated_as_before(
    service: GameService, store: Store, clock: FakeClock, how: str
) -> None:
    await with_history(service)
    (alice, bob) = await rows(store)
    game = await play_out(service, await member_game(service, BOB, ALICE), [4, 0])  # Bob is X
    assert rules.loses_rating(game)
    ended = await end_it(service, clock, game, how)
    loser = {"forfeit by O": ALICE}.get(how, BOB)  # the time-outs are X's: on move
    assert ended.status is GameStatus.FINISHED and ended.winner_id != loser
    assert ended.result is (Result.FORFEIT if how.startswith("forfeit") else Result.TIMEOUT)
    (alice_after, bob_after) = await rows(store)
    assert ended.x_rating == RatingChange(bob.rating, bob_after.rating)
    assert ended.o_rating == RatingChange(alice.rating, alice_after.rating)
    assert (await service.get_game(game.id)).x_rating == ended.x_rating
    lost = bob_after if loser == BOB else alice_after
    assert lost.record.losses == 1 + (loser == BOB) and lost.current_streak < 0


async def test_a_players_stop_once_both_moved_asks_first(
    service: GameService, clock: FakeClock
) -> None:
    game = await play_out(service, await member_game(service, ALICE, BOB), [4, 0])
    with pytest.raises(RatedStop, match="both players have moved") as refused:
        await service.endings.stop(GUILD, CHANNEL, BOB, is_moderator=False)
    assert refused.value.until == clock.now + FORFEIT_CONFIRM_SECONDS
    assert (await service.get_game(game.id)).is_live


async def test_against_the_bot_a_forfeit_still_counts(service: GameService) -> None:
    """The abort is for games between members, where a rating is at stake; a bot game
    asks too (Forfeit's question), and its stop is unrated at any move."""
    game = await service.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first=First.ME)
    assert not rules.is_abort(game)
    ended = await service.endings.forfeit(game.id, ALICE, GUILD)
    assert (ended.status, ended.result) == (GameStatus.FINISHED, Result.FORFEIT)
    stats = await service.stats.player_stats(GUILD, ALICE)
    assert stats.versus_bot[0].record.losses == 1 and stats.rating == 1500


# -- the question before a forfeit ---------------------------------------------------------


async def test_forfeit_asks_first_and_its_answer_lapses(
    service: GameService, clock: FakeClock
) -> None:
    game = await play_out(service, await member_game(service, ALICE, BOB), [4, 0])
    await service.set_game_message(game.id, 900)
    game = await service.get_game(game.id)
    asked, until = await service.endings.ask_forfeit(game.id, BOB, GUILD, 900)
    assert asked == game and until == clock.now + FORFEIT_CONFIRM_SECONDS == clock.now + 60
    assert await service.get_game(game.id) == game  # asking changes nothing
    with pytest.raises(NotAPlayer):
        await service.endings.ask_forfeit(game.id, CAROL, GUILD, 900)
    with pytest.raises(GameNotFound):  # Forfeit on another message than the board
        await service.endings.ask_forfeit(game.id, BOB, GUILD, 901)
    # Too late: refused, nothing changes.
    clock.advance(FORFEIT_CONFIRM_SECONDS + 1)
    with pytest.raises(ConfirmationExpired, match="expired; nothing changed"):
        await service.endings.forfeit(game.id, BOB, GUILD, move_no=2, until=until)
    # An older version's question carries no expiry: as if expired.
    with pytest.raises(ConfirmationExpired):
        await service.endings.forfeit(game.id, BOB, GUILD, until=0.0)
    assert await service.get_game(game.id) == game
    # After a move: refused, nothing changes.
    _, until = await service.endings.ask_forfeit(game.id, BOB, GUILD, 900)
    game = (await service.move(game.id, ALICE, 1, 2)).game
    with pytest.raises(StaleBoard, match="moved on since you were asked"):
        await service.endings.forfeit(game.id, BOB, GUILD, move_no=2, until=until)
    with pytest.raises(NotAPlayer):
        await service.endings.forfeit(game.id, CAROL, GUILD, move_no=3, until=until)
    assert await service.get_game(game.id) == game
    # In time, at its move: the game ends.
    ended = await service.endings.forfeit(game.id, BOB, GUILD, move_no=3, until=until)
    assert (ended.result, ended.winner_id) == (Result.FORFEIT, ALICE)
    with pytest.raises(GameOver):
        await service.endings.forfeit(game.id, BOB, GUILD, move_no=3, until=until)
    with pytest.raises(GameOver):
        await service.endings.ask_forfeit(game.id, BOB, GUILD, 900)


async def test_the_question_says_what_a_forfeit_would_cost(service: GameService) -> None:
    game = await member_game(service, ALICE, BOB)
    until = 1_800_000_000.0
    assert "it doesn't count" in render_end.forfeit_question_text(game, until, EN)
    game = await play_out(service, game, [4, 0])
    question = render_end.forfeit_question_text(game, until, EN)
    assert question.startswith("Forfeit this game? It counts as a loss, and your rating goes down.")
    assert question.endswith("This question lapses <t:1800000000:R>, or at the next move.")
    bot = await service.start_bot_game(GUILD, CHANNEL + 1, CAROL, level="easy", first=First.ME)
    assert render_end.forfeit_question_text(bot, until, EN).startswith(
        "Forfeit this game? It counts as a loss.\n"
    )


# -- the rating change a rated game keeps ---------------------------------------------------


async def test_a_rated_game_keeps_each_players_rating_change(
    service: GameService, store: Store
) -> None:
    first = await play_out(service, await member_game(service, ALICE, BOB), X_WINS)
    assert (first.x_rating, first.o_rating) == (
        RatingChange(1500.0, 1520.0),
        RatingChange(1500.0, 1480.0),
    )
    assert await service.get_game(first.id) == first
    second = await play_out(service, await member_game(service, BOB, ALICE), X_WINS)
    alice, bob = await rows(store)
    assert second.x_rating == RatingChange(1480.0, bob.rating)
    assert second.o_rating == RatingChange(1520.0, alice.rating)
    line = render.game_text(second, EN).splitlines()[3]
    assert line == (
        f"📊 <@{BOB}> {round(bob.rating)} (+{round(bob.rating) - 1480}) · <@{ALICE}>"
        f" {round(alice.rating)} (\u2212{1520 - round(alice.rating)})"
    )
    # Unrated games keep none: a won variant, a game against the bot.
    won_variant = await member_game(service, ALICE, BOB, width=4, height=4, k=3)
    won_variant = await play_out(service, won_variant, [0, 4, 1, 5, 2])
    assert won_variant.status is GameStatus.FINISHED and won_variant.x_rating is None
    bot = await service.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first=First.ME)
    assert (await service.endings.forfeit(bot.id, ALICE, GUILD)).x_rating is None
    # An erasure takes a member's rating changes with their id; the other's stay.
    await service.privacy.erase_member(GUILD, ALICE)
    kept = await service.get_game(first.id)
    assert (kept.x_rating, kept.o_rating) == (None, RatingChange(1500.0, 1480.0))


# -- Rematch pressed by both players --------------------------------------------------------


async def test_the_second_rematch_press_accepts_the_first(
    service: GameService, store: Store
) -> None:
    game = await play_out(service, await member_game(service, ALICE, BOB), X_WINS)
    asked = await service.rematch(game.id, ALICE)
    assert isinstance(asked, Challenge) and asked.opponent_id == BOB
    await service.challenges.set_message(asked, 700)
    with pytest.raises(ChallengePending, match="You already have a challenge"):
        await service.rematch(game.id, ALICE)  # the same player twice: as before
    started = await service.rematch(game.id, BOB)
    assert isinstance(started, Rematched)
    assert started.challenge.id == asked.id and started.challenge.status is ChallengeStatus.ACCEPTED
    assert started.challenge.game_id == started.game.id and started.game.rematch_of == game.id
    assert (started.game.x_id, started.game.o_id) == (BOB, ALICE)  # sides swapped
    assert await ChallengeQueries(store.db).pending_rematch(game.id) is None


async def test_a_lapsed_rematch_is_not_accepted(service: GameService, clock: FakeClock) -> None:
    game = await play_out(service, await member_game(service, ALICE, BOB), X_WINS)
    asked = await service.rematch(game.id, ALICE)
    assert isinstance(asked, Challenge)
    clock.advance(61)  # past its expiry, before the sweep
    mine = await service.rematch(game.id, BOB)
    assert isinstance(mine, Challenge) and mine.challenger_id == BOB
    assert (await service.challenges.get(asked.id)).status is ChallengeStatus.EXPIRED


async def test_one_pending_rematch_per_game_is_the_databases_rule(
    service: GameService, store: Store
) -> None:
    game = await play_out(service, await member_game(service, ALICE, BOB), X_WINS)
    asked = await service.rematch(game.id, ALICE)
    assert isinstance(asked, Challenge)
    theirs = dataclasses.replace(asked, challenger_id=BOB, opponent_id=ALICE)
    with pytest.raises(RematchTaken):
        await ChallengeQueries(store.db).insert_challenge(theirs, cooldown_until=0.0, exempt=True)


@pytest.fixture
async def two_services(
    db_target: str | Path, clock: FakeClock, executor: concurrent.futures.Executor
) -> AsyncIterator[tuple[GameService, GameService]]:
    """Two services, each with its own Store on the same database: two processes."""
    stores = [await Store.open(db_target), await Store.open(db_target)]
    services = [make_service(store, clock, executor) for store in stores]
    for service in services:
        await service.start()
    yield services[0], services[1]
    for service, store in zip(services, stores, strict=True):
        await service.close()
        await store.close()


@pytest.mark.parametrize("processes", [1, 2])
async def test_both_pressing_rematch_at_once_start_one_game(
    two_services: tuple[GameService, GameService], processes: int
) -> None:
    one, two = two_services
    other = two if processes == 2 else one
    for round_ in range(4):
        channel = CHANNEL + round_
        game = await play_out(one, await member_game(one, ALICE, BOB, channel=channel), X_WINS)
        presses = await asyncio.gather(one.rematch(game.id, ALICE), other.rematch(game.id, BOB))
        asked = [p for p in presses if isinstance(p, Challenge)]
        started = [p for p in presses if isinstance(p, Rematched)]
        assert len(asked) == len(started) == 1, presses
        assert started[0].challenge.id == asked[0].id
        live = await one.active_game(GUILD, channel)
        assert live is not None and live.id == started[0].game.id
