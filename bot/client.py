"""The bot: start-up (service, cogs, buttons, command sync, sweeper) and an orderly close.

Start-up follows discord.py's ``examples/advanced_startup.py``: the entry point builds
the settings and opens the store, the constructor takes them, and ``setup_hook`` (which
runs after login, before the gateway connects) does the rest.

Commands are synced only when their definition changed: a SHA-256 of the command tree
payload (plus the application id) is kept in the store's meta table and compared at
start-up. With ``DEV_GUILD_ID`` the commands are copied to that server and synced there
at every start, and the global sync is left alone (else the server would list every
command twice). ``--sync`` forces both.

Closing waits for actions in flight (a click being answered) up to the grace period,
then stops the gateway and closes the service. New clicks meanwhile are told to retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot import ui
from bot.errors import GameError
from bot.models import Challenge, Game
from bot.rest import AnswerClient
from bot.service import GameService, ServiceConfig
from bot.settings import Settings
from bot.storage import Store

__all__ = ["COMMANDS_HASH_KEY", "EXTENSIONS", "GameTree", "TicTacToeBot"]

log = logging.getLogger(__name__)

EXTENSIONS = ("bot.cogs.games", "bot.cogs.stats")
COMMANDS_HASH_KEY = "commands_hash"


class GameTree(app_commands.CommandTree["TicTacToeBot"]):
    """A command tree whose errors reach the user instead of only the log."""

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        # DMs (guild_only hides the commands; answer anyway) and commands arriving while
        # shutting down (the cogs are being unloaded) are answered here.
        return await ui.admit(interaction) is not None

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError, /
    ) -> None:
        original: BaseException = error
        if isinstance(error, app_commands.CommandInvokeError):
            original = error.original
        elif isinstance(error, app_commands.CommandNotFound):
            await ui.reply_error(interaction, GameError("I don't know that command (any more)."))
            return
        elif isinstance(error, app_commands.NoPrivateMessage):
            await ui.send_ephemeral(interaction, ui.DM_MESSAGE)
            return
        elif isinstance(error, app_commands.TransformerError | app_commands.CheckFailure):
            await ui.send_ephemeral(interaction, str(error) or ui.GENERIC_ERROR)
            return
        await ui.reply_error(interaction, original)


def freeze_heap() -> None:
    """Keep what start-up allocated (modules, discord.py, the engine's tables) out of
    every later garbage collection: full collections scanned it all and stopped the
    event loop for up to ~50 ms under load (bench/load.py); now they scan only what is
    new. Those objects live as long as the process anyway."""
    gc.collect()
    gc.freeze()


class GcPauses:
    """The garbage collector's pauses (they stop the event loop), read and reset together."""

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.longest = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            took = time.perf_counter() - self._started
            self.count += 1
            self.total += took
            self.longest = max(self.longest, took)

    def take(self) -> tuple[int, float, float]:
        """Collections, their total and their longest pause (seconds) since the last take."""
        found = (self.count, self.total, self.longest)
        self.count, self.total, self.longest = 0, 0.0, 0.0
        return found


async def watch_loop_lag(every: float, store: Store, tick: float = 0.01) -> None:
    """Log how late the event loop runs a ``tick``-second timer, every ``every`` seconds.

    Opt-in instrumentation (LAG_REPORT_SECONDS) for load tests: a late timer means some
    callback held the loop, and every click waiting behind it was answered that much later.
    The garbage collector's runs, total time and longest pause are logged with it, and
    the store's counts so far of statements sent through its thread (the loop's
    connection found the lock taken) and of WAL restarts.
    """
    loop = asyncio.get_running_loop()
    lags: list[float] = []
    pauses = GcPauses()
    gc.callbacks.append(pauses)
    report_at = loop.time() + every
    try:
        while True:
            expected = loop.time() + tick
            await asyncio.sleep(tick)
            now = loop.time()
            lags.append(max(0.0, now - expected))
            if now >= report_at:
                lags.sort()
                collections, total, longest = pauses.take()
                log.info(
                    "Event loop lag: max %.1f ms, p99 %.1f ms, p50 %.1f ms over %d ticks;"
                    " %d GC runs, %.1f ms in all, longest %.1f ms;"
                    " store: %d through the thread, %d WAL restarts",
                    lags[-1] * 1e3,
                    lags[int(len(lags) * 0.99)] * 1e3,
                    lags[len(lags) // 2] * 1e3,
                    len(lags),
                    collections,
                    total * 1e3,
                    longest * 1e3,
                    store.loop_fallbacks,
                    store.wal_restarts,
                )
                lags.clear()
                report_at = now + every
    finally:
        gc.callbacks.remove(pauses)


def message_free_intents() -> discord.Intents:
    """The default intents without message events: the bot never reads messages, and
    parsing a MESSAGE_UPDATE for each of its own board edits cost ~8% of a click."""
    intents = discord.Intents.default()
    intents.messages = False  # guild and DM messages
    return intents


class TicTacToeBot(commands.Bot):
    """The application; ``service`` exists once ``setup_hook`` has run."""

    service: GameService

    def __init__(self, settings: Settings, store: Store, *, force_sync: bool = False) -> None:
        # No voice here: spare the log discord.py's warnings about missing voice libraries.
        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False
        super().__init__(
            command_prefix=commands.when_mentioned,
            help_command=None,
            intents=message_free_intents(),
            allowed_mentions=discord.AllowedMentions.none(),
            tree_cls=GameTree,
        )
        self.settings = settings
        self.store = store
        self.force_sync = force_sync
        self.is_shutting_down = False
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._sweeper: asyncio.Task[None] | None = None
        self._stop_sweeping = asyncio.Event()
        self._service_started = False
        self._shutdown_lock = asyncio.Lock()
        self._lag_monitor: asyncio.Task[None] | None = None
        self._clicks: set[asyncio.Task[None]] = set()
        self.answers: AnswerClient | None = None
        """Where interactions are answered (see ``bot.rest``); made by ``setup_hook``."""

    # -- start-up -----------------------------------------------------------------------

    async def setup_hook(self) -> None:
        self.answers = AnswerClient(discord.http.Route.BASE, user_agent=self.http.user_agent)
        config = ServiceConfig(
            turn_timeout=self.settings.turn_timeout,
            challenge_timeout=self.settings.challenge_timeout,
            ai_workers=self.settings.ai_workers,
            inline_cells=9,
        )
        self.service = GameService(self.store, config)
        # start() finishes bot moves owed since a crash; their boards need redrawing.
        completed = await self.service.start()
        self._service_started = True
        for game in completed:
            await self.redraw(game)
        for extension in EXTENSIONS:
            await self.load_extension(extension)
        self.add_dynamic_items(*ui.DYNAMIC_ITEMS)
        self._take_cell_clicks_from_the_gateway()
        await self.sync_commands()
        # The first sweep settles games that ran out while the bot was down.
        self._sweeper = asyncio.create_task(self._sweep_forever(), name="ttt-sweeper")
        if self.settings.lag_report is not None:
            self._lag_monitor = asyncio.create_task(
                watch_loop_lag(self.settings.lag_report, self.store), name="ttt-lag-monitor"
            )
        freeze_heap()

    def _take_cell_clicks_from_the_gateway(self) -> None:
        """Play board-cell clicks from the raw gateway payload (see ``ui.CellClick``).

        discord.py looks up its handler for each gateway event in
        ``ConnectionState.parsers``, the dict its gateway reads at every event; this wraps
        the INTERACTION_CREATE one. Everything but a cell click goes on to discord.py.
        """
        state = self._connection
        parse = state.parsers["INTERACTION_CREATE"]

        def parse_interaction_create(data: Any) -> None:
            click = ui.CellClick.from_gateway(data, state)
            if click is None:
                parse(data)
                return
            task = asyncio.create_task(ui.play_cell(click))
            self._clicks.add(task)
            task.add_done_callback(self._click_done)

        state.parsers["INTERACTION_CREATE"] = parse_interaction_create

    def _click_done(self, task: asyncio.Task[None]) -> None:
        self._clicks.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            log.error("Unhandled error playing a board cell", exc_info=error)

    def commands_hash(self) -> str:
        """A digest of what a global sync would send; changes whenever a command does."""
        payload = sorted(
            (command.to_dict(self.tree) for command in self.tree.get_commands()),
            key=lambda command: command["name"],
        )
        blob = json.dumps(
            {"application_id": self.application_id, "commands": payload},
            sort_keys=True,
            separators=(",", ":"),
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    async def sync_commands(self) -> None:
        """Sync to the dev server every time; globally only if changed or forced."""
        digest = self.commands_hash()
        dev_guild_id = self.settings.dev_guild_id
        try:
            if dev_guild_id is not None:
                guild = discord.Object(dev_guild_id)
                self.tree.copy_global_to(guild=guild)
                synced = await self.tree.sync(guild=guild)
                log.info("Synced %d commands to the dev server %s", len(synced), dev_guild_id)
                if not self.force_sync:
                    return
            stored = await self.store.get_meta(COMMANDS_HASH_KEY)
            if not self.force_sync and stored == digest:
                log.info("Commands unchanged since the last sync; not syncing")
                return
            synced = await self.tree.sync()
            await self.store.set_meta(COMMANDS_HASH_KEY, digest)
            log.info("Synced %d global commands (they may take a while to appear)", len(synced))
        except discord.HTTPException as exc:
            log.error("Could not sync the commands; the old ones stay in place: %s", exc)

    # -- actions in flight and shutdown ---------------------------------------------------

    @contextlib.asynccontextmanager
    async def in_flight(self) -> AsyncIterator[None]:
        """Count one user action; ``close`` waits until none is running."""
        self._in_flight += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.set()

    async def close(self) -> None:
        async with self._shutdown_lock:
            if not self.is_shutting_down:
                self.is_shutting_down = True
                await self._shut_down_service_side()
        await super().close()
        if self.answers is not None:
            await self.answers.close()
        if self._service_started:
            self._service_started = False
            await self.service.close()

    async def _shut_down_service_side(self) -> None:
        if self._lag_monitor is not None:
            self._lag_monitor.cancel()
        # Let a sweep in progress finish: the games it settles need their boards redrawn.
        self._stop_sweeping.set()
        if self._sweeper is not None:
            try:
                await asyncio.wait_for(self._sweeper, self.settings.shutdown_grace)
            except TimeoutError:
                log.warning("The sweeper did not finish in time")
        if self._in_flight:
            log.info("Waiting for %d action(s) in flight", self._in_flight)
            try:
                await asyncio.wait_for(self._idle.wait(), self.settings.shutdown_grace)
            except TimeoutError:
                log.warning("%d action(s) still running at shutdown", self._in_flight)

    # -- the sweeper --------------------------------------------------------------------

    async def _sweep_forever(self) -> None:
        while not self._stop_sweeping.is_set():
            try:
                await self.sweep_once()
            except Exception:
                log.exception("Sweeping timed-out games failed; trying again later")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop_sweeping.wait(), self.settings.sweep_interval)

    async def sweep_once(self) -> None:
        """Settle timed-out games and expired challenges, then redraw their messages."""
        games, challenges = await self.service.sweep()
        for game in games:
            await self.redraw(game)
        for challenge in challenges:
            await self.redraw(challenge)

    async def redraw(self, item: Game | Challenge) -> None:
        """Edit a game's or challenge's message through its channel (not a token)."""
        if item.message_id is None:
            return
        view = ui.board_view(item) if isinstance(item, Game) else ui.challenge_view(item)
        message = self.get_partial_messageable(item.channel_id).get_partial_message(item.message_id)
        kind = type(item).__name__.lower()
        try:
            await message.edit(view=view, allowed_mentions=discord.AllowedMentions.none())
        except (discord.NotFound, discord.Forbidden) as exc:
            log.warning("Cannot update the message of %s %s: %s", kind, item.id, exc)
        except discord.HTTPException as exc:
            log.warning("Updating the message of %s %s failed: %s", kind, item.id, exc)

    # -- quiet defaults -----------------------------------------------------------------

    async def on_interaction(self, interaction: discord.Interaction, /) -> None:
        """Clicks discord.py would drop get an answer (board cells seldom come here: see
        ``_take_cell_clicks_from_the_gateway``)."""
        if interaction.type is discord.InteractionType.component:
            await ui.route_component(interaction)

    async def on_message(self, message: discord.Message, /) -> None:
        """There are no prefix commands: messages are not even read."""
