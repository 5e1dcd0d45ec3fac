"""The store on its own: conditional writes, the channel index, results counted once."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import bot.storage
from bot.models import Challenge, ChallengeStatus, First, Game, GameStatus, Result
from bot.storage import ChannelTaken, Store
from engine import Mark

from .conftest import ALICE, BOB, CHANNEL, GUILD

NOW = 1_700_000_000.0


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


async def test_pragmas(store: Store, db_path: Path) -> None:
    assert await store.integrity_check() == "ok"
    assert store.schema_version >= 1


async def test_insert_and_read_back(store: Store) -> None:
    game = await store.insert_game(new_game(message_id=5, rematch_of=None), exclusive=True)
    assert game.id > 0
    assert await store.get_game(game.id) == game
    assert await store.get_game(game.id + 1) is None
    assert await store.set_game_message(game.id, 77)
    assert not await store.set_game_message(game.id + 1, 77)
    stored = await store.get_game(game.id)
    assert stored is not None and stored.message_id == 77


async def test_one_live_game_per_channel_is_enforced_by_the_database(store: Store) -> None:
    first = await store.insert_game(new_game(), exclusive=True)
    with pytest.raises(ChannelTaken):
        await store.insert_game(new_game(x_id=5, o_id=6), exclusive=True)
    # Other channels and guilds are free; non-exclusive games do not claim the channel.
    await store.insert_game(new_game(channel_id=CHANNEL + 1), exclusive=True)
    await store.insert_game(new_game(guild_id=GUILD + 1), exclusive=True)
    await store.insert_game(new_game(x_id=5, o_id=6), exclusive=False)
    # Once the first game ends the channel can be claimed again.
    assert await store.save_game(won(first, (0, 3, 1, 4, 2), Mark.X), first)
    await store.insert_game(new_game(x_id=7, o_id=8), exclusive=True)


async def test_save_game_is_conditional_on_move_number_and_status(store: Store) -> None:
    game = await store.insert_game(new_game(), exclusive=True)
    moved = dataclasses.replace(game, moves=(4,), updated_at=NOW + 1)
    other = dataclasses.replace(game, moves=(0,), updated_at=NOW + 1)
    assert await store.save_game(moved, game)
    assert not await store.save_game(other, game)  # move 0 is gone
    assert await store.get_game(game.id) == moved
    # The status is part of the guard too.
    assert not await store.save_game(
        dataclasses.replace(moved, moves=(4, 0)),
        dataclasses.replace(moved, status=GameStatus.BOT_TO_MOVE),
    )


async def test_result_is_counted_once(store: Store) -> None:
    game = await store.insert_game(new_game(), exclusive=True)
    final = won(game, (0, 3, 1, 4, 2), Mark.X)
    assert await store.save_game(final, game)
    assert not await store.save_game(final, game)
    alice = await store.player(GUILD, ALICE)
    bob = await store.player(GUILD, BOB)
    assert (alice.rating, alice.rated_games, alice.record.wins) == (1520.0, 1, 1)
    assert (bob.rating, bob.rated_games, bob.record.losses) == (1480.0, 1, 1)
    assert (alice.current_streak, bob.current_streak) == (1, -1)
    assert (alice.rank, bob.rank) == (1, 2)


async def test_bot_results_are_per_level_and_unrated(store: Store) -> None:
    for level, winner in (("easy", Mark.X), ("easy", Mark.O), ("hard", None)):
        game = await store.insert_game(new_game(o_id=None, bot_level=level), exclusive=False)
        if winner is None:
            final = dataclasses.replace(
                game,
                moves=(0, 4, 8, 1, 7, 6, 2, 5, 3),
                status=GameStatus.FINISHED,
                result=Result.DRAW,
                turn_deadline=None,
            )
        else:
            final = won(game, (0, 3, 1, 4, 2), winner)
        assert await store.save_game(final, game)
    records = {lr.level: lr.record for lr in await store.bot_records(GUILD, ALICE)}
    assert (records["easy"].wins, records["easy"].losses, records["easy"].draws) == (1, 1, 0)
    assert records["hard"].draws == 1
    alice = await store.player(GUILD, ALICE)
    assert (alice.rating, alice.rated_games, alice.rank) == (1500.0, 0, None)
    assert alice.best_streak == 1 and alice.current_streak == 0
    total, page, rows = await store.leaderboard(GUILD, 1, 10)
    assert (total, page, rows) == (0, 1, [])


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
    challenge = await store.insert_challenge(pending_challenge())
    assert await store.get_challenge(challenge.id) == challenge
    view = await store.channel_view(GUILD, CHANNEL, NOW)
    assert view.challenges == (challenge,) and view.games == ()
    assert (await store.channel_view(GUILD, CHANNEL, NOW + 60)).challenges == ()
    assert await store.set_challenge_message(challenge.id, 9)
    assert await store.expire_challenges(NOW + 59) == []
    expired = await store.expire_challenges(NOW + 60)
    assert [c.id for c in expired] == [challenge.id]
    assert expired[0].status is ChallengeStatus.EXPIRED and expired[0].message_id == 9
    assert await store.answer_challenge(challenge.id, ChallengeStatus.DECLINED, NOW) is None


async def test_accept_rolls_back_when_the_channel_is_taken(store: Store) -> None:
    challenge = await store.insert_challenge(pending_challenge())
    await store.insert_game(new_game(x_id=5, o_id=6), exclusive=True)
    with pytest.raises(ChannelTaken):
        await store.accept_challenge(challenge.id, new_game(), NOW, exclusive=True)
    again = await store.get_challenge(challenge.id)
    assert again is not None and again.status is ChallengeStatus.PENDING


async def test_schema_rejects_inconsistent_rows(store: Store) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        await store.insert_game(new_game(width=6), exclusive=False)
    with pytest.raises(sqlite3.IntegrityError):
        await store.insert_game(new_game(k=4), exclusive=False)  # 4 in a row on 3x3
    with pytest.raises(sqlite3.IntegrityError):
        await store.insert_game(new_game(o_id=None), exclusive=False)  # one human, no level


async def test_leaderboard_order_and_pages(store: Store) -> None:
    # Eight members: 1 beats 2, 3 beats 4, ... and 1 also beats 3.
    pairs = [(1, 2), (3, 4), (5, 6), (7, 8), (1, 3)]
    for index, (x, o) in enumerate(pairs):
        game = await store.insert_game(new_game(x_id=x, o_id=o, channel_id=index), exclusive=True)
        assert await store.save_game(won(game, (0, 3, 1, 4, 2), Mark.X), game)
    total, page, rows = await store.leaderboard(GUILD, 1, 3)
    assert (total, page) == (8, 1)
    assert [user for user, _ in rows] == [1, 5, 7]  # 1 has two wins; 5 and 7 tie on 1520/1
    total, page, rows = await store.leaderboard(GUILD, 99, 3)
    assert page == 3 and [row.rank for _, row in rows] == [7, 8]
    total, page, rows = await store.leaderboard(GUILD, -5, 3)
    assert page == 1
    assert (await store.player(GUILD, 7)).rank == 3
    assert (await store.leaderboard(GUILD + 1, 1, 3))[0] == 0


async def test_history_newest_first_and_per_player(store: Store) -> None:
    ids = []
    for index, (x, o) in enumerate([(ALICE, BOB), (BOB, 5), (ALICE, 5)]):
        game = await store.insert_game(new_game(x_id=x, o_id=o, channel_id=index), exclusive=True)
        assert await store.save_game(won(game, (0, 3, 1, 4, 2), Mark.X, NOW + index), game)
        ids.append(game.id)
    await store.insert_game(new_game(channel_id=99), exclusive=True)  # live: not history
    assert [g.id for g in await store.history(GUILD, None, 10)] == ids[::-1]
    assert [g.id for g in await store.history(GUILD, ALICE, 10)] == [ids[2], ids[0]]
    assert [g.id for g in await store.history(GUILD, BOB, 1)] == [ids[1]]
    assert await store.history(GUILD + 1, ALICE, 10) == []


def test_move_count_must_match_the_moves(tmp_path: Path) -> None:
    async def create() -> None:
        await (await Store.open(path)).close()

    path = tmp_path / "bot.db"
    asyncio.run(create())
    insert = (
        "INSERT INTO games (guild_id, channel_id, x_id, o_id, width, height, k, moves, move_no,"
        " status, created_at, updated_at) VALUES (1, 1, 1, 2, 3, 3, 3, ?, ?, 'active', 0, 0)"
    )
    with sqlite3.connect(path) as conn:
        conn.execute(insert, ("4,0,8", 3))
        conn.execute(insert.replace("(1, 1, 1", "(1, 2, 1"), ("", 0))
        for moves, move_no in (("4,0,8", 2), ("", 1), ("4", 0)):
            with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
                conn.execute(insert.replace("(1, 1, 1", "(1, 3, 1"), (moves, move_no))
    conn.close()


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


class RecordingConnection:
    """Delegates to the store's sqlite3 connection and keeps every (sql, parameters)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.statements: list[tuple[str, tuple[object, ...]]] = []

    def execute(self, sql: str, parameters: tuple[object, ...] = ()) -> sqlite3.Cursor:
        self.statements.append((sql, tuple(parameters)))
        return self.conn.execute(sql, parameters)

    def __getattr__(self, name: str) -> object:
        return getattr(self.conn, name)


