"""The store on its own: guarded writes, the channel index, game ends written once and
durably, cancellation, query plans.

No service here: ``end_game`` gets small settle functions written in these tests, and
the fixtures are this module's own. Where the file itself is inspected (query plans,
indexes, raw rows) it is with a plain ``sqlite3`` connection of the test's own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import sqlite3
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import pytest

from bot.challenges.queries import ChallengeQueries
from bot.db.shards import owned_names, owned_values
from bot.games import sql as statements
from bot.games.queries import Store
from bot.games.refusals import ChannelTaken
from bot.models import (
    Challenge,
    ChallengeStatus,
    First,
    Game,
    GameStatus,
    PlayerRow,
    Record,
    Result,
    Settlement,
    Shards,
)
from bot.pings import queries as ping_statements
from bot.stats.queries import StatsQueries
from engine import Mark

INTEGRITY_ERRORS = (sqlite3.IntegrityError, asyncpg.IntegrityConstraintViolationError)
"""What a row the schema's CHECKs refuse raises: a bug, so the engine's own error."""

GUILD = 1000
CHANNEL = 2000
ALICE = 11
BOB = 22
NOW = 1_700_000_000.0
ROOMY = {"per_member": 50, "per_server": 100}
"""Limits on live games wide enough that these tests never meet them."""
NO_COOLDOWN = {"cooldown_until": 0.0, "exempt": False}

T = TypeVar("T")
Settle = Callable[[Mapping[int, PlayerRow]], Settlement]


@contextmanager
def reader(path: Path) -> Iterator[sqlite3.Connection]:
    """A plain connection of the test's own to the store's file."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        yield conn


def new_game(**changes: object) -> Game:
    game = Game(
        id=0,
        guild_id=GUILD,
        channel_id=CHANNEL,
        message_id=None,
        x_id=ALICE,
        o_id=BOB,
        bot_level=None,
        width=3,
        height=3,
        k=3,
        moves=(),
        status=GameStatus.ACTIVE,
        result=None,
        winner_id=None,
        winner_mark=None,
        created_at=NOW,
        updated_at=NOW,
        turn_deadline=NOW + 300,
    )
    return dataclasses.replace(game, **changes)  # type: ignore[arg-type]


def won(game: Game, moves: tuple[int, ...], winner: Mark, at: float = NOW) -> Game:
    return dataclasses.replace(
        game,
        moves=moves,
        status=GameStatus.FINISHED,
        result=Result.WIN,
        winner_mark=winner,
        winner_id=game.player_of(winner),
        updated_at=at,
        turn_deadline=None,
    )


X_WINS = (0, 3, 1, 4, 2)


def nothing(rows: Mapping[int, PlayerRow]) -> Settlement:
    """Settles an ending that changes nobody's standing (a stopped game)."""
    return Settlement()


def plus_minus_20(game: Game, seen: list[dict[int, PlayerRow]] | None = None) -> Settle:
    """A stand-in for the service's rules: the winner gains 20 and the loser loses 20,
    both counted as rated; ``seen`` collects the rows each call was given."""

    def settle(rows: Mapping[int, PlayerRow]) -> Settlement:
        if seen is not None:
            seen.append(dict(rows))
        assert game.winner_mark is not None
        winner = game.player_of(game.winner_mark)
        loser = game.player_of(game.winner_mark.other)
        assert winner is not None and loser is not None
        w, lo = rows[winner], rows[loser]
        return Settlement(
            rated=True,
            players=(
                (
                    winner,
                    PlayerRow(
                        w.rating + 20,
                        w.rated_games + 1,
                        dataclasses.replace(w.record, wins=w.record.wins + 1),
                        max(w.current_streak, 0) + 1,
                        max(w.best_streak, max(w.current_streak, 0) + 1),
                    ),
                ),
                (
                    loser,
                    PlayerRow(
                        lo.rating - 20,
                        lo.rated_games + 1,
                        dataclasses.replace(lo.record, losses=lo.record.losses + 1),
                        min(lo.current_streak, 0) - 1,
                        lo.best_streak,
                    ),
                ),
            ),
        )

    return settle


def raw_player(path: Path, user: int) -> tuple[object, ...] | None:
    with reader(path) as conn:
        return conn.execute(
            "SELECT rating, rated_games, wins, losses, draws, current_streak, best_streak,"
            " updated_at FROM players WHERE guild_id = ? AND user_id = ?",
            (GUILD, user),
        ).fetchone()


def table_rows(path: Path, table: str) -> list[tuple[object, ...]]:
    with reader(path) as conn:
        return conn.execute(f"SELECT * FROM {table}").fetchall()


# -- opening --------------------------------------------------------------------------------


async def test_engine_settings(store: Store, backend: str) -> None:
    assert await store.integrity_check() == "ok"
    assert store.schema_version >= 1
    assert store.engine == backend
    settings = await store.settings()
    if backend == "postgresql":
        # A killed bot loses nothing either way (the server has the commit); only what
        # end_game and erasures commit must also survive the server's own crash.
        assert settings["synchronous_commit"] == "off"
        assert settings["default_transaction_isolation"] == "read committed"
        assert settings["lock_timeout"] == "10s"
        assert str(settings["server_version"]).startswith("16.")
        return
    assert settings["journal_mode"] == "wal"
    assert settings["synchronous"] == "NORMAL"
    assert (settings["foreign_keys"], settings["busy_timeout"]) == (1, 10_000)


