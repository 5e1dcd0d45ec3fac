"""Where a game can be reached (bot/reach.py): games outside servers that added the bot
are kept under the players' own space, unrated, under the same per-member limits and
cooldowns wherever they move, with no server cap; the stored tokens (both engines)."""

from __future__ import annotations

import pytest

from bot.app import GameService
from bot.errors import ChallengeCooldown, TooManyGames
from bot.games import rules
from bot.games.queries import Store
from bot.games.token_queries import Token, Tokens
from bot.i18n import translator
from bot.reach import (
    FOLLOWUP_LIMIT,
    OUTSIDE,
    TOKEN_LIFETIME,
    by_channel,
    followup_room,
    home_of,
    token_live,
)
from bot.stats.render import stats_text

from .helpers import ALICE, BOB, CAROL, GUILD, FakeClock, play_out
from .test_service import X_WINS


def test_where_a_game_is_kept_and_reached() -> None:
    assert home_of(GUILD, bot_is_member=True) == GUILD
    assert home_of(GUILD, bot_is_member=False) == OUTSIDE  # a server without the bot
    assert home_of(None, bot_is_member=False) == OUTSIDE  # a DM or a group DM
    assert by_channel(GUILD) and not by_channel(OUTSIDE)


def test_a_token_is_known_dead_from_its_age_and_its_follow_ups_counted() -> None:
    assert token_live(1000.0, 1000.0 + 13 * 60)
    assert not token_live(1000.0, 1000.0 + 14 * 60)  # a minute short of Discord's 15
    assert not token_live(1000.0, 1000.0 + TOKEN_LIFETIME)
    assert not token_live(None, 1000.0)
    assert followup_room(FOLLOWUP_LIMIT - 1, user_install_only=True)
    assert not followup_room(FOLLOWUP_LIMIT, user_install_only=True)
    assert followup_room(50, user_install_only=False)


async def test_games_outside_servers_are_unrated_and_make_the_players_own_record(
    fair: GameService,
) -> None:
    challenge = await fair.challenges.create(OUTSIDE, 501, ALICE, BOB, first="me")
    game = await fair.challenges.accept(challenge.id, BOB)
    assert game.guild_id == OUTSIDE and not rules.is_rated(game)
    ended = await play_out(fair, game, X_WINS)
    assert ended.winner_id == ALICE and ended.x_rating is None
    mine = await fair.stats.player_stats(OUTSIDE, ALICE)
    assert (mine.versus_members.wins, mine.rating) == (1, 1500.0)  # a record, no rating
    assert "Rating" not in stats_text(mine, translator(None))
    theirs = await fair.stats.player_stats(OUTSIDE, BOB)
    assert theirs.versus_members.losses == 1 and theirs.current_streak == -1
    assert (await fair.stats.player_stats(GUILD, ALICE)).versus_members.wins == 0
    # /tictactoe-forget-me in a DM erases that record (its game stays, anonymised).
    await fair.privacy.erase_member(OUTSIDE, ALICE)
    assert (await fair.stats.player_stats(OUTSIDE, ALICE)).versus_members.wins == 0
    assert (await fair.stats.player_stats(OUTSIDE, BOB)).versus_members.losses == 1


async def test_limits_and_cooldowns_follow_a_member_across_dms_with_no_server_cap(
    fair: GameService, clock: FakeClock
) -> None:
    await fair.start_bot_game(OUTSIDE, 601, ALICE, level="easy", first="me")
    # Another DM, group DM or server without the bot is the same space: one live game.
    with pytest.raises(TooManyGames):
        await fair.start_bot_game(OUTSIDE, 602, ALICE, level="easy", first="me")
    sent = await fair.challenges.create(OUTSIDE, 603, BOB, CAROL)
    await fair.challenges.withdraw(sent.id, BOB, OUTSIDE, None)
    with pytest.raises(ChallengeCooldown):
        await fair.challenges.create(OUTSIDE, 604, BOB, CAROL)
    # No server cap in the players' own space: more live games than a server may hold.
    for player in range(1000, 1030):
        await fair.start_bot_game(OUTSIDE, player, player, level="easy", first="me")


async def test_tokens_are_kept_counted_and_forgotten(store: Store) -> None:
    tokens = Tokens(store.db)
    await tokens.put("game", 7, Token("abc", 1000.0, user_only=True, followups=0))
    await tokens.count_followup("game", 7, "abc")
    await tokens.count_followup("game", 7, "stale")  # an older token's: not counted
    assert await tokens.get("game", 7) == Token("abc", 1000.0, True, 1)
    await tokens.put("game", 7, Token("def", 1100.0, user_only=False, followups=0))
    assert await tokens.get("game", 7) == Token("def", 1100.0, False, 0)  # a new count
    await tokens.put("challenge", 7, Token("ghi", 900.0, user_only=True, followups=0))
    await tokens.drop_older_than(1000.0)
    assert await tokens.get("challenge", 7) is None
    assert await tokens.get("game", 7) is not None