async def test_status_queries_use_their_partial_indexes(store: Store) -> None:
    """The lookups made on every new game, sweep and restart search an index, never the
    whole table: a server's finished games must not slow its /tictactoe down."""
    for i in range(40):  # enough ended games that a scan would be the worse plan
        game = await store.insert_game(new_game(channel_id=CHANNEL + 1 + i), exclusive=True)
        await store.save_game(won(game, (0, 3, 1, 4, 2), Mark.X), game)
    real, real_loop = store._conn, store._loop_conn
    recorder = RecordingConnection(real)
    store._conn = recorder  # type: ignore[assignment]
    loop_recorder = RecordingConnection(real_loop) if real_loop is not None else None
    store._loop_conn = loop_recorder  # type: ignore[assignment]
    try:
        await store.live_games(GUILD, CHANNEL)
        await store.channel_view(GUILD, CHANNEL, NOW)
        await store.games_bot_to_move()
        await store.overdue_games(NOW)
        await store.history(GUILD, None, 10)
        await store.history(GUILD, ALICE, 10)
        await store.expire_challenges(NOW)
    finally:
        store._conn, store._loop_conn = real, real_loop
    statements = recorder.statements + (loop_recorder.statements if loop_recorder else [])
    assert loop_recorder is not None and loop_recorder.statements  # the channel's lookups
    checked = 0
    for sql, parameters in statements:
        if "status" not in sql or sql.startswith(("BEGIN", "COMMIT")):
            continue

        def plan(sql: str = sql, parameters: tuple[object, ...] = parameters) -> list[str]:
            rows = real.execute(f"EXPLAIN QUERY PLAN {sql}", parameters).fetchall()
            return [row[3] for row in rows]

        details = await store._read(plan)
        # Even "SCAN games USING INDEX <partial>" reads only the index's own rows; an index
        # on the guild alone would read all its games.
        assert not any(d.startswith("SCAN") and "USING" not in d for d in details), (sql, details)
        assert any(name in d for d in details for name in PARTIAL_INDEXES), (sql, details)
        checked += 1
    assert checked == 8