async def test_synchronous_levels(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="synchronous"):
        await Store.open(tmp_path / "a.db", synchronous="OFF")
    store = await Store.open(tmp_path / "b.db", synchronous="full", busy_timeout_ms=250)
    try:
        settings = await store.settings()
        assert (settings["synchronous"], settings["busy_timeout"]) == ("FULL", 250)
    finally:
        await store.close()


# -- games ----------------------------------------------------------------------------------


async def test_insert_and_read_back(store: Store) -> None:
    game = await store.insert_game(new_game(message_id=5, id=99), exclusive=True, **ROOMY)
    assert game.id > 0 and game == dataclasses.replace(new_game(message_id=5), id=game.id)
    assert await store.get_game(game.id) == game
    assert isinstance(game.created_at, float) and isinstance(game.turn_deadline, float)
    assert await store.get_game(game.id + 1) is None
    assert await store.set_game_message(game.id, 77)
    assert not await store.set_game_message(game.id + 1, 77)
    stored = await store.get_game(game.id)
    assert stored is not None and stored.message_id == 77


async def test_one_live_game_per_channel_is_enforced_by_the_database(store: Store) -> None:
    first = await store.insert_game(new_game(), exclusive=True, **ROOMY)
    with pytest.raises(ChannelTaken):
        await store.insert_game(new_game(x_id=5, o_id=6), exclusive=True, **ROOMY)
    # Other channels and guilds are free; non-exclusive games do not claim the channel.
    await store.insert_game(new_game(channel_id=CHANNEL + 1), exclusive=True, **ROOMY)
    await store.insert_game(new_game(guild_id=GUILD + 1), exclusive=True, **ROOMY)
    await store.insert_game(new_game(x_id=5, o_id=6), exclusive=False, **ROOMY)
    # Once the first game ends the channel can be claimed again.
    assert await store.end_game(won(first, X_WINS, Mark.X), first, nothing)
    await store.insert_game(new_game(x_id=7, o_id=8), exclusive=True, **ROOMY)


async def test_save_game_is_conditional_on_move_number_and_status(
    store: Store, db_path: Path
) -> None:
    game = await store.insert_game(new_game(), exclusive=True, **ROOMY)
    moved = dataclasses.replace(game, moves=(4,), updated_at=NOW + 1, turn_deadline=NOW + 301)
    other = dataclasses.replace(game, moves=(0,), updated_at=NOW + 1)
    assert await store.save_game(moved, game)
    assert not await store.save_game(other, game)  # move 0 is gone
    assert await store.get_game(game.id) == moved
    # The status is part of the guard too.
    assert not await store.save_game(
        dataclasses.replace(moved, moves=(4, 0)),
        dataclasses.replace(moved, status=GameStatus.BOT_TO_MOVE),
    )
    with pytest.raises(ValueError, match="same game"):
        await store.save_game(dataclasses.replace(moved, id=game.id + 1), moved)
    # save_game records no result, even when it is handed an ended game.
    assert await store.save_game(won(moved, (4, 0, 3, 1, 5), Mark.X), moved)
    assert table_rows(db_path, "players") == []
    with reader(db_path) as conn:
        assert conn.execute("SELECT rated FROM games").fetchone() == (0,)


async def test_end_game_writes_what_the_settlement_says_once(store: Store, db_path: Path) -> None:
    seen: list[dict[int, PlayerRow]] = []
    game = await store.insert_game(new_game(), exclusive=True, **ROOMY)
    final = won(game, X_WINS, Mark.X, at=NOW + 9)
    assert await store.end_game(final, game, plus_minus_20(final, seen))
    assert seen == [{ALICE: PlayerRow(), BOB: PlayerRow()}]  # no rows yet: the defaults
    assert raw_player(db_path, ALICE) == (1520.0, 1, 1, 0, 0, 1, 1, NOW + 9)
    assert raw_player(db_path, BOB) == (1480.0, 1, 0, 1, 0, -1, 0, NOW + 9)
    assert await store.get_game(game.id) == final
    with reader(db_path) as conn:
        assert conn.execute("SELECT rated FROM games").fetchone() == (1,)
    # Counted once: the same ending again finds the game moved on and writes nothing.
    assert not await store.end_game(final, game, plus_minus_20(final, seen))
    assert raw_player(db_path, ALICE) == (1520.0, 1, 1, 0, 0, 1, 1, NOW + 9)
    assert raw_player(db_path, BOB) == (1480.0, 1, 0, 1, 0, -1, 0, NOW + 9)
    alice, bob = (
        await StatsQueries(store.db).player(GUILD, ALICE),
        await StatsQueries(store.db).player(GUILD, BOB),
    )
    assert (alice.rating, alice.rated_games, alice.record.wins, alice.rank) == (1520.0, 1, 1, 1)
    assert (bob.rating, bob.rated_games, bob.record.losses, bob.rank) == (1480.0, 1, 1, 2)
    # A second game: settle is handed the rows as stored.
    seen.clear()
    game = await store.insert_game(new_game(x_id=BOB, o_id=ALICE), exclusive=True, **ROOMY)
    final = won(game, X_WINS, Mark.X, at=NOW + 20)
    assert await store.end_game(final, game, plus_minus_20(final, seen))
    assert seen == [
        {
            BOB: PlayerRow(1480.0, 1, Record(0, 1, 0), -1, 0),
            ALICE: PlayerRow(1520.0, 1, Record(1, 0, 0), 1, 1),
        }
    ]
    assert raw_player(db_path, ALICE) == (1500.0, 2, 1, 1, 0, -1, 1, NOW + 20)
    assert raw_player(db_path, BOB) == (1500.0, 2, 1, 1, 0, 1, 1, NOW + 20)


