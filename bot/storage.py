"""The SQLite store: every SQL statement of the project lives in this module.

One aiosqlite connection per ``Store``. aiosqlite runs the connection on its own thread
and executes one job at a time there; each public method here is exactly one such job
(a plain function over the ``sqlite3`` connection), so a transaction is never split
across ``await`` points and cannot interleave with another coroutine's statements. Writes
are ``BEGIN IMMEDIATE ... COMMIT`` jobs.
Running a whole transaction in one job relies on aiosqlite's ``_execute`` (the method
all its public calls go through): it costs one thread round trip per transaction
instead of one per statement, which is what makes 1,000+ moves a second possible.
Moves (``update_game``) and the other small statements on one game or challenge are the
exception: they run on the event loop itself, on a second connection that never waits
for a lock, and fall back to the thread when the lock is taken (see ``_quick``). A
third connection checkpoints the WAL.

Durability: WAL with ``synchronous=NORMAL`` by default. A commit is in the WAL file (in
the OS page cache) before ``COMMIT`` returns, so killing the process, even with SIGKILL,
never loses a committed move; only a power cut or OS crash can lose the last commits
(the WAL is fsynced at checkpoints, not at every commit). ``synchronous="FULL"`` makes
every commit survive power loss too, at the price of an fsync per move.

Guards against lost updates live in the SQL itself (``UPDATE ... WHERE id = ? AND
move_no = ? AND status = ?``) and in a partial unique index (one live game per channel),
so they hold across several processes sharing the file, not just within one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import aiosqlite

from bot import ratings
from bot.errors import StorageError
from bot.models import (
    Challenge,
    ChallengeStatus,
    First,
    Game,
    GameStatus,
    LevelRecord,
    Record,
    Result,
)
from engine import Mark

__all__ = [
    "DEFAULT_MIGRATIONS_DIR",
    "ChannelTaken",
    "ChannelView",
    "PlayerRow",
    "Store",
    "split_statements",
]


def _default_migrations_dir() -> Path:
    """The copy an installed package carries (bot/migrations), else the checkout's."""
    here = Path(__file__).resolve().parent
    installed = here / "migrations"
    return installed if installed.is_dir() else here.parent / "migrations"


DEFAULT_MIGRATIONS_DIR = _default_migrations_dir()
_MIGRATION_NAME = re.compile(r"^(\d{4})_[\w\-]+\.sql$")
_LIVE = (GameStatus.ACTIVE.value, GameStatus.BOT_TO_MOVE.value)
_ENDED = (GameStatus.FINISHED.value, GameStatus.ABANDONED.value)


def _status_is(*values: str) -> str:
    """A condition on ``status`` with our own constants written out, as the partial
    indexes in migrations/ spell theirs: ``status = 'active'``, ``status IN ('a', 'b')``.

    SQLite uses a partial index only when it can see from the query text that the rows
    qualify; with the statuses bound as parameters it scanned every game of the guild,
    on every /tictactoe. tests/bot/test_storage.py checks the query plans.
    """
    assert all(v.replace("_", "").isalpha() for v in values)  # constants, never user input
    if len(values) == 1:
        return f"status = '{values[0]}'"
    return "status IN (" + ", ".join(f"'{v}'" for v in values) + ")"


_IS_LIVE = _status_is(*_LIVE)
_IS_ENDED = _status_is(*_ENDED)
_IS_ACTIVE = _status_is(GameStatus.ACTIVE.value)
_IS_BOT_TO_MOVE = _status_is(GameStatus.BOT_TO_MOVE.value)
_IS_PENDING = _status_is(ChallengeStatus.PENDING.value)


T = TypeVar("T")
log = logging.getLogger(__name__)

CHECKPOINT_SECONDS = 1.0
"""How often the store's background connection checkpoints the WAL (see _checkpoint_forever)."""
WAL_AUTOCHECKPOINT_PAGES = 8_000
"""WAL size (pages of 4 KiB) at which a commit checkpoints by itself: the fallback only."""
WAL_RESTART_FRAMES = 8_192
"""WAL length (frames of a 4 KiB page: 32 MiB) past which the background checkpoint also
starts the WAL over (see _checkpoint_forever)."""
RESTART_WAIT_SECONDS = 0.1
"""How long that RESTART waits for a writer to finish or a reader to leave the WAL before
it gives up until the next checkpoint. Moves wait for it meanwhile; SQLite's default of
5 s would outlast Discord's 3 s for every click in the meantime."""


_Kind = Literal["read", "snapshot", "write"]


class _Busy(Exception):
    """Another connection holds a lock the loop's connection would have to wait for."""