async def test_a_members_history_merges_two_lookups_in_their_indexes(store: Store) -> None:
    """No statistics (ANALYZE) needed: each mark's lookup reads only that member's ended
    games, already in the history's order."""
    recorder = RecordingConnection(store._conn)
    real, store._conn = store._conn, recorder  # type: ignore[assignment]
    try:
        await store.history(GUILD, ALICE, 10)
    finally:
        store._conn = real
    ((sql, parameters),) = recorder.statements

    def plan() -> list[str]:
        return [row[3] for row in real.execute(f"EXPLAIN QUERY PLAN {sql}", parameters)]

    details = await store._read(plan)
    assert any("games_ended_by_x (guild_id=? AND x_id=?)" in d for d in details), details
    assert any("games_ended_by_o (guild_id=? AND o_id=?)" in d for d in details), details
    assert not any("TEMP B-TREE" in d for d in details), details


async def test_live_moves_leave_the_history_indexes_alone(store: Store) -> None:
    game = await store.insert_game(new_game(), exclusive=True)
    for moves in ((4,), (4, 0), (4, 0, 3)):
        _, game = await store.update_game(
            game.id, lambda g, m=moves: dataclasses.replace(g, moves=m, updated_at=NOW + len(m))
        )

    real = store._conn

    def in_index() -> int:
        """Rows of games_ended_by_x for Alice: the index holds ended games only."""
        return real.execute(
            "SELECT count(*) FROM games INDEXED BY games_ended_by_x"
            " WHERE guild_id = ? AND x_id = ? AND status IN ('finished', 'abandoned')",
            (GUILD, ALICE),
        ).fetchone()[0]

    assert await store._read(in_index) == 0
    await store.save_game(won(game, (4, 0, 3, 1, 5), Mark.X), game)
    assert await store._read(in_index) == 1
    assert [g.id for g in await store.history(GUILD, BOB, 10)] == [game.id]


def file_size(path: Path) -> int:
    return path.stat().st_size


