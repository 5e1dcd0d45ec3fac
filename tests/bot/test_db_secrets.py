"""The database's password stays secret, in every form a URL or libpq can carry it: the
user part (``user:password@``), ``?password=``/``?sslpassword=``, PGPASSWORD and passfile
contents. Redacted from what the bot logs and prints, never in a URL it shows, and
DATABASE_URL is out of the environment once read (no child process inherits it:
tests/e2e/test_inherited_secrets.py)."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

from bot.__main__ import REDACTED_PASSWORD, RedactingHandler
from bot.db.postgres import without_password
from bot.settings import database_secrets
from tests.bot.test_settings import TOKEN, one_error_line, run_bot

URL = "postgresql://bot:hunter2@db:5432/tt?password=swordfish&sslpassword=keyphrase&sslmode=require"


def test_a_url_is_shown_without_any_password() -> None:
    shown = without_password(URL)
    for secret in ("hunter2", "swordfish", "keyphrase"):
        assert secret not in shown, shown
    assert shown == "postgresql://bot@db:5432/tt?sslmode=require"
    assert without_password("postgresql://bot@[::1") == "the database URL"  # unparsable


def test_every_form_of_password_is_found(tmp_path: Path) -> None:
    passfile = tmp_path / "pgpass"
    passfile.write_text(
        "# host:port:database:user:password\n"
        "db:5432:tt:bot:from\\:the\\\\file\n"
        "*:*:*:other:second one\n"
    )
    env = {"PGPASSWORD": "from-env", "PGPASSFILE": str(passfile)}
    assert database_secrets(URL, env) == {
        "hunter2",
        "swordfish",
        "keyphrase",
        "from-env",
        "from:the\\file",
        "second one",
    }
    named = f"postgresql://bot@db/tt?passfile={passfile}"
    assert database_secrets(named, {}) == {"from:the\\file", "second one"}
    assert database_secrets(None, {"PGPASSFILE": str(tmp_path / "none")}) == set()


def test_the_log_redacts_each_password_as_written_or_percent_encoded() -> None:
    stream = io.StringIO()
    handler = RedactingHandler("tok.en", {"p@ss/word", "swordfish"})
    handler.setStream(stream)
    log = logging.getLogger("test.db_secrets")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.error("connecting to postgresql://bot:p%40ss%2Fword@db/tt?password=swordfish")
        try:
            raise ValueError("bad password 'p@ss/word' for token tok.en")
        except ValueError:
            log.exception("failed")
    finally:
        log.removeHandler(handler)
    text = stream.getvalue()
    for secret in ("p@ss/word", "p%40ss%2Fword", "swordfish", "tok.en"):
        assert secret not in text, text
    assert text.count(REDACTED_PASSWORD) == 4, text  # the source line in the traceback too


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://bot:hunter2@127.0.0.1:9/tt?password=swordfish&passfile={passfile}",
        "postgresql://bot:hunter2@127.0.0.1:9/tt?password=swordfish&port=x{passfile}",
        "postgresql://bot:hunter2@[::1/tt?password=swordfish",
    ],
    ids=["unreachable", "bad-port", "unparsable"],
)
def test_a_database_url_that_fails_shows_no_password(tmp_path: Path, url: str) -> None:
    """The process stops with one line naming DATABASE_URL, the password in no form."""
    passfile = tmp_path / "pgpass"
    passfile.write_text("*:*:*:*:filesecret\n")
    env = {
        "DISCORD_TOKEN": TOKEN,
        "DATABASE_URL": url.format(passfile=passfile),
        "PGPASSWORD": "envsecret",
    }
    result = run_bot(tmp_path, env)
    assert result.returncode in (1, 2), result.stderr
    assert "DATABASE_URL" in one_error_line(result), result.stderr
    for secret in ("hunter2", "swordfish", "filesecret", "envsecret"):
        assert secret not in result.stderr + result.stdout, result.stderr
