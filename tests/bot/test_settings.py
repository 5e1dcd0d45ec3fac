"""Settings parsing, and ``python -m bot`` failing in one readable line."""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bot import tunables
from bot.__main__ import FatalError, configure_logging, use_endpoints
from bot.config import ServiceConfig
from bot.games import servers as guilds
from bot.models import GuildSettings
from bot.servers.cog import ServerSettings
from bot.settings import DEFAULT_DATABASE_PATH, Settings, SettingsError
from bot.tunables import (
    AI_WORKERS,
    CHALLENGE_COOLDOWN,
    CHALLENGE_TIMEOUT,
    PING_GRACE,
    REVIEW_COOLDOWN,
    SHUTDOWN_GRACE,
    SWEEP_INTERVAL,
    TURN_TIMEOUT,
    Values,
)

REPO = Path(__file__).resolve().parents[2]
TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.secret-token-value_0123456789"


def test_defaults() -> None:
    settings = Settings.from_env({"DISCORD_TOKEN": TOKEN})
    assert settings == Settings(token=TOKEN)
    assert settings.database_path == DEFAULT_DATABASE_PATH == Path("data/tictactoe.db")
    assert settings.dev_guild_id is None
    assert settings.api_base is None and settings.gateway_url is None
    assert settings.log_level == "INFO"
    assert (settings[TURN_TIMEOUT], settings[CHALLENGE_TIMEOUT]) == (300.0, 60.0)
    assert (settings[AI_WORKERS], settings[SWEEP_INTERVAL]) == (1, 5.0)
    assert settings[SHUTDOWN_GRACE] == 10.0
    assert settings.shard_count is None and settings.shard_ids is None  # discord.py decides


def test_every_variable_is_read() -> None:
    settings = Settings.from_env(
        {
            "DISCORD_TOKEN": f"  {TOKEN}\n",
            "DATABASE_PATH": "/var/lib/ttt/games.db",
            "DEV_GUILD_ID": "123456789012345678",
            "DISCORD_API_BASE": "http://127.0.0.1:8080/api/v10/",
            "DISCORD_GATEWAY_URL": "ws://127.0.0.1:8080/gateway",
            "LOG_LEVEL": "debug",
            "TURN_TIMEOUT_SECONDS": "90",
            "CHALLENGE_TIMEOUT_SECONDS": "30.5",
            "AI_WORKERS": "4",
            "SWEEP_INTERVAL_SECONDS": "2",
            "SHUTDOWN_GRACE_SECONDS": "3",
            "SHARD_COUNT": "8",
            "SHARD_IDS": "4-7",
        }
    )
    assert settings.token == TOKEN
    assert settings.database_path == Path("/var/lib/ttt/games.db")
    assert settings.dev_guild_id == 123456789012345678
    assert settings.api_base == "http://127.0.0.1:8080/api/v10"
    assert settings.gateway_url == "ws://127.0.0.1:8080/gateway"
    assert settings.log_level == "DEBUG" and settings.log_level_number == logging.DEBUG
    assert (settings[TURN_TIMEOUT], settings[CHALLENGE_TIMEOUT]) == (90.0, 30.5)
    assert (settings[AI_WORKERS], settings[SWEEP_INTERVAL]) == (4, 2.0)
    assert settings[SHUTDOWN_GRACE] == 3.0
    assert (settings.shard_count, settings.shard_ids) == (8, (4, 5, 6, 7))


def test_the_host_types_durations_within_the_servers_bounds() -> None:
    settings = Settings.from_env(
        {
            "DISCORD_TOKEN": TOKEN,
            "TURN_TIMEOUT_SECONDS": "1d",
            "CHALLENGE_TIMEOUT_SECONDS": "1h",
            "CHALLENGE_COOLDOWN_SECONDS": "5m",
            "REVIEW_COOLDOWN_SECONDS": "0",
            "PING_GRACE_SECONDS": "1h",
        }
    )
    assert (settings[TURN_TIMEOUT], settings[CHALLENGE_TIMEOUT]) == (86_400.0, 3_600.0)
    assert (settings[CHALLENGE_COOLDOWN], settings[REVIEW_COOLDOWN]) == (300.0, 0.0)
    assert settings[PING_GRACE] == 3_600.0


