"""Trouble a test makes on purpose: failing, rate-limited and slow requests, dropped
gateway connections, and dispatches Discord would not send.

What goes wrong on the network side is apart from what users do (emulator.py); both are
methods of the :class:`~discord_emulator.Emulator`, which has :class:`Faults` as a base."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from .dispatch import Dispatcher
from .entities import Guild, User
from .errors import UserActionError
from .gateway import Gateway
from .protocol import Intent
from .server import ApiServer, Fault
from .waiting import Changes

__all__ = ["Faults"]


class Faults:
    """The fault injection of the :class:`~discord_emulator.Emulator`, on its ``server`` and
    ``gateway``. The attributes annotated here are the Emulator's: it sets them."""

    server: ApiServer
    gateway: Gateway
    changes: Changes
    dispatcher: Dispatcher
    bot: User

    def fail_requests(
        self, method: str, path: str | re.Pattern[str], *, status: int = 500, times: int = 1
    ) -> Fault:
        """Answer the next ``times`` matching requests with ``status`` (see :class:`Fault`)."""
        return self._add_fault(Fault(method, path, times=times, status=status))

    def rate_limit_requests(
        self,
        method: str,
        path: str | re.Pattern[str],
        *,
        retry_after: float = 0.1,
        times: int = 1,
        is_global: bool = False,
        scope: str = "user",
    ) -> Fault:
        """Answer the next ``times`` matching requests with a well-formed 429 of ``scope``
        (``user`` or ``shared``; ``is_global`` makes it a global one)."""
        return self._add_fault(
            Fault(
                method,
                path,
                times=times,
                status=429,
                retry_after=retry_after,
                is_global=is_global,
                scope=scope,
            )
        )

    def delay_requests(
        self, method: str, path: str | re.Pattern[str], seconds: float, *, times: int = 1
    ) -> Fault:
        """Hold the next ``times`` matching requests ``seconds`` before handling them."""
        return self._add_fault(Fault(method, path, times=times, delay=seconds))

    def _add_fault(self, fault: Fault) -> Fault:
        self.server.faults.append(fault)
        return fault

    def drop_connection(
        self, *, resumable: bool = True, code: int = 4000, shard: int | None = None
    ) -> None:
        """Close the bot's gateway sockets (those of sessions holding ``shard``, or all) with
        ``code``. A resumable drop keeps the session: the client RESUMEs and gets what it missed
        replayed. Otherwise the session is invalidated, its RESUME is answered with
        INVALID_SESSION and it identifies afresh."""
        self.gateway.drop(resumable=resumable, code=code, shard_id=shard)

    def dispatch_event(self, event: str, data: dict[str, Any], *, shard: int | None = None) -> bool:
        """Send an arbitrary gateway dispatch to the sessions that own ``data["guild_id"]``
        (shard 0 without one), or to those holding ``shard`` when given."""
        if shard is not None:
            return self.gateway.deliver(event, data, shard_id=shard)
        return self.gateway.dispatch(event, data)

    def forge_guild_create(self, guild: Guild, *, shard: int) -> bool:
        """Send ``guild``'s GUILD_CREATE, as a new session would get it, to the sessions
        holding ``shard`` whatever shard the guild is on. Discord never does this: it makes
        a process believe it is in a server of another shard, so that a click forged to it
        (``send_raw_interaction(..., shard=)``) gets past its membership check. Returns
        False when no session holds ``shard``."""
        if self.bot.id not in guild.members:
            raise UserActionError(f"the bot is not in {guild.name}")
        sessions = [
            s for s in self.gateway.sessions.values() if s.resumable and s.shard_id == shard
        ]
        for session in sessions:
            data = self.dispatcher.guild_create(guild, session.intents)
            self.gateway.emit(session, "GUILD_CREATE", data)
        self.changes.notify()
        return bool(sessions)

    @asynccontextmanager
    async def disconnected(
        self, *, resumable: bool = True, shard: int | None = None
    ) -> AsyncIterator[None]:
        """Drop the bot's connections (``shard``'s, or all) and keep new ones out for the block:
        events dispatched inside are buffered (replayed on RESUME) or lost (``resumable=False``).
        On exit the bot is let back in and this waits until it is connected again."""
        self.gateway.hold()
        try:
            self.drop_connection(resumable=resumable, shard=shard)
            await self.changes.wait_for(lambda: not self.gateway.live_sessions(shard))
            yield
        finally:
            self.gateway.release()
        await self.changes.wait_for(lambda: bool(self.gateway.live_sessions(shard)))

    @asynccontextmanager
    async def guild_unavailable(self, guild: Guild) -> AsyncIterator[None]:
        """Discord's outage of one server: its sessions get a GUILD_DELETE with
        ``unavailable: true`` (not a removal: the bot stays a member), and on exit, when
        the server is back, its GUILD_CREATE (``unavailable: false``), as at a READY.
        Events and clicks of the server inside the block are not held back."""
        if self.bot.id not in guild.members:
            raise UserActionError(f"the bot is not in {guild.name}")
        gone = {"id": str(guild.id), "unavailable": True}
        self.gateway.dispatch("GUILD_DELETE", gone, intent=Intent.GUILDS, guild_id=guild.id)
        self.changes.notify()
        try:
            yield
        finally:
            for session in self.gateway.targets(guild.id, Intent.GUILDS):
                data = self.dispatcher.guild_create(guild, session.intents)
                self.gateway.emit(session, "GUILD_CREATE", data)
            self.changes.notify()
