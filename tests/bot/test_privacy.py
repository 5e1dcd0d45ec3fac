"""Erasure on request (``/tictactoe-forget-me``, ``/tictactoe-forget-server``): the service
and the store on a real SQLite file, and how an erased member is drawn."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bot.app import GameService
from bot.errors import (
    ChallengeNotFound,
    ConfirmationExpired,
    GamesInTheWay,
    NotYourConfirmation,
    PermissionDenied,
    RematchUnavailable,
)
from bot.games import render
from bot.games.queries import Store
from bot.i18n import translator
from bot.models import DELETED_MEMBER, ChallengeStatus, First, Game, GameStatus, Result
from bot.privacy import queries as privacy
from bot.privacy.render import guild_question, member_question
from bot.privacy.service import CONFIRM_SECONDS, LINKED_GAMES
from bot.privacy.views import confirm_view
from bot.stats.queries import StatsQueries
from bot.stats.render import stats_text
from bot.stats.render_review import review_text

from .helpers import ALICE, BOB, CAROL, CHANNEL, GUILD, FakeClock, member_game, play_out
from .shown import shown
from .test_render import check_limits

OTHER_GUILD = GUILD + 1
X_WINS = [0, 3, 1, 4, 2]
GUILD_TABLES = (
    "games",
    "challenges",
    "players",
    "bot_records",
    "guild_settings",
    "game_channels",
    "live_seats",
    "cooldowns",
    "challenge_blocks",
    "member_prefs",
)
GAME_TABLES = ("turn_pings", "calloffs", "reviews")

EN = translator(None)


def raw(path: Path, statement: str, parameters: Any = ()) -> list[tuple[Any, ...]]:
    """A statement on a connection of the test's own (rows the store has no call for yet)."""
    with sqlite3.connect(path) as connection:
        rows = connection.execute(statement, parameters).fetchall()
    connection.close()
    return rows


def extras(path: Path, guild: int, user: int, game_id: int) -> None:
    """A member's rows in the fair-play tables, and rows that hang off ``game_id``."""
    raw(path, "REPLACE INTO cooldowns VALUES (?, ?, 'challenge', ?, 9e9)", (guild, user, BOB))
    raw(path, "INSERT INTO cooldowns VALUES (?, ?, 'review', 0, 9e9)", (guild, user))
    raw(path, "INSERT INTO challenge_blocks VALUES (?, ?, 1)", (guild, user))
    raw(path, "INSERT INTO member_prefs VALUES (?, ?, 0, 1)", (guild, user))
    raw(path, "INSERT INTO live_seats VALUES (?, ?, 0, ?)", (guild, user, game_id))
    raw(path, "INSERT INTO turn_pings VALUES (?, ?, 77, ?, 1, 0)", (game_id, CHANNEL, user))
    raw(path, "INSERT INTO calloffs VALUES (?, ?, 1, NULL, 1)", (game_id, user))
    raw(path, "INSERT INTO reviews VALUES (?, '{}')", (game_id,))


def counts(path: Path, guild: int) -> dict[str, int]:
    """Rows per table for ``guild`` (the cascading tables through its games)."""
    found = {
        t: raw(path, f"SELECT COUNT(*) FROM {t} WHERE guild_id = ?", (guild,))[0][0]
        for t in GUILD_TABLES
    }
    for table in GAME_TABLES:
        games = "SELECT id FROM games WHERE guild_id = ?"
        query = f"SELECT COUNT(*) FROM {table} WHERE game_id IN ({games})"
        found[table] = raw(path, query, (guild,))[0][0]
    return found


async def won_game(service: GameService, x: int, o: int, guild: int = GUILD) -> Game:
    game = await member_game(service, x, o, guild=guild)
    return await play_out(service, game, X_WINS)


# -- one member ---------------------------------------------------------------------------


