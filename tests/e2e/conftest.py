"""Fixtures of the end-to-end tests: the emulator and one bot shared by a module's tests
(``arena``), run in the module's event loop (tests/e2e/inprocess.py); the helpers they
use are in tests/e2e/helpers.py.

Every module runs on SQLite. One module per feature runs on PostgreSQL too
(``POSTGRESQL = True`` in the module); the store's contract tests (tests/bot) run every
query on both engines, so these check the wiring, not each query again:

- games: test_bot_games.py
- challenges: test_member_games.py
- turn pings and call-offs: test_turn_pings.py
- privacy: test_forget_me.py
- server settings: test_finding_commands.py
- stats, ratings and reviews: test_ratings.py
- upkeep (timeouts, deleted boards, channels and servers): test_lasting_data.py

The tests whose subject is the process itself (signals, SIGKILL, restarts, two
processes on one database, inherited secrets, the command line) start ``python -m bot``
with bot.launcher (the one launcher, shared with the playground and the benches).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from bot.launcher import answered_thinking, full_collections_held_back
from discord_emulator import (
    CallbackType,
    Emulator,
    InteractionType,
)
from tests.e2e.helpers import (
    WAIT,
    Arena,
    assert_log_clean,
    is_calloff,
    is_turn_ping,
)
from tests.e2e.inprocess import BotInProcess
from tests.pgtools import new_pg_database


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A module's arena runs on SQLite, and on PostgreSQL too if the module says
    ``POSTGRESQL = True`` (one module per feature: see the module docstring)."""
    if "shared_arena" not in metafunc.fixturenames:
        return
    engines = (
        ["sqlite", "postgresql"] if getattr(metafunc.module, "POSTGRESQL", False) else ["sqlite"]
    )
    metafunc.parametrize("shared_arena", engines, indirect=True, scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_arena(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Arena]:
    """One emulator and one bot (in this loop) for the whole module, on the engine the
    parameter names (``pytest_generate_tests``). The module may set ``BOT_ENV`` (more
    settings), ``COMMUNITY`` (True: a Community server, whose language can change) and
    ``GUILD`` (the server's name and ``locale``) and ``ANYWHERE`` (True: user installs
    on, commands synced globally)."""
    env: dict[str, str] = dict(getattr(request.module, "BOT_ENV", {}))
    name = request.module.__name__.rsplit(".", 1)[-1]
    workdir = tmp_path_factory.mktemp(name)
    with contextlib.ExitStack() as stack, full_collections_held_back():
        if request.param == "postgresql":
            server = request.getfixturevalue("pg_server")
            env["DATABASE_URL"] = stack.enter_context(new_pg_database(server))
        async with Emulator(wait_timeout=WAIT) as emu:
            guild_options = dict(getattr(request.module, "GUILD", {"name": "Arcade"}))
            if hasattr(request.module, "COMMUNITY"):
                guild_options["community"] = bool(request.module.COMMUNITY)
            guild = emu.add_guild(**guild_options)
            # ANYWHERE: the app is installable to users too and syncs its commands
            # globally, so they reach DMs, group DMs and servers without the bot.
            anywhere = getattr(request.module, "ANYWHERE", False)
            if anywhere:
                emu.install_types = {0, 1}
            dev_guild = None if anywhere else guild
            async with BotInProcess.launch(emu, workdir, dev_guild=dev_guild, **env) as bot:
                if anywhere:
                    await bot.wait_until(emu.wait_for_commands("tictactoe"))
                arena = Arena(emu, guild, bot, workdir)
                arena.database = env.get("DATABASE_URL", workdir / "data" / "tictactoe.db")
                yield arena
                code = await bot.stop()
            log = bot.log()
            assert code == 0, f"the bot did not stop cleanly ({code}):\n{log}"
            assert not emu.unrouted, emu.unrouted
            assert_log_clean(log, errors=arena.logged_errors)


@pytest_asyncio.fixture(loop_scope="module")
async def arena(shared_arena: Arena) -> AsyncIterator[Arena]:
    """The module's arena, checked after the test (see the module docstring)."""
    emu, bot = shared_arena.emu, shared_arena.bot
    unrouted = len(emu.unrouted)
    known = set(emu.interactions)
    log_start = len(bot.log())
    shared_arena.expected_log_errors = 0
    yield shared_arena
    shared_arena.logged_errors += shared_arena.expected_log_errors
    new = [handle for key, handle in emu.interactions.items() if key not in known]
    await emu.wait_for(lambda: not any(handle.pending for handle in new))
    log = bot.log()[log_start:]
    assert bot.returncode is None, f"the bot exited with {bot.returncode}:\n{log}"
    assert not [h for h in new if h.failed], f"failed interactions; the bot said:\n{log}"
    assert emu.unrouted[unrouted:] == [], emu.unrouted[unrouted:]
    for handle in new:
        if handle.type is not InteractionType.MESSAGE_COMPONENT:
            continue
        # A call-off proposal is the one public follow-up, by design: the message that
        # asks the other player (it may be deleted since, once it lapsed).
        # So is a turn notification, a follow-up of the click that began the turn.
        public = [
            m
            for m in handle.followups
            if not m.ephemeral and not is_calloff(m) and not is_turn_ping(m)
        ]
        assert not public, f"{handle!r} was answered twice: {public!r}"
        if handle.callback_type is CallbackType.UPDATE_MESSAGE:
            # One edit follows an update that showed the bot thinking: its reply.
            allowed = 1 if answered_thinking(handle) else 0
            if handle.channel.guild is not shared_arena.guild:
                # Outside servers that added the bot, the last click's token also
                # redraws the board nobody clicked for (a time-out): bot/reach.py.
                allowed += 1
            assert handle.original_edits <= allowed, f"{handle!r} was answered twice"
    assert_log_clean(log, errors=shared_arena.expected_log_errors)