async def test_bot_records_add_up_per_level(store: Store, db_path: Path) -> None:
    """A bot game's settlement: the member's row as given, the record added to the level's."""
    for index, (level, record) in enumerate(
        (("easy", Record(1, 0, 0)), ("easy", Record(0, 1, 0)), ("hard", Record(0, 0, 1)))
    ):
        game = await store.insert_game(
            new_game(o_id=None, bot_level=level), exclusive=False, **ROOMY
        )
        final = dataclasses.replace(
            game, status=GameStatus.FINISHED, result=Result.DRAW, turn_deadline=None
        )
        row = PlayerRow(current_streak=index, best_streak=7)

        def settle(rows: Mapping[int, PlayerRow], row: PlayerRow = row, lv: str = level,
                   rec: Record = record) -> Settlement:  # fmt: skip
            assert list(rows) == [ALICE]
            return Settlement(players=((ALICE, row),), bot_record=(ALICE, lv, rec))

        assert await store.end_game(final, game, settle)
    records = {lr.level: lr.record for lr in await StatsQueries(store.db).bot_records(GUILD, ALICE)}
    assert records == {"easy": Record(1, 1, 0), "hard": Record(0, 0, 1)}
    assert raw_player(db_path, ALICE) == (1500.0, 0, 0, 0, 0, 2, 7, NOW)
    alice = await StatsQueries(store.db).player(GUILD, ALICE)
    assert (alice.rated_games, alice.rank) == (0, None)
    assert await StatsQueries(store.db).leaderboard(GUILD, 10, lambda total: 0) == (0, 0, [])
    with reader(db_path) as conn:
        assert conn.execute("SELECT DISTINCT rated FROM games").fetchall() == [(0,)]


async def test_a_failed_guard_writes_nothing(store: Store, db_path: Path) -> None:
    game = await store.insert_game(new_game(o_id=None, bot_level="easy"), exclusive=True, **ROOMY)
    moved = dataclasses.replace(game, moves=(4,), updated_at=NOW + 1)
    assert await store.save_game(moved, game)
    late = won(game, X_WINS, Mark.X)  # decided on the state before the move

    def settle(rows: Mapping[int, PlayerRow]) -> Settlement:
        return Settlement(
            rated=True,
            players=((ALICE, PlayerRow(1600.0, 1, Record(1, 0, 0), 1, 1)),),
            bot_record=(ALICE, "easy", Record(1, 0, 0)),
        )

    assert not await store.end_game(late, game, settle)
    assert await store.get_game(game.id) == moved
    assert table_rows(db_path, "players") == []
    assert table_rows(db_path, "bot_records") == []


async def test_an_exception_in_settle_rolls_the_game_back(store: Store, db_path: Path) -> None:
    game = await store.insert_game(new_game(), exclusive=True, **ROOMY)

    def settle(rows: Mapping[int, PlayerRow]) -> Settlement:
        raise RuntimeError("a bug in the rules")

    with pytest.raises(RuntimeError, match="a bug in the rules"):
        await store.end_game(won(game, X_WINS, Mark.X), game, settle)
    assert await store.get_game(game.id) == game
    assert table_rows(db_path, "players") == []
    assert (await store.settings())["synchronous"] == "NORMAL"
    # The connection is usable again, and the game can still end.
    assert await store.end_game(won(game, X_WINS, Mark.X), game, nothing)


@pytest.mark.sqlite_only  # traces SQLite's statements
async def test_end_game_commits_with_synchronous_full(store: Store) -> None:
    game = await store.insert_game(new_game(), exclusive=True, **ROOMY)
    final = won(game, X_WINS, Mark.X)
    traced: list[str] = []
    await store.trace(traced.append)
    assert await store.end_game(final, game, plus_minus_20(final))
    assert not await store.end_game(final, game, nothing)
    await store.trace(None)
    kinds = [s.split(" (")[0].split(" SET ")[0].split(" FROM ")[0] for s in traced]
    assert kinds == [
        "PRAGMA synchronous = FULL",
        "BEGIN IMMEDIATE",
        "UPDATE games",  # the guarded write of the game comes first
        "SELECT user_id, rating, rated_games, wins, losses, draws, current_streak, best_streak",
        "UPDATE games",  # its rated flag, decided by settle
        "DELETE",  # the players' seats (the per-member limit) are free again
        "INSERT INTO players",
        "COMMIT",
        "PRAGMA synchronous = NORMAL",
        # The same ending again: the guard matches nothing, and it all rolls back.
        "PRAGMA synchronous = FULL",
        "BEGIN IMMEDIATE",
        "UPDATE games",
        "SELECT user_id, rating, rated_games, wins, losses, draws, current_streak, best_streak",
        "ROLLBACK",
        "PRAGMA synchronous = NORMAL",
    ]
    assert (await store.settings())["synchronous"] == "NORMAL"


