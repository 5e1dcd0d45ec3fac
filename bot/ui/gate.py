"""Admission and accounting for every interaction, in one place.

Commands pass through the command tree's ``interaction_check`` and buttons through
``bot.ui.router``; both ask ``Gate.admit``, which answers a refused interaction (a DM,
a shutdown) ephemerally itself. An admitted interaction's task is tracked until it
ends, so shutdown can wait for it and answer it if it cannot finish in time
(``Gate.drain``). Errors are answered by ``answer_error``: a ``GameError``'s own text,
else a generic line and a logged traceback, never silence; an interaction another
delivery already answered is only noted. Every answer here is for
one person, so it is in their language (``user_translator``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Hashable
from typing import Any

import aiohttp
import discord

from bot.errors import GameError
from bot.i18n import N_, Message, Translator, translator
from bot.reach import by_channel, home_of
from bot.ui.refs import for_discord

__all__ = [
    "CUT_SHORT_MESSAGE",
    "DM_MESSAGE",
    "GENERIC_ERROR",
    "NO_EXTERNAL_APPS_MESSAGE",
    "SHUTDOWN_MESSAGE",
    "Gate",
    "Pace",
    "answer_error",
    "check_member",
    "home",
    "may_not_post",
    "send_ephemeral",
    "server_home",
    "server_locale",
    "server_translator",
    "slowmode_of",
    "user_translator",
]

log = logging.getLogger(__name__)

GENERIC_ERROR = N_("Something went wrong on my side; it has been logged. Please try again.")
DM_MESSAGE = N_("This command is for a server that added me; invite me to one and use it there.")
NO_EXTERNAL_APPS_MESSAGE = N_(
    "This server doesn't let its members use apps they added themselves in public, so"
    " nobody else would see a board here. Play in a DM or a group DM, or ask an admin to"
    " add me to the server."
)
SHUTDOWN_MESSAGE = N_("I'm restarting; try again in a few seconds.")
CUT_SHORT_MESSAGE = N_(
    "I'm restarting and couldn't finish that in time. Look at the board again in a few"
    " seconds; if your move isn't there, make it again."
)
UNKNOWN_INTERACTION = 10062  # Discord's error code for an interaction it no longer accepts
ALREADY_ACKNOWLEDGED = 40060
"""Discord's error code for a second answer to one interaction: the gateway delivers at
least once, so one click can reach two processes (or one twice), and the first answer
stands."""
_UNDELIVERABLE = (discord.HTTPException, aiohttp.ClientError, RuntimeError)
"""What answering can raise when the answer can't go out: a dead token, or the HTTP
session already closed (RuntimeError "Session is closed")."""


def user_translator(interaction: discord.Interaction) -> Translator:
    """The texts in the language of the person who made ``interaction``."""
    return translator(interaction.locale.value)


def home(interaction: discord.Interaction) -> int:
    """The guild id the games and records of ``interaction``'s place are kept under
    (``bot.reach.home_of``): the server's if the server's install authorizes it and the
    bot is a member there (as far as it knows its servers yet), else the players' own
    space (a DM, a group DM, a server that never added the bot)."""
    guild_id = interaction.guild_id
    client = interaction.client
    member = interaction.is_guild_integration() and (
        not client.is_ready() or client.get_guild(guild_id or 0) is not None
    )
    return home_of(guild_id, member)


def server_home(interaction: discord.Interaction) -> int:
    """``home`` for a command of a server that added the bot (settings, server erasure,
    the leaderboard); GameError if ``interaction`` is not from one (a commands-only
    install): the players' own space has no such things."""
    guild_id = home(interaction)
    if not by_channel(guild_id):
        raise GameError(DM_MESSAGE)
    return guild_id


def check_member(interaction: discord.Interaction, user: discord.abc.User | None) -> None:
    """GameError unless ``user`` (an option's value) may be named here: anyone outside
    servers (a DM has no members), only a member in a server that added the bot."""
    if user is None or isinstance(user, discord.Member) or not by_channel(home(interaction)):
        return
    raise GameError(
        N_(
            "{value} isn't a member of this server; pick a member from the list.",
            value=repr(user.name[:40]),
        )
    )


def hidden_answers(interaction: discord.Interaction) -> bool:
    """Whether Discord makes every answer to ``interaction`` private: a server whose
    install does not authorize it (only the member's), where the member may not use
    external apps in public."""
    return (
        interaction.guild_id is not None
        and not interaction.is_guild_integration()
        and not interaction.permissions.use_external_apps
    )


def server_locale(interaction: discord.Interaction) -> str | None:
    """The Discord locale of the server ``interaction`` comes from (its shared messages'
    language); None in a DM."""
    locale = interaction.guild_locale
    return None if locale is None else locale.value


def thread_parent(interaction: discord.Interaction) -> int | None:
    """The channel whose thread ``interaction`` comes from (None: not from a thread), for
    the server's channel allow-list, which covers a listed channel's threads."""
    channel = interaction.channel
    return channel.parent_id if isinstance(channel, discord.Thread) else None


def may_not_post(interaction: discord.Interaction) -> bool:
    """Whether the member lacks the permission to send messages where ``interaction``
    comes from (in a thread: Send Messages in Threads). An answer the bot posts for
    them there would bypass it, so it is private or refused instead."""
    if interaction.guild_id is None:
        return False  # a DM or a group DM: its members may always write there
    perms = interaction.permissions
    if isinstance(interaction.channel, discord.Thread):
        return not perms.send_messages_in_threads
    return not perms.send_messages


