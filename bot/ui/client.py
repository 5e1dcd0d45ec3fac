"""The bot: start-up, command sync, the sweep, the button listener and an orderly close.

Start-up follows discord.py's ``examples/advanced_startup.py``: the entry point builds
the settings and opens the store, the constructor takes them, and ``setup_hook`` (after
login, before the gateway connects) starts the service, adds the cogs and syncs.

The bot is an ``AutoShardedBot``: with ``SHARD_COUNT``/``SHARD_IDS`` it runs those shards,
else discord.py asks ``/gateway/bot`` for the count and runs them all. A process given
``SHARD_IDS`` sweeps, reminds and repairs only its shards' servers (``bot.ui.shards``).

Commands are synced only when their definition changed: a SHA-256 of the command tree
payload, its translations (``bot.ui.commands_i18n``) and the application id is kept in the
store's meta table and compared at start-up, so an edited catalog is synced too. With
``DEV_GUILD_ID`` the commands are copied to that server and synced there at every start,
and the global sync is left alone (else the server would list every command twice).
``--sync`` forces both. Only the process running shard 0 syncs, unless given ``--sync``.

Closing refuses new interactions, lets those in flight finish within the grace period
(answering the rest "I'm restarting", see ``Gate.drain``), then stops the gateway and
closes the service.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands, tasks

from bot.app import GameService
from bot.challenges.buttons import ChallengeButtons
from bot.challenges.cog import Games
from bot.challenges.thread_offer import Threads
from bot.config import ServiceConfig
from bot.errors import GameError
from bot.games.boards import Boards
from bot.games.buttons import BoardButtons
from bot.games.cog import Stop
from bot.games.help import Help
from bot.games.queries import Store
from bot.i18n import N_, Message
from bot.models import Game, Shards
from bot.pings.buttons import CallOffButtons
from bot.pings.notices import Notices
from bot.privacy.buttons import ForgetButtons
from bot.privacy.cog import Privacy
from bot.servers.cog import ServerSettings
from bot.servers.preferences import PreferenceButtons
from bot.settings import Settings
from bot.stats.buttons import StatsButtons
from bot.stats.cog import Stats
from bot.tunables import LAG_REPORT, LEFT_SERVER_DAYS, SHUTDOWN_GRACE, SWEEP_INTERVAL
from bot.ui.commands_i18n import CommandTranslator, localizations
from bot.ui.diagnostics import freeze_heap, watch_loop_lag
from bot.ui.gate import DM_MESSAGE, Gate, answer_error, send_ephemeral
from bot.ui.health import Health, viewable
from bot.ui.outbox import Outbox, share_of_limit
from bot.ui.router import Router
from bot.ui.shards import IdentifyPacer, max_concurrency, owned_shards, syncs_commands

__all__ = [
    "GameTree",
    "TicTacToeBot",
    "commands_hash",
    "needed_intents",
]

log = logging.getLogger(__name__)


def _unusable(error: app_commands.TransformerError) -> Message:
    """The refusal of an option value discord.py could not convert (a member of another
    server, a forged value), with the user's input shown back, bounded."""
    value = repr(str(error.value)[:40])
    if error.type in (discord.AppCommandOptionType.user, discord.AppCommandOptionType.mentionable):
        return N_(
            "{value} isn't a member of this server; pick a member from the list.", value=value
        )
    return N_("I can't use {value} for that option; pick it again.", value=value)


def route_clicks(router: Router, service: GameService, boards: Boards, notices: Notices) -> Threads:
    """Each feature registers its kinds of custom_id with ``router``; returns the threads'
    offer, which ``/tictactoe``'s busy refusals show too."""
    threads = Threads(service, boards)
    features = (
        BoardButtons(service, boards),
        ChallengeButtons(service, boards),
        CallOffButtons(service, boards, notices),
        StatsButtons(service),
        ForgetButtons(service, boards),
        PreferenceButtons(service),
        threads,
    )
    for feature in features:
        feature.register(router)
    return threads


