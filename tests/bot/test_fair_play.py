"""Fair play on a busy server, with the bot's default limits: live games per member and
per server, one pending challenge per challenger, cooldowns, consent, server settings,
and no escape from a rated loss by stopping the game."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from bot import tunables
from bot.app import GameService
from bot.errors import (
    CallOffUnavailable,
    ChallengeCooldown,
    ChallengePending,
    ChallengesOff,
    ChannelNotAllowed,
    InvalidSettings,
    NotAPlayer,
    PermissionDenied,
    RatedStop,
    StartCooldown,
    TooManyGames,
)
from bot.games import render, rules
from bot.games.servers import Choices
from bot.i18n import translator
from bot.models import First, GameStatus, Result
from bot.tunables import GAMES_PER_MEMBER, SERVER_GAMES, TURN_TIMEOUT

from .helpers import (
    ALICE,
    BOB,
    CAROL,
    CHANNEL,
    GUILD,
    FakeClock,
    member_game,
    play_out,
)
from .shown import shown
from .test_service import X_WINS

DAVE = 44
EN = translator(None)


# -- limits ------------------------------------------------------------------------------


async def test_one_live_game_per_member_per_server_by_default(
    fair: GameService, clock: FakeClock
) -> None:
    first = await fair.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first="me")
    await fair.set_game_message(first.id, 777)
    with pytest.raises(TooManyGames) as caught:
        await fair.start_bot_game(GUILD, CHANNEL + 1, ALICE, level="easy")
    assert re.search(rf"You're already in a game .*/{CHANNEL}/777", shown(caught.value))
    # Challenging, or being challenged, is refused too, naming the game in the way.
    with pytest.raises(TooManyGames) as caught:
        await fair.challenges.create(GUILD, CHANNEL + 1, ALICE, BOB)
    assert re.search(r"You're already in a game.*/777", shown(caught.value))
    with pytest.raises(TooManyGames) as caught:
        await fair.challenges.create(GUILD, CHANNEL + 1, BOB, ALICE)
    assert re.search(rf"<@{ALICE}> is already in a game.*/777", shown(caught.value))
    # Other servers are not affected, and the place is free again once the game ends.
    await fair.start_bot_game(GUILD + 1, CHANNEL, ALICE, level="easy")
    await fair.endings.forfeit(first.id, ALICE)
    clock.advance(120)  # she left it without a move: the wait after that (ABANDON_COOLDOWN)
    await fair.start_bot_game(GUILD, CHANNEL + 1, ALICE, level="easy")


async def test_accepting_while_busy_elsewhere_is_refused(fair: GameService) -> None:
    challenge = await fair.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    await fair.start_bot_game(GUILD, CHANNEL + 1, BOB, level="easy", first="me")
    with pytest.raises(TooManyGames, match="You're already in a game"):
        await fair.challenges.accept(challenge.id, BOB)
    # Nothing changed: the challenge is still open.
    assert (await fair.challenges.get(challenge.id)).status.value == "pending"


async def test_the_server_cap_and_a_higher_member_limit(fair: GameService) -> None:
    settings = (await fair.guilds.change(GUILD, {"server_games": 2, "games_per_member": 2})).after
    assert (settings[SERVER_GAMES], settings[GAMES_PER_MEMBER]) == (2, 2)
    await fair.start_bot_game(GUILD, 1, ALICE, level="easy", first="me")
    await fair.start_bot_game(GUILD, 2, ALICE, level="easy", first="me")
    with pytest.raises(TooManyGames, match="already has 2 live games"):
        await fair.start_bot_game(GUILD, 3, BOB, level="easy", first="me")
    await fair.guilds.change(GUILD, {"server_games": 5})
    with pytest.raises(TooManyGames, match="2 games on this server, the most it allows"):
        await fair.start_bot_game(GUILD, 3, ALICE, level="easy", first="me")
    await fair.start_bot_game(GUILD, 3, BOB, level="easy", first="me")


# -- challenges --------------------------------------------------------------------------


async def test_one_pending_challenge_per_challenger_per_server(
    fair: GameService, clock: FakeClock
) -> None:
    first = await fair.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    await fair.challenges.set_message(first, 555)
    with pytest.raises(ChallengePending) as caught:
        await fair.challenges.create(GUILD, CHANNEL + 1, ALICE, CAROL)
    assert re.search(r"waiting for an answer: .*/555", shown(caught.value))
    await fair.challenges.withdraw(first.id, ALICE)
    await fair.challenges.create(GUILD, CHANNEL + 1, ALICE, CAROL)


async def test_challenge_cooldown_stops_a_ping_flood(fair: GameService, clock: FakeClock) -> None:
    """50 challenge-and-withdraw cycles: one challenge (one ping) per cooldown."""
    made = refused = 0
    for _cycle in range(50):
        try:
            challenge = await fair.challenges.create(GUILD, CHANNEL, ALICE, BOB)
        except ChallengeCooldown as error:
            assert "<t:" in shown(error)  # says when
            refused += 1
        else:
            made += 1
            assert challenge.pinged
            await fair.challenges.withdraw(challenge.id, ALICE)
        clock.advance(1)  # 50 seconds in all: within one 60 s cooldown
    assert (made, refused) == (1, 49)
    # Someone else may still challenge bob, and alice may challenge someone else.
    await fair.challenges.create(GUILD, CHANNEL, CAROL, BOB)
    await fair.challenges.create(GUILD, CHANNEL + 1, ALICE, DAVE)
    clock.advance(11)
    await fair.guilds.set_challenges(GUILD, DAVE, True)  # a no-op: on by default


async def test_a_rematch_is_exempt_once_and_pings_nobody_within_the_cooldown(
    fair: GameService, clock: FakeClock
) -> None:
    game = await play_out(fair, await member_game(fair, ALICE, BOB), X_WINS)
    rematch = await fair.rematch(game.id, ALICE)
    assert rematch.rematch_of == game.id and not rematch.pinged  # type: ignore[union-attr]
    await fair.challenges.decline(rematch.id, BOB)
    with pytest.raises(ChallengeCooldown, match="declined your last challenge"):
        await fair.rematch(game.id, ALICE)
    clock.advance(61)  # the challenge cooldown is over, but not the wait after a decline
    with pytest.raises(ChallengeCooldown, match="declined your last challenge"):
        await fair.rematch(game.id, ALICE)
    clock.advance(540)
    again = await fair.rematch(game.id, ALICE)
    assert again.pinged  # type: ignore[union-attr]


async def test_a_member_can_turn_challenges_off(fair: GameService) -> None:
    await fair.guilds.set_challenges(GUILD, BOB, False)
    with pytest.raises(ChallengesOff, match="turned challenges off"):
        await fair.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    assert await fair.challenges.create(GUILD, CHANNEL, BOB, ALICE)  # they may still challenge
    await fair.guilds.set_challenges(GUILD + 1, CAROL, False)
    await fair.challenges.create(GUILD, CHANNEL + 1, CAROL, DAVE)  # per server
    await fair.guilds.set_challenges(GUILD, BOB, True)
    await fair.challenges.create(GUILD, CHANNEL + 2, DAVE, BOB)


async def test_preferences_answer_before_and_after(fair: GameService) -> None:
    """A member's choices as they were and are: their own, else the server's default."""
    shown = await fair.guilds.choices(GUILD, BOB)
    assert shown.before == shown.after == Choices(turn_pings=True, challenges=True)
    assert not shown.changed
    off = await fair.guilds.choices(GUILD, BOB, challenges=False)
    assert (off.before, off.after) == (Choices(True, True), Choices(True, False))
    assert off.changed and not await fair.guilds.accepts_challenges(GUILD, BOB)
    again = await fair.guilds.choices(GUILD, BOB, challenges=False)  # a second click on Turn off
    assert again.before == again.after == Choices(True, False) and not again.changed
    # A member who never chose follows the server; their choice then stands.
    await fair.guilds.change(GUILD, {"turn_pings": False})
    assert (await fair.guilds.choices(GUILD, CAROL)).after.turn_pings is False
    pings = await fair.guilds.choices(GUILD, CAROL, turn_pings=True)
    assert (pings.before.turn_pings, pings.after.turn_pings) == (False, True)
    assert (await fair.guilds.choices(GUILD, CAROL)).after == Choices(True, True)
    # Per server: Bob's choice here is not his choice elsewhere.
    assert (await fair.guilds.choices(GUILD + 1, BOB)).after == Choices(True, True)


# -- settings ----------------------------------------------------------------------------


async def test_a_change_returns_the_settings_before_and_after(fair: GameService) -> None:
    defaults = fair.guilds.defaults()
    change = await fair.guilds.change(GUILD, {"turn_timeout": 120.0}, allow_channel=CHANNEL)
    assert change.before == defaults and change.changed
    numbers = defaults.numbers.replace(turn_timeout=120.0)
    assert change.after == replace(defaults, numbers=numbers, channels=(CHANNEL,))
    same = await fair.guilds.change(GUILD, {"turn_timeout": 120.0}, allow_channel=CHANNEL)
    assert same.before == same.after == change.after and not same.changed
    reset = await fair.guilds.change(GUILD, {}, reset=True)
    assert (reset.before, reset.after) == (change.after, defaults)
    assert not (await fair.guilds.change(GUILD, {}, reset=True)).changed


async def test_settings_start_as_the_defaults_and_bad_values_change_nothing(
    fair: GameService,
) -> None:
    before = await fair.guilds.get(GUILD)
    assert before == fair.guilds.defaults()
    bad: list[dict[str, object]] = [
        {"turn_timeout": 5},
        {"turn_timeout": float("nan")},
        {"games_per_member": 6},
        {"games_per_member": 1.5},
        {"server_games": 0},
        {"challenge_cooldown": -1},
        {"reviews": "yes"},
        {"colour": "blue"},
        {"challenge_timeout": 600, "server_games": 101},  # one bad value spoils the lot
    ]
    for changes in bad:
        with pytest.raises(InvalidSettings):
            await fair.guilds.change(GUILD, changes)
    with pytest.raises(InvalidSettings, match="isn't in the list"):
        await fair.guilds.change(GUILD, {}, remove_channel=CHANNEL)
    assert await fair.guilds.get(GUILD) == before


async def test_the_servers_bounds_are_the_hosts(fair: GameService) -> None:
    """A moderator may choose exactly what the host may (bot.tunables; the host's side is
    tests/bot/test_settings.py): each bound itself is accepted, one past it refused."""
    for setting in tunables.SERVER:
        for inside in setting.bounds:
            settings = (await fair.guilds.change(GUILD, {setting.name: inside})).after
            assert settings[setting] == inside
        for outside in (setting.low - 1, setting.high + 1):
            with pytest.raises(InvalidSettings, match="must be from"):
                await fair.guilds.change(GUILD, {setting.name: outside})


async def test_channels_and_turn_clock(fair: GameService, clock: FakeClock) -> None:
    settings = (await fair.guilds.change(GUILD, {"turn_timeout": 45}, allow_channel=CHANNEL)).after
    assert settings.channels == (CHANNEL,) and settings[TURN_TIMEOUT] == 45
    with pytest.raises(ChannelNotAllowed) as caught:
        await fair.start_bot_game(GUILD, CHANNEL + 1, ALICE, level="easy")
    assert f"<#{CHANNEL}>" in shown(caught.value)
    with pytest.raises(ChannelNotAllowed):
        await fair.challenges.create(GUILD, CHANNEL + 1, ALICE, BOB)
    game = await fair.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first="me")
    assert game.turn_deadline == clock.now + 45
    # The game keeps its clock when the setting changes; new games get the new one.
    await fair.guilds.change(GUILD, {"turn_timeout": 600})
    moved = (await fair.move(game.id, ALICE, 0, 0)).game
    assert moved.turn_deadline == clock.now + 45
    with pytest.raises(InvalidSettings, match="last game channel"):
        await fair.guilds.change(GUILD, {}, remove_channel=CHANNEL)
    assert (await fair.guilds.change(GUILD, {}, all_channels=True)).after.channels == ()
    reset = (await fair.guilds.change(GUILD, {}, reset=True)).after
    assert reset == fair.guilds.defaults()


# -- no escape from a rated loss --------------------------------------------------------


async def test_stopping_a_rated_game_that_has_begun(fair: GameService, clock: FakeClock) -> None:
    game = await member_game(fair, ALICE, BOB)
    # Before the first move, a player's stop ends it unrated.
    stopped = await fair.endings.stop(GUILD, CHANNEL, BOB, is_moderator=False)
    assert stopped.status is GameStatus.ABANDONED
    clock.advance(120)  # alice's cooldown towards bob; bob left a game without a move
    game = await member_game(fair, ALICE, BOB, channel=CHANNEL + 1)
    game = (await fair.move(game.id, ALICE, 4, 0)).game
    # After one move too: not both players have moved.
    assert not rules.loses_rating(game)
    game = (await fair.move(game.id, BOB, 0, 1)).game
    for user, moderator in ((BOB, False), (ALICE, False), (ALICE, True)):  # a playing mod too
        with pytest.raises(RatedStop, match="counts as a loss") as refused:
            await fair.endings.stop(GUILD, CHANNEL + 1, user, is_moderator=moderator)
        assert refused.value.game.id == game.id
    assert (await fair.get_game(game.id)) == game  # nothing changed
    # A moderator who is not playing may end it unrated.
    ended = await fair.endings.stop(GUILD, CHANNEL + 1, CAROL, is_moderator=True)
    assert (ended.status, ended.result) == (GameStatus.ABANDONED, Result.ABANDONED)
    assert (await fair.stats.player_stats(GUILD, BOB)).versus_members.games == 0


async def test_forfeit_from_the_stop_choice_is_a_rated_loss(fair: GameService) -> None:
    game = await play_out(fair, await member_game(fair, ALICE, BOB), [4, 0])
    ended = await fair.endings.forfeit(game.id, BOB)
    assert (ended.result, ended.winner_id) == (Result.FORFEIT, ALICE)
    bob = await fair.stats.player_stats(GUILD, BOB)
    assert bob.versus_members.losses == 1 and bob.rating < 1500


async def test_calling_off_needs_both_players(fair: GameService) -> None:
    game = (await fair.move((await member_game(fair, ALICE, BOB)).id, ALICE, 4, 0)).game
    calloffs = fair.calloffs
    with pytest.raises(CallOffUnavailable, match="costs no rating"):  # an abort, still
        await calloffs.propose(game.id, BOB, GUILD)
    game = (await fair.move(game.id, BOB, 0, 1)).game
    with pytest.raises(NotAPlayer):
        await calloffs.propose(game.id, CAROL, GUILD)
    with pytest.raises(CallOffUnavailable, match="no proposal"):
        await calloffs.answer(game.id, BOB, True, GUILD)
    await calloffs.propose(game.id, BOB, GUILD)
    with pytest.raises(CallOffUnavailable, match="other player"):
        await calloffs.answer(game.id, BOB, True, GUILD)
    with pytest.raises(NotAPlayer):
        await calloffs.answer(game.id, CAROL, True, GUILD)
    # Playing on drops it; a new proposal lapses once a move is made.
    assert (await calloffs.answer(game.id, ALICE, False, GUILD)).is_live
    with pytest.raises(CallOffUnavailable, match="no proposal"):
        await calloffs.answer(game.id, ALICE, True, GUILD)
    await calloffs.propose(game.id, ALICE, GUILD)
    game = (await fair.move(game.id, ALICE, 1, 2)).game
    with pytest.raises(CallOffUnavailable, match="moved on"):
        await calloffs.answer(game.id, BOB, True, GUILD)
    assert (await fair.get_game(game.id)).is_live
    # Alice declined Bob's proposal at move 2: he may propose again from move 6 on.
    with pytest.raises(CallOffUnavailable, match=r"was declined.*after 3 more moves"):
        await calloffs.propose(game.id, BOB, GUILD)
    for move_no, (player, cell) in enumerate([(BOB, 7), (ALICE, 2), (BOB, 6)], start=3):
        game = (await fair.move(game.id, player, cell, move_no)).game
        if move_no == 4:
            with pytest.raises(CallOffUnavailable, match="after 1 more move\\."):
                await calloffs.propose(game.id, BOB, GUILD)
    await calloffs.propose(game.id, BOB, GUILD)
    ended = await calloffs.answer(game.id, ALICE, True, GUILD)
    assert (ended.status, ended.result) == (GameStatus.ABANDONED, Result.ABANDONED)
    for member in (ALICE, BOB):
        stats = await fair.stats.player_stats(GUILD, member)
        assert stats.versus_members.games == 0 and stats.rating == 1500


async def test_only_players_and_moderators_may_stop(fair: GameService) -> None:
    await member_game(fair, ALICE, BOB)
    with pytest.raises(PermissionDenied):
        await fair.endings.stop(GUILD, CHANNEL, CAROL, is_moderator=False)


# -- no channel held for nothing (issue 37, item 6) -----------------------------------------


async def test_a_game_whose_first_move_never_comes_is_aborted(
    fair: GameService, clock: FakeClock
) -> None:
    """The first move has the server's first-move clock (2 minutes), not the turn clock;
    without it the game ends as an abort, and its player on move waits before the next."""
    game = await member_game(fair, ALICE, BOB)
    assert game.turn_deadline == clock.now + 120
    clock.advance(119)
    assert await fair.sweep() == ([], [])
    clock.advance(1)
    (ended,), _ = await fair.sweep()
    aborted = (GameStatus.ABANDONED, Result.TIMEOUT, None)
    assert (ended.status, ended.result, ended.winner_id) == aborted
    for member in (ALICE, BOB):
        stats = await fair.stats.player_stats(GUILD, member)
        assert stats.versus_members.games == 0 and stats.rating == 1500
    # Alice, who was to move first, waits 2 minutes (ABANDON_COOLDOWN); Bob does not.
    with pytest.raises(StartCooldown, match="without making a move") as refused:
        await fair.start_bot_game(GUILD, CHANNEL, ALICE, level="easy")
    assert f"<t:{int(clock.now + 120)}:" in shown(refused.value)
    with pytest.raises(StartCooldown):
        await fair.challenges.create(GUILD, CHANNEL, ALICE, CAROL)
    bot_game = await fair.start_bot_game(GUILD, CHANNEL + 1, BOB, level="easy", first=First.ME)
    # After Bob's first move, the turn clock (5 minutes) applies again.
    moved = (await fair.move(bot_game.id, BOB, 4, 0)).game
    assert moved.turn_deadline == clock.now + 300
    clock.advance(120)
    await fair.start_bot_game(GUILD, CHANNEL, ALICE, level="easy")


async def test_against_the_bot_the_members_first_move_has_the_first_move_clock(
    fair: GameService, clock: FakeClock
) -> None:
    game = await fair.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first=First.OPPONENT)
    assert game.move_no == 1 and rules.first_move_pending(game)
    assert game.turn_deadline == clock.now + 120
    clock.advance(120)
    (ended,), _ = await fair.sweep()
    assert (ended.status, ended.result, ended.winner_mark) == (
        GameStatus.ABANDONED,
        Result.TIMEOUT,
        None,
    )
    assert not (await fair.stats.player_stats(GUILD, ALICE)).versus_bot  # counted nowhere
    assert "didn't make the first move in time" in render.game_text(ended, EN)
    # A shorter turn clock is the first move's clock too.
    await fair.guilds.change(GUILD, {"turn_timeout": 45})
    clock.advance(120)
    game = await fair.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first=First.ME)
    assert game.turn_deadline == clock.now + 45


async def test_leaving_a_game_without_a_move_holds_off_the_next(
    fair: GameService, clock: FakeClock
) -> None:
    """Stop-and-restart: a stop or forfeit by a player who has not moved holds them off
    for the server's wait; a player who moved, the other player and a moderator are not."""
    game = await member_game(fair, ALICE, BOB)
    game = (await fair.move(game.id, ALICE, 4, 0)).game
    stopped = await fair.endings.stop(GUILD, CHANNEL, ALICE, is_moderator=False)
    assert stopped.status is GameStatus.ABANDONED  # an abort: Bob had not moved
    await fair.start_bot_game(GUILD, CHANNEL, ALICE, level="easy")  # Alice had moved
    game = await fair.start_bot_game(GUILD, CHANNEL + 1, BOB, level="easy", first=First.ME)
    await fair.endings.forfeit(game.id, BOB)
    with pytest.raises(StartCooldown, match="without making a move"):
        await fair.start_bot_game(GUILD, CHANNEL + 1, BOB, level="easy")
    with pytest.raises(StartCooldown):
        await fair.threads.vet(GUILD, CHANNEL + 2, BOB, level="easy")
    await fair.start_bot_game(GUILD + 1, CHANNEL, BOB, level="easy")  # another server
    # Held off from accepting too.
    challenge = await fair.challenges.create(GUILD, CHANNEL + 1, CAROL, BOB)
    with pytest.raises(StartCooldown):
        await fair.challenges.accept(challenge.id, BOB)
    await fair.challenges.withdraw(challenge.id, CAROL)
    clock.advance(120)
    challenge = await fair.challenges.create(GUILD, CHANNEL + 1, CAROL, BOB)
    await fair.challenges.accept(challenge.id, BOB)
    # A moderator who stops a game holds nobody off.
    game = await fair.start_bot_game(GUILD, CHANNEL + 3, DAVE, level="easy", first=First.ME)
    await fair.endings.stop(GUILD, CHANNEL + 3, CAROL + 1000, is_moderator=True)
    await fair.start_bot_game(GUILD, CHANNEL + 3, DAVE, level="easy")


