"""The INTERACTION_CREATE payload: who acted, where, and which installations let them.

Its shape follows Discord's Interaction Object (API v10): ``context`` (0 a server, 1 the
bot's DM, 2 a private channel), ``authorizing_integration_owners``, ``app_permissions``,
``member`` with ``guild_id`` and a partial ``guild`` in a server or ``user`` elsewhere, a
partial ``channel``, ``entitlements`` (discord.py reads them) and the locales.
"""

from __future__ import annotations

from typing import Any

from .entities import Channel, Message, User
from .installs import app_permissions, context_of
from .world import World

__all__ = ["envelope"]


def envelope(
    *,
    world: World,
    interaction_id: int,
    token: str,
    type: int,
    data: dict[str, Any],
    user: User,
    channel: Channel,
    message: Message | None,
    locale: str,
    owners: dict[str, str],
) -> dict[str, Any]:
    """The INTERACTION_CREATE payload for ``user`` acting in ``channel``, authorized by
    ``owners`` (its ``authorizing_integration_owners``)."""
    guild = channel.guild
    channel_payload = channel.to_payload()
    payload: dict[str, Any] = {
        "id": str(interaction_id),
        "application_id": str(world.application_id),
        "type": int(type),
        "data": data,
        "channel": channel_payload,
        "channel_id": str(channel.id),
        "token": token,
        "version": 1,
        "locale": locale,
        "entitlements": [],
        "entitlement_sku_ids": [],
        "attachment_size_limit": 10 * 1024 * 1024,
        "authorizing_integration_owners": dict(owners),
        "app_permissions": str(app_permissions(world, channel, owners)),
        "context": context_of(channel),
    }
    if guild is not None:
        member = guild.member(user)
        perms = guild.permissions_of(user)
        if member is not None:
            member_payload = member.to_payload(with_permissions=True)
        else:
            member_payload = {
                "user": user.to_payload(),
                "roles": [],
                "nick": None,
                "avatar": None,
                "joined_at": None,
                "premium_since": None,
                "deaf": False,
                "mute": False,
                "pending": False,
                "flags": 0,
                "permissions": str(perms),
            }
        channel_payload["permissions"] = str(perms)
        payload.update(
            guild_id=str(guild.id),
            guild={"id": str(guild.id), "locale": guild.locale, "features": guild.features},
            guild_locale=guild.locale,
            member=member_payload,
        )
    else:
        payload["user"] = user.to_payload()
    if message is not None:
        payload["message"] = message.to_payload(world.users)
    return payload
