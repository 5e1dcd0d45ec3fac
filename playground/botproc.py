"""The real bot, ``python -m bot``, as a child process pointed at the playground's emulator.

It runs in the data folder (so it reads no ``.env`` of the user's with a real token), with
its SQLite file there and its log in ``bot.log`` beside it, in a session of its own: a
Ctrl-C in the terminal reaches the playground only, which then stops the bot with SIGTERM
(the bot's orderly shutdown) and waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import sys
from pathlib import Path

from discord_emulator import Emulator, Guild

DATABASE_FILE = "tictactoe.db"
LOG_FILE = "bot.log"
STOP_WITHIN = 20.0
PLAYGROUND_ONLY = ("DISCORD_", "DATABASE_", "DEV_GUILD_ID", "SHARD_")
"""Variables of the user's environment the bot never sees here: they would point it at real
Discord, another database or other shards. Its other settings (``TURN_TIMEOUT_SECONDS``...)
pass through."""


def bot_environment(emu: Emulator, guild: Guild, folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(PLAYGROUND_ONLY)}
    spec = importlib.util.find_spec("bot")
    if spec is not None and spec.submodule_search_locations:
        # Run the same bot as this playground, installed or from a checkout.
        home = str(Path(next(iter(spec.submodule_search_locations))).parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (home, env.get("PYTHONPATH")) if p)
    env.update(
        DISCORD_TOKEN=emu.bot_token,
        DISCORD_API_BASE=emu.api_base,
        DISCORD_GATEWAY_URL=emu.gateway_url,
        DATABASE_PATH=str(folder / DATABASE_FILE),
        # The commands go to the playground's server at every start, at once.
        DEV_GUILD_ID=str(guild.id),
        PYTHONUNBUFFERED="1",
    )
    env.setdefault("SHUTDOWN_GRACE_SECONDS", "5")
    return env


class BotProcess:
    def __init__(self, process: asyncio.subprocess.Process, log_path: Path, syncs: int) -> None:
        self.process = process
        self.log_path = log_path
        self.syncs_before = syncs

    @classmethod
    async def start(cls, emu: Emulator, guild: Guild, folder: Path) -> BotProcess:
        log_path = folder / LOG_FILE
        syncs = emu.command_syncs
        with log_path.open("ab") as log:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bot",
                cwd=folder,
                env=bot_environment(emu, guild, folder),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        return cls(process, log_path, syncs)

    @property
    def running(self) -> bool:
        return self.process.returncode is None

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    async def wait_ready(self, emu: Emulator, guild: Guild) -> None:
        """Until the bot is connected and has synced its commands (to ``guild``: a restored
        world already holds those of the last run). RuntimeError if it exits; TimeoutError
        after the emulator's ``wait_timeout``."""

        def synced() -> bool:
            return (
                emu.gateway.connected
                and emu.command_syncs > self.syncs_before
                and "tictactoe" in _names(emu, guild)
            )

        waiting = asyncio.ensure_future(emu.wait_for(synced))
        exited = asyncio.ensure_future(self.process.wait())
        done, _ = await asyncio.wait({waiting, exited}, return_when=asyncio.FIRST_COMPLETED)
        if waiting in done:
            exited.cancel()
            waiting.result()
            return
        waiting.cancel()
        raise RuntimeError(f"the bot exited with status {self.process.returncode}")

    async def stop(self) -> int:
        if self.running:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), STOP_WITHIN)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        return self.process.returncode or 0


def _names(emu: Emulator, guild: Guild) -> set[str]:
    return {c["name"] for c in emu.commands.scopes.get(guild.id, [])}
