"""A busy channel's refusal, and the new thread it offers for the same game.

``/tictactoe`` in a channel whose one game (or waiting challenge) is someone else's is
refused privately with a link to what is in the way, ``/tictactoe-stop`` named only to a
member who may use it (``GameService.may_stop``), and, where both the bot and the member
may open public threads there, a button that plays the same game (opponent or level,
size, win length, who moves first: all in its custom_id) in a new public thread of that
channel. A thread is a channel of its own, so one game per channel still holds.

The click is acknowledged first (a deferred update of the refusal), so a second delivery
of it is refused by Discord before anything is done. Then everything the start will
check is checked before the thread exists (``GameService.vet_new_thread``: limits,
cooldowns, consent, the channel list, the search pool), so no empty thread is made for a
refused game. Then two REST calls on the bot's global budget, each paced by the outbox:
the thread (``TextChannel.create_thread``) and the board or challenge posted in it as the
bot's message (the click belongs to the parent channel, so it cannot answer there). The
refusal is edited last into a link to the new board. A member's clicks run one at a
time, and a refusal that opened a thread opens no other: one thread per refusal.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import discord
from discord import ButtonStyle, ui

from bot.app import GameService
from bot.errors import ChannelBusy, GameError
from bot.games.boards import Boards
from bot.games.endings import may_stop
from bot.i18n import N_, Message, Translator
from bot.models import Challenge, Game
from bot.reach import by_channel
from bot.refs import Place
from bot.ui import ids
from bot.ui.gate import home, server_locale, server_translator, user_translator
from bot.ui.outbox import Blocked
from bot.ui.refs import for_discord
from bot.ui.router import Router
from engine.levels import DEFAULT_LEVEL

__all__ = ["Offer", "Threads", "may_open_thread", "offer"]

log = logging.getLogger(__name__)

Offer = ids.ThreadBot | ids.ThreadChallenge
T = TypeVar("T")
NAME_LIMIT = 100
"""Discord's longest thread name."""
REMEMBERED = 1024
"""Refusals whose thread was opened, remembered so that their button opens no other."""
_QUIET = discord.AllowedMentions.none()


def offer(
    opponent_id: int | None, level: str | None, side: int, k: int | None, first: str
) -> Offer:
    """The button's id for the game ``/tictactoe`` asked for (``k`` None: the usual)."""
    if opponent_id is None:
        return ids.ThreadBot(level or DEFAULT_LEVEL, side, k or 0, first)
    return ids.ThreadChallenge(opponent_id, side, k or 0, first)


def may_open_thread(interaction: discord.Interaction) -> bool:
    """Whether a new public thread may be opened from ``interaction``'s channel: a text
    channel (not a thread, nor a channel that has none), where the bot sees the channel,
    may open public threads and post in them, and the member may open public threads
    (the bot opens none a server denied them); never outside servers that added the bot
    (``bot.reach``: no channel route there)."""
    if not by_channel(home(interaction)):
        return False
    channel = interaction.channel
    if not isinstance(channel, discord.TextChannel) or channel.type is not discord.ChannelType.text:
        return False
    bot = interaction.app_permissions
    if not (bot.view_channel and bot.create_public_threads and bot.send_messages_in_threads):
        return False
    return interaction.permissions.create_public_threads


def _offer_view(choice: Offer, t: Translator) -> ui.View:
    view = ui.View(timeout=None)
    label = t(N_("Play in a new thread"))
    view.add_item(
        ui.Button(label=label, emoji="🧵", style=ButtonStyle.primary, custom_id=choice.format())
    )
    view.stop()  # it only draws: the click is routed by its custom_id
    return view


class _Turns:
    """One lock per member: their clicks on thread offers run one at a time (a lock is
    dropped once nobody holds or awaits it)."""

    def __init__(self) -> None:
        self._locks: dict[tuple[int, int], tuple[asyncio.Lock, int]] = {}

    async def run(self, key: tuple[int, int], work: Callable[[], Awaitable[T]]) -> T:
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                return await work()
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)