# -- no repeated pings (issue 37, item 10) --------------------------------------------------


async def test_a_declined_challenge_waits_the_servers_longer_wait(
    fair: GameService, clock: FakeClock
) -> None:
    challenge = await fair.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    await fair.challenges.decline(challenge.id, BOB)
    clock.advance(61)  # past the challenge cooldown, within the wait after a decline
    with pytest.raises(ChallengeCooldown, match="declined your last challenge") as refused:
        await fair.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    assert f"<t:{int(challenge.created_at + 600)}:" in shown(refused.value)
    with pytest.raises(ChallengeCooldown, match="declined your last challenge"):
        await fair.threads.vet(GUILD, CHANNEL + 1, ALICE, opponent_id=BOB)
    await fair.challenges.create(GUILD, CHANNEL, BOB, ALICE)  # the other way round: free
    other = await fair.challenges.create(GUILD, CHANNEL + 1, ALICE, CAROL)  # another: free
    await fair.challenges.withdraw(other.id, ALICE)
    clock.advance(538)
    with pytest.raises(ChallengeCooldown):
        await fair.challenges.create(GUILD, CHANNEL + 2, ALICE, BOB)
    clock.advance(1)  # 10 minutes after the decline (DECLINE_COOLDOWN)
    assert await fair.challenges.create(GUILD, CHANNEL + 2, ALICE, BOB)