async def test_erasing_a_member_keeps_their_games_with_a_deleted_member(
    service: GameService, store: Store, db_path: Path
) -> None:
    won = await won_game(service, ALICE, BOB)  # Alice beats Bob (rated)
    await won_game(service, CAROL, BOB)
    bot_game = await service.start_bot_game(GUILD, CHANNEL, ALICE, level="easy", first=First.ME)
    bot_game = await service.endings.forfeit(bot_game.id, ALICE)
    extras(db_path, GUILD, ALICE, won.id)
    bob_before = await StatsQueries(store.db).player(GUILD, BOB)
    carol_before = await StatsQueries(store.db).player(GUILD, CAROL)

    asked = await service.privacy.member_data(GUILD, ALICE)
    assert asked.player.rated_games == 1 and asked.player.record.wins == 1
    assert (asked.bot_levels, asked.ended_games, asked.challenges) == (1, 2, 1)
    assert "can't be undone" in member_question(asked, EN)
    check_limits(confirm_view(member_question(asked, EN), "me", ALICE, EN))

    erased = await service.privacy.erase_member(GUILD, ALICE)
    assert (erased.ended_games, erased.challenges, erased.withdrawn) == (2, 1, ())
    assert erased.player == asked.player

    tables = ("players", "bot_records", "cooldowns", "challenge_blocks", "member_prefs")
    for table in (*tables, "live_seats"):
        query = f"SELECT COUNT(*) FROM {table} WHERE user_id = ?"
        assert raw(db_path, query, (ALICE,)) == [(0,)], table
    assert raw(db_path, "SELECT COUNT(*) FROM turn_pings WHERE user_id = ?", (ALICE,)) == [(0,)]
    assert raw(db_path, "SELECT COUNT(*) FROM calloffs WHERE proposer_id = ?", (ALICE,)) == [(0,)]
    assert raw(db_path, "SELECT COUNT(*) FROM reviews") == [(1,)]  # the game's, kept with it
    query = "SELECT COUNT(*) FROM challenges WHERE ? IN (challenger_id, opponent_id)"
    assert raw(db_path, query, (ALICE,)) == [(0,)]
    query = "SELECT COUNT(*) FROM games WHERE ? IN (x_id, o_id, winner_id)"
    assert raw(db_path, query, (ALICE,)) == [(0,)]

    kept = await service.get_game(won.id)
    assert (kept.x_id, kept.o_id, kept.winner_id) == (DELETED_MEMBER, BOB, DELETED_MEMBER)
    assert (kept.status, kept.result, kept.moves) == (won.status, won.result, won.moves)
    kept_bot = await service.get_game(bot_game.id)
    assert (kept_bot.x_id, kept_bot.o_id, kept_bot.bot_level) == (DELETED_MEMBER, None, "easy")
    # Other members' standing is untouched; the leaderboard no longer lists Alice.
    bob_after = await StatsQueries(store.db).player(GUILD, BOB)
    assert replace(bob_after, rank=None) == replace(bob_before, rank=None)
    assert (bob_before.rank, bob_after.rank) == (3, 2)  # one rival fewer above him
    assert (await StatsQueries(store.db).player(GUILD, CAROL)).rating == carol_before.rating
    board = await service.stats.leaderboard(GUILD)
    assert {entry.user_id for entry in board.entries} == {BOB, CAROL}
    fresh = await service.stats.player_stats(GUILD, ALICE)
    assert (fresh.rating, fresh.rank, fresh.versus_bot, fresh.recent) == (1500.0, None, (), ())
    # Bob's history shows a deleted member, wherever an id becomes a name.
    stats = await service.stats.player_stats(GUILD, BOB)
    text = stats_text(stats, EN)
    assert "lost to a deleted member" in text and f"<@{ALICE}>" not in text
    assert "🏆 A deleted member won." in render.game_text(kept, EN)
    assert f"<@{BOB}>" in render.game_text(kept, EN)
    history = await service.stats.history(GUILD)
    assert all(ALICE not in (g.x_id, g.o_id, g.winner_id) for g in history)
    # Bob can't rematch someone who is gone; a review of the game still works.
    with pytest.raises(RematchUnavailable, match="erased"):
        await service.rematch(won.id, BOB, GUILD)
    raw(db_path, "DELETE FROM reviews WHERE game_id = ?", (won.id,))  # extras' stand-in
    _, review = await service.reviews.review(won.id, BOB, GUILD)
    assert "### Review: a deleted member vs " in review_text(kept, review, EN)


async def test_both_players_erased(service: GameService) -> None:
    won = await won_game(service, ALICE, BOB)
    await service.privacy.erase_member(GUILD, ALICE)
    await service.privacy.erase_member(GUILD, BOB)
    kept = await service.get_game(won.id)
    assert (kept.x_id, kept.o_id, kept.winner_id) == (DELETED_MEMBER,) * 3
    assert render.game_text(kept, EN).lower().count("a deleted member") == 3
    assert (await service.stats.leaderboard(GUILD)).entries == ()


async def test_erasing_a_member_changes_no_other_server(
    service: GameService, store: Store, db_path: Path
) -> None:
    await won_game(service, ALICE, BOB, guild=GUILD)
    other = await won_game(service, ALICE, BOB, guild=OTHER_GUILD)
    before = counts(db_path, OTHER_GUILD)
    alice = await StatsQueries(store.db).player(OTHER_GUILD, ALICE)
    await service.privacy.erase_member(GUILD, ALICE)
    assert counts(db_path, OTHER_GUILD) == before
    assert await StatsQueries(store.db).player(OTHER_GUILD, ALICE) == alice
    assert (await service.get_game(other.id)).x_id == ALICE


