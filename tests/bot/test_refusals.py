"""Refusals that help: each one caused by something in the way links that thing, tells of
/tictactoe-stop only a member who may use it, and the checks of a game in a new thread
all run before the thread exists (with the bot's own limits and cooldowns)."""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest

from bot.app import GameService
from bot.errors import (
    AlreadyPlaying,
    Busy,
    ChallengeCooldown,
    ChallengePending,
    ChallengesOff,
    ChannelBusy,
    ChannelNotAllowed,
    GamesInTheWay,
    InvalidSettings,
    RematchUnavailable,
    SelfChallenge,
    TooManyGames,
)
from bot.games.endings import may_stop
from bot.games.pool import MAX_WAITING_MOVES, share
from bot.games.queries import Store
from bot.models import First

from .helpers import ALICE, BOB, CAROL, CHANNEL, DEFAULT_LIMITS, GUILD, FakeClock, make_service
from .shown import shown

DAVE = 44


def link(guild: int, channel: int, message: int) -> str:
    return f"https://discord.com/channels/{guild}/{channel}/{message}"


async def test_a_busy_channel_links_its_game_and_names_stop_to_who_may(
    fair: GameService,
) -> None:
    game = await fair.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first=First.ME)
    await fair.set_game_message(game.id, 901)
    board = link(GUILD, CHANNEL, 901)
    with pytest.raises(ChannelBusy) as caught:
        await fair.start_bot_game(GUILD, CHANNEL, CAROL, level="easy")
    busy = caught.value
    assert busy.game is not None and busy.game.id == game.id
    assert shown(busy) == f"There's already a game in this channel: {board}"
    # Stop is named only to a member who may use it: its players and moderators.
    assert not may_stop(busy.game, CAROL, is_moderator=False)
    assert may_stop(busy.game, CAROL, is_moderator=True)
    assert may_stop(busy.game, ALICE, is_moderator=False)
    told = shown(busy.for_stopper())
    assert board in told and "/tictactoe-stop" in told
    with pytest.raises(ChannelBusy) as challenged:
        await fair.challenges.create(GUILD, CHANNEL, CAROL, DAVE)
    assert board in shown(challenged.value)


async def test_what_is_in_the_way_is_linked(fair: GameService, clock: FakeClock) -> None:
    pending = await fair.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    await fair.challenges.set_message(pending, 700)
    waiting = link(GUILD, CHANNEL, 700)
    with pytest.raises(ChallengePending) as mine:
        await fair.start_bot_game(GUILD, CHANNEL, ALICE, level="easy")
    assert waiting in shown(mine.value) and shown(mine.value).startswith("You already have")
    with pytest.raises(ChallengePending) as theirs:
        await fair.challenges.create(GUILD, CHANNEL, CAROL, BOB)
    assert shown(theirs.value).startswith(f"<@{BOB}> already has") and waiting in shown(
        theirs.value
    )
    with pytest.raises(ChannelBusy) as busy:
        await fair.start_bot_game(GUILD, CHANNEL, CAROL, level="easy")
    assert busy.value.game is None and shown(busy.value) == (
        f"A challenge is waiting for an answer in this channel: {waiting}"
    )
    game = await fair.challenges.accept(pending.id, BOB, GUILD, 700)
    with pytest.raises(AlreadyPlaying) as playing:
        await fair.start_bot_game(GUILD, CHANNEL, BOB, level="easy")
    assert shown(playing.value) == f"You are already playing a game in this channel: {waiting}"
    # A rematch in a channel taken by another game links that game.
    done = await fair.start_bot_game(GUILD, CHANNEL + 1, CAROL, level="easy", first=First.ME)
    done = await fair.endings.forfeit(done.id, CAROL, GUILD)
    other = await fair.start_bot_game(GUILD, CHANNEL + 1, DAVE, level="easy", first=First.ME)
    await fair.set_game_message(other.id, 902)
    with pytest.raises(RematchUnavailable) as rematch:
        await fair.rematch(done.id, CAROL)
    assert link(GUILD, CHANNEL + 1, 902) in shown(rematch.value)
    assert game.id != other.id


async def test_challenges_off_tells_the_challenger_nothing_of_how_to_turn_them_on(
    fair: GameService,
) -> None:
    await fair.guilds.choices(GUILD, BOB, challenges=False)
    with pytest.raises(ChallengesOff) as caught:
        await fair.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    assert shown(caught.value) == f"<@{BOB}> has turned challenges off on this server."
    for locale in ("fr", "ja", "de"):
        assert "preferences" not in shown(caught.value, locale)


async def test_a_difficulty_with_an_opponent_is_refused_before_anything(
    fair: GameService,
) -> None:
    with pytest.raises(InvalidSettings) as caught:
        await fair.challenges.create(GUILD, CHANNEL, ALICE, BOB, level="hard")
    assert "leave it out to challenge" in shown(caught.value) and f"<@{BOB}>" in shown(caught.value)
    # Nothing was written: no challenge, no cooldown, no ping.
    assert await fair.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    with pytest.raises(InvalidSettings):
        await fair.threads.vet(GUILD, CHANNEL, CAROL, opponent_id=BOB, level="easy")