@pytest.mark.parametrize("setting", tunables.SERVER, ids=lambda setting: setting.variable)
def test_the_host_has_exactly_the_servers_bounds(setting: tunables.Tunable[Any]) -> None:
    """Each server setting is one definition: the host's variable, the service's check and
    the /tictactoe-settings option all take their bounds from it, so a host can set
    nothing a server could not (the turn clock included: at least 30 s)."""
    assert guilds.BOUNDS is tunables.BOUNDS  # the service's checks (tests/bot/test_fair_play.py)
    assert tunables.BOUNDS[setting.name] == setting.bounds
    assert tunables.BY_NAME[setting.name] is setting
    low, high = setting.bounds
    for inside in (low, high):
        if inside or setting.default is not None:  # 0 is "off" where the default is
            env = {"DISCORD_TOKEN": TOKEN, setting.variable: f"{inside:g}"}
            assert Settings.from_env(env)[setting] == inside
    for outside in (low - 1, high + 1):
        if outside == 0 and setting.default is None:
            continue
        with pytest.raises(SettingsError) as info:
            Settings.from_env({"DISCORD_TOKEN": TOKEN, setting.variable: f"{outside:g}"})
        assert str(info.value) == (
            f"{setting.variable}: must be from {low:g} to {high:g}"
            f"{'' if setting.whole else ' seconds'}, not {outside:g}"
        )
    # The option of the same name; for a count, its type: Discord's client enforces the same
    # range (a duration's description gives it: tests/bot/test_command_i18n.py).
    command = ServerSettings.tictactoe_settings
    option = next(p for p in command.parameters if p.name == setting.name)
    if setting.whole:
        assert (option.min_value, option.max_value) == (low, high)


def test_every_server_setting_is_a_host_setting_and_an_option() -> None:
    """The host's settings, the service's configuration and a server's settings hold the
    values of bot.tunables, their defaults unless given; each server setting is an option
    of /tictactoe-settings under its own name, and has a name people read."""
    host, config = Settings(token=TOKEN), ServiceConfig()
    assert host.numbers == config.numbers == Values() == Values(tunables.HOST)
    for setting in tunables.HOST:
        assert host[setting] == config[setting] == setting.default
    options = {parameter.name for parameter in ServerSettings.tictactoe_settings.parameters}
    for setting in tunables.SERVER:
        assert setting in tunables.HOST
        assert GuildSettings()[setting] == setting.default
        assert setting.name in options and setting.label is not None
    assert set(tunables.SWITCHES) <= options
    assert GuildSettings().numbers == config.numbers.only(tunables.SERVER)


def test_values_take_only_their_settings() -> None:
    with pytest.raises(ValueError, match="ai_workers"):
        Values(tunables.SERVER, ai_workers=2)
    with pytest.raises(KeyError):
        GuildSettings()[tunables.AI_WORKERS]  # the host's alone
    chosen = Values(turn_timeout=45.0).replace(ping_grace=10.0)
    assert (chosen[tunables.TURN_TIMEOUT], chosen[tunables.PING_GRACE]) == (45.0, 10.0)
    assert chosen != Values() and chosen == Values(turn_timeout=45.0, ping_grace=10.0)


