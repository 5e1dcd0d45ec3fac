"""What members' chatter costs the bot: CPU per message posted and deleted in its channels.

    python -m bench.chatter                  # 2,000 messages in 10 channels, 3 rounds
    python -m bench.chatter --messages 300 --rounds 1

Members post ``--messages`` plain messages spread over 10 channels of a server the bot is
in (at most 500 a second), then delete them; the bot's CPU (its process, user + system,
from /proc, 10 ms ticks) is read over each phase and ``--settle`` seconds after it. Three
kinds run in turns, each with a fresh emulator, bot and database:

- ``before``: the bot as it was (``bench.chatter_bot``): server messages' events on, and a
  read of the channel's games for each deleted message;
- ``after``: the bot as it is: the servers' intent only, so no message reaches it;
- ``idle``: the bot as it is, for the same time with no messages (what the sweep and the
  heartbeats cost meanwhile).

Prints each kind's median µs of bot CPU per message created and per message deleted, and
the ratios to ``before``: the figure to compare between machines.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from bench import harness
from bench.procs import cpu_seconds
from bot.launcher import bot_env
from discord_emulator import Channel, Emulator, Message, User

KINDS = ("before", "after", "idle")
CHANNELS = 10
PER_SECOND = 500


class Chatter:
    def __init__(self, messages: int, settle: float) -> None:
        self.messages = messages
        self.settle = settle

    def kinds(self) -> tuple[str, ...]:
        return KINDS

    async def run_once(self, kind: str, number: int) -> dict[str, float]:
        with tempfile.TemporaryDirectory(prefix="chatter-") as folder:
            async with Emulator() as emu:
                guild = emu.add_guild("Chatter")
                channels = [emu.add_text_channel(guild, f"talk{n}") for n in range(CHANNELS)]
                members = [emu.add_user(f"m{n}") for n in range(CHANNELS)]
                for member in members:
                    emu.add_member(guild, member)
                module = "bench.chatter_bot" if kind == "before" else "bot"
                env = bot_env(emu, Path(folder) / "bench.db")
                async with harness.bot(emu, Path(folder), env, module=module) as process:
                    await asyncio.sleep(self.settle)  # start-up's work done
                    figures = await self._measure(emu, process.pid, kind, channels, members)
        created, deleted = figures
        print(f"run {number} ({kind}): {created:.1f} µs a message posted, {deleted:.1f} deleted")
        return {"µs per create": created, "µs per delete": deleted}

    async def _measure(
        self, emu: Emulator, pid: int, kind: str, channels: list[Channel], members: list[User]
    ) -> tuple[float, float]:
        posted: list[tuple[User, Message]] = []

        async def post(n: int) -> None:
            which = n % CHANNELS
            message = await emu.send_message(members[which], channels[which], f"hello {n}")
            posted.append((members[which], message))

        async def delete(n: int) -> None:
            member, message = posted[n]
            emu.delete_message(member, message)

        phases = []
        for action in (post, delete):
            before = cpu_seconds(pid)
            began = time.monotonic()
            for n in range(self.messages):
                if kind != "idle":
                    await action(n)
                wait = began + (n + 1) / PER_SECOND - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
            await asyncio.sleep(self.settle)  # what the bot still had to do
            phases.append((cpu_seconds(pid) - before) / self.messages * 1e6)
        return phases[0], phases[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--settle", type=float, default=1.0, help="seconds waited after start-up and each phase"
    )
    options = parser.parse_args()
    results = harness.play(Chatter(options.messages, options.settle), options.rounds, rotate=True)
    harness.compare(results, width=14)


if __name__ == "__main__":
    main()
