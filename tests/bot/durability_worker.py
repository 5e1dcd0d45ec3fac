"""Writes games to a database until killed, reporting each write that returned.

    python tests/bot/durability_worker.py DB SEED thread|process|end

``thread`` and ``process`` (the bot's search executor) play games through
``GameService``: the worker prints ``READY`` once started, then for every call that
returned a game, one line ``MOVE <game id> <status> <moves, comma-separated>``, flushed
before the next call. The durability test SIGKILLs it at random moments and checks that
the database holds every reported move.

``end`` uses the store alone: it ends one game between two new members with
``Store.end_game`` (each member's rating decided by a stand-in settle function),
prints ``ENDED <game id> <x id> <x rating> <o id> <o rating>`` and SIGKILLs itself
at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import os
import random
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.app import GameService
from bot.config import ServiceConfig
from bot.games.queries import Store
from bot.models import (
    First,
    Game,
    GameStatus,
    PlayerRow,
    Record,
    Result,
    Settlement,
)
from bot.tunables import Values
from engine import Mark
from engine.levels import LEVELS

ROOMY = {"per_member": 50, "per_server": 100}

GUILD = 77
STREAMS = 4


def report(game: Game) -> None:
    moves = ",".join(map(str, game.moves))
    sys.stdout.write(f"MOVE {game.id} {game.status.value} {moves}\n")
    sys.stdout.flush()


async def stream(service: GameService, rng: random.Random, guild: int) -> None:
    while True:
        channel = rng.getrandbits(48)
        players = (rng.getrandbits(40) + 1, rng.getrandbits(40) + 1)
        size = rng.choice((3, 3, 3, 4))
        if rng.random() < 0.5:
            challenge = await service.challenges.create(
                guild, channel, *players, width=size, height=size, first=First.ME
            )
            game = await service.challenges.accept(challenge.id, players[1])
        else:
            level = rng.choice(LEVELS[:2]) if size > 3 else rng.choice(LEVELS)
            game = await service.start_bot_game(
                guild, channel, players[0], level=level, width=size, height=size
            )
        report(game)
        while game.is_live:
            if rng.random() < 0.02:
                game = await service.endings.forfeit(game.id, game.human_ids[0])
            else:
                player = game.current_player_id
                assert player is not None
                cell = rng.choice([c for c in range(size * size) if c not in game.moves])
                game = (await service.move(game.id, player, cell, game.move_no)).game
            report(game)


async def play(path: str, seed: int, executor_kind: str) -> None:
    store = await Store.open(path)
    executor = (
        concurrent.futures.ThreadPoolExecutor(max_workers=1) if executor_kind == "thread" else None
    )
    service = GameService(
        store, ServiceConfig(Values(turn_timeout=10**9)), executor=executor, rng=random.Random(seed)
    )
    await service.start()  # completes any game a previous run left waiting for the bot
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    # A server per run: each killed run leaves up to STREAMS live games behind, which
    # would fill one server's cap of live games after a few runs.
    guild = GUILD * 1000 + seed
    await asyncio.gather(
        *(stream(service, random.Random(seed * 100 + i), guild) for i in range(STREAMS))
    )


async def end_one_game(path: str, seed: int) -> None:
    rng = random.Random(seed)
    x, o = rng.getrandbits(40) + 1, rng.getrandbits(40) + 1
    x_rating, o_rating = 1500.0 + rng.randint(1, 99), 1500.0 - rng.randint(1, 99)
    store = await Store.open(path)
    now = 1_700_000_000.0 + seed
    game = await store.insert_game(
        Game(
            id=0,
            guild_id=GUILD,
            channel_id=rng.getrandbits(48),
            message_id=None,
            x_id=x,
            o_id=o,
            bot_level=None,
            width=3,
            height=3,
            k=3,
            moves=(0, 3, 1, 4),
            status=GameStatus.ACTIVE,
            result=None,
            winner_id=None,
            winner_mark=None,
            created_at=now,
            updated_at=now,
            turn_deadline=now + 300,
        ),
        exclusive=True,
        **ROOMY,
    )
    final = dataclasses.replace(
        game,
        moves=(0, 3, 1, 4, 2),
        status=GameStatus.FINISHED,
        result=Result.WIN,
        winner_id=x,
        winner_mark=Mark.X,
        updated_at=now + 1,
        turn_deadline=None,
    )

    def settle(rows: Mapping[int, PlayerRow]) -> Settlement:
        return Settlement(
            rated=True,
            players=(
                (x, PlayerRow(x_rating, 1, Record(wins=1), 1, 1)),
                (o, PlayerRow(o_rating, 1, Record(losses=1), -1, 0)),
            ),
        )

    assert await store.end_game(final, game, settle)
    sys.stdout.write(f"ENDED {game.id} {x} {x_rating!r} {o} {o_rating!r}\n")
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)  # no close(), no exit handlers: just gone


if __name__ == "__main__":
    database, seed_text, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    if kind == "end":
        asyncio.run(end_one_game(database, int(seed_text)))
    else:
        asyncio.run(play(database, int(seed_text), kind))