def test_readme_and_env_example_give_each_variables_default_and_bounds() -> None:
    rows = {
        line.split("`")[1]: line
        for line in (REPO / "README.md").read_text().splitlines()
        if line.startswith("| `")
    }
    example = dict(
        line.split("=", 1)
        for line in (REPO / ".env.example").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    for setting in tunables.HOST:
        row = rows[setting.variable]
        assert f"{setting.low:g} to {setting.high:g}" in row, row
        default = "unset" if setting.default is None else f"`{setting.default:g}`"
        assert row.split(" | ")[1] == default, row
        assert example[setting.variable] == ("" if default == "unset" else f"{setting.default:g}")


def test_a_host_clock_below_the_servers_stops_the_bot_with_one_line(tmp_path: Path) -> None:
    env = {"DISCORD_TOKEN": TOKEN, "TURN_TIMEOUT_SECONDS": "2"}
    result = run_bot(tmp_path, env)
    assert result.returncode == 2
    assert one_error_line(result) == (
        "error: TURN_TIMEOUT_SECONDS: must be from 30 to 86400 seconds, not 2"
    )


def test_blank_values_count_as_unset() -> None:
    settings = Settings.from_env({"DISCORD_TOKEN": TOKEN, "DEV_GUILD_ID": "", "LOG_LEVEL": " "})
    assert settings.dev_guild_id is None and settings.log_level == "INFO"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DISCORD_TOKEN", ""),
        ("DISCORD_TOKEN", "two words"),
        ("DEV_GUILD_ID", "my-server"),
        ("DEV_GUILD_ID", "0"),
        ("DEV_GUILD_ID", "-5"),
        ("DEV_GUILD_ID", "99999999999999999999999"),
        ("DISCORD_API_BASE", "discord.com/api"),
        ("DISCORD_API_BASE", "ws://127.0.0.1/api"),
        ("DISCORD_GATEWAY_URL", "http://127.0.0.1/"),
        ("LOG_LEVEL", "LOUD"),
        ("TURN_TIMEOUT_SECONDS", "five minutes"),
        ("TURN_TIMEOUT_SECONDS", "0"),
        ("TURN_TIMEOUT_SECONDS", "nan"),
        ("TURN_TIMEOUT_SECONDS", "inf"),
        ("CHALLENGE_TIMEOUT_SECONDS", "-1"),
        ("CHALLENGE_TIMEOUT_SECONDS", "2h"),  # the servers' bound: at most an hour
        ("TURN_TIMEOUT_SECONDS", "2d"),
        ("TURN_TIMEOUT_SECONDS", "1.5h"),
        ("CHALLENGE_COOLDOWN_SECONDS", "1h1s"),
        ("REVIEW_COOLDOWN_SECONDS", "2h"),
        ("PING_GRACE_SECONDS", "61m"),
        ("GAMES_PER_MEMBER", "6"),
        ("SERVER_GAMES", "101"),
        ("CHALLENGE_REACH", "21"),
        ("AI_WORKERS", "0"),
        ("AI_WORKERS", "2.5"),
        ("AI_WORKERS", "1000"),
        ("SWEEP_INTERVAL_SECONDS", "x"),
        ("SHUTDOWN_GRACE_SECONDS", "1e9"),
        ("DATABASE_URL", "mysql://bot@db/ttt"),
        ("DATABASE_URL", "data/tictactoe.db"),
        ("DATABASE_URL", "postgresql:///tictactoe"),  # no server named
    ],
)
def test_bad_values_are_rejected_naming_the_setting(name: str, value: str) -> None:
    env = {"DISCORD_TOKEN": TOKEN, name: value}
    with pytest.raises(SettingsError) as info:
        Settings.from_env(env)
    assert info.value.name == name
    assert str(info.value).startswith(f"{name}: ")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("count", "ids", "expected"),
    [
        ("4", "0-3", (0, 1, 2, 3)),
        ("6", "0,2,5", (0, 2, 5)),
        ("10", "4-7,9", (4, 5, 6, 7, 9)),
        ("10", " 9 , 2 - 3 ", (2, 3, 9)),  # sorted, spaces allowed around items and dashes
        ("1", "0", (0,)),
        ("16", "15", (15,)),
        ("3", None, None),  # a count alone: this process runs every shard of it
    ],
)
def test_shard_ranges(count: str, ids: str | None, expected: tuple[int, ...] | None) -> None:
    env = {"DISCORD_TOKEN": TOKEN, "SHARD_COUNT": count}
    if ids is not None:
        env["SHARD_IDS"] = ids
    settings = Settings.from_env(env)
    assert settings.shard_count == int(count)
    assert settings.shard_ids == expected


