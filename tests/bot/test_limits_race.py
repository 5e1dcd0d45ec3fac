"""Two processes racing for the last allowed place: the database lets exactly one in.

Each round starts two real Python processes on one database (a SQLite file, then a
PostgreSQL database, where the server's lock does what SQLite's write lock does); both
wait for a start signal (a file appearing), then try to start a game that only one may
have: the last slot under the server's cap (two members), or the last seat of one member (two
channels). Exactly one succeeds, the other is told why, and the file agrees.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

from bot.games.queries import Store
from tests.pgtools import empty_database, read_rows

ROOT = Path(__file__).resolve().parents[2]
GUILD = 5

RACER = textwrap.dedent(
    """
    import asyncio, pathlib, sys, time
    sys.path.insert(0, {root!r})
    from bot.errors import TooManyGames
    from bot.app import GameService
    from bot.config import ServiceConfig
    from bot.games.queries import Store
    from bot.tunables import Values

    async def main(db, go, channel, player, cap):
        store = await Store.open(db)
        service = GameService(store, ServiceConfig(Values(server_games=cap), inline_cells=0))
        print("READY", flush=True)
        while not pathlib.Path(go).exists():
            time.sleep(0.001)  # spin: both should start within a millisecond
        try:
            await service.start_bot_game({guild}, channel, player, level="easy", first="me")
            print("STARTED", flush=True)
        except TooManyGames as error:
            print("REFUSED", error, flush=True)
        await store.close()

    asyncio.run(main(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])))
    """
).format(root=str(ROOT), guild=GUILD)


async def race_once(db: str | Path, go: Path, racers: list[tuple[int, int]], cap: int) -> list[str]:
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            RACER,
            str(db),
            str(go),
            str(channel),
            str(player),
            str(cap),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for channel, player in racers
    ]
    for process in processes:
        assert process.stdout is not None
        ready = await asyncio.wait_for(process.stdout.readline(), 30)
        assert ready == b"READY\n", (await process.stderr.read()).decode()  # type: ignore[union-attr]
    await asyncio.to_thread(go.touch)
    outputs = []
    for process in processes:
        out, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 0, err.decode()
        outputs.append(out.decode().strip())
    return outputs


@pytest.mark.parametrize(
    ("racers", "cap", "why"),
    [
        ([(1, 11), (2, 22)], 1, "already has 1 live game,"),  # the server's last slot
        ([(1, 11), (2, 11)], 25, "You're already in a game"),  # one member's last seat
    ],
    ids=["server-cap", "member-limit"],
)
async def test_two_processes_race_for_the_last_place(
    tmp_path: Path,
    db_target: str | Path,
    racers: list[tuple[int, int]],
    cap: int,
    why: str,
) -> None:
    for round_ in range(4):
        db = db_target
        if isinstance(db, Path):
            db = tmp_path / f"race{round_}.db"
        else:
            await empty_database(db)
        store = await Store.open(db)  # migrated before the racers open it
        await store.close()
        outputs = await race_once(db, tmp_path / f"go{round_}", racers, cap)
        assert sorted(o.split()[0] for o in outputs) == ["REFUSED", "STARTED"], outputs
        assert any(why in o for o in outputs), outputs
        live = await read_rows(
            db, "SELECT COUNT(*) FROM games WHERE status IN ('active', 'bot_to_move')"
        )
        seats = await read_rows(db, "SELECT COUNT(*) FROM live_seats")
        assert (live, seats) == ([(1,)], [(1,)])