async def database_file_growth(path: Path, checkpoint_seconds: float, wait: float) -> int:
    """How much the database file itself (not its WAL) grew, within ``wait`` seconds,
    from 500 writes: only checkpoints copy pages into it."""
    import bot.storage

    saved = bot.storage.CHECKPOINT_SECONDS
    bot.storage.CHECKPOINT_SECONDS = checkpoint_seconds
    store = await Store.open(path)
    try:
        initial = file_size(path)
        for i in range(100):  # all written on the loop's connection
            game = await store.insert_game(new_game(channel_id=CHANNEL + i), exclusive=True)
            for move in range(1, 5):
                _, after = await store.update_game(
                    game.id, lambda g, n=move: dataclasses.replace(g, moves=(4, 0, 3, 1)[:n])
                )
            await store.save_game(won(after, (4, 0, 3, 1, 5), Mark.X), after)
        deadline = time.monotonic() + wait
        for _ in range(100_000):  # until the file grows, at most ``wait`` seconds
            if file_size(path) != initial or time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.02)
        return file_size(path) - initial
    finally:
        await store.close()
        bot.storage.CHECKPOINT_SECONDS = saved


async def test_the_wal_is_checkpointed_in_the_background(tmp_path: Path) -> None:
    """Commits never pay for checkpoints (below SQLite's fallback size of 8,000 pages the
    writer leaves the WAL alone), yet the moves reach the database file: a second
    connection copies them there in the background."""
    assert await database_file_growth(tmp_path / "a.db", 0.02, wait=10.0) > 0
    assert await database_file_growth(tmp_path / "b.db", 3600.0, wait=0.5) == 0


def first_move(game: Game, threads: list[int]) -> Callable[[Game | None], Game]:
    """An ``update_game`` change playing the centre, noting the thread it ran on."""

    def change(stored: Game | None) -> Game:
        assert stored is not None
        threads.append(threading.get_ident())
        return dataclasses.replace(stored, moves=(4,), updated_at=NOW + 1)

    return change


async def test_moves_are_written_on_the_event_loop(store: Store) -> None:
    game = await store.insert_game(new_game(), exclusive=True)
    threads: list[int] = []
    before, after = await store.update_game(game.id, first_move(game, threads))
    assert threads == [threading.get_ident()]
    assert (before.moves, after.moves) == ((), (4,))
    assert (await store.get_game(game.id)) == after
    assert store.loop_fallbacks == 0


async def test_with_synchronous_full_moves_are_written_on_the_database_thread(
    db_path: Path,
) -> None:
    """An fsync per commit must not block the event loop."""
    store = await Store.open(db_path, synchronous="FULL")
    try:
        game = await store.insert_game(new_game(), exclusive=True)
        threads: list[int] = []
        await store.update_game(game.id, first_move(game, threads))
        assert len(threads) == 1 and threads[0] != threading.get_ident()
        assert (await store.get_game(game.id)).moves == (4,)  # type: ignore[union-attr]
    finally:
        await store.close()


