"""The road to a game's or challenge's message outside servers that added the bot
(``bot.reach``): the token of its last interaction, kept in the database (``keep``), and
a redraw through that token's webhook while its age says Discord still takes it
(``redraw``); with no live token nothing is sent. ``Boards`` takes this road for those
games; no channel route is ever tried there."""

from __future__ import annotations

import logging
import time

import discord

from bot.games.token_queries import Token, Tokens
from bot.games.views import message_view, release
from bot.models import Challenge, Game
from bot.reach import by_channel, token_live

__all__ = ["TokenRoad"]

log = logging.getLogger(__name__)

_QUIET = discord.AllowedMentions.none()


def _kind(item: Game | Challenge) -> str:
    return "game" if isinstance(item, Game) else "challenge"


class TokenRoad:
    def __init__(self, client: discord.Client, tokens: Tokens) -> None:
        self._client = client
        self._tokens = tokens

    async def keep(self, interaction: discord.Interaction, item: Game | Challenge) -> None:
        """Keep ``interaction``'s token as the way to ``item``'s message, if ``item`` is
        reached through interactions alone (``bot.reach``); its message must be the
        interaction's original (the board or challenge it posted, or the one clicked)."""
        if by_channel(item.guild_id):
            return
        token = Token(
            interaction.token,
            interaction.created_at.timestamp(),
            # The bot's DM may also carry the server install's key; unknown publicly, so
            # a DM's token counts its follow-ups as if capped (no harm).
            user_only=not interaction.is_guild_integration(),
            followups=0,
        )
        await self._tokens.put(_kind(item), item.id, token)

    async def live_token(self, item: Game | Challenge) -> Token | None:
        """``item``'s stored token if its age says Discord still takes it, else None."""
        token = await self._tokens.get(_kind(item), item.id)
        if token is None or not token_live(token.issued_at, time.time()):
            return None
        return token

    def webhook(self, token: Token) -> discord.Webhook:
        """The interaction webhook of ``token`` (its follow-ups, its original's edits)."""
        application_id = self._client.application_id
        assert application_id is not None  # known once logged in
        return discord.Webhook.partial(application_id, token.token, client=self._client)

    async def redraw(self, item: Game | Challenge) -> None:
        """Redraw ``item``'s message through its live token's webhook; nothing without one."""
        assert item.message_id is not None
        token = await self.live_token(item)
        if token is None:
            return  # the next click on it shows it as it is
        view = message_view(item)
        try:
            await self.webhook(token).edit_message(
                item.message_id, view=view, allowed_mentions=_QUIET
            )
        except discord.HTTPException as exc:
            log.warning("Updating the message of %s %s failed: %s", _kind(item), item.id, exc)
        finally:
            release(view)
