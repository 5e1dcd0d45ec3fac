"""The search pool's processes inherit no secret: neither the token (from the
environment or ``.env``) nor ``DATABASE_URL``, whose password is also in no log line.
Each test starts ``python -m bot`` against the emulator and reads its children in /proc.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yarl

from bot.launcher import BotProcess, bot_env, descendants
from discord_emulator import Emulator


def command_line(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def environment_of(pid: int) -> bytes:
    return Path(f"/proc/{pid}/environ").read_bytes() + command_line(pid)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("given_in", ["dotenv", "environment"])
async def test_the_search_pools_processes_do_not_inherit_the_token(
    tmp_path: Path, given_in: str
) -> None:
    async with Emulator() as emu:
        env = bot_env(emu, tmp_path / "ttt.db", AI_WORKERS="2")
        if given_in == "dotenv":
            (tmp_path / ".env").write_text(f"DISCORD_TOKEN={env.pop('DISCORD_TOKEN')}\n")
            (tmp_path / ".env").chmod(0o600)
        bot = await BotProcess.start(env, tmp_path)
        try:
            async with asyncio.timeout(30):  # the pool has started and warmed up by READY
                await bot.wait_until(emu.wait_for(lambda: bool(emu.dispatched("READY"))))
            processes = descendants(bot.process.pid)
            workers = [pid for pid in processes if b"forkserver" in command_line(pid)]
            # The forkserver and the two workers it forked (plus the resource tracker).
            assert len(workers) >= 3, [command_line(pid) for pid in processes]
            for pid in processes:
                environ = environment_of(pid)
                assert b"DISCORD_TOKEN" not in environ, pid
                assert emu.bot_token.encode() not in environ, pid
        finally:
            returncode = await bot.stop()
        assert returncode == 0, bot.log()
        assert emu.bot_token not in bot.log()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
async def test_the_search_pools_processes_do_not_inherit_database_url(
    tmp_path: Path, pg_url: str
) -> None:
    """On PostgreSQL, with the password in the URL twice (the server trusts local users,
    so it connects all the same): in no log line, and no child has DATABASE_URL."""
    parsed = yarl.URL(pg_url).with_user("postgres").with_password("hunter2")
    url = str(parsed.update_query(password="swordfish"))
    async with Emulator() as emu:
        env = bot_env(emu, tmp_path / "unused.db", AI_WORKERS="2", DATABASE_URL=url)
        bot = await BotProcess.start(env, tmp_path)
        try:
            async with asyncio.timeout(30):
                await bot.wait_until(emu.wait_for(lambda: bool(emu.dispatched("READY"))))
            processes = descendants(bot.process.pid)
            workers = [pid for pid in processes if b"forkserver" in command_line(pid)]
            assert len(workers) >= 3, [command_line(pid) for pid in processes]
            for pid in processes:  # the bot's own /proc environ is as it was at exec
                environ = environment_of(pid)
                assert b"DATABASE_URL" not in environ, pid
                assert b"hunter2" not in environ and b"swordfish" not in environ, pid
        finally:
            returncode = await bot.stop()
        assert returncode == 0, bot.log()
        log = bot.log()
        assert "Database: postgresql at postgresql://postgres@" in log, log
        assert "hunter2" not in log and "swordfish" not in log, log