async def test_with_synchronous_full_nothing_switches(db_path: Path) -> None:
    store = await Store.open(db_path, synchronous="FULL")
    try:
        game = await store.insert_game(new_game(), exclusive=True, **ROOMY)
        final = won(game, X_WINS, Mark.X)
        traced: list[str] = []
        await store.trace(traced.append)
        assert await store.end_game(final, game, plus_minus_20(final))
        await store.trace(None)
        assert not [s for s in traced if "synchronous" in s]
        assert (traced[0], traced[-1]) == ("BEGIN IMMEDIATE", "COMMIT")
        assert (await store.settings())["synchronous"] == "FULL"
    finally:
        await store.close()


@pytest.mark.sqlite_only  # traces SQLite's statements
async def test_a_move_is_two_statements_in_autocommit(store: Store) -> None:
    """Read the game, write it back guarded: two round trips to the database thread."""
    game = await store.insert_game(new_game(), exclusive=True, **ROOMY)
    traced: list[str] = []
    await store.trace(traced.append)
    stored = await store.get_game(game.id)
    assert stored is not None
    assert await store.save_game(dataclasses.replace(stored, moves=(4,)), stored)
    await store.trace(None)
    assert [s.split(" ")[0] for s in traced] == ["SELECT", "UPDATE"]


async def test_concurrent_moves_from_one_state_exactly_one_wins(
    store: Store, db_path: Path
) -> None:
    game = await store.insert_game(new_game(), exclusive=True, **ROOMY)
    other = await Store.open(db_path)  # a second connection: another process's, say
    try:
        moves = [dataclasses.replace(game, moves=(cell,)) for cell in range(9)]
        results = await asyncio.gather(
            *(s.save_game(m, game) for s, m in zip([store, other] * 5, moves, strict=False))
        )
    finally:
        await other.close()
    assert sorted(results) == [False] * 8 + [True]
    assert await store.get_game(game.id) == moves[results.index(True)]


async def test_a_move_and_an_ending_from_one_state_exactly_one_wins(
    store: Store, db_path: Path
) -> None:
    for round_ in range(10):
        game = await store.insert_game(new_game(channel_id=round_), exclusive=True, **ROOMY)
        move = dataclasses.replace(game, moves=(4,))
        forfeit = dataclasses.replace(
            game, status=GameStatus.FINISHED, result=Result.FORFEIT, winner_id=BOB,
            winner_mark=Mark.O, turn_deadline=None,
        )  # fmt: skip
        calls = [store.save_game(move, game), store.end_game(forfeit, game, plus_minus_20(forfeit))]
        if round_ % 2:
            calls.reverse()
        assert sorted(await asyncio.gather(*calls)) == [False, True]
        stored = await store.get_game(game.id)
        with reader(db_path) as conn:
            counted = conn.execute("SELECT SUM(rated_games) FROM players").fetchone()[0] or 0
        assert stored in (move, forfeit)
        assert counted == 2 * sum(
            [g.status is GameStatus.FINISHED for g in await store.history(GUILD, None, 99)]
        )


# -- cancellation ---------------------------------------------------------------------------


def write_lock_is_free(path: Path) -> bool:
    """Whether another connection could start writing right now (no waiting)."""
    with closing(sqlite3.connect(path, isolation_level=None, timeout=0)) as conn:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return False
        conn.execute("ROLLBACK")
        return True


async def cancelled_at(store: Store, call: Coroutine[Any, Any, T], nth: int) -> T | BaseException:
    """Run ``call`` and cancel it as the database thread runs its ``nth`` statement (at
    once if ``nth`` < 0): the outcome, or the exception it ended with."""
    loop = asyncio.get_running_loop()
    seen = 0
    task: asyncio.Task[T] | None = None

    def traced(statement: str) -> None:
        nonlocal seen
        if seen == nth and task is not None:
            loop.call_soon_threadsafe(task.cancel)
        seen += 1

    await store.trace(traced)
    task = asyncio.create_task(call)
    if nth < 0:
        task.cancel()
    (outcome,) = await asyncio.gather(task, return_exceptions=True)
    await store.trace(None)  # after whatever the cancelled call had begun
    return outcome


async def test_a_cancelled_call_never_leaves_a_transaction_open(
    store: Store, db_path: Path
) -> None:
    """Cancel end_game at each of its statements in turn: each time the game has ended
    completely or not at all, the connection is out of its transaction and back at
    synchronous NORMAL, and the next calls work. Once begun, the transaction runs to its
    end: cancelling only stops the caller waiting for it."""
    outcomes = []
    for nth in range(-1, 8):
        game = await store.insert_game(new_game(channel_id=nth), exclusive=True, **ROOMY)
        final = won(game, X_WINS, Mark.X, at=NOW + nth)
        outcome = await cancelled_at(store, store.end_game(final, game, plus_minus_20(final)), nth)
        assert write_lock_is_free(db_path)
        assert (await store.settings())["synchronous"] == "NORMAL"
        stored = await store.get_game(game.id)
        assert stored in (game, final)
        outcomes.append((type(outcome).__name__, stored == final))
        with reader(db_path) as conn:
            rated = conn.execute("SELECT SUM(rated_games) FROM players").fetchone()[0] or 0
            ended = conn.execute("SELECT COUNT(*) FROM games WHERE rated = 1").fetchone()[0]
        assert rated == 2 * ended  # the players' rows went with the game, or did not
        if stored == game:
            assert await store.end_game(final, game, nothing)
    assert outcomes[0] == ("CancelledError", False)  # cancelled before it began
    assert ("CancelledError", True) in outcomes  # cancelled mid-transaction, which ended
    assert all(ended for kind, ended in outcomes[1:])


