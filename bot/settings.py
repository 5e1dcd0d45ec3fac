"""The bot's settings, read once from the environment by the entry point.

``Settings.from_env`` takes any mapping (tests pass a dict) and raises ``SettingsError``
naming the variable at fault, so a bad deployment stops with one readable line.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import yarl

from bot.durations import parse_duration
from bot.tunables import HOST, AnyTunable, Kind, Tunable, Value, Values

__all__ = [
    "DEFAULT_DATABASE_PATH",
    "SECRET_PARAMETERS",
    "Settings",
    "SettingsError",
    "database_secrets",
]

T = TypeVar("T")

DEFAULT_DATABASE_PATH = Path("data/tictactoe.db")

_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_MAX_SNOWFLAKE = 2**63 - 1
_MAX_SHARDS = 100_000
"""More shards than any bot needs (Discord asks for one per 2,500 servers at most)."""
SECRET_PARAMETERS = ("password", "sslpassword")
"""Query parameters of a libpq URL that hold a secret (asyncpg reads both): redacted from
logs (``bot.db.postgres.without_password``) and from output (``database_secrets``)."""
_SHARD_ITEM = re.compile(r"\A([0-9]+)(?:\s*-\s*([0-9]+))?\Z")


class SettingsError(ValueError):
    """An environment variable is missing or holds a value the bot cannot use."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.name = name


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the bot reads from its environment; the token is kept out of ``repr``."""

    token: str = field(repr=False)
    database_path: Path = DEFAULT_DATABASE_PATH
    database_url: str | None = field(default=None, repr=False)  # may hold a password
    dev_guild_id: int | None = None
    api_base: str | None = None
    gateway_url: str | None = None
    log_level: str = "INFO"
    # The numbers (bot.tunables.HOST): settings[TURN_TIMEOUT] reads one. The servers'
    # settings among them are defaults their moderators may change with
    # /tictactoe-settings, within the same bounds.
    numbers: Values = field(default_factory=Values)
    # Sharding: None and None lets discord.py ask Discord for the count and run every
    # shard; a count alone runs all of its shards; ids (sorted) run only those.
    shard_count: int | None = None
    shard_ids: tuple[int, ...] | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Parse the variables documented in ``.env.example``; blank counts as unset."""

        def get(name: str) -> str | None:
            value = env.get(name)
            if value is None or not value.strip():
                return None
            return value.strip()

        token = get("DISCORD_TOKEN")
        if token is None:
            raise SettingsError("DISCORD_TOKEN", "is not set; put the bot's token in it")
        if any(ch.isspace() for ch in token):
            raise SettingsError("DISCORD_TOKEN", "contains whitespace; paste the token alone")

        level = (get("LOG_LEVEL") or "INFO").upper()
        if level not in _LOG_LEVELS:
            raise SettingsError("LOG_LEVEL", f"must be one of {', '.join(_LOG_LEVELS)}")

        shard_count = get("SHARD_COUNT")
        shard_ids = get("SHARD_IDS")
        count = None
        if shard_count is not None:
            count = _count("SHARD_COUNT", shard_count, 1, _MAX_SHARDS)
        return cls(
            token=token,
            database_path=Path(get("DATABASE_PATH") or DEFAULT_DATABASE_PATH),
            database_url=_database_url(get("DATABASE_URL")),
            dev_guild_id=_snowflake("DEV_GUILD_ID", get("DEV_GUILD_ID")),
            api_base=_url("DISCORD_API_BASE", get("DISCORD_API_BASE"), "https", "http"),
            gateway_url=_url("DISCORD_GATEWAY_URL", get("DISCORD_GATEWAY_URL"), "wss", "ws"),
            log_level=level,
            numbers=Values(
                HOST, **{setting.name: _number(setting, get(setting.variable)) for setting in HOST}
            ),
            shard_count=count,
            shard_ids=None if shard_ids is None else _shard_ids("SHARD_IDS", shard_ids, count),
        )

    def __getitem__(self, tunable: Tunable[T]) -> T:
        return self.numbers[tunable]

    @property
    def log_level_number(self) -> int:
        return logging.getLevelNamesMapping()[self.log_level]

    @property
    def database(self) -> str | Path:
        """What the store opens: DATABASE_URL when set (PostgreSQL), else DATABASE_PATH."""
        return self.database_url if self.database_url is not None else self.database_path


def _database_url(raw: str | None) -> str | None:
    """A ``postgresql://`` URL naming a host (``host=`` in its query for a unix socket)."""
    if raw is None:
        return None
    url = _parsed(raw)
    if url is None or url.scheme not in ("postgresql", "postgres"):
        raise SettingsError(
            "DATABASE_URL",
            "must be a postgresql:// URL (for example postgresql://bot:secret@db:5432/tictactoe);"
            " leave it unset to use the SQLite file at DATABASE_PATH",
        )
    if not url.host and "host" not in url.query:
        raise SettingsError("DATABASE_URL", "names no server: postgresql://user@HOST/database")
    return raw