class Threads:
    def __init__(self, service: GameService, boards: Boards) -> None:
        self._service = service
        self._boards = boards
        self._turns = _Turns()
        self._opened: OrderedDict[int, None] = OrderedDict()

    def register(self, router: Router) -> None:
        router.register(ids.ThreadBot, self.open)
        router.register(ids.ThreadChallenge, self.open)

    async def refuse(
        self, interaction: discord.Interaction, busy: ChannelBusy, choice: Offer
    ) -> None:
        """Answer a ``/tictactoe`` refused by ``busy``: its link, ``/tictactoe-stop`` if
        this member may use it, and the thread button if a thread can be opened and the
        game could start there (else why not)."""
        t = user_translator(interaction)
        game = busy.game
        is_moderator = interaction.permissions.manage_messages
        user_id = interaction.user.id
        if game is not None and may_stop(game, user_id, is_moderator=is_moderator):
            busy = busy.for_stopper()
        lines = [t(for_discord(busy.message))]
        extra: dict[str, Any] = {}
        if may_open_thread(interaction):
            try:
                await self._vet(interaction, choice)
            except GameError as error:
                lines.append(t(for_discord(error.message)))
            else:
                lines.append(t(N_("You can play yours in a new thread of this channel instead.")))
                extra["view"] = _offer_view(choice, t)
        await interaction.response.send_message(
            "\n".join(lines), ephemeral=True, allowed_mentions=_QUIET, **extra
        )

    async def open(self, interaction: discord.Interaction, click: Offer) -> None:
        """The refusal's button: open the thread and start the game there."""
        await interaction.response.defer()  # a second delivery of this click stops here
        source = interaction.message.id if interaction.message is not None else None

        async def work() -> Message | None:
            if source is not None and source in self._opened:
                return None  # this refusal opened its thread already; it says where
            text = await self._open(interaction, click)
            if source is not None and isinstance(text, Place):
                self._opened[source] = None
                while len(self._opened) > REMEMBERED:
                    self._opened.popitem(last=False)
            return text if not isinstance(text, Place) else _opened_text(click, text)

        text = await self._turns.run((home(interaction), interaction.user.id), work)
        if text is None:
            return
        await interaction.edit_original_response(
            content=user_translator(interaction)(for_discord(text)),
            view=None,
            allowed_mentions=_QUIET,
        )

    async def _open(self, interaction: discord.Interaction, click: Offer) -> Message | Place:
        """The new board's place, or what to tell the member instead."""
        channel = interaction.channel
        if not may_open_thread(interaction) or not isinstance(channel, discord.TextChannel):
            return N_("I can't open a thread in this channel any more; nothing was started.")
        try:
            await self._vet(interaction, click)
        except GameError as error:
            return error.message
        name = server_translator(interaction)(
            N_("Tic-tac-toe: {player}", player=interaction.user.display_name)
        )
        try:  # not an interaction answer: the global budget, the channel's health
            thread = await self._boards.outbox.call(
                channel.id,
                lambda: channel.create_thread(
                    name=name[:NAME_LIMIT], type=discord.ChannelType.public_thread
                ),
                guild_id=channel.guild.id,
            )
        except (discord.HTTPException, Blocked) as exc:
            log.warning("Could not open a thread in channel %s: %s", channel.id, exc)
            return N_("I couldn't open a thread in this channel; nothing was started.")
        try:
            item = await self._start(interaction, click, thread.id, channel.id)
        except GameError as error:  # something changed since the check: a rare race
            return error.message
        message_id = await self._boards.post_in(thread, item)
        if message_id is None:
            return N_("I opened a thread but couldn't post in it; nothing was started.")
        return Place(item.guild_id, thread.id, message_id)

    async def _vet(self, interaction: discord.Interaction, choice: Offer) -> None:
        assert interaction.channel_id is not None
        await self._service.threads.vet(
            home(interaction),
            interaction.channel_id,
            interaction.user.id,
            opponent_id=choice.user if isinstance(choice, ids.ThreadChallenge) else None,
            level=choice.level if isinstance(choice, ids.ThreadBot) else None,
            width=choice.side,
            height=choice.side,
            k=choice.k or None,
            first=choice.first,
        )

    async def _start(
        self, interaction: discord.Interaction, click: Offer, thread_id: int, parent_id: int
    ) -> Game | Challenge:
        options: dict[str, Any] = {
            "width": click.side,
            "height": click.side,
            "k": click.k or None,
            "first": click.first,
            "locale": server_locale(interaction),
            "parent_id": parent_id,
        }
        user_id = interaction.user.id
        if isinstance(click, ids.ThreadBot):
            return await self._service.start_bot_game(
                home(interaction), thread_id, user_id, level=click.level, **options
            )
        return await self._service.challenges.create(
            home(interaction), thread_id, user_id, click.user, **options
        )


def _opened_text(click: Offer, place: Place) -> Message:
    if isinstance(click, ids.ThreadBot):
        return N_("Your game is in a new thread: {link}", link=place)
    return N_("Your challenge is waiting in a new thread: {link}", link=place)