@pytest.mark.sqlite_only  # traces SQLite's statements
async def test_a_cancelled_snapshot_read_ends_its_transaction(store: Store) -> None:
    game = await store.insert_game(new_game(), exclusive=True, **ROOMY)
    for nth in range(-1, 5):
        view = await cancelled_at(store, store.channel_view(GUILD, CHANNEL, NOW), nth)
        assert isinstance(view, asyncio.CancelledError) or view.games == (game,)
        board = await cancelled_at(
            store, StatsQueries(store.db).leaderboard(GUILD, 10, lambda total: 0), nth
        )
        assert isinstance(board, asyncio.CancelledError) or board == (0, 0, [])
        # A read transaction left open would make the next BEGIN fail.
        assert (await store.channel_view(GUILD, CHANNEL, NOW)).games == (game,)


async def test_close_waits_for_a_transaction_whose_caller_was_cancelled(db_path: Path) -> None:
    store = await Store.open(db_path)
    game = await store.insert_game(new_game(), exclusive=True, **ROOMY)
    final = won(game, X_WINS, Mark.X)
    call = asyncio.create_task(store.end_game(final, game, plus_minus_20(final)))
    for _ in range(3):  # into the transaction
        await asyncio.sleep(0)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await store.close()
    assert write_lock_is_free(db_path)
    assert raw_player(db_path, ALICE) is not None  # it ran to its end
    with reader(db_path) as conn:
        assert conn.execute("SELECT status FROM games").fetchone() == ("finished",)


# -- challenges -----------------------------------------------------------------------------


def pending_challenge() -> Challenge:
    """Alice's 3x3 challenge to Bob, made at NOW and open for 60 s (id assigned on insert)."""
    return Challenge(
        id=0,
        guild_id=GUILD,
        channel_id=CHANNEL,
        message_id=None,
        challenger_id=ALICE,
        opponent_id=BOB,
        width=3,
        height=3,
        k=3,
        first=First.ME,
        status=ChallengeStatus.PENDING,
        created_at=NOW,
        expires_at=NOW + 60,
    )


async def test_challenges(store: Store) -> None:
    challenge = await ChallengeQueries(store.db).insert_challenge(
        pending_challenge(), **NO_COOLDOWN
    )
    assert await ChallengeQueries(store.db).get_challenge(challenge.id) == challenge
    assert await ChallengeQueries(store.db).get_challenge(challenge.id + 1) is None
    view = await store.channel_view(GUILD, CHANNEL, NOW)
    assert view.challenges == (challenge,) and view.games == ()
    assert (await store.channel_view(GUILD, CHANNEL, NOW + 60)).challenges == ()
    assert await ChallengeQueries(store.db).set_challenge_message(challenge.id, 9, NOW + 61)
    assert not await ChallengeQueries(store.db).set_challenge_message(challenge.id + 1, 9, NOW + 61)
    assert await ChallengeQueries(store.db).expire_challenges(NOW + 60) == []
    expired = await ChallengeQueries(store.db).expire_challenges(NOW + 61)
    assert [c.id for c in expired] == [challenge.id]
    assert expired[0].status is ChallengeStatus.EXPIRED and expired[0].message_id == 9
    assert (
        await ChallengeQueries(store.db).answer_challenge(
            challenge.id, ChallengeStatus.DECLINED, NOW
        )
        is None
    )
    again = await ChallengeQueries(store.db).insert_challenge(pending_challenge(), **NO_COOLDOWN)
    declined = await ChallengeQueries(store.db).answer_challenge(
        again.id, ChallengeStatus.DECLINED, NOW
    )
    assert declined == dataclasses.replace(again, status=ChallengeStatus.DECLINED)
    assert (
        await ChallengeQueries(store.db).answer_challenge(again.id, ChallengeStatus.WITHDRAWN, NOW)
        is None
    )


async def test_accept_challenge(store: Store) -> None:
    challenge = await ChallengeQueries(store.db).insert_challenge(
        pending_challenge(), **NO_COOLDOWN
    )
    accepted = await ChallengeQueries(store.db).accept_challenge(
        challenge.id, new_game(), NOW, exclusive=True, **ROOMY
    )
    assert accepted is not None
    stored_challenge, game = accepted
    assert stored_challenge.status is ChallengeStatus.ACCEPTED
    assert stored_challenge.game_id == game.id
    assert await ChallengeQueries(store.db).get_challenge(challenge.id) == stored_challenge
    assert (await store.channel_view(GUILD, CHANNEL, NOW)).games == (game,)
    # Accepted once: again (or past expiry) there is nothing to accept, and no game.
    assert (
        await ChallengeQueries(store.db).accept_challenge(
            challenge.id, new_game(), NOW, exclusive=False, **ROOMY
        )
        is None
    )
    late = await ChallengeQueries(store.db).insert_challenge(pending_challenge(), **NO_COOLDOWN)
    assert (
        await ChallengeQueries(store.db).accept_challenge(
            late.id, new_game(), NOW + 60, exclusive=False, **ROOMY
        )
        is None
    )
    assert len(await store.live_games(GUILD, CHANNEL)) == 1