def database_secrets(url: str | None, environ: Mapping[str, str]) -> set[str]:
    """Every password the connection to ``url`` may use, to redact wherever it shows: the
    URL's own (user part, ``password`` and ``sslpassword`` parameters), PGPASSWORD, and
    the passwords of the passfile (the URL's ``passfile``, PGPASSFILE or ~/.pgpass)."""
    found: set[str] = set()
    passfile = environ.get("PGPASSFILE") or str(Path.home() / ".pgpass")
    if url is not None:
        try:
            parsed = yarl.URL(url)
        except (TypeError, ValueError):
            parsed = None
        if parsed is not None:
            found.add(parsed.password or "")
            found.update(v for k, v in parsed.query.items() if k.lower() in SECRET_PARAMETERS)
            passfile = parsed.query.get("passfile", passfile)
    found.add(environ.get("PGPASSWORD", ""))
    found.update(_passfile_passwords(Path(passfile).expanduser()))
    return {secret for secret in found if secret}


def _passfile_passwords(path: Path) -> list[str]:
    """The password field of each line of a libpq passfile (``host:port:db:user:password``,
    with ``\\:`` and ``\\\\`` escaped); none if it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields: list[str] = []
        field, escaped = "", False
        for char in line:
            if escaped:
                field, escaped = field + char, False
            elif char == "\\":
                escaped = True
            elif char == ":" and len(fields) < 4:
                fields.append(field)
                field = ""
            else:
                field += char
        if len(fields) == 4 and field:
            found.append(field)
    return found


def _parsed(raw: str) -> yarl.URL | None:
    try:
        return yarl.URL(raw)
    except (TypeError, ValueError):
        return None


def _snowflake(name: str, raw: str | None) -> int | None:
    if raw is None:
        return None
    if not _digits(raw) or not 0 < int(raw) <= _MAX_SNOWFLAKE:
        raise SettingsError(name, f"must be a server ID (a positive whole number), not {raw!r}")
    return int(raw)


def _url(name: str, raw: str | None, secure: str, plain: str) -> str | None:
    """An absolute URL of scheme ``secure``, or ``plain`` (unencrypted) to a loopback host.

    The bot sends its token to this address, so it may travel in clear text only to this
    machine (an emulator or a local proxy), never across a network.
    """
    if raw is None:
        return None
    url = _parsed(raw)
    if url is None or url.scheme not in (secure, plain) or not url.host:
        raise SettingsError(
            name, f"must be an absolute {secure}:// (or {plain}://) URL, not {raw!r}"
        )
    if url.scheme == plain and not _is_loopback(url.host):
        raise SettingsError(
            name,
            f"must use {secure}:// ({plain}:// would send the token unencrypted; it is"
            f" allowed only for localhost, 127.0.0.0/8 and ::1), not {raw!r}",
        )
    return raw.rstrip("/")


def _is_loopback(host: str) -> bool:
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name other than localhost: it may resolve anywhere
        return False


def _number(setting: AnyTunable, raw: str | None) -> Value:
    """``setting``'s value in ``raw``, within its bounds; its default when unset (and
    when 0, for a setting whose default is off)."""
    if raw is None or (setting.default is None and raw == "0"):
        return setting.default
    name, low, high = setting.variable, setting.low, setting.high
    if setting.kind is Kind.COUNT:
        return _count(name, raw, int(low), int(high))
    if setting.kind is Kind.DAYS:
        return _days(name, raw, low, high)
    return _seconds(name, raw, low, high)


def _seconds(name: str, raw: str, low: float, high: float) -> float:
    """Seconds (``90``, ``30.5``) or a duration (``90s``, ``5m``, ``1h30m``, ``1d``)."""
    try:
        value = parse_duration(raw)
    except ValueError:
        raise SettingsError(
            name, f"must be a number of seconds or a duration such as 5m or 1h30m, not {raw!r}"
        ) from None
    if not low <= value <= high:  # also rejects nan and inf
        raise SettingsError(name, f"must be from {low:g} to {high:g} seconds, not {raw}")
    return value


def _days(name: str, raw: str, low: float, high: float) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(name, f"must be a number of days, not {raw!r}") from None
    if not low <= value <= high:  # also rejects nan and inf
        raise SettingsError(name, f"must be from {low:g} to {high:g} days, not {raw}")
    return value


def _count(name: str, raw: str, low: int, high: int) -> int:
    if not _digits(raw):
        raise SettingsError(name, f"must be a whole number, not {raw!r}")
    value = int(raw)
    if not low <= value <= high:
        raise SettingsError(name, f"must be from {low} to {high}, not {value}")
    return value


def _shard_ids(name: str, raw: str, count: int | None) -> tuple[int, ...]:
    """Shard ids and ranges such as ``0-3``, ``0,2,5`` or ``4-7,9``, each below ``count``
    and listed once; sorted."""
    if count is None:
        raise SettingsError(
            name, "needs SHARD_COUNT, the number of shards across all of the bot's processes"
        )
    found: set[int] = set()
    for item in raw.split(","):
        match = _SHARD_ITEM.match(item.strip())
        if match is None:
            raise SettingsError(
                name, f"must list shard ids and ranges, such as 0-3 or 0,2,5, not {raw!r}"
            )
        first = int(match[1])
        last = first if match[2] is None else int(match[2])
        if last < first:
            raise SettingsError(
                name, f"the range {first}-{last} runs backwards; write {last}-{first}"
            )
        if last >= count:
            raise SettingsError(
                name,
                f"shard {last} does not exist: SHARD_COUNT is {count}, so ids go from 0 to"
                f" {count - 1}",
            )
        ids = set(range(first, last + 1))
        if twice := ids & found:
            raise SettingsError(name, f"lists shard {min(twice)} more than once")
        found |= ids
    return tuple(sorted(found))


def _digits(raw: str) -> bool:
    return raw.isascii() and raw.isdigit()