async def test_a_move_that_finds_the_write_lock_taken_waits_off_the_event_loop(
    store: Store, db_path: Path
) -> None:
    """Another writer (here another process's connection) holds the lock: the move
    goes through the database thread, which waits for it, while the loop runs on."""
    game = await store.insert_game(new_game(), exclusive=True)
    blocker = sqlite3.connect(db_path, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        threads: list[int] = []
        move = asyncio.create_task(store.update_game(game.id, first_move(game, threads)))
        ticks = 0
        for _ in range(20):
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks == 20 and not move.done()
        assert store.loop_fallbacks == 1 and threads == []
        blocker.execute("COMMIT")
    finally:
        blocker.close()
    _, after = await move
    assert after.moves == (4,)
    assert len(threads) == 1 and threads[0] != threading.get_ident()
    assert (await store.get_game(game.id)) == after


async def test_a_new_games_lookups_do_not_wait_for_a_writer(store: Store, db_path: Path) -> None:
    """While another connection holds the write lock (with a change not yet committed),
    the channel's lookups answer at once from the loop, with the committed state; the
    new game's insert goes through the thread and lands when the lock is free."""
    game = await store.insert_game(new_game(), exclusive=True)
    blocker = sqlite3.connect(db_path, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        blocker.execute("UPDATE games SET moves = '4', move_no = 1 WHERE id = ?", (game.id,))
        assert await store.live_games(GUILD, CHANNEL) == [game]  # not the move
        assert (await store.channel_view(GUILD, CHANNEL, NOW)).games == (game,)
        assert store.loop_fallbacks == 0
        insert = asyncio.create_task(
            store.insert_game(new_game(channel_id=CHANNEL + 1), exclusive=True)
        )
        await asyncio.sleep(0.05)
        assert not insert.done() and store.loop_fallbacks == 1
        blocker.execute("COMMIT")
    finally:
        blocker.close()
    inserted = await insert
    assert inserted.channel_id == CHANNEL + 1
    assert [g.moves for g in await store.live_games(GUILD, CHANNEL)] == [(4,)]


async def wal_frames_after_steady_writes(path: Path, restart_frames: int) -> tuple[int, int, int]:
    """The WAL's length (frames) after 1,500 moves written back to back on the loop
    while the checkpointer runs every 10 ms; how many RESTART checkpoints it ran; how
    many moves went through the database thread."""
    saved = bot.storage.CHECKPOINT_SECONDS, bot.storage.WAL_RESTART_FRAMES
    bot.storage.CHECKPOINT_SECONDS, bot.storage.WAL_RESTART_FRAMES = 0.01, restart_frames
    store = await Store.open(path)
    try:
        game = await store.insert_game(new_game(), exclusive=True)
        for i in range(1_500):
            moves = (4,) if i % 2 == 0 else ()
            await store.update_game(
                game.id,
                lambda g, m=moves, t=float(i): dataclasses.replace(g, moves=m, updated_at=t),
            )
            if i % 10 == 0:
                await asyncio.sleep(0.001)  # the checkpointer's turn, the writes barely pause
        frames = path.with_name(path.name + "-wal").stat().st_size // 4_096
        return frames, store.wal_restarts, store.loop_fallbacks
    finally:
        await store.close()
        bot.storage.CHECKPOINT_SECONDS, bot.storage.WAL_RESTART_FRAMES = saved


async def test_a_steady_stream_of_writes_does_not_grow_the_wal_without_end(
    tmp_path: Path,
) -> None:
    """A PASSIVE checkpoint never copies the frames written while it runs, and SQLite
    starts the WAL over only once every frame is copied: under writes that never pause
    the WAL grew for as long as they lasted. Past WAL_RESTART_FRAMES the checkpointer
    restarts it (without, this WAL reached 9,076 frames), and the moves made meanwhile
    wait for it on the loop rather than go through the thread."""
    frames, restarts, through_the_thread = await wal_frames_after_steady_writes(
        tmp_path / "a.db", 100
    )
    assert restarts > 0
    assert frames < 1_000, frames
    assert through_the_thread == 0


async def test_a_sweep_with_no_challenge_due_takes_no_write_lock(
    store: Store, db_path: Path
) -> None:
    """Every sweep expires challenges; when none is due it must not take the write lock
    (the moves meanwhile would find it taken). Here another connection holds the lock:
    the sweep answers at once instead of waiting for it."""
    blocker = sqlite3.connect(db_path, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        assert await asyncio.wait_for(store.expire_challenges(NOW), timeout=1.0) == []
        blocker.execute("COMMIT")
    finally:
        blocker.close()


async def test_a_reader_that_holds_on_cannot_hold_the_moves_up(db_path: Path) -> None:
    """A RESTART checkpoint holds writers off until every reader has left the WAL, and
    the loop's moves wait for it: a reader that keeps a snapshot open (another process,
    a slow report) must make it give up soon, not after SQLite's default 5 s, which
    would be past Discord's 3 s for every click meanwhile."""
    saved = bot.storage.CHECKPOINT_SECONDS, bot.storage.WAL_RESTART_FRAMES
    bot.storage.CHECKPOINT_SECONDS, bot.storage.WAL_RESTART_FRAMES = 0.01, 1
    store = await Store.open(db_path)
    reader = sqlite3.connect(db_path, isolation_level=None)
    try:
        game = await store.insert_game(new_game(), exclusive=True)
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM games").fetchone()  # a snapshot, kept
        await store.update_game(game.id, lambda g: dataclasses.replace(g, moves=(4,)))
        for _ in range(500):  # until a RESTART has started and is waiting for the reader
            if not store._writes_open.is_set():
                break
            await asyncio.sleep(0.005)
        assert not store._writes_open.is_set()
        started = time.monotonic()
        await store.update_game(game.id, lambda g: dataclasses.replace(g, moves=(4, 0)))
        assert time.monotonic() - started < 1.0
    finally:
        reader.close()
        await store.close()
        bot.storage.CHECKPOINT_SECONDS, bot.storage.WAL_RESTART_FRAMES = saved