@pytest.mark.parametrize(
    ("env", "name", "problem"),
    [
        ({"SHARD_COUNT": "0"}, "SHARD_COUNT", "must be from 1 to 100000, not 0"),
        ({"SHARD_COUNT": "two"}, "SHARD_COUNT", "must be a whole number, not 'two'"),
        ({"SHARD_COUNT": "1.5"}, "SHARD_COUNT", "must be a whole number"),
        ({"SHARD_COUNT": "-2"}, "SHARD_COUNT", "must be a whole number"),
        ({"SHARD_COUNT": "100001"}, "SHARD_COUNT", "must be from 1 to 100000"),
        ({"SHARD_IDS": "0-3"}, "SHARD_IDS", "needs SHARD_COUNT"),
        ({"SHARD_COUNT": "x", "SHARD_IDS": "0"}, "SHARD_COUNT", "must be a whole number"),
        ({"SHARD_COUNT": "4", "SHARD_IDS": "0-4"}, "SHARD_IDS", "shard 4 does not exist"),
        ({"SHARD_COUNT": "4", "SHARD_IDS": "7"}, "SHARD_IDS", "ids go from 0 to 3"),
        ({"SHARD_COUNT": "4", "SHARD_IDS": "3-1"}, "SHARD_IDS", "runs backwards; write 1-3"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "0-3,2"}, "SHARD_IDS", "lists shard 2 more than once"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "1,1"}, "SHARD_IDS", "lists shard 1 more than once"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "0,,1"}, "SHARD_IDS", "must list shard ids and ranges"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "-1"}, "SHARD_IDS", "must list shard ids and ranges"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "0-"}, "SHARD_IDS", "must list shard ids and ranges"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "0..3"}, "SHARD_IDS", "such as 0-3 or 0,2,5"),
        ({"SHARD_COUNT": "8", "SHARD_IDS": "\u0663"}, "SHARD_IDS", "must list shard ids"),
    ],
)
def test_bad_shard_settings_name_the_variable_and_the_problem(
    env: dict[str, str], name: str, problem: str
) -> None:
    with pytest.raises(SettingsError) as info:
        Settings.from_env({"DISCORD_TOKEN": TOKEN, **env})
    assert info.value.name == name
    assert str(info.value).startswith(f"{name}: ")
    assert problem in str(info.value)


@pytest.mark.parametrize(
    ("api_base", "gateway"),
    [
        ("http://127.0.0.1:8080/api/v10", "ws://127.0.0.1:8080/gateway"),
        ("http://127.45.6.7/api/v10", "ws://127.255.255.254/"),
        ("http://[::1]:8080/api/v10", "ws://[::1]:8080/"),
        ("http://localhost:8080/api/v10", "ws://LOCALHOST/"),
        ("https://proxy.example.com/api/v10", "wss://gateway.example.com/"),
        ("https://10.0.0.5/api/v10", "wss://10.0.0.5/"),
    ],
)
def test_plain_http_and_ws_are_accepted_for_loopback_only(api_base: str, gateway: str) -> None:
    env = {"DISCORD_TOKEN": TOKEN, "DISCORD_API_BASE": api_base, "DISCORD_GATEWAY_URL": gateway}
    settings = Settings.from_env(env)
    assert (settings.api_base, settings.gateway_url) == (api_base.rstrip("/"), gateway.rstrip("/"))


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DISCORD_API_BASE", "http://proxy.example.com/api/v10"),
        ("DISCORD_API_BASE", "http://10.0.0.5:8080/api/v10"),
        ("DISCORD_API_BASE", "http://0.0.0.0:8080/api/v10"),
        ("DISCORD_API_BASE", "http://[::ffff:10.0.0.5]/api/v10"),
        ("DISCORD_API_BASE", "http://127.0.0.1.nip.io/api/v10"),  # a name: resolves anywhere
        ("DISCORD_API_BASE", "http://localhost.example.com/api/v10"),
        ("DISCORD_GATEWAY_URL", "ws://gateway.example.com/"),
        ("DISCORD_GATEWAY_URL", "ws://192.168.1.2:8080/"),
    ],
)
def test_plain_http_and_ws_elsewhere_are_refused(name: str, value: str) -> None:
    with pytest.raises(SettingsError) as info:
        Settings.from_env({"DISCORD_TOKEN": TOKEN, name: value})
    assert info.value.name == name
    secure = "https" if name == "DISCORD_API_BASE" else "wss"
    assert str(info.value).startswith(f"{name}: must use {secure}:// (")
    assert repr(value) in str(info.value) and "\n" not in str(info.value)