async def test_a_live_game_refuses_the_erasure_and_links_the_game(
    service: GameService, store: Store, db_path: Path
) -> None:
    await won_game(service, ALICE, BOB)
    live = await member_game(service, CAROL, ALICE)
    await service.set_game_message(live.id, 4242)
    before = counts(db_path, GUILD)
    link = f"https://discord.com/channels/{GUILD}/{CHANNEL}/4242"
    with pytest.raises(GamesInTheWay) as asked:
        await service.privacy.member_data(GUILD, ALICE)
    with pytest.raises(GamesInTheWay) as erased:
        await service.privacy.erase_member(GUILD, ALICE)
    for refusal in (asked.value, erased.value):
        assert f"You have 1 game in progress: {link}." in shown(refusal)
        assert "Nothing was erased" in shown(refusal)
    assert counts(db_path, GUILD) == before
    assert (await StatsQueries(store.db).player(GUILD, ALICE)).rated_games == 1
    # Once the game is over, the erasure goes ahead; Carol's game stays hers.
    live = await play_out(service, live, [4, 0])  # both moved: a forfeit, not an abort
    ended = await service.endings.forfeit(live.id, ALICE)
    await service.privacy.erase_member(GUILD, ALICE)
    assert (await service.get_game(ended.id)).winner_id == CAROL


async def test_pending_challenges_are_withdrawn_and_deleted(service: GameService) -> None:
    mine = await service.challenges.create(GUILD, CHANNEL, ALICE, BOB)
    await service.challenges.set_message(mine, 900)
    theirs = await service.challenges.create(GUILD, CHANNEL + 1, CAROL, ALICE)
    await service.challenges.set_message(theirs, 901)
    unrelated = await service.challenges.create(GUILD, CHANNEL + 2, BOB, CAROL)

    erased = await service.privacy.erase_member(GUILD, ALICE)
    assert erased.challenges == 2
    by_id = {c.id: c for c in erased.withdrawn}
    assert set(by_id) == {mine.id, theirs.id}
    assert all(c.status is ChallengeStatus.WITHDRAWN for c in erased.withdrawn)
    assert (by_id[mine.id].challenger_id, by_id[mine.id].opponent_id) == (DELETED_MEMBER, BOB)
    assert (by_id[theirs.id].challenger_id, by_id[theirs.id].opponent_id) == (CAROL, DELETED_MEMBER)
    assert (by_id[mine.id].message_id, by_id[theirs.id].message_id) == (900, 901)
    text = render.challenge_text(by_id[mine.id], EN)
    assert f"A deleted member withdrew the challenge to <@{BOB}>." in text
    for challenge in (mine, theirs):
        with pytest.raises(ChallengeNotFound):
            await service.challenges.get(challenge.id)
        with pytest.raises(ChallengeNotFound):
            await service.challenges.accept(challenge.id, challenge.opponent_id)
    assert (await service.challenges.get(unrelated.id)).status is ChallengeStatus.PENDING


@pytest.mark.sqlite_only  # traces SQLite's statements
async def test_the_erasure_commits_durably(service: GameService, store: Store) -> None:
    statements: list[str] = []
    await store.trace(statements.append)
    await service.privacy.erase_member(GUILD, ALICE)
    await store.trace(None)
    begin = statements.index("BEGIN IMMEDIATE")
    assert statements[begin - 1] == "PRAGMA synchronous = FULL"
    assert "COMMIT" in statements[begin:]


# -- the confirm button ---------------------------------------------------------------------


def test_only_the_asker_may_confirm_in_time(service: GameService) -> None:
    check = service.privacy.check_confirmation
    shown = 1_700_000_000.0
    check(ALICE, ALICE, shown, shown + CONFIRM_SECONDS)
    with pytest.raises(NotYourConfirmation):
        check(ALICE, BOB, shown, shown + 1)
    with pytest.raises(ConfirmationExpired, match=r"expired .*nothing was erased"):
        check(ALICE, ALICE, shown, shown + CONFIRM_SECONDS + 0.5)


# -- a whole server -------------------------------------------------------------------------