async def test_accept_rolls_back_when_the_channel_is_taken(store: Store) -> None:
    challenge = await ChallengeQueries(store.db).insert_challenge(
        pending_challenge(), **NO_COOLDOWN
    )
    await store.insert_game(new_game(x_id=5, o_id=6), exclusive=True, **ROOMY)
    with pytest.raises(ChannelTaken):
        await ChallengeQueries(store.db).accept_challenge(
            challenge.id, new_game(), NOW, exclusive=True, **ROOMY
        )
    again = await ChallengeQueries(store.db).get_challenge(challenge.id)
    assert again is not None and again.status is ChallengeStatus.PENDING
    assert len(await store.live_games(GUILD, CHANNEL)) == 1


async def test_schema_rejects_inconsistent_rows(store: Store) -> None:
    with pytest.raises(INTEGRITY_ERRORS):
        await store.insert_game(new_game(width=6), exclusive=False, **ROOMY)
    with pytest.raises(INTEGRITY_ERRORS):
        await store.insert_game(new_game(k=4), exclusive=False, **ROOMY)  # 4 in a row on 3x3
    with pytest.raises(INTEGRITY_ERRORS):
        await store.insert_game(
            new_game(o_id=None), exclusive=False, **ROOMY
        )  # one human, no level


def test_move_count_must_match_the_moves(tmp_path: Path) -> None:
    async def create() -> None:
        await (await Store.open(path)).close()

    path = tmp_path / "bot.db"
    asyncio.run(create())
    insert = (
        "INSERT INTO games (guild_id, channel_id, x_id, o_id, width, height, k, moves, move_no,"
        " status, created_at, updated_at) VALUES (1, 1, 1, 2, 3, 3, 3, ?, ?, 'active', 0, 0)"
    )
    with reader(path) as conn:
        conn.execute(insert, ("4,0,8", 3))
        conn.execute(insert.replace("(1, 1, 1", "(1, 2, 1"), ("", 0))
        for moves, move_no in (("4,0,8", 2), ("", 1), ("4", 0)):
            with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
                conn.execute(insert.replace("(1, 1, 1", "(1, 3, 1"), (moves, move_no))


# -- players and history --------------------------------------------------------------------


async def test_leaderboard_order_and_pages(store: Store) -> None:
    # Eight members: 1 beats 2, 3 beats 4, ... and 1 also beats 3.
    pairs = [(1, 2), (3, 4), (5, 6), (7, 8), (1, 3)]
    for index, (x, o) in enumerate(pairs):
        game = await store.insert_game(
            new_game(x_id=x, o_id=o, channel_id=index), exclusive=True, **ROOMY
        )
        final = won(game, X_WINS, Mark.X)
        assert await store.end_game(final, game, plus_minus_20(final))
    counted: list[int] = []

    def first_page(total: int) -> int:
        counted.append(total)
        return 0

    total, offset, rows = await StatsQueries(store.db).leaderboard(GUILD, 3, first_page)
    assert (total, offset, counted) == (8, 0, [8])
    assert [user for user, _ in rows] == [1, 5, 7]  # 1 has two wins; 5 and 7 tie on 1520/1
    assert [row.rank for _, row in rows] == [1, 2, 3]
    total, offset, rows = await StatsQueries(store.db).leaderboard(GUILD, 3, lambda total: 6)
    assert offset == 6 and [row.rank for _, row in rows] == [7, 8]
    assert (await StatsQueries(store.db).player(GUILD, 7)).rank == 3
    assert (await StatsQueries(store.db).player(GUILD, 8)).rank == 8
    assert await StatsQueries(store.db).player(GUILD, 99) == PlayerRow()
    assert (await StatsQueries(store.db).leaderboard(GUILD + 1, 3, lambda total: 0))[0] == 0


async def test_history_newest_first_and_per_player(store: Store) -> None:
    ids = []
    for index, (x, o) in enumerate([(ALICE, BOB), (BOB, 5), (ALICE, 5)]):
        game = await store.insert_game(
            new_game(x_id=x, o_id=o, channel_id=index), exclusive=True, **ROOMY
        )
        assert await store.end_game(won(game, X_WINS, Mark.X, NOW + index), game, nothing)
        ids.append(game.id)
    await store.insert_game(new_game(channel_id=99), exclusive=True, **ROOMY)  # live: not history
    assert [g.id for g in await store.history(GUILD, None, 10)] == ids[::-1]
    assert [g.id for g in await store.history(GUILD, ALICE, 10)] == [ids[2], ids[0]]
    assert [g.id for g in await store.history(GUILD, BOB, 1)] == [ids[1]]
    assert await store.history(GUILD + 1, ALICE, 10) == []


