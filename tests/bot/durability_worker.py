"""Plays games on a database until killed, reporting each move the service said was done.

    python tests/bot/durability_worker.py DB SEED [thread|process][,restarts]

Prints ``READY`` once started, then for every call that returned a game, one line
``MOVE <game id> <status> <moves, comma-separated>``, flushed before the next call. The
durability test SIGKILLs it at random moments and checks that the database holds every
reported move. With ``,restarts`` the store checkpoints every 5 ms and restarts the WAL
at every checkpoint, so that kills also land inside those.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import bot.storage
from bot.models import First, Game
from bot.service import GameService, ServiceConfig
from bot.storage import Store
from engine.levels import LEVELS

GUILD = 77
STREAMS = 4


def report(game: Game) -> None:
    moves = ",".join(map(str, game.moves))
    sys.stdout.write(f"MOVE {game.id} {game.status.value} {moves}\n")
    sys.stdout.flush()


async def stream(service: GameService, rng: random.Random) -> None:
    while True:
        channel = rng.getrandbits(48)
        players = (rng.getrandbits(40) + 1, rng.getrandbits(40) + 1)
        size = rng.choice((3, 3, 3, 4))
        if rng.random() < 0.5:
            challenge = await service.challenge(
                GUILD, channel, *players, width=size, height=size, first=First.ME
            )
            game = await service.accept(challenge.id, players[1])
        else:
            level = rng.choice(LEVELS[:2]) if size > 3 else rng.choice(LEVELS)
            game = await service.start_bot_game(
                GUILD, channel, players[0], level=level, width=size, height=size
            )
        report(game)
        while game.is_live:
            if rng.random() < 0.02:
                game = await service.forfeit(game.id, game.human_ids[0])
            else:
                player = game.current_player_id
                assert player is not None
                cell = rng.choice([c for c in range(size * size) if c not in game.moves])
                game = await service.play(game.id, player, cell, game.move_no)
            report(game)


async def main(path: str, seed: int, executor_kind: str) -> None:
    executor_kind, _, mode = executor_kind.partition(",")
    if mode == "restarts":
        bot.storage.CHECKPOINT_SECONDS, bot.storage.WAL_RESTART_FRAMES = 0.005, 1
    store = await Store.open(path)
    executor = (
        concurrent.futures.ThreadPoolExecutor(max_workers=1) if executor_kind == "thread" else None
    )
    service = GameService(
        store, ServiceConfig(turn_timeout=10**9), executor=executor, rng=random.Random(seed)
    )
    await service.start()  # completes any game a previous run left waiting for the bot
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    await asyncio.gather(*(stream(service, random.Random(seed * 100 + i)) for i in range(STREAMS)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "thread"))
