"""Turn notifications and the other messages nobody clicked for, sent through the outbox.

The sweep (``sweep``) sends the pings the service finds due (``bot.pings.service``),
deletes those whose turn is over and the call-off proposals that lapsed. After a move or
a game's end, ``delete_stale_ping`` deletes the game's ping at once. A ping goes only after the
standing one of its game is deleted; a ping's row is forgotten only once Discord deleted
its message (or says it is unknown), so a delete refused or rate-limited is retried by a
later sweep and none is left standing after a game's end.

A ping is a follow-up of the click that began the turn (the opponent's move, the
Accept), while that click's token lives (``TOKEN_MARGIN`` short of Discord's 15
minutes): follow-ups and their deletes go through the interaction's webhook, which
Discord's global limit does not count, and need no channel permission. Without such a
click (after a restart, on a turn clock near 15 minutes, a reminder late in a long turn)
the ping goes to the channel, through the outbox's pace, and is deleted the same way.

A 403 on a ping (Missing Access, Missing Permissions) is recorded, so that turn is not
tried again. Channel sends and deletes go through the outbox's checked path
(``Outbox.call``): the channel-health record (``bot.ui.health``) backs a refusing channel
off and keeps them from a channel the bot cannot view or while the breaker is open, as
for every other call of the bot's own. Work for a server the bot has left is dropped.

A game outside servers that added the bot (``bot.reach``) is pinged only through the
webhook of its stored token (``Boards.keep``) while that token's age says it lives, and
while it has room for one more follow-up (Discord takes 5 where only a user install
applies: counted in the database). Its pings are deleted through the webhook that sent
them while it lives; after that they are forgotten. No channel route is tried there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import discord

from bot.app import GameService
from bot.errors import GameError
from bot.i18n import translator
from bot.models import CallOff, Game, Ping
from bot.pings.render import turn_ping_text
from bot.pings.service import Due
from bot.reach import by_channel, followup_room, token_live
from bot.ui.health import UNVIEWABLE
from bot.ui.outbox import UNKNOWN_CHANNEL, Blocked, Outbox, reachable

__all__ = ["TOKEN_MARGIN", "Notices"]

log = logging.getLogger(__name__)

TOKEN_MARGIN = 60.0
"""Seconds before a click's token expires from which it is no longer used."""


def _pinging_only(user_id: int) -> discord.AllowedMentions:
    """A message's mentions that notify ``user_id`` and nobody else."""
    return discord.AllowedMentions(
        everyone=False, roles=False, replied_user=False, users=[discord.Object(user_id)]
    )