def _is_busy(error: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED, extended codes (BUSY_RECOVERY, BUSY_SNAPSHOT…) too."""
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class ChannelTaken(Exception):
    """Inserting a game hit the one-live-game-per-channel index."""


@dataclass(frozen=True, slots=True)
class ChannelView:
    """What is going on in one channel: its live games and its unexpired pending challenges."""

    games: tuple[Game, ...]
    challenges: tuple[Challenge, ...]


@dataclass(frozen=True, slots=True)
class PlayerRow:
    """A member's row in one guild (defaults when they have none yet)."""

    rating: float = ratings.START_RATING
    rated_games: int = 0
    record: Record = field(default_factory=Record)
    current_streak: int = 0
    best_streak: int = 0
    rank: int | None = None


# -- row mapping ---------------------------------------------------------------------------

_GAME_COLUMNS = (
    "id, guild_id, channel_id, message_id, x_id, o_id, bot_level, width, height, k, moves,"
    " status, result, winner_id, winner_mark, created_at, updated_at, turn_deadline, rematch_of"
)
_CHALLENGE_COLUMNS = (
    "id, guild_id, channel_id, message_id, challenger_id, opponent_id, width, height, k,"
    " first, status, created_at, expires_at, game_id, rematch_of"
)


def _encode_moves(moves: Iterable[int]) -> str:
    return ",".join(map(str, moves))


def _decode_moves(text: str) -> tuple[int, ...]:
    return tuple(int(cell) for cell in text.split(",")) if text else ()


def _game(row: Sequence[Any]) -> Game:
    return Game(
        id=row[0],
        guild_id=row[1],
        channel_id=row[2],
        message_id=row[3],
        x_id=row[4],
        o_id=row[5],
        bot_level=row[6],
        width=row[7],
        height=row[8],
        k=row[9],
        moves=_decode_moves(row[10]),
        status=GameStatus(row[11]),
        result=None if row[12] is None else Result(row[12]),
        winner_id=row[13],
        winner_mark=None if row[14] is None else Mark(row[14]),
        created_at=row[15],
        updated_at=row[16],
        turn_deadline=row[17],
        rematch_of=row[18],
    )


def _challenge(row: Sequence[Any]) -> Challenge:
    return Challenge(
        id=row[0],
        guild_id=row[1],
        channel_id=row[2],
        message_id=row[3],
        challenger_id=row[4],
        opponent_id=row[5],
        width=row[6],
        height=row[7],
        k=row[8],
        first=First(row[9]),
        status=ChallengeStatus(row[10]),
        created_at=row[11],
        expires_at=row[12],
        game_id=row[13],
        rematch_of=row[14],
    )


# -- migrations ----------------------------------------------------------------------------


def split_statements(script: str) -> list[str]:
    """Split an SQL script into single statements (``executescript`` would commit first).

    Cuts at each ``;`` that ends a complete statement, so semicolons inside literals,
    comments and trigger bodies stay put. Raises ValueError on a trailing fragment.
    """
    statements: list[str] = []
    start = 0
    for index, char in enumerate(script):
        if char == ";" and sqlite3.complete_statement(script[start : index + 1]):
            statements.append(script[start : index + 1].strip())
            start = index + 1
    rest = re.sub(r"/\*.*?\*/", "", script[start:], flags=re.DOTALL)
    rest = re.sub(r"--[^\n]*", "", rest)
    if rest.strip():
        raise ValueError(f"incomplete statement at the end: {rest.strip()[:60]!r}")
    return statements


def _find_migrations(directory: Path) -> list[tuple[int, Path]]:
    if not directory.is_dir():
        raise StorageError(f"migrations directory {directory} does not exist")
    found: dict[int, Path] = {}
    for path in sorted(directory.glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if match is None:
            raise StorageError(f"migration file {path.name} is not named NNNN_description.sql")
        version = int(match.group(1))
        if version in found:
            raise StorageError(f"migrations {found[version].name} and {path.name} share a number")
        found[version] = path
    expected = list(range(1, len(found) + 1))
    if sorted(found) != expected:
        raise StorageError(
            f"migrations in {directory} must be numbered 0001 upwards without gaps,"
            f" found {sorted(found)}"
        )
    return [(version, found[version]) for version in expected]


def _apply_migration(conn: sqlite3.Connection, version: int, path: Path) -> bool:
    """Apply one migration and bump user_version in one transaction; False if already done."""
    try:
        statements = split_statements(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise StorageError(f"cannot read migration {path.name}: {error}") from error
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have migrated while we waited for the write lock.
        if conn.execute("PRAGMA user_version").fetchone()[0] >= version:
            conn.execute("ROLLBACK")
            return False
        for statement in statements:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {int(version)}")
        conn.execute("COMMIT")
    except sqlite3.Error as error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise StorageError(f"migration {path.name} failed and was rolled back: {error}") from error
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return True


# -- the store -----------------------------------------------------------------------------


def _connect_for_loop(path: Path) -> sqlite3.Connection:
    """The connection the event loop uses itself (``Store._on_loop``)."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA wal_autocheckpoint = 0")
    except BaseException:
        conn.close()
        raise
    return conn


class Store:
    """The bot's database. Create with ``await Store.open(path)``; close with ``close()``."""

    def __init__(
        self,
        db: aiosqlite.Connection,
        conn: sqlite3.Connection,
        path: Path,
        schema_version: int,
        checkpointer: aiosqlite.Connection | None = None,
        loop_conn: sqlite3.Connection | None = None,
    ) -> None:
        self._db = db
        self._conn = conn
        self._loop_conn = loop_conn
        self.loop_fallbacks = 0
        """Statements for the loop's connection that found a lock taken and went through the
        thread instead (see ``_quick``)."""
        self.wal_restarts = 0
        """RESTART checkpoints run (see ``_checkpoint_forever``)."""
        self._writes_open = asyncio.Event()
        self._writes_open.set()  # cleared while a RESTART checkpoint holds writers off
        self.path = path
        self.schema_version = schema_version
        self._checkpointer = checkpointer
        self._checkpoints: asyncio.Task[None] | None = None
        if checkpointer is not None:
            self._checkpoints = asyncio.create_task(
                self._checkpoint_forever(checkpointer), name="ttt-wal-checkpoints"
            )

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        migrations_dir: str | os.PathLike[str] | None = None,
        *,
        synchronous: str = "NORMAL",
        busy_timeout_ms: int = 10_000,
    ) -> Store:
        """Connect, set the PRAGMAs and apply pending migrations.

        Raises StorageError if a migration fails (naming the file; the database is left as
        it was before that migration) or if the database's schema is newer than the newest
        migration known here (the file is then not modified at all).
        """
        if synchronous.upper() not in ("NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be NORMAL, FULL or EXTRA, not {synchronous!r}")
        path = Path(path)
        migrations = _find_migrations(
            Path(migrations_dir) if migrations_dir is not None else DEFAULT_MIGRATIONS_DIR
        )
        latest = migrations[-1][0] if migrations else 0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StorageError(f"cannot create the directory of {path}: {error}") from error
        try:
            db = await aiosqlite.connect(path, isolation_level=None)
        except sqlite3.Error as error:
            raise StorageError(f"cannot open the database {path}: {error}") from error
        try:
            conn = db._conn  # the sqlite3 connection, used only on aiosqlite's thread

            def setup() -> int:
                # Connection-level settings first: they do not touch the file.
                conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
                conn.execute("PRAGMA foreign_keys = ON")
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version > latest:
                    raise StorageError(
                        f"the database {path} has schema version {version}, newer than the"
                        f" newest this code knows ({latest}); run a newer version of the bot"
                    )
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() != "wal":
                    raise StorageError(f"cannot switch {path} to WAL (journal_mode is {mode})")
                conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
                conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")
                for number, file in migrations:
                    if number > version:
                        _apply_migration(conn, number, file)
                return conn.execute("PRAGMA user_version").fetchone()[0]

            version = await db._execute(setup)
            loop_conn = None
            if synchronous.upper() == "NORMAL":  # else every commit would fsync on the loop
                loop_conn = _connect_for_loop(path)
            try:
                checkpointer = await aiosqlite.connect(
                    path, isolation_level=None, timeout=RESTART_WAIT_SECONDS
                )
            except BaseException:
                if loop_conn is not None:
                    loop_conn.close()
                raise
        except sqlite3.Error as error:
            await db.close()
            raise StorageError(f"cannot use the database {path}: {error}") from error
        except BaseException:
            await db.close()
            raise
        return cls(db, conn, path, version, checkpointer, loop_conn)

    async def _checkpoint_forever(self, checkpointer: aiosqlite.Connection) -> None:
        """Copy the WAL back into the database file every CHECKPOINT_SECONDS, on a second
        connection (and thread) of its own.

        SQLite otherwise checkpoints inside the COMMIT that fills the WAL to 1,000 pages:
        under load that was once or twice a second, 10-20 ms each, and every query queued
        behind it on the store's one thread. A PASSIVE checkpoint takes no lock that
        writers wait for, but under a steady stream of writes it never copies the frames
        written while it runs, and SQLite starts the WAL over only when none is left: at
        330 moves a second the WAL grew by 16 MiB a second, for as long as the load
        lasted (bench/load.py). So once the WAL is past WAL_RESTART_FRAMES a RESTART
        checkpoint follows: it holds writers off while it copies the few frames written
        since and starts the WAL over (7-16 ms under that load), or gives up after
        RESTART_WAIT_SECONDS if a reader stays. The loop's writes wait for it to end
        (``_quick``) rather than find the lock taken and go through the database thread,
        whose busy handler would sleep past the end.
        """
        while True:
            await asyncio.sleep(CHECKPOINT_SECONDS)
            try:
                frames = await self._checkpoint(checkpointer, "PASSIVE")
                if frames >= WAL_RESTART_FRAMES:
                    self._writes_open.clear()
                    try:
                        await self._checkpoint(checkpointer, "RESTART")
                    finally:
                        self._writes_open.set()
                    self.wal_restarts += 1
            except sqlite3.Error as error:
                log.warning("WAL checkpoint of %s failed: %s", self.path, error)

    @staticmethod
    async def _checkpoint(checkpointer: aiosqlite.Connection, mode: str) -> int:
        """Run a ``mode`` checkpoint; the WAL's length in frames before it."""
        async with checkpointer.execute(f"PRAGMA wal_checkpoint({mode})") as cursor:
            row = await cursor.fetchone()
        return 0 if row is None else int(row[1])

    async def close(self) -> None:
        """Close after every job already queued (aiosqlite runs them in order)."""
        if self._checkpoints is not None:
            self._checkpoints.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._checkpoints
        if self._checkpointer is not None:
            await self._checkpointer.close()
        if self._loop_conn is not None:
            self._loop_conn.close()
            self._loop_conn = None
        await self._db.close()

    # -- plumbing ---------------------------------------------------------------------------

    async def _read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the connection's thread (reads; one job, never mid-transaction)."""
        return await self._db._execute(fn, *args)

    async def _snapshot(self, fn: Callable[..., T], *args: Any) -> T:
        """Like ``_read``, but several SELECTs see one snapshot (a deferred read transaction)."""
        conn = self._conn

        def transaction() -> T:
            conn.execute("BEGIN")
            try:
                return fn(*args)
            finally:
                conn.execute("COMMIT")

        return await self._db._execute(transaction)

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` inside BEGIN IMMEDIATE ... COMMIT as one job; roll back on error.

        No lock is needed around it: aiosqlite runs jobs one at a time on its thread, and
        each transaction is one job. Not holding one also lets that thread start the next
        write while the event loop is still busy with the last one's result.
        """
        conn = self._conn

        def transaction() -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(*args)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result

        return await self._db._execute(transaction)

    # -- meta -------------------------------------------------------------------------------

    async def get_meta(self, key: str) -> str | None:
        def fn() -> str | None:
            row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            return None if row is None else row[0]

        return await self._read(fn)

    async def set_meta(self, key: str, value: str) -> None:
        def fn() -> None:
            self._conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

        await self._write(fn)

    async def integrity_check(self) -> str:
        def fn() -> str:
            rows = self._conn.execute("PRAGMA integrity_check").fetchall()
            return "\n".join(str(row[0]) for row in rows)

        return await self._read(fn)

    # -- games ------------------------------------------------------------------------------

    @staticmethod
    def _get_game(conn: sqlite3.Connection, game_id: int) -> Game | None:
        row = conn.execute(f"SELECT {_GAME_COLUMNS} FROM games WHERE id = ?", (game_id,)).fetchone()
        return None if row is None else _game(row)

    async def get_game(self, game_id: int) -> Game | None:
        return await self._quick("read", lambda conn: self._get_game(conn, game_id))

    async def insert_game(self, game: Game, *, exclusive: bool) -> Game:
        """Store a new game (its ``id`` is ignored) and return it with its id.

        ``exclusive`` claims the channel: raises ChannelTaken if the channel already has a
        live game that claimed it.
        """
        return await self._quick("write", lambda conn: self._insert_game(conn, game, exclusive))

    def _insert_game(self, conn: sqlite3.Connection, game: Game, exclusive: bool) -> Game:
        try:
            row = conn.execute(
                "INSERT INTO games (guild_id, channel_id, channel_slot, message_id, x_id, o_id,"
                " bot_level, width, height, k, moves, move_no, status, result, winner_id,"
                " winner_mark, created_at, updated_at, turn_deadline, rematch_of)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    game.guild_id,
                    game.channel_id,
                    0 if exclusive else None,
                    game.message_id,
                    game.x_id,
                    game.o_id,
                    game.bot_level,
                    game.width,
                    game.height,
                    game.k,
                    _encode_moves(game.moves),
                    len(game.moves),
                    game.status.value,
                    None if game.result is None else game.result.value,
                    game.winner_id,
                    None if game.winner_mark is None else game.winner_mark.value,
                    game.created_at,
                    game.updated_at,
                    game.turn_deadline,
                    game.rematch_of,
                ),
            ).fetchone()
        except sqlite3.IntegrityError as error:
            if "games.guild_id" in str(error) and "UNIQUE" in str(error).upper():
                raise ChannelTaken(str(error)) from error
            raise
        game_id = row[0]
        stored = self._get_game(conn, game_id)
        assert stored is not None
        return stored

    async def save_game(self, new: Game, expected: Game) -> bool:
        """Write ``new`` over the game if it is still exactly at ``expected``'s move and status.

        Returns False (and changes nothing) if someone else changed the game first. When
        the game becomes finished, the players' ratings, records and streaks are updated
        in the same transaction, so a result is counted exactly once.
        """
        return await self._quick("write", lambda conn: self._save_game(conn, new, expected))

    async def update_game(
        self, game_id: int, change: Callable[[Game | None], Game]
    ) -> tuple[Game, Game]:
        """Read the game, ask ``change`` for its next state and write that, in one transaction.

        ``change`` gets the stored game (None if there is none). It must be quick and free
        of side effects: it runs inside the transaction, on the event loop or on the
        database thread, and may run twice (see ``_on_loop``). Whatever it raises
        rolls back and reaches the caller. Returning the game unchanged writes nothing.
        Returns ``(before, after)``; a result is recorded as in ``save_game``.
        """

        def fn(conn: sqlite3.Connection) -> tuple[Game, Game]:
            before = self._get_game(conn, game_id)
            after = change(before)
            if before is None or after.id != before.id:
                raise ValueError("update_game's change must return the same, stored game")
            if after is not before and not self._save_game(conn, after, before):
                raise RuntimeError("the game changed inside its own transaction")
            return before, after

        return await self._quick("write", fn)

    async def _quick(self, kind: _Kind, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` on the event loop (``_on_loop``), or on the database thread if
        the loop's connection is busy or absent. Only for small statements on one row or
        one channel's few (indexed): games, moves, challenges, a channel's live games; the
        scans (sweeps, leaderboards, history) stay on the thread."""
        if self._loop_conn is not None:
            if kind == "write" and not self._writes_open.is_set():
                await self._writes_open.wait()  # a RESTART checkpoint: a few ms
            try:
                return self._on_loop(self._loop_conn, kind, fn)
            except _Busy:
                self.loop_fallbacks += 1
        runner = {"read": self._read, "snapshot": self._snapshot, "write": self._write}[kind]
        return await runner(fn, self._conn)

    @staticmethod
    def _on_loop(conn: sqlite3.Connection, kind: _Kind, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` right here, on the event loop: a write in BEGIN IMMEDIATE ...
        COMMIT, a snapshot in BEGIN ... COMMIT, a read as it is.

        A move is about 0.15 ms of SQLite, less than the hop to aiosqlite's thread and
        back costs. It never waits: the connection has
        ``busy_timeout = 0``, so if another connection (our own thread's included) holds
        the write lock it raises _Busy at once, having changed nothing, and the caller
        goes through the thread instead. Its commits never checkpoint
        (``wal_autocheckpoint = 0``) and, with ``synchronous = NORMAL``, never fsync; the
        store uses it only with that setting.
        """
        try:
            if kind != "read":
                conn.execute("BEGIN IMMEDIATE" if kind == "write" else "BEGIN")
            result = fn(conn)
            if kind != "read":
                conn.execute("COMMIT")
        except BaseException as error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(error, sqlite3.OperationalError) and _is_busy(error):
                raise _Busy from error
            raise
        return result

    def _save_game(self, conn: sqlite3.Connection, new: Game, expected: Game) -> bool:
        if new.id != expected.id:
            raise ValueError("save_game needs two states of the same game")
        rated = new.status is GameStatus.FINISHED and not new.is_bot_game
        row = conn.execute(
            "UPDATE games SET moves = ?, move_no = ?, status = ?, result = ?, winner_id = ?,"
            " winner_mark = ?, rated = ?, updated_at = ?, turn_deadline = ?"
            " WHERE id = ? AND move_no = ? AND status = ? RETURNING id",
            (
                _encode_moves(new.moves),
                len(new.moves),
                new.status.value,
                None if new.result is None else new.result.value,
                new.winner_id,
                None if new.winner_mark is None else new.winner_mark.value,
                int(rated),
                new.updated_at,
                new.turn_deadline,
                expected.id,
                len(expected.moves),
                expected.status.value,
            ),
        ).fetchone()
        if row is None:
            return False
        if new.status is GameStatus.FINISHED and expected.status.is_live:
            self._record_result(conn, new)
        return True

    def _record_result(self, conn: sqlite3.Connection, game: Game) -> None:
        if game.is_bot_game:
            (human,) = game.human_ids
            score = self._score(game, human)
            wins, losses, draws = int(score == 1.0), int(score == 0.0), int(score == 0.5)
            conn.execute(
                "INSERT INTO bot_records (guild_id, user_id, level, wins, losses, draws)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (guild_id, user_id, level) DO UPDATE SET"
                " wins = wins + excluded.wins, losses = losses + excluded.losses,"
                " draws = draws + excluded.draws",
                (game.guild_id, human, game.bot_level, wins, losses, draws),
            )
            row = self._player_row(conn, game.guild_id, human, game.updated_at)
            self._write_player(conn, game.guild_id, human, row, None, score, game.updated_at)
            return
        assert game.x_id is not None and game.o_id is not None
        x_row = self._player_row(conn, game.guild_id, game.x_id, game.updated_at)
        o_row = self._player_row(conn, game.guild_id, game.o_id, game.updated_at)
        x_score = self._score(game, game.x_id)
        x_new, o_new = ratings.rate(
            ratings.Rating(x_row.rating, x_row.rated_games),
            ratings.Rating(o_row.rating, o_row.rated_games),
            x_score,
        )
        now = game.updated_at
        self._write_player(conn, game.guild_id, game.x_id, x_row, x_new, x_score, now)
        self._write_player(conn, game.guild_id, game.o_id, o_row, o_new, 1.0 - x_score, now)

    @staticmethod
    def _score(game: Game, user_id: int) -> float:
        if game.winner_mark is None:
            return 0.5
        return 1.0 if game.player_of(game.winner_mark) == user_id else 0.0

    @staticmethod
    def _player_row(conn: sqlite3.Connection, guild_id: int, user_id: int, now: float) -> PlayerRow:
        conn.execute(
            "INSERT INTO players (guild_id, user_id, rating, updated_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (guild_id, user_id) DO NOTHING",
            (guild_id, user_id, ratings.START_RATING, now),
        )
        row = conn.execute(
            "SELECT rating, rated_games, wins, losses, draws, current_streak, best_streak"
            " FROM players WHERE guild_id = ? AND user_id = ?",
            (guild_id, user_id),
        ).fetchone()
        return PlayerRow(row[0], row[1], Record(row[2], row[3], row[4]), row[5], row[6])

    @staticmethod
    def _write_player(
        conn: sqlite3.Connection,
        guild_id: int,
        user_id: int,
        old: PlayerRow,
        rating: ratings.Rating | None,
        score: float,
        now: float,
    ) -> None:
        """Streaks always; rating and W/L/D only for a rated game (``rating`` given)."""
        if score == 1.0:
            streak = old.current_streak + 1 if old.current_streak > 0 else 1
        elif score == 0.0:
            streak = old.current_streak - 1 if old.current_streak < 0 else -1
        else:
            streak = 0
        best = max(old.best_streak, streak)
        if rating is None:
            conn.execute(
                "UPDATE players SET current_streak = ?, best_streak = ?, updated_at = ?"
                " WHERE guild_id = ? AND user_id = ?",
                (streak, best, now, guild_id, user_id),
            )
            return
        conn.execute(
            "UPDATE players SET rating = ?, rated_games = ?, wins = wins + ?, losses = losses + ?,"
            " draws = draws + ?, current_streak = ?, best_streak = ?, updated_at = ?"
            " WHERE guild_id = ? AND user_id = ?",
            (
                rating.value,
                rating.games,
                int(score == 1.0),
                int(score == 0.0),
                int(score == 0.5),
                streak,
                best,
                now,
                guild_id,
                user_id,
            ),
        )

    async def set_game_message(self, game_id: int, message_id: int) -> bool:
        """Remember the message showing the game's board; False if there is no such game."""

        def fn(conn: sqlite3.Connection) -> bool:
            row = conn.execute(
                "UPDATE games SET message_id = ? WHERE id = ? RETURNING id", (message_id, game_id)
            ).fetchone()
            return row is not None

        return await self._quick("write", fn)

    async def live_games(self, guild_id: int, channel_id: int) -> list[Game]:
        """The channel's live games, newest first."""
        return await self._quick("read", lambda conn: self._live_games(conn, guild_id, channel_id))

    @staticmethod
    def _live_games(conn: sqlite3.Connection, guild_id: int, channel_id: int) -> list[Game]:
        rows = conn.execute(
            f"SELECT {_GAME_COLUMNS} FROM games WHERE guild_id = ? AND channel_id = ?"
            f" AND {_IS_LIVE} ORDER BY id DESC",
            (guild_id, channel_id),
        ).fetchall()
        return [_game(row) for row in rows]

    async def games_bot_to_move(self) -> list[Game]:
        def fn() -> list[Game]:
            rows = self._conn.execute(
                f"SELECT {_GAME_COLUMNS} FROM games WHERE {_IS_BOT_TO_MOVE} ORDER BY id",
            ).fetchall()
            return [_game(row) for row in rows]

        return await self._read(fn)

    async def overdue_games(self, now: float) -> list[Game]:
        """Active games whose turn deadline is at or before ``now``."""

        def fn() -> list[Game]:
            rows = self._conn.execute(
                f"SELECT {_GAME_COLUMNS} FROM games WHERE {_IS_ACTIVE}"
                " AND turn_deadline <= ? ORDER BY turn_deadline",
                (now,),
            ).fetchall()
            return [_game(row) for row in rows]

        return await self._read(fn)

    async def history(self, guild_id: int, user_id: int | None, limit: int) -> list[Game]:
        """Ended (finished or abandoned) games of a guild, or of one member in it, newest first."""
        return await self._read(self._history, guild_id, user_id, limit)

    def _history(self, guild_id: int, user_id: int | None, limit: int) -> list[Game]:
        if user_id is None:
            rows = self._conn.execute(
                f"SELECT {_GAME_COLUMNS} FROM games WHERE guild_id = ?"
                f" AND {_IS_ENDED} ORDER BY updated_at DESC, id DESC LIMIT ?",
                (guild_id, limit),
            ).fetchall()
        else:
            # One lookup per mark, each in its partial index (games_ended_by_x/_o): with
            # "x_id = ? OR o_id = ?" SQLite read every ended game of the guild instead.
            rows = self._conn.execute(
                f"SELECT {_GAME_COLUMNS} FROM games WHERE guild_id = ? AND {_IS_ENDED}"
                f" AND x_id = ? UNION SELECT {_GAME_COLUMNS} FROM games WHERE guild_id = ?"
                f" AND {_IS_ENDED} AND o_id = ? ORDER BY updated_at DESC, id DESC LIMIT ?",
                (guild_id, user_id, guild_id, user_id, limit),
            ).fetchall()
        return [_game(row) for row in rows]

    # -- challenges -------------------------------------------------------------------------

    @staticmethod
    def _get_challenge(conn: sqlite3.Connection, challenge_id: int) -> Challenge | None:
        row = conn.execute(
            f"SELECT {_CHALLENGE_COLUMNS} FROM challenges WHERE id = ?", (challenge_id,)
        ).fetchone()
        return None if row is None else _challenge(row)

    async def get_challenge(self, challenge_id: int) -> Challenge | None:
        return await self._quick("read", lambda conn: self._get_challenge(conn, challenge_id))

    async def channel_view(self, guild_id: int, channel_id: int, now: float) -> ChannelView:
        """The channel's live games and its pending challenges not yet past expiry."""

        def fn(conn: sqlite3.Connection) -> ChannelView:
            rows = conn.execute(
                f"SELECT {_CHALLENGE_COLUMNS} FROM challenges WHERE guild_id = ?"
                f" AND channel_id = ? AND {_IS_PENDING} AND expires_at > ? ORDER BY id",
                (guild_id, channel_id, now),
            ).fetchall()
            return ChannelView(
                tuple(self._live_games(conn, guild_id, channel_id)), tuple(map(_challenge, rows))
            )

        return await self._quick("snapshot", fn)

    async def insert_challenge(self, challenge: Challenge) -> Challenge:
        """Store a new challenge (its ``id`` is ignored) and return it with its id."""

        def fn(conn: sqlite3.Connection) -> Challenge:
            c = challenge
            row = conn.execute(
                "INSERT INTO challenges (guild_id, channel_id, message_id, challenger_id,"
                " opponent_id, width, height, k, first, status, created_at, expires_at,"
                " game_id, rematch_of) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " RETURNING id",
                (
                    c.guild_id,
                    c.channel_id,
                    c.message_id,
                    c.challenger_id,
                    c.opponent_id,
                    c.width,
                    c.height,
                    c.k,
                    c.first.value,
                    c.status.value,
                    c.created_at,
                    c.expires_at,
                    c.game_id,
                    c.rematch_of,
                ),
            ).fetchone()
            stored = self._get_challenge(conn, row[0])
            assert stored is not None
            return stored

        return await self._quick("write", fn)

    async def set_challenge_message(self, challenge_id: int, message_id: int) -> bool:
        def fn(conn: sqlite3.Connection) -> bool:
            row = conn.execute(
                "UPDATE challenges SET message_id = ? WHERE id = ? RETURNING id",
                (message_id, challenge_id),
            ).fetchone()
            return row is not None

        return await self._quick("write", fn)

    async def answer_challenge(
        self, challenge_id: int, status: ChallengeStatus, now: float
    ) -> Challenge | None:
        """Move a pending, unexpired challenge to ``status``; None if it was not (any more)."""

        def fn(conn: sqlite3.Connection) -> Challenge | None:
            row = conn.execute(
                "UPDATE challenges SET status = ? WHERE id = ? AND status = ? AND expires_at > ?"
                f" RETURNING {_CHALLENGE_COLUMNS}",
                (status.value, challenge_id, ChallengeStatus.PENDING.value, now),
            ).fetchone()
            return None if row is None else _challenge(row)

        return await self._quick("write", fn)

    async def accept_challenge(
        self, challenge_id: int, game: Game, now: float, *, exclusive: bool
    ) -> tuple[Challenge, Game] | None:
        """Accept a pending, unexpired challenge and insert its game, in one transaction.

        None if the challenge was no longer open; raises ChannelTaken (changing nothing)
        if the channel got a live game meanwhile.
        """

        def fn(conn: sqlite3.Connection) -> tuple[Challenge, Game] | None:
            row = conn.execute(
                "UPDATE challenges SET status = ? WHERE id = ? AND status = ? AND expires_at > ?"
                " RETURNING id",
                (ChallengeStatus.ACCEPTED.value, challenge_id, ChallengeStatus.PENDING.value, now),
            ).fetchone()
            if row is None:
                return None
            stored = self._insert_game(conn, game, exclusive)
            conn.execute(
                "UPDATE challenges SET game_id = ? WHERE id = ?", (stored.id, challenge_id)
            )
            challenge = self._get_challenge(conn, challenge_id)
            assert challenge is not None
            return challenge, stored

        return await self._quick("write", fn)

    async def expire_challenges(self, now: float) -> list[Challenge]:
        """Mark pending challenges at or past their expiry as expired and return them.

        A quick look (on the loop's connection) comes first: usually none is due, and the
        write would take the lock every sweep for nothing, sending the moves made
        meanwhile through the database thread (about 20 at a time under bench/load.py).
        """

        def due(conn: sqlite3.Connection) -> bool:
            found = conn.execute(
                f"SELECT 1 FROM challenges WHERE {_IS_PENDING} AND expires_at <= ? LIMIT 1",
                (now,),
            ).fetchone()
            return found is not None

        if not await self._quick("read", due):
            return []

        def fn() -> list[Challenge]:
            rows = self._conn.execute(
                f"UPDATE challenges SET status = ? WHERE {_IS_PENDING}"
                f" AND expires_at <= ? RETURNING {_CHALLENGE_COLUMNS}",
                (ChallengeStatus.EXPIRED.value, now),
            ).fetchall()
            return sorted(map(_challenge, rows), key=lambda c: c.id)

        return await self._write(fn)

    # -- players ----------------------------------------------------------------------------

    async def leaderboard(
        self, guild_id: int, page: int, per_page: int
    ) -> tuple[int, int, list[tuple[int, PlayerRow]]]:
        """(members with a rated game, the page clamped to 1..pages, that page's rows).

        Rows are (user id, row with rank), by rating desc, rated games desc, user id.
        """

        def fn() -> tuple[int, int, list[tuple[int, PlayerRow]]]:
            total = self._conn.execute(
                "SELECT COUNT(*) FROM players WHERE guild_id = ? AND rated_games > 0", (guild_id,)
            ).fetchone()[0]
            pages = max(1, -(-total // per_page))
            clamped = min(max(1, page), pages)
            offset = (clamped - 1) * per_page
            rows = self._conn.execute(
                "SELECT user_id, rating, rated_games, wins, losses, draws, current_streak,"
                " best_streak FROM players WHERE guild_id = ? AND rated_games > 0"
                " ORDER BY rating DESC, rated_games DESC, user_id LIMIT ? OFFSET ?",
                (guild_id, per_page, offset),
            ).fetchall()
            entries = [
                (
                    r[0],
                    PlayerRow(r[1], r[2], Record(r[3], r[4], r[5]), r[6], r[7], offset + i + 1),
                )
                for i, r in enumerate(rows)
            ]
            return total, clamped, entries

        return await self._snapshot(fn)

    async def player(self, guild_id: int, user_id: int) -> PlayerRow:
        """A member's row with their leaderboard rank (defaults if they never played)."""

        def fn() -> PlayerRow:
            row = self._conn.execute(
                "SELECT rating, rated_games, wins, losses, draws, current_streak, best_streak"
                " FROM players WHERE guild_id = ? AND user_id = ?",
                (guild_id, user_id),
            ).fetchone()
            if row is None:
                return PlayerRow()
            rank = None
            if row[1] > 0:
                rank = (
                    self._conn.execute(
                        "SELECT COUNT(*) FROM players WHERE guild_id = :guild AND rated_games > 0"
                        " AND (rating > :rating OR (rating = :rating AND (rated_games > :games"
                        " OR (rated_games = :games AND user_id < :user))))",
                        {"guild": guild_id, "rating": row[0], "games": row[1], "user": user_id},
                    ).fetchone()[0]
                    + 1
                )
            return PlayerRow(row[0], row[1], Record(row[2], row[3], row[4]), row[5], row[6], rank)

        return await self._snapshot(fn)

    async def bot_records(self, guild_id: int, user_id: int) -> list[LevelRecord]:
        """A member's results against each bot level they played, in no particular order."""

        def fn() -> list[LevelRecord]:
            rows = self._conn.execute(
                "SELECT level, wins, losses, draws FROM bot_records"
                " WHERE guild_id = ? AND user_id = ? ORDER BY level",
                (guild_id, user_id),
            ).fetchall()
            return [LevelRecord(r[0], Record(r[1], r[2], r[3])) for r in rows]

        return await self._read(fn)
