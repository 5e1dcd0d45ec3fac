"""Channel health: what this process knows of the channels and messages it may not reach.

Every REST call that is not an interaction answer (redraws, refreshes, posts, turn
notifications, deletes) goes through ``Outbox.call`` (``bot.ui.outbox``), which asks
``Health.allows`` first and tells ``Health.record`` what Discord answered. So:

- a channel the bot cannot view (``viewable``: a private thread it is not in and may not
  manage, a channel whose View Channel it lost) is never called;
- after a 401, 403 or 404 the channel is backed off (10008 Unknown Message: the message
  only): nothing goes there for ``BACKOFF`` seconds, doubled at each further refusal up to
  ``MAX_BACKOFF``; a success clears it;
- a board that could not be redrawn is recorded (``unredrawn``) until something draws it,
  so a click on it is answered through the interaction with the board as it is;
- ``Breaker``: once ``BREAKER_LIMIT`` invalid requests (401, 403, 429: what Discord counts
  toward its IP ban) came back within ``BREAKER_WINDOW`` seconds, nothing outside
  interaction answers goes out until that window has passed. Interaction answers never
  pass here and are never stopped.

The record is per process and in memory: a restart starts it afresh, which costs at most
one refusal per broken channel.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable

import discord

__all__ = [
    "BACKED_OFF_NOW",
    "BACKOFF",
    "BREAKER",
    "BREAKER_LIMIT",
    "BREAKER_WINDOW",
    "INVALID",
    "MAX_BACKOFF",
    "UNVIEWABLE",
    "Breaker",
    "Health",
    "viewable",
]

log = logging.getLogger(__name__)

BACKOFF = 600.0
"""Seconds a channel or message is left alone after its first refusal. Not a host
setting: a refusal means a permission or a thread membership is missing, which a member
rarely fixes within minutes, and each try costs the shared IP an invalid request."""
MAX_BACKOFF = 6 * 3600.0
"""The longest back-off: a channel fixed later is tried again within this."""
BREAKER_LIMIT = 250
"""Invalid requests within ``BREAKER_WINDOW`` that stop this process's own calls.
Discord bans an IP at 10,000 in 10 minutes, counting every process behind it and the
invalid interaction answers this cannot stop; 250 is 2.5 % of it, so even 16 processes
sharing an IP, each tripped, stay under 4,000. A healthy bot makes a few an hour."""
BREAKER_WINDOW = 600.0
"""Discord's window for invalid requests (10 minutes), and how long the breaker stays open."""
INVALID = frozenset({401, 403, 429})
"""HTTP statuses Discord counts as invalid requests toward its IP ban."""
BACKED_OFF = frozenset({401, 403, 404})
"""Statuses that back a channel (or, for Unknown Message, a message) off."""
UNKNOWN_MESSAGE = 10008
BREAKER = "breaker"
BACKED_OFF_NOW = "backed off"
UNVIEWABLE = "unviewable"
"""Why a call was not made (``Health.why_not``, ``Blocked.reason``)."""
REMEMBERED = 10_000
"""Messages and channels remembered at most (the oldest forgotten): bounded memory."""


def viewable(client: discord.Client, channel_id: int, guild_id: int | None = None) -> bool:
    """Whether the bot may call ``channel_id`` (in server ``guild_id``), from what
    discord.py knows through the GUILDS intent (channels, threads, thread members).

    False for a channel whose View Channel the bot lacks, for a private thread it is not
    a member of and may not manage (Discord shows those only to their members and to
    Manage Threads), and, once the bot is ready, for a channel its server's cache does not
    hold: Discord sends a bot every channel of a server and every active thread it can
    see, so what is missing is a thread it cannot see, an archived thread or a deleted
    channel. True for what this cannot judge (a DM, a server not in the cache, before the
    bot is ready): Discord then decides, and a refusal backs the channel off."""
    channel = client.get_channel(channel_id)
    if channel is None:
        if guild_id is None or not client.is_ready():
            return True
        return client.get_guild(guild_id) is None
    if not isinstance(channel, (discord.abc.GuildChannel, discord.Thread)):
        return True
    me = channel.guild.me
    if me is None:
        return True
    permissions = channel.permissions_for(me)
    if not permissions.view_channel:
        return False
    if isinstance(channel, discord.Thread) and channel.is_private():
        return channel.me is not None or permissions.manage_threads
    return True