def test_plain_http_elsewhere_stops_the_bot_with_one_line(tmp_path: Path) -> None:
    env = {"DISCORD_TOKEN": TOKEN, "DISCORD_API_BASE": "http://proxy.example.com/api/v10"}
    result = run_bot(tmp_path, env)
    assert result.returncode == 2
    assert one_error_line(result).startswith("error: DISCORD_API_BASE: must use https:// (")
    assert result.stderr.count("\n") == 1


def test_token_is_not_in_repr() -> None:
    settings = Settings.from_env({"DISCORD_TOKEN": TOKEN})
    assert TOKEN not in repr(settings) and TOKEN not in str(settings)


def test_token_is_redacted_from_logs(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level, logging.lastResort
    try:
        configure_logging(Settings.from_env({"DISCORD_TOKEN": TOKEN}))
        logging.getLogger("discord.http").warning("sent header Bot %s", TOKEN)
        logging.getLogger("bot").info("%r", Settings(token=TOKEN))
        try:
            raise RuntimeError(f"header Bot {TOKEN}")
        except RuntimeError:
            logging.getLogger("bot").exception("failed")
    finally:
        root.handlers[:], level, logging.lastResort = saved
        root.setLevel(level)
    err = capsys.readouterr().err
    assert "sent header Bot [token]" in err
    assert "RuntimeError: header Bot [token]" in err
    assert TOKEN not in err


# -- the entry point as a real process ----------------------------------------------------


def run_bot(
    cwd: Path, env: dict[str, str], *args: str, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    """``python -m bot`` with only ``env`` (plus what Python needs) in a folder of its own."""
    clean = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO), **env}
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=cwd,
        env=clean,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def test_missing_token_exits_with_one_line(tmp_path: Path) -> None:
    result = run_bot(tmp_path, {})
    assert result.returncode == 2
    assert one_error_line(result).startswith("error: DISCORD_TOKEN: is not set")
    assert result.stderr.count("\n") == 1


def test_dotenv_in_the_working_folder_is_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("DISCORD_TOKEN=abc\nTURN_TIMEOUT_SECONDS=soon\n")
    result = run_bot(tmp_path, {})
    assert one_error_line(result).startswith("error: TURN_TIMEOUT_SECONDS:")


def test_unusable_database_path_exits_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "plain-file").write_text("")
    result = run_bot(
        tmp_path, {"DISCORD_TOKEN": TOKEN, "DATABASE_PATH": str(tmp_path / "plain-file" / "db")}
    )
    assert result.returncode == 1
    assert one_error_line(result).startswith("error: DATABASE_PATH: ")
    result = run_bot(tmp_path, {"DISCORD_TOKEN": TOKEN, "DATABASE_PATH": str(tmp_path)})
    assert one_error_line(result).startswith("error: DATABASE_PATH: ")
    assert TOKEN not in result.stderr
    (tmp_path / "garbage.db").write_bytes(b"this is not a database" * 100)
    result = run_bot(
        tmp_path, {"DISCORD_TOKEN": TOKEN, "DATABASE_PATH": str(tmp_path / "garbage.db")}
    )
    assert one_error_line(result).startswith("error: DATABASE_PATH: ")
    assert "not a database" in result.stderr


@contextlib.contextmanager
def api_stand_in(
    port: int, handler: Callable[[web.Request], Awaitable[web.Response]]
) -> Iterator[str]:
    """An HTTP server on 127.0.0.1:``port`` answering every request with ``handler``, in a
    thread of its own; yields its API base URL."""
    import asyncio
    import threading

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/api/v10"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.run_until_complete(runner.cleanup())
        loop.close()


@pytest.fixture
def rejecting_api(unused_tcp_port: int) -> Iterator[str]:
    """A stand-in for Discord's REST API that answers every request with 401."""

    async def unauthorized(request: web.Request) -> web.Response:
        return web.json_response({"message": "401: Unauthorized", "code": 0}, status=401)

    with api_stand_in(unused_tcp_port, unauthorized) as base:
        yield base