async def test_a_new_thread_is_vetted_as_its_start_would_be(
    fair: GameService, clock: FakeClock
) -> None:
    """Every refusal of the start, before the thread exists, and nothing written."""
    vet = fair.threads.vet
    await vet(GUILD, CHANNEL, ALICE, level="hard", width=4, height=4)
    await vet(GUILD, CHANNEL, ALICE, opponent_id=BOB, width=5, height=5, k=4)
    with pytest.raises(InvalidSettings):
        await vet(GUILD, CHANNEL, ALICE, level="godlike")
    with pytest.raises(InvalidSettings):
        await vet(GUILD, CHANNEL, ALICE, first="sometimes")
    with pytest.raises(SelfChallenge):
        await vet(GUILD, CHANNEL, ALICE, opponent_id=ALICE)
    # The member's live games: linked.
    game = await fair.start_bot_game(GUILD, CHANNEL + 5, ALICE, level="easy", first=First.ME)
    await fair.set_game_message(game.id, 903)
    for opponent in (None, BOB):
        with pytest.raises(TooManyGames) as limit:
            await vet(GUILD, CHANNEL, ALICE, opponent_id=opponent)
        assert link(GUILD, CHANNEL + 5, 903) in shown(limit.value)
    with pytest.raises(TooManyGames) as theirs:
        await vet(GUILD, CHANNEL, CAROL, opponent_id=ALICE)
    assert shown(theirs.value).startswith(f"<@{ALICE}> is already in a game")
    # The challenger's pending challenge in the server, and the cooldown.
    pending = await fair.challenges.create(GUILD, CHANNEL + 6, CAROL, DAVE)
    await fair.challenges.set_message(pending, 704)
    with pytest.raises(ChallengePending) as waiting:
        await vet(GUILD, CHANNEL, CAROL, opponent_id=BOB)
    assert link(GUILD, CHANNEL + 6, 704) in shown(waiting.value)
    await fair.challenges.withdraw(pending.id, CAROL, GUILD, 704)
    with pytest.raises(ChallengeCooldown):
        await vet(GUILD, CHANNEL, CAROL, opponent_id=DAVE)
    await vet(GUILD, CHANNEL, CAROL, opponent_id=BOB)  # another member is fine
    clock.advance(61)
    await vet(GUILD, CHANNEL, CAROL, opponent_id=DAVE)
    # Consent.
    await fair.guilds.choices(GUILD, DAVE, challenges=False)
    with pytest.raises(ChallengesOff):
        await vet(GUILD, CHANNEL, CAROL, opponent_id=DAVE)
    # The server's channel list: a thread of a listed channel only.
    await fair.guilds.change(GUILD, {}, allow_channel=CHANNEL + 9)
    with pytest.raises(ChannelNotAllowed):
        await vet(GUILD, CHANNEL, CAROL, level="easy")
    await vet(GUILD, CHANNEL + 9, CAROL, level="easy")


async def test_the_server_cap_and_a_full_pool_are_vetted_too(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    service = make_service(store, clock, executor, **{**DEFAULT_LIMITS, "server_games": 2})
    await service.start()
    try:
        await service.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first=First.ME)
        await service.start_bot_game(GUILD, CHANNEL + 1, BOB, level="easy", first=First.ME)
        with pytest.raises(TooManyGames, match="This server already has 2 live games"):
            await service.threads.vet(GUILD, CHANNEL, CAROL, level="easy")
        await service.guilds.change(GUILD, {"server_games": 3})
        # The server's share of the search pool used: the bot's first move would be
        # refused, so no thread either.
        for game_id in range(1_000_000, 1_000_000 + share(MAX_WAITING_MOVES, 25)):
            service._pool.promise(game_id, GUILD)
        await service.threads.vet(GUILD, CHANNEL, ALICE + 100, level="easy", first="me")
        with pytest.raises(Busy):
            await service.threads.vet(GUILD, CHANNEL, ALICE + 100, level="easy", first="random")
    finally:
        await service.close()


async def test_a_start_that_loses_the_race_for_the_channel_links_the_winner(
    store: Store, clock: FakeClock, executor: concurrent.futures.Executor
) -> None:
    """Two processes on one database start at once in one channel: the one whose insert
    meets the unique index is told which game took the channel, as any other refusal."""
    one, other = (make_service(store, clock, executor, **DEFAULT_LIMITS) for _ in range(2))
    for service in (one, other):
        await service.start()
    try:
        results = await asyncio.gather(
            one.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first=First.ME),
            other.start_bot_game(GUILD, CHANNEL, BOB, level="easy", first=First.ME),
            return_exceptions=True,
        )
        (won,) = [r for r in results if not isinstance(r, BaseException)]
        (lost,) = [r for r in results if isinstance(r, BaseException)]
        assert isinstance(lost, ChannelBusy) and lost.game is not None, lost
        assert lost.game.id == won.id and f"<#{CHANNEL}>" in shown(lost)
    finally:
        for service in (one, other):
            await service.close()


async def test_a_server_erasure_names_stop_only_to_who_may_stop_every_game(
    fair: GameService,
) -> None:
    game = await fair.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first=First.ME)
    await fair.set_game_message(game.id, 905)
    board = link(GUILD, CHANNEL, 905)
    for user_id, is_moderator, told in (
        (CAROL, False, False),  # Manage Server, but may not stop the game
        (CAROL, True, True),  # a moderator
        (ALICE, False, True),  # its player
        (None, True, True),  # not known: as before
    ):
        with pytest.raises(GamesInTheWay) as caught:
            await fair.privacy.guild_data(
                GUILD, may_manage=True, user_id=user_id, is_moderator=is_moderator
            )
        text = shown(caught.value)
        assert board in text and ("/tictactoe-stop" in text) is told, text
        with pytest.raises(GamesInTheWay):
            await fair.privacy.erase_guild(
                GUILD, may_manage=True, user_id=user_id, is_moderator=False
            )