async def test_sweeps_and_restarts_find_their_games(store: Store) -> None:
    active = await store.insert_game(new_game(turn_deadline=NOW + 10), exclusive=False, **ROOMY)
    later = await store.insert_game(new_game(turn_deadline=NOW + 5), exclusive=False, **ROOMY)
    owed = await store.insert_game(
        new_game(o_id=None, bot_level="easy", status=GameStatus.BOT_TO_MOVE, moves=(4,)),
        exclusive=False,
        **ROOMY,
    )
    assert await store.overdue_games(NOW + 4) == []
    assert await store.overdue_games(NOW + 10) == [later, active]
    assert await store.games_bot_to_move() == [owed]
    assert await store.live_games(GUILD, CHANNEL) == [owed, later, active]


# -- query plans ----------------------------------------------------------------------------

PARTIAL_INDEXES = (
    "games_live_per_channel",
    "games_live_by_channel",
    "games_by_deadline",
    "games_bot_to_move",
    "games_ended_by_guild",
    "games_ended_by_x",
    "games_ended_by_o",
    "challenges_pending_by_expiry",
    "challenges_pending_by_channel",
)
STATUS_QUERIES: dict[str, tuple[object, ...]] = {
    statements.LIVE_GAMES: (GUILD, CHANNEL),
    statements.PENDING_CHALLENGES: (GUILD, CHANNEL, NOW),
    statements.GAMES_BOT_TO_MOVE: (),
    statements.OVERDUE_GAMES: (NOW,),
    statements.GUILD_HISTORY: (GUILD, 10),
    statements.MEMBER_HISTORY: (GUILD, ALICE, GUILD, ALICE, 10),
    statements.ANY_CHALLENGE_DUE: (NOW,),
    statements.EXPIRE_CHALLENGES: (ChallengeStatus.EXPIRED.value, NOW),
}


