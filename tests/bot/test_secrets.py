"""The token stays secret: redacted from everything the process prints, and read from
the working folder's ``.env`` only (that the search pool's processes never inherit it is
tests/e2e/test_inherited_secrets.py).

Every test here runs real processes: ``python -m bot`` (against a stand-in API, or
stopping at its settings), or a script that sets up logging as the entry point does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from bot.__main__ import REDACTED, read_environment
from bot.launcher import HOME as REPO
from tests.bot.test_settings import TOKEN, api_stand_in, one_error_line, run_bot

# -- redaction ---------------------------------------------------------------------------

LEAKS = """
import asyncio, gc, logging, sys, threading, warnings

from bot.__main__ import configure_logging, log_stray_errors
from bot.settings import Settings

TOKEN = sys.argv[2]
if sys.argv[1] == "redacted":
    configure_logging(Settings(token=TOKEN))
    log_stray_errors()
log = logging.getLogger("bot.test")


def section(name):
    print(f"=== {name}", file=sys.stderr, flush=True)


section("traceback")
try:
    raise RuntimeError(f"rejected header: Bot {TOKEN}")
except RuntimeError:
    log.exception("the request failed")

section("stack")
log.warning("where am I?", stack_info=True)  # the stack shows this line: TOKEN_IN_SOURCE

section("task")


async def fail():
    raise RuntimeError(f"task with {TOKEN}")


async def leave_a_failed_task():
    asyncio.get_running_loop().create_task(fail())  # never awaited, never kept
    await asyncio.sleep(0.05)
    gc.collect()


asyncio.run(leave_a_failed_task())
gc.collect()

section("third-party")
logging.getLogger("aiohttp.client").warning("sent Authorization: Bot %s", TOKEN)

section("last-resort")
lonely = logging.getLogger("lonely")
lonely.propagate = False
lonely.error("lonely %s", TOKEN)

section("warning")
warnings.warn(f"deprecated {TOKEN}", UserWarning, stacklevel=1)

section("thread")
thread = threading.Thread(target=lambda: 1 / 0 if TOKEN else None, name=f"t-{TOKEN}")
thread.start()
thread.join()


class Leaky:
    def __del__(self):
        raise RuntimeError(f"in __del__ with {TOKEN}")


section("unraisable")
leaky = Leaky()
del leaky
gc.collect()

section("bad-format")
log.error("two places, one value: %s %s", TOKEN)
section("end")
"""

SECTIONS = (
    "traceback",
    "stack",
    "task",
    "third-party",
    "last-resort",
    "warning",
    "thread",
    "unraisable",
    "bad-format",
)


def run_leaks(tmp_path: Path, mode: str) -> dict[str, str]:
    """Run LEAKS (with or without the bot's logging); what each section wrote to stderr."""
    script = tmp_path / "leaks.py"
    script.write_text(LEAKS.replace("TOKEN_IN_SOURCE", TOKEN))
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, str(script), mode, TOKEN],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.rstrip().endswith("=== end"), result.stderr
    parts = result.stderr.split("=== ")[1:]
    return dict(part.split("\n", 1) for part in parts)


def test_the_token_is_redacted_from_everything_the_process_prints(tmp_path: Path) -> None:
    bare = run_leaks(tmp_path, "bare")
    # Without the bot's logging set-up, each of these paths prints the token ...
    for name in SECTIONS:
        assert TOKEN in bare[name], f"{name} did not show the token even unredacted"
    redacted = run_leaks(tmp_path, "redacted")
    # ... and with it, each still prints its report, with the token replaced.
    for name in SECTIONS:
        assert TOKEN not in redacted[name], f"{name} leaked the token:\n{redacted[name]}"
        assert REDACTED in redacted[name], f"{name} printed nothing redacted:\n{redacted[name]}"
    assert "Traceback (most recent call last)" in redacted["traceback"]
    assert "Stack (most recent call last)" in redacted["stack"]
    assert "Task exception was never retrieved" in redacted["task"]
    assert "lonely" in redacted["last-resort"]
    assert "UserWarning" in redacted["warning"]
    assert "ZeroDivisionError" in redacted["thread"]
    assert "Exception ignored in" in redacted["unraisable"]
    assert "--- Logging error ---" in redacted["bad-format"]


@pytest.fixture
def echoing_api(unused_tcp_port: int) -> Iterator[str]:
    """A stand-in for Discord's REST API answering every request with a 400 whose error
    message quotes the Authorization header back, as a misbehaving proxy might."""

    async def echo(request: web.Request) -> web.Response:
        quoted = request.headers.get("Authorization", "")
        body = {"message": f"Invalid header {quoted}", "code": 50035}
        return web.json_response(body, status=400)

    with api_stand_in(unused_tcp_port, echo) as base:
        yield base