def test_rejected_token_exits_with_one_line(tmp_path: Path, rejecting_api: str) -> None:
    env = {
        "DISCORD_TOKEN": TOKEN,
        "DATABASE_PATH": str(tmp_path / "db" / "ttt.db"),
        "DISCORD_API_BASE": rejecting_api,
        "DISCORD_GATEWAY_URL": "ws://127.0.0.1:9/",
    }
    result = run_bot(tmp_path, env)
    assert result.returncode == 1
    assert (
        one_error_line(result) == "error: DISCORD_TOKEN: Discord rejected the token (LoginFailure)"
    )
    assert TOKEN not in result.stderr
    assert (tmp_path / "db" / "ttt.db").exists()


def test_database_url_chooses_postgresql_and_stays_out_of_repr() -> None:
    url = "postgresql://bot:hunter2@db:5432/tictactoe"
    settings = Settings.from_env({"DISCORD_TOKEN": TOKEN, "DATABASE_URL": url})
    assert settings.database == url and "hunter2" not in repr(settings)
    socket = "postgres://bot@/tictactoe?host=/run/postgresql"
    assert Settings.from_env({"DISCORD_TOKEN": TOKEN, "DATABASE_URL": socket}).database == socket
    assert Settings.from_env({"DISCORD_TOKEN": TOKEN}).database == DEFAULT_DATABASE_PATH


def test_unreachable_postgresql_exits_with_one_line(tmp_path: Path, unused_tcp_port: int) -> None:
    url = f"postgresql://bot:hunter2@127.0.0.1:{unused_tcp_port}/tictactoe"
    result = run_bot(tmp_path, {"DISCORD_TOKEN": TOKEN, "DATABASE_URL": url})
    assert result.returncode == 1
    line = one_error_line(result)
    assert line.startswith("error: DATABASE_URL: cannot connect to postgresql://bot@127.0.0.1:")
    assert "hunter2" not in result.stderr and TOKEN not in result.stderr
    assert not (tmp_path / "data").exists(), "the SQLite default is not touched"


def test_unreachable_api_exits_with_one_line(tmp_path: Path, unused_tcp_port: int) -> None:
    env = {
        "DISCORD_TOKEN": TOKEN,
        "DATABASE_PATH": str(tmp_path / "ttt.db"),
        "DISCORD_API_BASE": f"http://127.0.0.1:{unused_tcp_port}/api/v10",
    }
    result = run_bot(tmp_path, env)
    assert one_error_line(result).startswith("error: Cannot reach Discord (http://127.0.0.1:")


def test_the_endpoint_seam_points_discord_py_at_the_emulator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import discord
    import yarl

    monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)
    gateway = discord.gateway.DiscordWebSocket
    monkeypatch.setattr(gateway, "DEFAULT_GATEWAY", gateway.DEFAULT_GATEWAY)
    settings = Settings.from_env(
        {
            "DISCORD_TOKEN": "t",
            "DISCORD_API_BASE": "http://127.0.0.1:9/api/v10",
            "DISCORD_GATEWAY_URL": "ws://127.0.0.1:9/",
        }
    )
    use_endpoints(settings)
    assert discord.http.Route.BASE == "http://127.0.0.1:9/api/v10"
    assert yarl.URL("ws://127.0.0.1:9") == gateway.DEFAULT_GATEWAY


def test_the_endpoint_seam_fails_loudly_if_discord_py_renamed_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """If a discord.py upgrade drops ``Route.BASE``, the bot must stop at start-up rather
    than quietly send its requests (and the token) to discord.com."""
    import discord

    monkeypatch.delattr(discord.http.Route, "BASE")
    settings = Settings.from_env(
        {"DISCORD_TOKEN": "t", "DISCORD_API_BASE": "http://127.0.0.1:9/api/v10"}
    )
    with pytest.raises(FatalError, match="DISCORD_API_BASE"):
        use_endpoints(settings)
