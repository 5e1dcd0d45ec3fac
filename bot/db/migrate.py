"""Numbered migrations: ``NNNN_description.sql`` files, applied in order, each exactly once.

The schema version is SQLite's ``PRAGMA user_version``. Each migration runs in its own
``BEGIN IMMEDIATE`` transaction that also bumps the version, so a failing one leaves the
database as it was before it, and a second process that migrated meanwhile is noticed
(the version is read again once the write lock is held). A database newer than the code
is refused before anything is written to it.

Foreign keys are off while a migration runs (SQLite ignores that PRAGMA inside a
transaction, so it is set around it) and checked whole before it commits: a migration may
then rebuild a table that others point at, SQLite's documented way of changing what
``ALTER TABLE`` cannot, without the ``DROP TABLE`` cascading into the other tables.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from pathlib import Path

import aiosqlite

from bot.errors import StorageError

__all__ = [
    "DEFAULT_MIGRATIONS_DIR",
    "apply_migrations",
    "check_not_newer",
    "find_migrations",
    "split_statements",
    "user_version",
]


def _default_migrations_dir() -> Path:
    """The project's migrations/: in an installed wheel, which carries them inside the
    package as bot/migrations (setup.py copies them there, so site-packages gets no
    top-level ``migrations`` package); else a checkout's or editable install's own."""
    bot = Path(__file__).resolve().parent.parent
    installed = bot / "migrations"
    return installed if installed.is_dir() else bot.parent / "migrations"


DEFAULT_MIGRATIONS_DIR = _default_migrations_dir()
"""migrations/: SQLite's files, PostgreSQL's in its postgresql/ folder, the same numbers."""
_MIGRATION_NAME = re.compile(r"^(\d{4})_[\w\-]+\.sql$")


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


def find_migrations(directory: Path) -> list[tuple[int, Path]]:
    """(version, file) for every migration in ``directory``, numbered 1 upwards without gaps."""
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


async def user_version(db: aiosqlite.Connection) -> int:
    (row,) = await db.execute_fetchall("PRAGMA user_version")
    return int(row[0])


def check_not_newer(path: Path, version: int, latest: int) -> None:
    """Refuse a database whose schema is newer than the newest migration known here."""
    if version > latest:
        raise StorageError(
            f"the database {path} has schema version {version}, newer than the"
            f" newest this code knows ({latest}); run a newer version of the bot"
        )


async def apply_migrations(
    db: aiosqlite.Connection, migrations: list[tuple[int, Path]], version: int
) -> int:
    """Apply the migrations past ``version`` in order; the schema version reached."""
    for number, file in migrations:
        if number > version:
            await _apply(db, number, file)
    return await user_version(db)


async def _apply(db: aiosqlite.Connection, version: int, path: Path) -> bool:
    """Apply one migration and bump user_version in one transaction; False if already done.

    ``db`` must be in autocommit mode (``isolation_level=None``): these BEGIN and COMMIT
    are the only transaction control.
    """
    try:
        statements = split_statements(await asyncio.to_thread(path.read_text, encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise StorageError(f"cannot read migration {path.name}: {error}") from error
    ((enforced,),) = await db.execute_fetchall("PRAGMA foreign_keys")
    await db.execute_fetchall("PRAGMA foreign_keys = OFF")
    try:
        return await _apply_unchecked(db, version, path, statements)
    finally:
        if enforced:
            await db.execute_fetchall("PRAGMA foreign_keys = ON")


async def _apply_unchecked(
    db: aiosqlite.Connection, version: int, path: Path, statements: list[str]
) -> bool:
    """``_apply``'s transaction, foreign keys off: checked before the COMMIT instead."""
    await db.execute_fetchall("BEGIN IMMEDIATE")
    try:
        # Another process may have migrated while we waited for the write lock.
        if await user_version(db) >= version:
            await db.execute_fetchall("ROLLBACK")
            return False
        for statement in statements:
            await db.execute_fetchall(statement)
        broken = list(await db.execute_fetchall("PRAGMA foreign_key_check"))
        if broken:
            table, rowid, parent, _ = broken[0]
            raise sqlite3.IntegrityError(
                f"{len(broken)} row(s) would point at nothing, such as {table} row {rowid}"
                f" (into {parent})"
            )
        await db.execute_fetchall(f"PRAGMA user_version = {int(version)}")
        await db.execute_fetchall("COMMIT")
    except sqlite3.Error as error:
        await _roll_back(db)
        raise StorageError(f"migration {path.name} failed and was rolled back: {error}") from error
    except BaseException:
        await _roll_back(db)
        raise
    return True


async def _roll_back(db: aiosqlite.Connection) -> None:
    if db.in_transaction:
        await db.execute_fetchall("ROLLBACK")