def plan(path: Path, sql: str, parameters: tuple[object, ...]) -> list[str]:
    """SQLite's plan for ``sql``, asked on a connection of the test's own."""
    with reader(path) as conn:
        return [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", parameters)]


def expanded(sql: str) -> re.Pattern[str]:
    """``sql`` as the trace callback shows it: each ``?`` filled in with a literal."""
    literal = r"(?:NULL|-?[0-9.]+(?:e[+-]?[0-9]+)?|'(?:[^']|'')*')"
    return re.compile(re.escape(sql).replace(r"\?", literal))


async def test_status_queries_use_their_partial_indexes(store: Store, db_path: Path) -> None:
    """The lookups made on every new game, sweep and restart search an index, never the
    whole table: a server's finished games must not slow its /tictactoe down."""
    for i in range(40):  # enough ended games that a scan would be the worse plan
        game = await store.insert_game(
            new_game(channel_id=CHANNEL + 1 + i), exclusive=True, **ROOMY
        )
        await store.end_game(won(game, X_WINS, Mark.X), game, nothing)
    await ChallengeQueries(store.db).insert_challenge(
        dataclasses.replace(pending_challenge(), expires_at=NOW), **NO_COOLDOWN
    )
    # These statements are the ones the store runs...
    traced: list[str] = []
    await store.trace(traced.append)
    await store.live_games(GUILD, CHANNEL)
    await store.channel_view(GUILD, CHANNEL, NOW)
    await store.games_bot_to_move()
    await store.overdue_games(NOW)
    await store.history(GUILD, None, 10)
    await store.history(GUILD, ALICE, 10)
    assert len(await ChallengeQueries(store.db).expire_challenges(NOW)) == 1
    await store.trace(None)
    for sql in STATUS_QUERIES:
        assert any(expanded(sql).fullmatch(s) for s in traced), sql
    # ... and each one searches a partial index.
    for sql, parameters in STATUS_QUERIES.items():
        details = plan(db_path, sql, parameters)
        # Even "SCAN games USING INDEX <partial>" reads only the index's own rows; an index
        # on the guild alone would read all its games.
        assert not any(d.startswith("SCAN") and "USING" not in d for d in details), (sql, details)
        assert any(name in d for d in details for name in PARTIAL_INDEXES), (sql, details)


OWNED = Shards(4, (1, 3))
WAITING_VALUES = {"now": NOW, "started": NOW - 1.0, "remind_by": NOW + 65.0, "limit": 100}


def sweep_queries(shards: Shards | None) -> dict[str, tuple[object, ...] | dict[str, object]]:
    """The sweep's and start-up's statements for ``shards``, with their parameters."""
    owned = owned_values(shards)
    return {
        statements.games_bot_to_move(shards): owned,
        statements.overdue_games(shards): (NOW, *owned),
        statements.any_challenge_due(shards): (NOW, *owned),
        statements.expire_challenges(shards): (ChallengeStatus.EXPIRED.value, NOW, *owned),
        ping_statements.waiting(shards): WAITING_VALUES | owned_names(shards),
        ping_statements.stale(shards): (*owned, 100),
    }


async def test_a_sweep_of_some_shards_searches_the_same_indexes(
    store: Store, db_path: Path
) -> None:
    """The ownership condition (bot/db/shards.py) only drops rows the index already
    found: the plans are those of a sweep of every server."""
    for i in range(40):
        game = await store.insert_game(
            new_game(channel_id=CHANNEL + 1 + i), exclusive=True, **ROOMY
        )
        await store.end_game(won(game, X_WINS, Mark.X), game, nothing)
    whole = sweep_queries(None)
    some = sweep_queries(OWNED)
    for (full, full_values), (part, part_values) in zip(whole.items(), some.items(), strict=True):
        assert "% ?) IN (?, ?)" in part or "% :shard_count) IN (:shard_a, :shard_b)" in part
        with reader(db_path) as conn:
            plans = [
                [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", values)]
                for sql, values in ((full, full_values), (part, part_values))
            ]
        assert plans[0] == plans[1], (part, plans)


async def test_a_members_history_merges_two_lookups_in_their_indexes(
    store: Store, db_path: Path
) -> None:
    """No statistics (ANALYZE) needed: each mark's lookup reads only that member's ended
    games, already in the history's order."""
    details = plan(db_path, statements.MEMBER_HISTORY, STATUS_QUERIES[statements.MEMBER_HISTORY])
    assert any("games_ended_by_x (guild_id=? AND x_id=?)" in d for d in details), details
    assert any("games_ended_by_o (guild_id=? AND o_id=?)" in d for d in details), details
    assert not any("TEMP B-TREE" in d for d in details), details


async def test_live_moves_leave_the_history_indexes_alone(store: Store, db_path: Path) -> None:
    game = await store.insert_game(new_game(), exclusive=True, **ROOMY)
    for moves in ((4,), (4, 0), (4, 0, 3)):
        moved = dataclasses.replace(game, moves=moves, updated_at=NOW + len(moves))
        assert await store.save_game(moved, game)
        game = moved

    def in_index() -> int:
        """Rows of games_ended_by_x for Alice: the index holds ended games only."""
        with reader(db_path) as conn:
            return conn.execute(
                "SELECT count(*) FROM games INDEXED BY games_ended_by_x"
                " WHERE guild_id = ? AND x_id = ? AND status IN ('finished', 'abandoned')",
                (GUILD, ALICE),
            ).fetchone()[0]

    assert in_index() == 0
    assert await store.end_game(won(game, (4, 0, 3, 1, 5), Mark.X), game, nothing)
    assert in_index() == 1
    assert [g.id for g in await store.history(GUILD, BOB, 10)] == [game.id]


# -- other writers, the WAL -----------------------------------------------------------------


async def test_a_move_that_finds_the_write_lock_taken_waits_off_the_event_loop(
    store: Store, db_path: Path
) -> None:
    """Another writer (here another process's connection) holds the lock: the move waits
    for it on the database thread while the event loop runs on."""
    game = await store.insert_game(new_game(), exclusive=True, **ROOMY)
    moved = dataclasses.replace(game, moves=(4,))
    with reader(db_path) as blocker:
        blocker.execute("BEGIN IMMEDIATE")
        move = asyncio.create_task(store.save_game(moved, game))
        ticks = 0
        for _ in range(20):
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks == 20 and not move.done()
        blocker.execute("COMMIT")
    assert await move
    assert await store.get_game(game.id) == moved


async def test_a_channels_lookups_do_not_wait_for_a_writer(store: Store, db_path: Path) -> None:
    """While another connection holds the write lock (with a change not yet committed),
    the channel's lookups answer at once with the committed state; a new game's insert
    waits for the lock and lands when it is free."""
    game = await store.insert_game(new_game(), exclusive=True, **ROOMY)
    with reader(db_path) as blocker:
        blocker.execute("BEGIN IMMEDIATE")
        blocker.execute("UPDATE games SET moves = '4', move_no = 1 WHERE id = ?", (game.id,))
        assert await asyncio.wait_for(store.live_games(GUILD, CHANNEL), 1.0) == [game]
        view = await asyncio.wait_for(store.channel_view(GUILD, CHANNEL, NOW), 1.0)
        assert view.games == (game,)  # not the move
        insert = asyncio.create_task(
            store.insert_game(new_game(channel_id=CHANNEL + 1), exclusive=True, **ROOMY)
        )
        await asyncio.sleep(0.05)
        assert not insert.done()
        blocker.execute("COMMIT")
    inserted = await insert
    assert inserted.channel_id == CHANNEL + 1
    assert [g.moves for g in await store.live_games(GUILD, CHANNEL)] == [(4,)]


async def test_a_sweep_with_no_challenge_due_takes_no_write_lock(
    store: Store, db_path: Path
) -> None:
    """Every sweep expires challenges; when none is due it must not take the write lock
    (other processes' writers would wait for it). Here another connection holds the
    lock: the sweep answers at once instead of waiting for it."""
    with reader(db_path) as blocker:
        blocker.execute("BEGIN IMMEDIATE")
        assert (
            await asyncio.wait_for(ChallengeQueries(store.db).expire_challenges(NOW), timeout=1.0)
            == []
        )
        blocker.execute("COMMIT")


async def test_a_steady_stream_of_writes_keeps_the_wal_short(store: Store, db_path: Path) -> None:
    """SQLite's own checkpoint, inside the commit that takes the WAL past 1,000 pages,
    copies it into the database file and the WAL starts over: with no other connection
    holding a snapshot, the WAL never grows past about that."""
    game = await store.insert_game(new_game(), exclusive=True, **ROOMY)
    for i in range(3_000):  # each commit appends at least one page to the WAL
        moved = dataclasses.replace(game, moves=(4,) if i % 2 == 0 else (), updated_at=NOW + i)
        assert await store.save_game(moved, game)
        game = moved
    wal = db_path.with_name(db_path.name + "-wal")
    frames = wal.stat().st_size // (4_096 + 24)
    assert frames < 1_100, frames