def test_a_crash_quoting_the_token_is_logged_with_its_traceback_redacted(
    tmp_path: Path, echoing_api: str
) -> None:
    env = {
        "DISCORD_TOKEN": TOKEN,
        "DATABASE_PATH": str(tmp_path / "ttt.db"),
        "DISCORD_API_BASE": echoing_api,
        "DISCORD_GATEWAY_URL": "ws://127.0.0.1:9/",
    }
    result = run_bot(tmp_path, env)
    assert result.returncode == 1
    assert "CRITICAL bot: The bot stopped on an unexpected error" in result.stderr
    assert "Traceback (most recent call last)" in result.stderr
    assert "discord.errors.HTTPException: 400 Bad Request" in result.stderr
    assert f"Invalid header Bot {REDACTED}" in result.stderr
    assert TOKEN not in result.stderr


def test_a_bad_setting_quoting_the_token_is_redacted(tmp_path: Path) -> None:
    result = run_bot(tmp_path, {"DISCORD_TOKEN": TOKEN, "DEV_GUILD_ID": TOKEN})
    assert result.returncode == 2
    assert (
        one_error_line(result)
        == f"error: DEV_GUILD_ID: must be a server ID (a positive whole number), not '{REDACTED}'"
    )
    assert TOKEN not in result.stderr


# -- .env --------------------------------------------------------------------------------


def test_a_parent_folders_dotenv_is_ignored(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"DISCORD_TOKEN={TOKEN}\n")
    child = tmp_path / "child"
    child.mkdir()
    result = run_bot(child, {})
    assert result.returncode == 2
    assert one_error_line(result).startswith("error: DISCORD_TOKEN: is not set")
    (child / ".env").write_text("DISCORD_TOKEN=abc\nTURN_TIMEOUT_SECONDS=from-the-child\n")
    result = run_bot(child, {})
    assert one_error_line(result) == (
        "error: TURN_TIMEOUT_SECONDS: must be a number of seconds or a duration such as 5m or"
        " 1h30m, not 'from-the-child'"
    )


def test_the_environment_wins_over_dotenv(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("DISCORD_TOKEN=abc\nTURN_TIMEOUT_SECONDS=from-the-file\n")
    result = run_bot(tmp_path, {"TURN_TIMEOUT_SECONDS": "from-the-environment"})
    assert one_error_line(result).endswith("not 'from-the-environment'")
    # A good value in the environment hides the file's bad one: the settings pass, and the
    # start stops later, at the database.
    (tmp_path / "plain-file").write_text("")
    env = {"TURN_TIMEOUT_SECONDS": "30", "DATABASE_PATH": str(tmp_path / "plain-file" / "db")}
    result = run_bot(tmp_path, env)
    assert result.returncode == 1
    assert one_error_line(result).startswith("error: DATABASE_PATH: ")


def test_read_environment_leaves_os_environ_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("TTT_FROM_FILE=file\nTTT_BOTH=file\nTTT_NO_VALUE\n")
    monkeypatch.setenv("TTT_BOTH", "environment")
    monkeypatch.delenv("TTT_FROM_FILE", raising=False)
    env = read_environment(tmp_path)
    assert env["TTT_FROM_FILE"] == "file" and env["TTT_BOTH"] == "environment"
    assert "TTT_NO_VALUE" not in env
    assert "TTT_FROM_FILE" not in os.environ
    assert read_environment(tmp_path / "no-such-folder") == dict(os.environ)


def test_an_unreadable_dotenv_exits_with_one_line(tmp_path: Path) -> None:
    (tmp_path / ".env").write_bytes(b"DISCORD_TOKEN=\xff\xfe\n")
    result = run_bot(tmp_path, {})
    assert result.returncode == 2
    assert one_error_line(result) == "error: .env: cannot be read: it is not UTF-8 text"


def exposed_dotenv_warning(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if "chmod 600" in line]


@pytest.mark.skipif(os.name != "posix", reason="mode bits")
def test_a_dotenv_others_can_read_is_warned_about(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"DISCORD_TOKEN={TOKEN}\n")
    (tmp_path / "plain-file").write_text("")
    env = {"DATABASE_PATH": str(tmp_path / "plain-file" / "db")}  # stops after the warning
    dotenv.chmod(0o644)
    result = run_bot(tmp_path, env)
    [warning] = exposed_dotenv_warning(result)
    assert " WARNING " in warning and "(mode 644)" in warning
    assert one_error_line(result).startswith("error: DATABASE_PATH: ")
    dotenv.chmod(0o600)
    assert exposed_dotenv_warning(run_bot(tmp_path, env)) == []
    # The token from the environment: the file holds no secret, so no warning.
    dotenv.write_text("LOG_LEVEL=INFO\n")
    dotenv.chmod(0o644)
    assert exposed_dotenv_warning(run_bot(tmp_path, {**env, "DISCORD_TOKEN": TOKEN})) == []