class GameTree(app_commands.CommandTree["TicTacToeBot"]):
    """A command tree that admits through the bot's gate and answers every error."""

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        return await self.client.gate.admit(interaction)

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError, /
    ) -> None:
        if isinstance(error, app_commands.CommandInvokeError):
            await answer_error(interaction, error.original)
        elif isinstance(error, app_commands.CommandNotFound):
            await answer_error(interaction, GameError(N_("I don't know that command (any more).")))
        elif isinstance(error, app_commands.NoPrivateMessage):
            await send_ephemeral(interaction, DM_MESSAGE)
        elif isinstance(error, app_commands.TransformerError):
            await send_ephemeral(interaction, _unusable(error))
        elif isinstance(error, app_commands.CheckFailure):
            await send_ephemeral(interaction, N_("You can't use this command here."))
        else:
            await answer_error(interaction, error)


async def commands_hash(tree: app_commands.CommandTree[Any], application_id: int | None) -> str:
    """A digest of what a global sync of ``tree`` would send, translations included;
    changes whenever a command or one of its translations does."""
    payload = sorted(
        (command.to_dict(tree) for command in tree.get_commands()),
        key=lambda command: command["name"],
    )
    translator = tree.translator
    localized = await localizations(tree, translator) if translator is not None else {}
    blob = json.dumps(
        {"application_id": application_id, "commands": payload, "localizations": localized},
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def needed_intents() -> discord.Intents:
    """Only the servers' intent (``guilds``): GUILD_CREATE/GUILD_DELETE, and CHANNEL_DELETE
    and THREAD_DELETE, which end a deleted channel's games at once. Interactions need no
    intent. No message events: a deleted board is found when an edit meets Unknown
    Message (``Boards.gone``), so no member's message reaches the bot (see
    docs/decisions.md#no-message-events)."""
    intents = discord.Intents.none()
    intents.guilds = True
    return intents


class TicTacToeBot(commands.AutoShardedBot):
    """The application; ``service``, ``boards`` and ``buttons`` exist once
    ``setup_hook`` has run."""

    service: GameService
    outbox: Outbox
    boards: Boards
    notices: Notices
    router: Router

    def __init__(self, settings: Settings, store: Store, *, force_sync: bool = False) -> None:
        super().__init__(
            command_prefix=commands.when_mentioned,
            help_command=None,
            intents=needed_intents(),
            max_messages=None,
            allowed_mentions=discord.AllowedMentions.none(),
            tree_cls=GameTree,
            shard_count=settings.shard_count,
            # None is discord.py's default (every shard), but its options type says list[int].
            shard_ids=None if settings.shard_ids is None else list(settings.shard_ids),  # type: ignore[arg-type]
        )
        self.settings = settings
        self.store = store
        self.force_sync = force_sync
        self.gate = Gate()
        self.identify_pacer = IdentifyPacer(functools.partial(max_concurrency, self))
        self.sweeper = tasks.loop(seconds=settings[SWEEP_INTERVAL])(self.sweep_once)
        self._service_started = False
        self._wound_down = asyncio.Lock()
        self._sweeping = 0  # sweeps running now
        self._unreconciled: set[int] = set()  # shards ready since the last sweep
        self._lag_monitor: asyncio.Task[None] | None = None

    # -- start-up -----------------------------------------------------------------------

    async def setup_hook(self) -> None:
        config = ServiceConfig(self.settings.numbers, shards=owned_shards(self.settings))
        self.service = GameService(self.store, config)
        health = Health(viewable=lambda channel, guild: viewable(self, channel, guild))
        self.outbox = Outbox(share_of_limit(config.shards), health)
        self.notices = Notices(self, self.service, self.outbox, self._queue_redraw)
        self.boards = Boards(self, self.service, self.outbox, self.notices)
        self.router = Router(self.gate)
        threads = route_clicks(self.router, self.service, self.boards, self.notices)
        # start() finishes bot moves owed since a crash; their boards need redrawing.
        completed = await self.service.start()
        self._service_started = True
        for game in completed:
            self.boards.queue_redraw(game)
            await self.boards.delete_stale_ping(game)
        games = Games(self.service, self.boards, threads)
        await self.add_cog(games)
        self.tree.add_command(games.menu)
        await self.add_cog(Stop(self.service, self.boards))
        await self.add_cog(Help())
        await self.add_cog(Stats(self.service))
        await self.add_cog(ServerSettings(self.service))
        await self.add_cog(Privacy(self.service))
        await self.tree.set_translator(CommandTranslator())
        await self.sync_commands()
        # The first sweep settles games that ran out while the bot was down.
        self.sweeper.start()
        if (every := self.settings[LAG_REPORT]) is not None:
            self._lag_monitor = asyncio.create_task(watch_loop_lag(every), name="ttt-lag-monitor")
        freeze_heap()

    def _queue_redraw(self, game: Game) -> None:
        """The notices' redraws go through the boards (made after them)."""
        self.boards.queue_redraw(game)

    async def sync_commands(self) -> None:
        """Sync to the dev server every time; globally only if changed or forced. Only in
        the process running shard 0 (every process has the same commands), or forced."""
        if not (self.force_sync or syncs_commands(self.settings)):
            log.info("Not syncing the commands: the process running shard 0 does")
            return
        digest = await commands_hash(self.tree, self.application_id)
        dev_guild_id = self.settings.dev_guild_id
        try:
            if dev_guild_id is not None:
                guild = discord.Object(dev_guild_id)
                self.tree.copy_global_to(guild=guild)
                synced = await self.tree.sync(guild=guild)
                log.info("Synced %d commands to the dev server %s", len(synced), dev_guild_id)
                if not self.force_sync:
                    return
            stored = await self.service.commands_digest()
            if not self.force_sync and stored == digest:
                log.info("Commands unchanged since the last sync; not syncing")
                return
            synced = await self.tree.sync()
            await self.service.commands_synced(digest)
            log.info("Synced %d global commands (they may take a while to appear)", len(synced))
        except discord.HTTPException as exc:
            log.error("Could not sync the commands; the old ones stay in place: %s", exc)

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """Wait as Discord's IDENTIFY limit requires, per bucket (``bot.ui.shards``)."""
        await self.identify_pacer.wait(shard_id or 0)

    # -- what happens while running -------------------------------------------------------

    async def on_interaction(self, interaction: discord.Interaction, /) -> None:
        """Every button click goes to the router (every component the bot sees is its own)."""
        if interaction.type is discord.InteractionType.component:
            await self.router.handle(interaction)

    async def on_message(self, message: discord.Message, /) -> None:
        """There are no prefix commands: messages are not even read."""

    # -- servers, channels and messages that go away ---------------------------------------

    async def on_guild_remove(self, guild: discord.Guild, /) -> None:
        """The bot was removed from the server (discord.py dispatches a GUILD_DELETE that
        is an outage as ``on_guild_unavailable`` instead): its live games end unrated, its
        challenges are withdrawn, its data is erased LEFT_SERVER_DAYS later. Nothing is
        redrawn: the bot can no longer reach the server."""
        games, challenges = await self.service.upkeep.guild_left(guild.id)
        log.info(
            "Removed from server %s: %d live game(s) ended unrated, %d challenge(s) withdrawn;"
            " its data is erased in %g days unless the bot is added back",
            guild.id,
            len(games),
            len(challenges),
            self.settings[LEFT_SERVER_DAYS],
        )

    async def on_guild_unavailable(self, guild: discord.Guild, /) -> None:
        """A GUILD_DELETE saying ``unavailable``: an outage of that server, not a removal.
        Its turn clocks and challenges stop until it is available again."""
        await self.service.upkeep.outage_begins(self.service.upkeep.server(guild.id))

    async def on_shard_disconnect(self, shard_id: int, /) -> None:
        """The shard lost its gateway connection: nobody in its servers can click, so
        their turn clocks and challenges stop until it is connected again."""
        if self._service_started and not self.gate.closing:
            await self.service.upkeep.outage_begins(self.service.upkeep.shard(shard_id))

    async def on_shard_resumed(self, shard_id: int, /) -> None:
        """The shard resumed its session: its clocks go on, with the time lost given back."""
        await self._shard_back(shard_id)

    async def on_shard_connect(self, shard_id: int, /) -> None:
        """The shard has a new session (its READY): as ``on_shard_resumed``."""
        await self._shard_back(shard_id)

    async def _shard_back(self, shard_id: int) -> None:
        if self._service_started:
            await self.service.upkeep.outage_ends(self.service.upkeep.shard(shard_id))

    async def on_shard_ready(self, shard_id: int, /) -> None:
        """The shard's server list is complete (discord.py waited for its GUILD_CREATEs):
        the next sweep reconciles its servers (``_reconcile``)."""
        self._unreconciled.add(shard_id)

    async def _reconcile(self) -> None:
        """A server the bot holds data of on a shard now ready, but is no longer in,
        removed the bot while it could not hear: it goes as in ``on_guild_remove``."""
        count = self.shard_count or 1
        while self._unreconciled:
            shard_id = self._unreconciled.pop()
            guilds = [g.id for g in self.guilds if (g.id >> 22) % count == shard_id]
            await self.service.upkeep.reconcile(Shards(count, (shard_id,)), guilds)

    async def on_guild_join(self, guild: discord.Guild, /) -> None:
        """Added to a server: if it is one the bot had left, its data stays."""
        if await self.service.upkeep.guild_back(guild.id):
            log.info("Back in server %s: its data is kept", guild.id)

    async def on_guild_available(self, guild: discord.Guild, /) -> None:
        """A server's GUILD_CREATE saying ``unavailable: false`` (at every connection, and
        on joining one, as Discord may send it, and at the end of its outage): the same as
        ``on_guild_join``; its clocks go on, with the time lost given back."""
        await self.service.upkeep.outage_ends(self.service.upkeep.server(guild.id))
        await self.on_guild_join(guild)

    async def on_guild_channel_delete(self, channel: discord.abc.GuildChannel, /) -> None:
        """A channel was deleted: its live games end unrated, its challenges are withdrawn,
        and nothing is sent there any more (its messages went with it)."""
        await self._channel_gone(channel.guild.id, channel.id)

    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent, /) -> None:
        """A thread was deleted, alone or with its channel: the same as a channel (the raw
        event, as a thread the bot never cached may hold a game)."""
        await self._channel_gone(payload.guild_id, payload.thread_id)

    async def _channel_gone(self, guild_id: int, channel_id: int) -> None:
        games, challenges = await self.service.upkeep.channel_gone(guild_id, channel_id)
        if games or challenges:
            log.info(
                "Channel %s deleted: %d game(s) ended unrated, %d challenge(s) withdrawn",
                channel_id,
                len(games),
                len(challenges),
            )

    async def sweep_once(self) -> None:
        """Check the boards of games about to be lost on time (``Boards.gone`` posts a
        rated game's deleted board again), settle timed-out games and expired
        challenges, then redraw their messages; send the turn notifications due, and
        delete those whose turn is over; prune."""
        self._sweeping += 1
        try:
            await self._reconcile()
            # A game is lost on time only on a board that still exists: one paced edit
            # per time-out that counts (``Reposts.check_before_timeout``).
            games, challenges = await self.service.sweep(self.boards.reposts.check_before_timeout)
            for game in games:
                # One line per game: with several processes, which one settled what.
                state = game.result or game.status
                log.info("Swept game %s of server %s (%s)", game.id, game.guild_id, state)
                self.boards.queue_redraw(game)
                await self.boards.delete_stale_ping(game)
            for challenge in challenges:
                self.boards.queue_redraw(challenge)
            await self.notices.sweep()
            # Pruning and erasing servers left long ago: no request to Discord. Erasing
            # waits until every shard is ready and none is down: until then the bot
            # does not know which servers it is in.
            member = None
            if self.is_ready() and not (self.service.upkeep.down or self._unreconciled):
                member = self._still_member
            await self.service.upkeep.prune(member)
        except Exception:
            log.exception("Sweeping timed-out games failed; trying again later")
        finally:
            self._sweeping -= 1

    def _still_member(self, guild_id: int) -> bool:
        return self.get_guild(guild_id) is not None

    # -- shutdown -------------------------------------------------------------------------

    async def close(self) -> None:
        async with self._wound_down:
            if not self.gate.closing:
                await self._wind_down()
        await super().close()
        if self._service_started:
            self._service_started = False
            await self.service.close()

    async def _wind_down(self) -> None:
        """Stop the sweep and let actions in flight end, all within the grace period."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings[SHUTDOWN_GRACE]
        self.gate.closing = True
        if self._lag_monitor is not None:
            self._lag_monitor.cancel()
        sweep = self.sweeper.get_task()
        if self._sweeping:
            self.sweeper.stop()  # a sweep in progress finishes: its boards need redrawing
        else:  # between sweeps: the next one is not waited for
            self.sweeper.cancel()
            sweep = None
        if sweep is not None and not sweep.done():
            try:
                await asyncio.wait_for(asyncio.shield(sweep), self.settings[SHUTDOWN_GRACE])
            except TimeoutError:
                log.warning("The sweep did not finish in time")
                self.sweeper.cancel()
        await self.gate.drain(max(0.0, deadline - loop.time()))
        if self._service_started:  # the outbox exists: it was made first
            await self.outbox.drain(max(0.0, deadline - loop.time()))
            self.outbox.cancel()