def slowmode_of(interaction: discord.Interaction) -> int:
    """The slowmode (seconds) the member is under where ``interaction`` comes from: the
    channel's, 0 if none or if they bypass it (Manage Messages, Manage Channel(s) or
    Bypass Slowmode, as Discord counts it)."""
    delay = getattr(interaction.channel, "slowmode_delay", 0) or 0
    perms = interaction.permissions
    if perms.manage_messages or perms.manage_channels or perms.bypass_slowmode:
        return 0
    return int(delay)


class Pace:
    """At most one action per key per interval, remembered in this process (all of a
    server's interactions come to the process of its shard). ``clock`` is the wall
    clock, so a wait can be shown as a ``Moment``."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._until: dict[Hashable, float] = {}

    def take(self, key: Hashable, seconds: float) -> float | None:
        """None, and the key is held for ``seconds``, if it is free; else when it frees."""
        now = self._clock()
        until = self._until.get(key)
        if until is not None and until > now:
            return until
        if len(self._until) > 10_000:
            self._until = {k: u for k, u in self._until.items() if u > now}
        if seconds > 0:
            self._until[key] = now + seconds
        return None

    def give_back(self, key: Hashable) -> None:
        """Free ``key`` again (what it was taken for did not happen)."""
        self._until.pop(key, None)


def server_translator(interaction: discord.Interaction) -> Translator:
    """The texts in the language of the server ``interaction`` comes from."""
    return translator(server_locale(interaction))


async def send_ephemeral(interaction: discord.Interaction, text: str | Message) -> None:
    """An ephemeral reply, as the response if there was none yet, else as a follow-up;
    a ``Message`` is translated for the person who made ``interaction``, its references
    rendered as Discord shows them."""
    if isinstance(text, Message):
        text = user_translator(interaction)(for_discord(text))
    mentions = discord.AllowedMentions.none()
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=mentions)
    else:
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=mentions)


def describe(interaction: discord.Interaction) -> str:
    if interaction.command is not None:
        return f"/{interaction.command.qualified_name}"
    data: Any = interaction.data or {}
    return f"component {data.get('custom_id', '?')!r}"


def _answered_elsewhere(interaction: discord.Interaction, error: BaseException) -> bool:
    """Whether ``error`` is Discord refusing a second answer to ``interaction``; if so it
    is noted at INFO (no traceback): the other delivery's answer stands."""
    if isinstance(error, discord.HTTPException) and error.code == ALREADY_ACKNOWLEDGED:
        log.info("%s was already answered (delivered twice): %s", describe(interaction), error)
        return True
    return False


async def _tell(interaction: discord.Interaction, text: str | Message) -> None:
    try:
        await send_ephemeral(interaction, text)
    except _UNDELIVERABLE as exc:
        if not _answered_elsewhere(interaction, exc):
            log.warning("Could not answer %s: %s", describe(interaction), exc)


async def answer_error(interaction: discord.Interaction, error: BaseException) -> None:
    """Answer a failed interaction: a GameError's own text, else a generic line + a log."""
    text: str | Message
    if isinstance(error, GameError):
        text = error.message
    elif isinstance(error, discord.NotFound) and error.code == UNKNOWN_INTERACTION:
        # Discord gave up on the interaction (no answer within 3 s): nobody to tell.
        log.warning("Too late to answer %s: %s", describe(interaction), error)
        return
    elif _answered_elsewhere(interaction, error):
        return  # a third answer would get the same refusal
    else:
        log.error(
            "Unexpected error handling %s from user %s in guild %s",
            describe(interaction),
            interaction.user.id,
            interaction.guild_id,
            exc_info=error,
        )
        text = GENERIC_ERROR
    await _tell(interaction, text)


class Gate:
    """Whether interactions may go ahead, and which admitted ones are still running."""

    def __init__(self) -> None:
        self.closing = False
        self._running: dict[asyncio.Task[Any], discord.Interaction] = {}
        self._idle = asyncio.Event()
        self._idle.set()

    async def admit(self, interaction: discord.Interaction) -> bool:
        """True if ``interaction`` may go ahead (its task is then tracked); else it has
        been answered with the reason: a server where Discord would hide every answer
        (``hidden_answers``), a shutdown. DMs, group DMs and servers without the bot are
        played in through interactions alone (``bot.reach``)."""
        if hidden_answers(interaction):
            await _tell(interaction, NO_EXTERNAL_APPS_MESSAGE)
            return False
        if self.closing:
            await _tell(interaction, SHUTDOWN_MESSAGE)
            return False
        task = asyncio.current_task()
        if task is not None and task not in self._running:
            self._running[task] = interaction
            self._idle.clear()
            task.add_done_callback(self._finished)
        return True

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._running.pop(task, None)
        if not self._running:
            self._idle.set()

    @property
    def running(self) -> int:
        return len(self._running)

    async def drain(self, grace: float) -> None:
        """Refuse new interactions, wait up to ``grace`` seconds for the admitted ones,
        then cancel those still running and tell each user who got no answer yet."""
        self.closing = True
        if self._running:
            log.info("Waiting for %d action(s) in flight", len(self._running))
            try:
                await asyncio.wait_for(self._idle.wait(), grace)
                return
            except TimeoutError:
                log.warning("%d action(s) still running at shutdown", len(self._running))
        left = dict(self._running)
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)
        unanswered = [i for i in left.values() if not i.response.is_done()]
        await asyncio.gather(*(_tell(i, CUT_SHORT_MESSAGE) for i in unanswered))
