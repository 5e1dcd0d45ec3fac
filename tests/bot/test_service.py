"""The rules of the game service, and every typed rejection, on a real SQLite file."""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import os
import signal
import threading

import pytest

from bot.app import GameService
from bot.challenges.service import UNSHOWN_LAPSE
from bot.config import ServiceConfig
from bot.errors import (
    AlreadyPlaying,
    BotChallenge,
    CellTaken,
    ChallengeExpired,
    ChallengeNotFound,
    ChallengePending,
    ChannelBusy,
    GameInProgress,
    GameNotFound,
    GameOver,
    InvalidCell,
    InvalidSettings,
    NotAPlayer,
    NotChallenged,
    NotChallenger,
    NotYourTurn,
    PermissionDenied,
    RematchUnavailable,
    SelfChallenge,
    StaleBoard,
)
from bot.games import ai
from bot.games.pool import Cost
from bot.games.queries import Store
from bot.models import Challenge, ChallengeStatus, First, Game, GameStatus, Result
from bot.tunables import Values
from engine import Board, Mark

from .helpers import (
    ALICE,
    BOB,
    CAROL,
    CHANNEL,
    GUILD,
    FakeClock,
    game_of,
    make_service,
    member_game,
    play_out,
)
from .shown import shown

ROOMY = {"per_member": 50, "per_server": 100}

X_WINS = [0, 3, 1, 4, 2]  # X takes the top row
DRAW = [0, 4, 8, 1, 7, 6, 2, 5, 3]


# -- challenges --------------------------------------------------------------------------------


async def test_challenge_and_accept_with_sides(service: GameService, clock: FakeClock) -> None:
    challenge = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB, first=First.OPPONENT)
    assert challenge.status is ChallengeStatus.PENDING
    assert challenge.expires_at == clock.now + 60
    await service.challenges.set_message(challenge, 555)
    assert (await service.challenges.get(challenge.id)).message_id == 555
    game = await service.challenges.accept(challenge.id, BOB)
    assert (game.x_id, game.o_id) == (BOB, ALICE)  # OPPONENT: the challenged member is X
    assert game.status is GameStatus.ACTIVE and game.moves == ()
    assert game.turn_deadline == clock.now + 300
    accepted = await service.challenges.get(challenge.id)
    assert accepted.status is ChallengeStatus.ACCEPTED and accepted.game_id == game.id
    assert await service.active_game(GUILD, CHANNEL) == game


async def test_first_me_and_random(service: GameService) -> None:
    game = await member_game(service, ALICE, BOB)
    assert (game.x_id, game.o_id) == (ALICE, BOB)
    seen = set()
    for channel in range(20):
        challenge = await service.challenges.create(GUILD, channel, ALICE, BOB)
        game = await service.challenges.accept(challenge.id, BOB)
        seen.add(game.x_id)
    assert seen == {ALICE, BOB}


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        ({"width": 2}, "width must be from 3 to 5"),
        ({"height": 6}, "height must be from 3 to 5"),
        ({"k": 4}, "A win length of 4 doesn't fit on a 3x3 board; use at most 3"),
        ({"width": 5, "height": 4, "k": 6}, "doesn't fit on a 5x4 board; use at most 5"),
        ({"k": 2}, "win length"),
        ({"first": "sometimes"}, "Who starts"),
    ],
)
async def test_invalid_settings(service: GameService, settings: dict, match: str) -> None:
    with pytest.raises(InvalidSettings, match=match):
        await service.challenges.create(GUILD, CHANNEL, ALICE, BOB, **settings)
    with pytest.raises(InvalidSettings, match=match):
        await service.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", **settings)


async def test_unknown_level(service: GameService) -> None:
    with pytest.raises(InvalidSettings, match="Unknown level 'godlike'"):
        await service.start_bot_game(GUILD, CHANNEL, ALICE, level="godlike")


async def test_challenge_rejections(service: GameService) -> None:
    with pytest.raises(SelfChallenge):
        await service.challenges.create(GUILD, CHANNEL, ALICE, ALICE)
    with pytest.raises(BotChallenge):
        await service.challenges.create(GUILD, CHANNEL, ALICE, BOB, opponent_is_bot=True)
    pending = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    await service.challenges.set_message(pending, 700)  # posted, as the command does
    with pytest.raises(ChallengePending, match="You already have"):
        await service.challenges.create(GUILD, CHANNEL, ALICE, CAROL)
    with pytest.raises(ChallengePending) as caught:
        await service.challenges.create(GUILD, CHANNEL, CAROL, ALICE)
    assert shown(caught.value).startswith(f"<@{ALICE}> already has")
    with pytest.raises(ChannelBusy):  # someone else's challenge holds the channel
        await service.challenges.create(GUILD, CHANNEL, CAROL, 44)
    with pytest.raises(ChannelBusy):
        await service.start_bot_game(GUILD, CHANNEL, CAROL, level="easy")
    # Other channels and guilds are not affected.
    await service.challenges.create(GUILD, CHANNEL + 1, CAROL, 44)
    await service.challenges.create(GUILD + 1, CHANNEL, CAROL, 44)