class Breaker:
    """Stops this process's own calls once too many invalid requests came back."""

    def __init__(
        self,
        limit: int = BREAKER_LIMIT,
        window: float = BREAKER_WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._seen: deque[float] = deque()
        self._open_until: float | None = None
        self.trips = 0

    @property
    def open(self) -> bool:
        """Whether calls are stopped now (closes, and says so once, when its time is up)."""
        if self._open_until is None:
            return False
        if self._clock() < self._open_until:
            return True
        self._open_until = None
        self._seen.clear()
        log.warning("The invalid-request breaker closed: the bot's own calls resume")
        return False

    def invalid(self) -> None:
        """Count one invalid request; trip (logged once) at ``limit`` within ``window``."""
        now = self._clock()
        self._seen.append(now)
        while self._seen and self._seen[0] <= now - self.window:
            self._seen.popleft()
        if self._open_until is None and len(self._seen) >= self.limit:
            self._open_until = now + self.window
            self.trips += 1
            log.error(
                "%d invalid requests within %.0f s: the bot's own calls (not interaction "
                "answers) stop for %.0f s",
                len(self._seen),
                self.window,
                self.window,
            )


class Health:
    """The one record, per process, of which channels and messages may be called."""

    def __init__(
        self,
        viewable: Callable[[int, int | None], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
        breaker: Breaker | None = None,
    ) -> None:
        self._viewable = viewable
        self._clock = clock
        self.breaker = breaker if breaker is not None else Breaker(clock=clock)
        # channel or message id: (until, length); channels and messages share no ids.
        self._backoff: OrderedDict[int, tuple[float, float]] = OrderedDict()
        self._unredrawn: OrderedDict[int, None] = OrderedDict()
        self.blocked = 0  # calls refused here: never sent
        self.invalid = 0  # invalid requests seen (401, 403, 429)

    # -- asking -----------------------------------------------------------------------

    def backed_off(self, channel_id: int, message_id: int | None = None) -> bool:
        """Whether the channel, or the message, is backed off now."""
        now = self._clock()
        for key in (channel_id, message_id):
            if key is None:
                continue
            until = self._backoff.get(key)
            if until is not None and now < until[0]:
                return True
        return False

    def why_not(
        self, channel_id: int, message_id: int | None = None, guild_id: int | None = None
    ) -> str | None:
        """Why the channel (and the message) may not be called now (``BREAKER``,
        ``BACKED_OFF_NOW``, ``UNVIEWABLE``), or None if it may."""
        if self.breaker.open:
            return BREAKER
        if self.backed_off(channel_id, message_id):
            return BACKED_OFF_NOW
        if self._viewable is not None and not self._viewable(channel_id, guild_id):
            return UNVIEWABLE
        return None

    def reachable(
        self, channel_id: int, message_id: int | None = None, guild_id: int | None = None
    ) -> bool:
        """Whether the channel (and the message) may be called now: viewable, not backed
        off, and the breaker closed."""
        return self.why_not(channel_id, message_id, guild_id) is None

    def allows(
        self, channel_id: int, message_id: int | None = None, guild_id: int | None = None
    ) -> bool:
        """``reachable``, counting a refusal in ``blocked``: asked just before a call."""
        ok = self.reachable(channel_id, message_id, guild_id)
        if not ok:
            self.blocked += 1
        return ok

    def redrawable(self, channel_id: int, message_id: int, guild_id: int | None = None) -> bool:
        """Whether a redraw of the board ``message_id`` through its channel may go out,
        and the last one did not fail: else a click on it is answered with the board."""
        return not self.out_of_date(message_id) and self.reachable(channel_id, message_id, guild_id)

    # -- what Discord answered --------------------------------------------------------

    def record(self, channel_id: int, message_id: int | None, exc: discord.HTTPException) -> None:
        """A call to the channel (about the message) failed with ``exc``: count it toward
        the breaker if invalid, and back the channel (Unknown Message: the message) off
        after a 401, 403 or 404."""
        if exc.status in INVALID:
            self.invalid += 1
            self.breaker.invalid()
        if exc.status not in BACKED_OFF:
            return
        key = message_id if exc.code == UNKNOWN_MESSAGE and message_id is not None else channel_id
        self._back_off(key)

    def invalid_elsewhere(self) -> None:
        """An invalid request made outside ``Outbox.call`` (a webhook's 401): counted."""
        self.invalid += 1
        self.breaker.invalid()

    def succeeded(self, channel_id: int) -> None:
        """A call to the channel worked: its back-off is over."""
        self._backoff.pop(channel_id, None)

    def _back_off(self, key: int) -> None:
        now = self._clock()
        previous = self._backoff.pop(key, None)
        length = BACKOFF if previous is None else min(MAX_BACKOFF, previous[1] * 2)
        self._backoff[key] = (now + length, length)
        if len(self._backoff) > REMEMBERED:
            self._backoff.popitem(last=False)
        log.warning("%s refused a call; nothing goes there for %.0f s", key, length)

    # -- boards that could not be redrawn --------------------------------------------

    def unredrawn(self, message_id: int) -> None:
        """The board ``message_id`` shows is out of date and could not be redrawn."""
        self._unredrawn[message_id] = None
        self._unredrawn.move_to_end(message_id)
        if len(self._unredrawn) > REMEMBERED:
            self._unredrawn.popitem(last=False)

    def drawn(self, message_id: int) -> None:
        """The board ``message_id`` shows is up to date again (a click's answer drew it)."""
        self._unredrawn.pop(message_id, None)

    def out_of_date(self, message_id: int) -> bool:
        """Whether the board ``message_id`` could not be redrawn since it was last drawn."""
        return message_id in self._unredrawn