class Notices:
    def __init__(
        self,
        client: discord.Client,
        service: GameService,
        outbox: Outbox,
        redraw: Callable[[Game], None],
    ) -> None:
        self._client = client
        self._redraw = redraw
        # Ended games whose end this process drew while their ping still stood.
        self._redrawn: set[int] = set()
        # Pings this process deleted while its sweep was reading and going through the
        # stale ones (None between sweeps): read before their rows were forgotten, they
        # are not stale, and their games need no redraw.
        self._deleted: set[int] | None = None
        self._service = service
        self._outbox = outbox
        # The click that began each game's turn (game: (move, click)), and the click
        # whose follow-up each ping is (message: click): their tokens send and delete.
        self._clicks: dict[int, tuple[int, discord.Interaction]] = {}
        self._senders: dict[int, discord.Interaction] = {}
        # Pings of games outside servers: the webhook that sent each, and its token's issue.
        self._hooks: dict[int, tuple[discord.Webhook, float]] = {}

    # -- what the bot asks for ------------------------------------------------------------

    async def delete_stale_ping(self, game: Game, click: discord.Interaction | None = None) -> None:
        """Delete ``game``'s ping once its turn is over (a move, or the game's end);
        ``click``: the click that made ``game`` what it is (its token may ping next)."""
        self._remember(game, click)
        self._delete_stale(game, await self._service.pings.standing(game))

    def delete_known_ping(
        self, game: Game, click: discord.Interaction | None, stale: Ping | None
    ) -> None:
        """``delete_stale_ping`` when the stale ping is known already (read with the move)."""
        self._remember(game, click)
        self._delete_stale(game, stale)

    def _remember(self, game: Game, click: discord.Interaction | None) -> None:
        if click is not None and game.is_live:
            self._clicks[game.id] = (game.move_no, click)
        elif not game.is_live:
            self._clicks.pop(game.id, None)

    def _delete_stale(self, game: Game, ping: Ping | None) -> None:
        if ping is not None:
            if not game.is_live:  # whoever calls this has drawn the end: never again
                self._redrawn.add(game.id)
            self._queue_delete(ping.game_id, ping.channel_id, ping.message_id, game.guild_id)

    async def sweep(self) -> None:
        """Delete what is stale, then send the pings due."""
        service = self._service
        self._forget_expired()
        deleted: set[int] = set()
        self._deleted = deleted
        try:
            await self._tidy_stale(await service.pings.stale(), deleted)
        finally:
            self._deleted = None
        for proposal, channel_id in await service.calloffs.lapsed():
            self._queue_lapsed(proposal, channel_id)
        for item in await service.pings.due():
            self._queue_ping(item)

    async def _tidy_stale(self, stale: list[tuple[int, int, int, int]], deleted: set[int]) -> None:
        """Delete the stale pings, but those ``deleted`` since they were read."""
        for game_id, channel_id, message_id, guild_id in stale:
            if message_id in deleted or self._outbox.waiting(("unping", message_id)):
                continue  # its delete is under way or done: the game's end was seen here
            self._queue_delete(game_id, channel_id, message_id, guild_id)
            if game_id not in self._redrawn:
                # Perhaps the process that ended it died before its redraw (which comes
                # before the ping's delete): redraw it once, if it has ended.
                self._redrawn.add(game_id)
                game = await self._service.get_game(game_id)
                if not game.is_live:
                    self._redraw(game)

    def lapsed(self, proposal: CallOff, channel_id: int) -> None:
        """Delete a lapsed call-off proposal's message (replaced by a new proposal)."""
        self._queue_lapsed(proposal, channel_id)

    # -- clicks' tokens ---------------------------------------------------------------------

    def _usable(self, click: discord.Interaction | None) -> discord.Interaction | None:
        if click is None:
            return None
        left = (click.expires_at - discord.utils.utcnow()).total_seconds()
        return click if left > TOKEN_MARGIN else None

    def _forget_expired(self) -> None:
        for game_id, (_move, click) in list(self._clicks.items()):
            if self._usable(click) is None:
                del self._clicks[game_id]
        for message_id, click in list(self._senders.items()):
            if self._usable(click) is None:
                del self._senders[message_id]
        now = time.time()
        for message_id, (_hook, issued_at) in list(self._hooks.items()):
            if not token_live(issued_at, now):
                del self._hooks[message_id]

    # -- the queue --------------------------------------------------------------------------

    def _reachable(self, guild_id: int | None) -> bool:
        """Whether work for ``guild_id`` may go out: a server the bot is in, or the
        players' own space (reached through tokens alone)."""
        return (guild_id is not None and not by_channel(guild_id)) or reachable(
            self._client, guild_id
        )

    def _queue_delete(self, game_id: int, channel_id: int, message_id: int, guild_id: int) -> None:
        if not self._reachable(guild_id):
            return
        key = ("unping", message_id)
        if self._outbox.waiting(key):
            return

        async def work() -> None:
            await self._delete(game_id, channel_id, message_id, outside=not by_channel(guild_id))

        self._outbox.submit(key, work)

    def _queue_lapsed(self, proposal: CallOff, channel_id: int) -> None:
        key = ("calloff", proposal.game_id, proposal.move_no)
        if proposal.message_id is None:
            return
        if self._outbox.waiting(key):
            return
        message_id = proposal.message_id

        async def work() -> None:
            try:
                game = await self._service.get_game(proposal.game_id)
            except GameError:
                return  # erased with its server: nothing of it left to tidy
            outside = not by_channel(game.guild_id)
            if await self._delete_message(channel_id, message_id, "call-off proposal", outside):
                await self._service.calloffs.forget(proposal)

        self._outbox.submit(key, work)

    def _queue_ping(self, item: Due) -> None:
        game = item.game
        key = ("ping", game.id)
        if self._outbox.waiting(key) or not self._reachable(game.guild_id):
            return

        async def fresh() -> bool:
            return self._reachable(game.guild_id) and await self._service.pings.still_due(item)

        async def work() -> None:
            await self._ping(item)

        self._outbox.submit(key, work, fresh=fresh)

    # -- the requests -----------------------------------------------------------------------

    async def _ping(self, item: Due) -> None:
        game = item.game
        player = game.current_player_id
        assert player is not None
        standing = item.standing
        outside = not by_channel(game.guild_id)
        if standing is not None and not await self._delete(
            standing.game_id, standing.channel_id, standing.message_id, outside=outside
        ):
            return  # delete first: never two at once; the next sweep tries again
        text = turn_ping_text(game, translator(game.locale), reminder=item.reminder)
        if outside:
            await self._ping_by_token(item, text)
            return
        move, click = self._clicks.get(game.id, (-1, None))
        click = self._usable(click) if move == game.move_no else None
        try:
            if click is not None:  # the webhook: outside the global limit
                sent: discord.Message = await click.followup.send(
                    text, allowed_mentions=_pinging_only(player), wait=True
                )
                self._senders[sent.id] = click
            else:
                channel = self._client.get_partial_messageable(game.channel_id)
                sent = await self._outbox.call(
                    game.channel_id,
                    lambda: channel.send(text, allowed_mentions=_pinging_only(player)),
                    guild_id=game.guild_id,
                )
        except Blocked as blocked:
            if blocked.reason == UNVIEWABLE:  # as good as a 403: not tried again this turn
                await self._service.pings.refused(game)
            return  # backed off or the breaker open: a later sweep tries again
        except discord.Forbidden as exc:
            await self._service.pings.refused(game)
            log.warning("The turn notification of game %s was refused: %s", game.id, exc)
            return
        except discord.NotFound as exc:
            log.warning("The turn notification of game %s failed: %s", game.id, exc)
            if exc.code == UNKNOWN_CHANNEL:  # its games end, and nothing goes there again
                await self._service.upkeep.channel_gone(game.guild_id, game.channel_id)
            return
        except discord.HTTPException as exc:
            log.warning("The turn notification of game %s failed: %s", game.id, exc)
            return
        claim = await self._service.pings.record(item, sent.id)
        if not claim.won:  # the game moved on meanwhile, or a higher rank stands
            await self._delete_message(game.channel_id, sent.id, "turn notification")
        elif claim.replaced is not None and claim.replaced != standing:
            replaced: Ping = claim.replaced
            await self._delete(replaced.game_id, replaced.channel_id, replaced.message_id)

    async def _ping_by_token(self, item: Due, text: str) -> None:
        """Ping a game outside servers as a follow-up of its stored live token, if that
        token has room for one more; else not at all (the next sweep asks again)."""
        game = item.game
        player = game.current_player_id
        assert player is not None
        tokens = self._service.tokens
        token = await tokens.get("game", game.id)
        if token is None or not token_live(token.issued_at, time.time()):
            return
        if not followup_room(token.followups, token.user_only):
            return
        application_id = self._client.application_id
        assert application_id is not None
        hook = discord.Webhook.partial(application_id, token.token, client=self._client)
        await tokens.count_followup("game", game.id, token.token)  # counted even if refused
        try:
            sent = await hook.send(text, allowed_mentions=_pinging_only(player), wait=True)
        except discord.HTTPException as exc:
            log.warning("The turn notification of game %s failed: %s", game.id, exc)
            return
        self._hooks[sent.id] = (hook, token.issued_at)
        claim = await self._service.pings.record(item, sent.id)
        if not claim.won:
            await self._delete_message(game.channel_id, sent.id, "turn notification", True)
        elif claim.replaced is not None and claim.replaced != item.standing:
            replaced: Ping = claim.replaced
            await self._delete(
                replaced.game_id, replaced.channel_id, replaced.message_id, outside=True
            )

    async def _delete(
        self, game_id: int, channel_id: int, message_id: int, *, outside: bool = False
    ) -> bool:
        """Delete a ping and forget it, once Discord deleted it (or did not know it);
        ``outside``: of a game outside servers, deleted only through its webhook."""
        if await self._delete_message(channel_id, message_id, "turn notification", outside):
            await self._service.pings.forget(game_id, message_id)
            self._redrawn.discard(game_id)
            if self._deleted is not None:
                self._deleted.add(message_id)
            return True
        return False

    async def _delete_message(
        self, channel_id: int, message_id: int, what: str, outside: bool = False
    ) -> bool:
        """Whether the message is gone now: through the webhook of the click it follows
        up while its token lives, else through the channel (the outbox's checked path).
        ``outside`` (a game outside servers): only through the webhook that sent it while
        its token lives; after that it is left standing and forgotten."""
        if outside:
            return await self._delete_by_hook(message_id, what)
        click = self._usable(self._senders.get(message_id))
        try:
            if click is not None:
                await click.followup.delete_message(message_id)
            else:
                message = self._client.get_partial_messageable(channel_id).get_partial_message(
                    message_id
                )
                await self._outbox.call(channel_id, message.delete, message_id=message_id)
            self._senders.pop(message_id, None)
        except Blocked:
            return False  # not reachable now: a later sweep tries again
        except discord.NotFound:
            self._senders.pop(message_id, None)
            return True  # Unknown Message or Unknown Channel: nothing stands
        except discord.Forbidden as exc:
            log.warning("Deleting the %s %s was refused: %s", what, message_id, exc)
            return False
        except discord.HTTPException as exc:
            log.warning("Deleting the %s %s failed; retrying later: %s", what, message_id, exc)
            return False
        return True

    async def _delete_by_hook(self, message_id: int, what: str) -> bool:
        held = self._hooks.pop(message_id, None)
        if held is None or not token_live(held[1], time.time()):
            return True  # no way left that could work: it stays, forgotten
        try:
            await held[0].delete_message(message_id)
        except discord.NotFound:
            return True
        except discord.HTTPException as exc:
            log.warning("Deleting the %s %s failed: %s", what, message_id, exc)
            return True  # not retried: a route that failed is not tried twice
        return True