async def test_playing_members_and_busy_channels(service: GameService) -> None:
    await member_game(service, ALICE, BOB)
    with pytest.raises(AlreadyPlaying, match="You are already playing"):
        await service.challenges.create(GUILD, CHANNEL, ALICE, CAROL)
    with pytest.raises(AlreadyPlaying) as caught:
        await service.challenges.create(GUILD, CHANNEL, CAROL, BOB)
    assert shown(caught.value).startswith(f"<@{BOB}> is already playing")
    with pytest.raises(ChannelBusy):
        await service.challenges.create(GUILD, CHANNEL, CAROL, 44)
    with pytest.raises(AlreadyPlaying):
        await service.start_bot_game(GUILD, CHANNEL, ALICE, level="easy")
    with pytest.raises(ChannelBusy):
        await service.start_bot_game(GUILD, CHANNEL, CAROL, level="easy")


async def test_several_games_per_channel_when_configured(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    service = make_service(store, clock, executor, one_game_per_channel=False)
    first = await member_game(service, ALICE, BOB)
    second = await service.start_bot_game(GUILD, CHANNEL, CAROL, level="easy", first=First.ME)
    with pytest.raises(AlreadyPlaying):
        await service.challenges.create(GUILD, CHANNEL, CAROL, 44)
    assert (await service.active_game(GUILD, CHANNEL)).id == second.id
    stopped = await service.endings.stop(GUILD, CHANNEL, ALICE, is_moderator=False)
    assert stopped.id == first.id
    await service.close()


async def test_accept_and_decline_only_by_the_challenged(
    service: GameService, clock: FakeClock
) -> None:
    challenge = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    with pytest.raises(NotChallenged):
        await service.challenges.accept(challenge.id, ALICE)
    with pytest.raises(NotChallenged):
        await service.challenges.accept(challenge.id, CAROL)
    with pytest.raises(NotChallenged):
        await service.challenges.decline(challenge.id, CAROL)
    with pytest.raises(NotChallenger):
        await service.challenges.withdraw(challenge.id, BOB)
    declined = await service.challenges.decline(challenge.id, BOB)
    assert declined.status is ChallengeStatus.DECLINED
    with pytest.raises(ChallengeNotFound):
        await service.challenges.accept(challenge.id, BOB)
    with pytest.raises(ChallengeNotFound):
        await service.challenges.accept(99_999, BOB)
    with pytest.raises(ChallengeNotFound):
        await service.challenges.get(99_999)
    with pytest.raises(ChallengeNotFound):
        await service.challenges.set_message(dataclasses.replace(declined, id=99_999), 1)
    again = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    withdrawn = await service.challenges.withdraw(again.id, ALICE)
    assert withdrawn.status is ChallengeStatus.WITHDRAWN
    with pytest.raises(ChallengeNotFound):
        await service.challenges.decline(again.id, BOB)


async def test_challenges_expire(service: GameService, clock: FakeClock) -> None:
    challenge = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    await service.challenges.set_message(challenge, 123)
    clock.advance(59.9)
    assert await service.challenges.expire() == []
    clock.advance(0.1)
    with pytest.raises(ChallengeExpired):
        await service.challenges.accept(challenge.id, BOB)
    with pytest.raises(ChallengeExpired):
        await service.challenges.decline(challenge.id, BOB)
    assert (await service.challenges.get(challenge.id)).status is ChallengeStatus.EXPIRED
    # An expired challenge no longer blocks anyone.
    other = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    clock.advance(60)
    games, expired = await service.sweep()
    assert games == [] and [c.id for c in expired] == [other.id]
    assert await service.challenges.expire() == []


async def test_a_challenge_never_shown_lapses_in_seconds(
    service: GameService, clock: FakeClock
) -> None:
    """The bot stopped, or Discord refused the command's answer, between storing a
    challenge and recording its message: nobody saw it, so it must not block its
    challenger (or the channel) for the full expiry."""
    unseen = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    assert unseen.expires_at == clock.now + 60  # what a posted message would show
    with pytest.raises(ChallengePending) as caught:
        await service.challenges.create(GUILD, CHANNEL, ALICE, CAROL)
    assert shown(caught.value) == (
        "Your last challenge hasn't appeared yet; if it doesn't, you can challenge again"
        f" <t:{int(clock.now + UNSHOWN_LAPSE)}:R>."
    )
    with pytest.raises(ChallengePending, match="hasn't appeared yet"):  # in another channel
        await service.challenges.create(GUILD, CHANNEL + 1, ALICE, CAROL)
    clock.advance(UNSHOWN_LAPSE)
    _, expired = await service.sweep()
    assert [c.id for c in expired] == [unseen.id]
    again = await service.challenges.create(GUILD, CHANNEL, ALICE, CAROL)
    await service.challenges.set_message(again, 124)  # shown: the full expiry
    clock.advance(59.9)
    assert await service.challenges.expire() == []
    assert (await service.challenges.get(again.id)).message_id == 124


async def test_a_click_on_an_expired_challenge_leaves_the_others_to_the_sweep(
    service: GameService, clock: FakeClock
) -> None:
    """The click expires its own challenge (its message is redrawn by the answer); the
    sweep must still find the others due, or their messages would keep live buttons."""
    one = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    two = await service.challenges.create(GUILD, CHANNEL + 1, CAROL, 44)
    clock.advance(61)
    with pytest.raises(ChallengeExpired):
        await service.challenges.accept(one.id, BOB)
    assert (await service.challenges.get(one.id)).status is ChallengeStatus.EXPIRED
    assert (await service.challenges.get(two.id)).status is ChallengeStatus.PENDING
    _, expired = await service.sweep()
    assert [c.id for c in expired] == [two.id]


async def test_expired_challenges_are_returned_with_their_messages(
    service: GameService, clock: FakeClock
) -> None:
    one = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    two = await service.challenges.create(GUILD, CHANNEL + 1, CAROL, 44)
    await service.challenges.set_message(one, 1)
    await service.challenges.set_message(two, 2)
    clock.advance(61)
    expired = await service.challenges.expire()
    assert [(c.id, c.message_id, c.status) for c in expired] == [
        (one.id, 1, ChallengeStatus.EXPIRED),
        (two.id, 2, ChallengeStatus.EXPIRED),
    ]


# -- playing -----------------------------------------------------------------------------------


async def test_a_won_game_is_rated(service: GameService, clock: FakeClock) -> None:
    game = await member_game(service, ALICE, BOB)
    for cell in X_WINS[:-1]:
        clock.advance(10)
        game = (await service.move(game.id, game.current_player_id, cell, game.move_no)).game
        assert game.turn_deadline == clock.now + 300
        assert game.status is GameStatus.ACTIVE
    game = (await service.move(game.id, ALICE, X_WINS[-1], game.move_no)).game
    assert game.status is GameStatus.FINISHED and game.result is Result.WIN
    assert (game.winner_id, game.winner_mark, game.turn_deadline) == (ALICE, Mark.X, None)
    assert game.current_player_id is None
    assert await service.get_game(game.id) == game
    assert await service.active_game(GUILD, CHANNEL) is None
    alice = await service.stats.player_stats(GUILD, ALICE)
    assert (alice.rating, alice.versus_members.wins, alice.rank, alice.provisional) == (
        1520.0,
        1,
        1,
        True,
    )
    assert alice.recent == (game,)


async def test_a_won_variant_is_played_unrated(service: GameService) -> None:
    """4 x 4 with three in a row is a forced win for whoever moves first: its result
    changes no rating, record or streak, and stopping it once begun is not a loss."""
    game = await member_game(service, ALICE, BOB, width=4, height=4, k=3)
    game = await play_out(service, game, [0, 4, 1, 5, 2])
    assert game.result is Result.WIN and game.winner_id == ALICE
    for member in (ALICE, BOB):
        stats = await service.stats.player_stats(GUILD, member)
        assert (stats.rating, stats.rank, stats.versus_members.games) == (1500.0, None, 0)
        assert stats.current_streak == 0
    assert (await service.stats.leaderboard(GUILD, 1)).total_players == 0
    begun = await member_game(service, ALICE, BOB, width=4, height=4, k=3)
    await play_out(service, begun, [0])
    stopped = await service.endings.stop(GUILD, CHANNEL, ALICE, is_moderator=False)
    assert stopped.id == begun.id and stopped.result is Result.ABANDONED


async def test_a_drawn_game(service: GameService) -> None:
    game = await play_out(service, await member_game(service), DRAW)
    assert (game.status, game.result, game.winner_id, game.winner_mark) == (
        GameStatus.FINISHED,
        Result.DRAW,
        None,
        None,
    )
    bob = await service.stats.player_stats(GUILD, BOB)
    assert (bob.rating, bob.versus_members.draws, bob.current_streak) == (1500.0, 1, 0)


async def test_play_rejections_each_typed(service: GameService) -> None:
    game = await member_game(service, ALICE, BOB)
    with pytest.raises(GameNotFound):
        await service.move(99_999, ALICE, 0, 0)
    with pytest.raises(GameNotFound):
        await service.move(game.id, ALICE, 0, 0, guild_id=GUILD + 1)
    with pytest.raises(NotAPlayer):
        await service.move(game.id, CAROL, 0, 0)
    with pytest.raises(StaleBoard):
        await service.move(game.id, ALICE, 0, 1)
    with pytest.raises(NotYourTurn):
        await service.move(game.id, BOB, 0, 0)
    for bad in (-1, 9, 100, True, "4"):
        with pytest.raises(InvalidCell):
            await service.move(game.id, ALICE, bad, 0)  # type: ignore[arg-type]
    game = (await service.move(game.id, ALICE, 4, 0, guild_id=GUILD)).game
    with pytest.raises(CellTaken):
        await service.move(game.id, BOB, 4, 1)
    game = await play_out(service, game, [0, 1, 8, 7])  # X: 4, 1, 7 wins the column
    assert game.status is GameStatus.FINISHED
    with pytest.raises(GameOver):
        await service.move(game.id, BOB, 2, game.move_no)
    assert (await service.get_game(game.id)).moves == (4, 0, 1, 8, 7)


async def test_validation_order(service: GameService) -> None:
    game = await member_game(service, ALICE, BOB)
    game = (await service.move(game.id, ALICE, 4, 0)).game
    # Each earlier check wins over every later one.
    with pytest.raises(NotAPlayer):
        await service.move(game.id, CAROL, 4, 0)  # also stale, taken
    with pytest.raises(StaleBoard):
        await service.move(game.id, ALICE, 4, 0)  # also out of turn, taken
    with pytest.raises(NotYourTurn):
        await service.move(game.id, ALICE, 99, 1)  # also invalid
    with pytest.raises(InvalidCell):
        await service.move(game.id, BOB, 99, 1)
    finished = await play_out(service, game, [0, 1, 8, 7])
    with pytest.raises(GameOver):
        await service.move(finished.id, CAROL, 99, 0)  # over beats everything
    with pytest.raises(GameNotFound):
        await service.move(finished.id, CAROL, 99, 0, guild_id=GUILD + 1)


async def test_game_lookups(service: GameService) -> None:
    game = await member_game(service)
    assert await service.get_game(game.id, GUILD) == game
    with pytest.raises(GameNotFound):
        await service.get_game(game.id, GUILD + 1)
    await service.set_game_message(game.id, 42)
    assert (await service.get_game(game.id)).message_id == 42
    with pytest.raises(GameNotFound):
        await service.set_game_message(99_999, 42)
    assert await service.active_game(GUILD, CHANNEL + 1) is None


# -- against the bot ---------------------------------------------------------------------------


def replays_with_seeds(game: Game) -> bool:
    """Every bot move is what compute_move gives for its seed: games replay exactly."""
    bot_mark = Mark.X if game.x_id is None else Mark.O
    for index, cell in enumerate(game.moves):
        mover = Mark.X if index % 2 == 0 else Mark.O
        if mover is bot_mark:
            expected = ai.compute_move(
                game.width,
                game.height,
                game.k,
                game.moves[:index],
                game.bot_level,
                ai.move_seed(game.id, index),
            )
            if expected != cell:
                return False
    return True


async def test_inline_replies_commit_both_moves_at_once(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    # With inline_cells=9 a 3x3 reply is computed on the spot: the stored game goes from
    # the human's turn straight to the human's next turn, never through BOT_TO_MOVE.
    service = make_service(store, clock, executor, inline_cells=9)
    game = await service.start_bot_game(GUILD, CHANNEL, ALICE, level="hard", first=First.ME)
    seen_statuses = set()
    while game.is_live:
        cell = next(c for c in range(9) if Board.from_moves(game.moves).cell(c) is None)
        before = game.move_no
        game = (await service.move(game.id, ALICE, cell, before)).game
        stored = await store.get_game(game.id)
        assert stored == game
        seen_statuses.add(stored.status)
        assert game.move_no == before + 2 or not game.is_live
    assert GameStatus.BOT_TO_MOVE not in seen_statuses
    assert replays_with_seeds(game)  # the same moves the pool would have chosen


async def test_bot_moves_first_when_it_is_x(service: GameService, clock: FakeClock) -> None:
    game = await service.start_bot_game(GUILD, CHANNEL, ALICE, level="hard", first=First.OPPONENT)
    assert (game.x_id, game.o_id, game.bot_level) == (None, ALICE, "hard")
    assert len(game.moves) == 1 and game.status is GameStatus.ACTIVE
    assert game.current_player_id == ALICE
    assert game.turn_deadline == clock.now + 300
    assert replays_with_seeds(game)


async def test_bot_replies_within_play(service: GameService) -> None:
    game = await service.start_bot_game(GUILD, CHANNEL, ALICE, level="impossible", first=First.ME)
    assert game.moves == () and game.x_id == ALICE
    while game.is_live:
        with pytest.raises(NotAPlayer):
            await service.move(game.id, BOB, 0, game.move_no)
        cell = next(c for c in range(9) if Board.from_moves(game.moves).cell(c) is None)
        before = game.move_no
        game = (await service.move(game.id, ALICE, cell, before)).game
        assert game.move_no == before + 2 or not game.is_live
    assert game.status is GameStatus.FINISHED
    assert game.winner_id is None  # impossible never loses: a draw or the bot's win
    assert replays_with_seeds(game)
    stats = await service.stats.player_stats(GUILD, ALICE)
    assert stats.rating == 1500.0 and stats.rank is None and stats.versus_members.games == 0
    assert [lr.level for lr in stats.versus_bot] == ["impossible"]
    assert stats.versus_bot[0].record.wins == 0 and stats.versus_bot[0].record.games == 1


async def test_bot_games_count_per_level_and_streaks(service: GameService) -> None:
    # Beat "easy" by playing the top row against a bot that must move in between.
    results = []
    for level in ("easy", "easy", "impossible"):
        game = await service.start_bot_game(GUILD, CHANNEL, ALICE, level=level, first=First.ME)
        game = await service.endings.forfeit(game.id, ALICE) if level == "impossible" else game
        while game.is_live:
            board = game.board
            cell = next(c for c in (0, 1, 2, 4, 6, 8, 3, 5, 7) if board.cell(c) is None)
            game = (await service.move(game.id, ALICE, cell, game.move_no)).game
        results.append(game)
    stats = await service.stats.player_stats(GUILD, ALICE)
    levels = {lr.level: lr.record for lr in stats.versus_bot}
    assert [lr.level for lr in stats.versus_bot] == ["easy", "impossible"]  # level order
    assert levels["easy"].games == 2 and levels["impossible"].losses == 1
    assert stats.current_streak == -1  # the forfeit
    assert len(stats.recent) == 3 and stats.recent[0].id == results[-1].id


# -- timeouts, forfeits, stops -----------------------------------------------------------------


async def test_sweep_settles_overdue_turns(service: GameService, clock: FakeClock) -> None:
    game = await play_out(service, await member_game(service, ALICE, BOB), [4, 0, 1])  # Bob's turn
    bot_game = await service.start_bot_game(GUILD, CHANNEL + 1, CAROL, level="easy", first=First.ME)
    clock.advance(299)
    assert await service.sweep() == ([], [])
    clock.advance(1)
    changed, _ = await service.sweep()
    by_id = {g.id: g for g in changed}
    assert set(by_id) == {game.id, bot_game.id}
    timed_out = by_id[game.id]
    assert (timed_out.result, timed_out.winner_id, timed_out.winner_mark) == (
        Result.TIMEOUT,
        ALICE,
        Mark.X,
    )
    # Carol never made her first move: aborted (rules.time_out), no loss against the level.
    aborted = by_id[bot_game.id]
    assert (aborted.status, aborted.result, aborted.winner_mark) == (
        GameStatus.ABANDONED,
        Result.TIMEOUT,
        None,
    )
    assert (await service.stats.player_stats(GUILD, BOB)).versus_members.losses == 1
    assert not (await service.stats.player_stats(GUILD, CAROL)).versus_bot
    assert await service.sweep() == ([], [])  # settled once only


async def test_a_late_click_settles_the_timeout(service: GameService, clock: FakeClock) -> None:
    game = await play_out(service, await member_game(service, ALICE, BOB), [4, 0])
    clock.advance(301)
    with pytest.raises(GameOver, match="Time ran out"):
        await service.move(game.id, ALICE, 1, 2)
    stored = await service.get_game(game.id)
    assert (stored.result, stored.winner_id) == (Result.TIMEOUT, BOB)
    assert await service.sweep() == ([], [])


async def test_forfeit_and_stop_after_the_clock_ran_out_find_a_timeout(
    service: GameService, clock: FakeClock
) -> None:
    # Alice forfeiting once Bob's time is up must not hand Bob the win, and Bob stopping
    # the game after his own time ran out must not spare him the loss.
    first = await play_out(service, await member_game(service, ALICE, BOB), [4, 0, 1])
    clock.advance(301)
    with pytest.raises(GameOver, match="Time ran out") as caught:
        await service.endings.forfeit(first.id, ALICE)
    assert caught.value.game is not None
    assert (caught.value.game.result, caught.value.game.winner_id) == (Result.TIMEOUT, ALICE)

    second = await play_out(service, await member_game(service, ALICE, BOB), [0, 1, 2])
    clock.advance(301)
    with pytest.raises(GameOver, match="Time ran out"):
        await service.endings.stop(GUILD, CHANNEL, BOB, is_moderator=False)
    stored = await service.get_game(second.id)
    assert (stored.status, stored.result, stored.winner_id) == (
        GameStatus.FINISHED,
        Result.TIMEOUT,
        ALICE,
    )
    assert (await service.stats.player_stats(GUILD, BOB)).versus_members.losses == 2


async def test_forfeit(service: GameService) -> None:
    game = await play_out(service, await member_game(service, ALICE, BOB), [4, 0])
    with pytest.raises(NotAPlayer):
        await service.endings.forfeit(game.id, CAROL)
    with pytest.raises(GameNotFound):
        await service.endings.forfeit(99_999, ALICE)
    with pytest.raises(StaleBoard):
        await service.endings.forfeit(game.id, ALICE, move_no=3)
    ended = await service.endings.forfeit(game.id, ALICE, move_no=2)
    assert (ended.status, ended.result, ended.winner_id, ended.winner_mark) == (
        GameStatus.FINISHED,
        Result.FORFEIT,
        BOB,
        Mark.O,
    )
    with pytest.raises(GameOver):
        await service.endings.forfeit(game.id, BOB)
    assert (await service.stats.player_stats(GUILD, BOB)).rating == 1520.0


async def test_stop_abandons_unrated(service: GameService) -> None:
    """A moderator's stop ends a game unrated (a player's is test_fair_play's subject)."""
    with pytest.raises(GameNotFound, match="no game"):
        await service.endings.stop(GUILD, CHANNEL, ALICE, is_moderator=True)
    game = await member_game(service, ALICE, BOB)
    game = (await service.move(game.id, ALICE, 4, 0)).game
    with pytest.raises(PermissionDenied):
        await service.endings.stop(GUILD, CHANNEL, CAROL, is_moderator=False)
    with pytest.raises(StaleBoard):
        await service.endings.stop(GUILD, CHANNEL, CAROL, is_moderator=True, move_no=0)
    stopped = await service.endings.stop(GUILD, CHANNEL, CAROL, is_moderator=True)
    assert (stopped.status, stopped.result, stopped.winner_id) == (
        GameStatus.ABANDONED,
        Result.ABANDONED,
        None,
    )
    with pytest.raises(GameOver):
        await service.move(game.id, BOB, 0, 1)
    bob = await service.stats.player_stats(GUILD, BOB)
    assert bob.versus_members.games == 0 and bob.rating == 1500.0 and bob.current_streak == 0
    assert [g.id for g in await service.stats.history(GUILD)] == [game.id]  # listed, not counted
    # A player may stop their own game before its first move, and the channel is free again.
    game = await member_game(service, ALICE, BOB)
    assert (await service.endings.stop(GUILD, CHANNEL, BOB, is_moderator=False)).id == game.id


# -- rematches ---------------------------------------------------------------------------------


async def test_member_rematch_swaps_sides_on_accept(service: GameService) -> None:
    game = await member_game(service, ALICE, BOB)
    with pytest.raises(RematchUnavailable, match="Finish"):
        await service.rematch(game.id, ALICE)
    game = await play_out(service, game, X_WINS)
    with pytest.raises(NotAPlayer):
        await service.rematch(game.id, CAROL)
    challenge = await service.rematch(game.id, BOB)
    assert isinstance(challenge, Challenge)
    assert (challenge.challenger_id, challenge.opponent_id, challenge.rematch_of) == (
        BOB,
        ALICE,
        game.id,
    )
    with pytest.raises(NotChallenged):
        await service.challenges.accept(challenge.id, BOB)
    again = await service.challenges.accept(challenge.id, ALICE)
    assert (again.x_id, again.o_id, again.rematch_of) == (BOB, ALICE, game.id)
    with pytest.raises(RematchUnavailable, match="already a game"):
        await service.rematch(game.id, ALICE)


async def test_bot_rematch_starts_at_once(service: GameService) -> None:
    game = await service.start_bot_game(GUILD, CHANNEL, ALICE, level="medium", first=First.ME)
    game = await service.endings.forfeit(game.id, ALICE)
    again = await service.rematch(game.id, ALICE)
    assert isinstance(again, Game)
    assert (again.x_id, again.o_id, again.bot_level, again.rematch_of) == (
        None,
        ALICE,
        "medium",
        game.id,
    )
    assert len(again.moves) == 1  # the bot, now X, has moved
    again = await service.endings.forfeit(again.id, ALICE)
    third = await service.rematch(again.id, ALICE)
    assert (third.x_id, third.o_id, third.moves) == (ALICE, None, ())


# -- leaderboard, stats, history, review -------------------------------------------------------


async def test_leaderboard_pages_and_guild_isolation(service: GameService) -> None:
    # Guild A: Alice beats Bob twice; guild B: Carol beats Alice.
    for _ in range(2):
        await play_out(service, await member_game(service, ALICE, BOB), X_WINS)
    other = GUILD + 1
    await play_out(service, await member_game(service, CAROL, ALICE, guild=other), X_WINS)
    board = await service.stats.leaderboard(GUILD)
    assert [(e.rank, e.user_id) for e in board.entries] == [(1, ALICE), (2, BOB)]
    assert board.entries[0].record.wins == 2 and board.entries[0].provisional
    assert (board.page, board.pages, board.total_players) == (1, 1, 2)
    second = await service.stats.leaderboard(GUILD, page=2, per_page=1)
    assert [e.user_id for e in second.entries] == [BOB] and second.pages == 2
    assert second.past is None and board.past is None
    # Past the last page: the last, saying which page was asked for (a typed page, or a
    # Next button drawn when the ranking was longer).
    past = await service.stats.leaderboard(GUILD, page=9, per_page=1)
    assert (past.page, past.pages, past.past) == (2, 2, 9)
    assert [e.user_id for e in past.entries] == [BOB]
    first = await service.stats.leaderboard(GUILD, page=0)  # a disabled Previous's id
    assert (first.page, first.past) == (1, None)
    theirs = await service.stats.leaderboard(other)
    assert [e.user_id for e in theirs.entries] == [CAROL, ALICE]
    assert theirs.entries[1].rating == 1480.0  # Alice's loss there does not touch guild A
    alice_here = await service.stats.player_stats(GUILD, ALICE)
    assert (alice_here.versus_members.wins, alice_here.versus_members.losses) == (2, 0)
    assert all(g.guild_id == GUILD for g in alice_here.recent)
    assert {g.guild_id for g in await service.stats.history(other)} == {other}
    assert all(g.guild_id == GUILD for g in await service.stats.history(GUILD, ALICE))
    empty = await service.stats.leaderboard(GUILD + 2)
    assert (empty.entries, empty.page, empty.pages, empty.total_players) == ((), 1, 1, 0)
    assert (await service.stats.leaderboard(GUILD + 2, page=5)).past == 5
    nobody = await service.stats.player_stats(GUILD + 2, ALICE)
    assert (nobody.rating, nobody.rank, nobody.provisional, nobody.recent) == (
        1500.0,
        None,
        True,
        (),
    )


async def test_history_replays_and_review(service: GameService, clock: FakeClock) -> None:
    played = []
    for cells in (X_WINS, DRAW, [4, 1, 0, 8, 6, 2, 3]):
        clock.advance(5)
        played.append(await play_out(service, await member_game(service), cells))
    history = await service.stats.history(GUILD, ALICE, limit=10)
    assert [g.id for g in history] == [g.id for g in reversed(played)]
    for game in history:
        board = Board.from_moves(game.moves, game.width, game.height, game.k)
        assert board.is_over and (board.winner is game.winner_mark)
    assert len(await service.stats.history(GUILD, limit=2)) == 2
    _, review = await service.reviews.review(played[2].id, ALICE, guild_id=GUILD)
    assert review.decider == 1
    assert "Move 2" in review.summary()
    with pytest.raises(GameNotFound):
        await service.reviews.review(played[2].id, ALICE, guild_id=GUILD + 1)
    live = await member_game(service)
    with pytest.raises(GameInProgress):
        await service.reviews.review(live.id, ALICE)


# -- start-up ----------------------------------------------------------------------------------


async def test_start_completes_games_left_waiting_for_the_bot(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    # As if the process died right after storing the player's move.
    waiting = []
    for channel, moves in enumerate([(), (4,), (0, 4, 8)]):
        x_is_bot = len(moves) % 2 == 0
        game = await store.insert_game(
            Game(
                id=0,
                guild_id=GUILD,
                channel_id=channel,
                message_id=None,
                x_id=None if x_is_bot else ALICE,
                o_id=ALICE if x_is_bot else None,
                bot_level="hard",
                width=3,
                height=3,
                k=3,
                moves=moves,
                status=GameStatus.BOT_TO_MOVE,
                result=None,
                winner_id=None,
                winner_mark=None,
                created_at=clock.now,
                updated_at=clock.now,
                turn_deadline=None,
            ),
            exclusive=True,
            **ROOMY,
        )
        waiting.append(game)
    service = make_service(store, clock, executor)
    completed = await service.start()
    assert await store.games_bot_to_move() == []
    assert sorted(game.id for game in completed) == sorted(game.id for game in waiting)
    for game in waiting:
        done = await service.get_game(game.id)
        assert done.moves[:-1] == game.moves and done.status is GameStatus.ACTIVE
        assert replays_with_seeds(done)
    await service.close()


async def test_real_process_pool(store: Store, clock: FakeClock) -> None:
    service = GameService(store, ServiceConfig(Values(ai_workers=1), inline_cells=0), clock=clock)
    await service.start()
    try:
        game = await service.start_bot_game(
            GUILD, CHANNEL, ALICE, level="hard", first=First.OPPONENT
        )
        assert len(game.moves) == 1
        game = (
            await service.move(game.id, ALICE, next(c for c in range(9) if c not in game.moves), 1)
        ).game
        assert len(game.moves) == 3 and replays_with_seeds(game)
        game = await service.endings.forfeit(game.id, ALICE)
        assert (await service.reviews.review(game.id, ALICE))[1].values
    finally:
        await service.close()


class GatedExecutor(concurrent.futures.ThreadPoolExecutor):
    """Runs jobs only once ``gate`` is set: holds a bot move "in flight" for as long as needed."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.gate = threading.Event()
        self.submitted = threading.Event()

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        def gated():  # type: ignore[no-untyped-def]
            self.gate.wait(timeout=10)
            return fn(*args, **kwargs)

        self.submitted.set()
        return super().submit(gated)


async def test_a_cancelled_click_still_gets_its_bot_reply_and_close_waits(
    store: Store, clock: FakeClock
) -> None:
    executor = GatedExecutor()
    service = make_service(store, clock, executor)
    game = await service.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first=First.ME)
    click = asyncio.create_task(game_of(service.move(game.id, ALICE, 4, 0)))
    assert await asyncio.to_thread(executor.submitted.wait, 10)
    assert (await store.get_game(game.id)).status is GameStatus.BOT_TO_MOVE
    click.cancel()  # the interaction goes away while the bot thinks
    with pytest.raises(asyncio.CancelledError):
        await click
    closing = asyncio.create_task(service.close())
    await asyncio.sleep(0.05)
    assert not closing.done()  # close() waits for the move in flight
    executor.gate.set()
    await closing
    stored = await service.get_game(game.id)
    assert stored.status is GameStatus.ACTIVE and stored.move_no == 2
    executor.shutdown()


async def test_sweep_takes_over_bot_moves_stranded_by_another_process(
    service: GameService, store: Store, clock: FakeClock
) -> None:
    def owed(channel: int, at: float) -> Game:
        return Game(
            id=0,
            guild_id=GUILD,
            channel_id=channel,
            message_id=None,
            x_id=ALICE,
            o_id=None,
            bot_level="easy",
            width=3,
            height=3,
            k=3,
            moves=(4,),
            status=GameStatus.BOT_TO_MOVE,
            result=None,
            winner_id=None,
            winner_mark=None,
            created_at=at,
            updated_at=at,
            turn_deadline=None,
        )

    old = await store.insert_game(owed(1, clock.now - 30), exclusive=True, **ROOMY)
    fresh = await store.insert_game(owed(2, clock.now - 1), exclusive=True, **ROOMY)
    changed, _ = await service.sweep()
    assert [g.id for g in changed] == [old.id]
    assert changed[0].move_no == 2 and changed[0].status is GameStatus.ACTIVE
    assert [g.id for g in await store.games_bot_to_move()] == [fresh.id]


async def test_a_killed_pool_worker_is_replaced(store: Store, clock: FakeClock) -> None:
    service = GameService(store, ServiceConfig(Values(ai_workers=1), inline_cells=0), clock=clock)
    await service.start()
    try:
        pool = service._pool._executor
        assert isinstance(pool, concurrent.futures.ProcessPoolExecutor)
        for process in list(pool._processes.values()):  # the AI worker crashes
            os.kill(process.pid, signal.SIGKILL)
        game = await service.start_bot_game(
            GUILD, CHANNEL, ALICE, level="hard", first=First.OPPONENT
        )
        assert len(game.moves) == 1 and game.status is GameStatus.ACTIVE
        assert service._pool._executor is not pool
    finally:
        await service.close()


async def test_cheap_replies_go_first_in_the_pool(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    """With the one worker busy, waiting replies leave in order of cost: a 4x4 reply at
    medium, then 5x5 at hard, then a 5x5 search to a time budget (``impossible`` on 5x5
    k=3, which has no book), whatever the order they were asked for in. (The order they
    reach the worker in: one that leaves later may still end first, its search cut short
    by the time it waited.)"""
    started: list[str] = []

    class Recording(concurrent.futures.ThreadPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            if fn is ai.compute_move:
                started.append(args[4])  # the level
            return super().submit(fn, *args, **kwargs)

    executor = Recording(max_workers=2)
    service = make_service(store, clock, executor, ai_workers=1, reply_seconds=0.2)
    await service.start()
    gate = threading.Event()
    try:
        shapes = [
            ("budgeted", "impossible", 5, 3),
            ("deep", "hard", 5, 4),
            ("quick", "medium", 4, 4),
        ]
        games = []
        for i, (_name, level, side, k) in enumerate(shapes):
            game = await service.start_bot_game(
                GUILD,
                CHANNEL + i,
                ALICE,
                level=level,
                width=side,
                height=side,
                k=k,
                first=First.ME,
            )
            games.append(game)
        # Hold the worker (the test's pool runs threads) until every reply is waiting.
        holder = asyncio.create_task(service._pool.run(Cost.QUICK, gate.wait, 30.0))
        await asyncio.sleep(0)
        finished: list[str] = []
        tasks = []
        for (name, _level, _side, _k), game in zip(shapes, games, strict=True):
            cell = next(c for c in (5, 6, 7, 8, 9) if game.board.cell(c) is None)
            game = (await service.move(game.id, ALICE, cell, game.move_no, await_reply=False)).game
            assert game.status is GameStatus.BOT_TO_MOVE
            task = asyncio.create_task(service.bot_reply(game))
            task.add_done_callback(lambda _, name=name: finished.append(name))
            tasks.append(task)
        for _ in range(100):  # until all three wait for the worker
            if service._pool.waiting == (len(shapes), 0):
                break
            await asyncio.sleep(0.01)
        assert service._pool.waiting == (len(shapes), 0) and not finished
        gate.set()
        assert await holder is True
        games = await asyncio.gather(*tasks)
        assert started == ["medium", "hard", "impossible"]
        assert sorted(finished) == ["budgeted", "deep", "quick"]
        assert all(g.status is GameStatus.ACTIVE for g in games)
        assert [g.move_no for g in games] == [2, 2, 2]
    finally:
        gate.set()
        await service.close()
        executor.shutdown()