async def test_erasing_a_server_deletes_its_rows_and_no_other(
    service: GameService, store: Store, db_path: Path, clock: FakeClock
) -> None:
    rematches = {}
    for guild in (GUILD, OTHER_GUILD):
        first = await won_game(service, ALICE, BOB, guild=guild)
        await won_game(service, BOB, ALICE, guild=guild)
        rematch = await service.rematch(first.id, BOB, guild)  # a challenge pointing at a game
        assert rematch.rematch_of == first.id
        rematches[guild] = rematch.id
        bot_game = await service.start_bot_game(guild, CHANNEL + 5, CAROL, level="easy")
        await service.endings.forfeit(bot_game.id, CAROL)
        extras(db_path, guild, CAROL, first.id)
        raw(db_path, "INSERT INTO guild_settings (guild_id, updated_at) VALUES (?, 1)", (guild,))
        raw(db_path, "INSERT INTO game_channels VALUES (?, ?)", (guild, CHANNEL + 9))
    pending = await service.challenges.create(GUILD, CHANNEL + 9, CAROL, ALICE)
    await service.challenges.set_message(pending, 555)
    other_before = counts(db_path, OTHER_GUILD)
    assert all(other_before.values()), other_before  # every table has rows to keep
    assert (await store.settings())["foreign_keys"] == 1

    asked = await service.privacy.guild_data(GUILD, may_manage=True)
    assert (asked.games, asked.challenges, asked.players, asked.settings) == (3, 4, 3, 2)
    check_limits(confirm_view(guild_question(asked, EN), "server", ALICE, EN))
    erased = await service.privacy.erase_guild(GUILD, may_manage=True)
    assert erased.games == 3 and erased.challenges == 4
    withdrawn = {c.id: c for c in erased.withdrawn}
    assert set(withdrawn) == {pending.id, rematches[GUILD]}
    assert withdrawn[pending.id].message_id == 555
    assert withdrawn[pending.id].status is ChallengeStatus.WITHDRAWN

    assert counts(db_path, GUILD) == dict.fromkeys([*GUILD_TABLES, *GAME_TABLES], 0)
    assert counts(db_path, OTHER_GUILD) == other_before
    assert raw(db_path, "SELECT COUNT(*) FROM turn_pings") == [(1,)]  # the other server's
    assert (await service.stats.leaderboard(GUILD)).total_players == 0
    assert (await service.stats.leaderboard(OTHER_GUILD)).total_players == 2
    # The server starts again from nothing, and works.
    clock.advance(1)
    again = await won_game(service, ALICE, BOB)
    assert again.status is GameStatus.FINISHED and again.result is Result.WIN


async def test_a_server_erasure_needs_manage_server_and_no_live_games(
    service: GameService, db_path: Path
) -> None:
    await won_game(service, ALICE, BOB)
    before = counts(db_path, GUILD)
    for call in (service.privacy.guild_data, service.privacy.erase_guild):
        with pytest.raises(PermissionDenied, match="Manage Server"):
            await call(GUILD, may_manage=False)
    live = [await member_game(service, ALICE, BOB, channel=CHANNEL + i) for i in range(5)]
    await service.set_game_message(live[0].id, 31)
    with pytest.raises(GamesInTheWay) as refused:
        await service.privacy.erase_guild(GUILD, may_manage=True)
    text = shown(refused.value)
    assert text.startswith("This server has 5 games in progress: ")
    assert f"https://discord.com/channels/{GUILD}/{CHANNEL}/31, " in text
    # A board not posted yet is linked by its channel.
    assert f"<#{CHANNEL + 1}>, <#{CHANNEL + 2}> and" in text
    assert text.count("https://discord.com/channels/") + text.count("<#") == LINKED_GAMES
    assert f"and {5 - LINKED_GAMES} more" in text
    assert counts(db_path, GUILD)["games"] == before["games"] + 5
    assert counts(db_path, GUILD)["players"] == before["players"]


def test_render_names_a_deleted_member() -> None:
    assert render.mention(DELETED_MEMBER, EN) == "a deleted member"
    assert render.mention(ALICE, EN) == f"<@{ALICE}>"


async def test_a_member_erasure_reads_no_whole_table_of_games(store: Store, db_path: Path) -> None:
    """Each statement finds the member's games in an index: an erasure holds the one
    connection, and a big server's every click waits for it."""
    statements = [
        privacy.MEMBER_LIVE_GAMES,
        privacy.MEMBER_ENDED_GAMES,
        privacy.ANONYMISE_WINNER,
        privacy.ANONYMISE_X,
        privacy.ANONYMISE_O,
        privacy.DELETE_TURN_PINGS,
        privacy.DELETE_CALLOFFS,
        privacy.GUILD_LIVE_GAMES,
        privacy.GUILD_COUNTS,
    ]
    for statement in statements:
        parameters: Any = {"guild": 1} if ":guild" in statement else (1,) * statement.count("?")
        plan = [row[3] for row in raw(db_path, f"EXPLAIN QUERY PLAN {statement}", parameters)]
        assert not [step for step in plan if step.startswith("SCAN games")], (statement, plan)
