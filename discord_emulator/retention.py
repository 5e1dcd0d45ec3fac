"""Forgetting the oldest, for an emulator that runs for days (the playground).

Discord keeps every message; an emulator that does so fills its memory. :func:`trim` drops
the oldest messages of each channel and the oldest records (REST requests, gateway frames,
replay buffers, interactions whose token has expired), and nothing else. An emulator never
trimmed behaves as before. What it changes, as the bot sees it: a forgotten message is
Unknown Message (10008), as if a moderator had purged it without a MESSAGE_DELETE; a RESUME
from before a session's oldest kept event gets INVALID_SESSION (Discord's answer when it
cannot replay); a forgotten interaction's token is Unknown Webhook, as an expired one is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .emulator import Emulator


def trim(emu: Emulator, *, messages_per_channel: int, records: int) -> None:
    """Keep the newest ``messages_per_channel`` messages of each channel and thread, and the
    newest ``records`` of each record list; interactions past ``records`` go once their
    token has expired and they are settled."""
    if messages_per_channel < 1 or records < 1:
        raise ValueError("keep at least one message and one record")
    for channel in emu.channels.values():
        extra = len(channel.messages) - messages_per_channel
        if extra > 0:
            for message in channel.messages[:extra]:
                emu.message_index.pop(message.id, None)
            del channel.messages[:extra]
    for kept in (emu.requests, emu.unrouted, emu.gateway_log):
        if len(kept) > records:
            del kept[: len(kept) - records]
    for session in emu.gateway.sessions.values():
        if len(session.events) > records:
            del session.events[: len(session.events) - records]
    registry = emu.interaction_registry
    extra = len(registry.by_id) - records
    if extra > 0:
        now = emu.clock.now()
        gone = [
            handle
            for handle in list(registry.by_id.values())[:extra]
            if not handle.pending and now - handle.created_at > registry.token_lifetime
        ]
        for handle in gone:
            del registry.by_id[handle.id]
            registry.by_token.pop(handle.token, None)
