"""Challenges between members: who may create, accept, decline or withdraw one.

A challenge is answered with a conditional write (pending and unexpired), and accepting
one inserts its game in the same transaction, so two answers, or an answer and the
expiry sweep, can never both land, in this process or another.

A rematch (``bot.challenges.rematches``) is a challenge too, unless the other player's is
waiting: then it is accepted.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

from bot.challenges.queries import ChallengeQueries
from bot.challenges.rules import cooldown_refusal, pending_refusal, unshown_refusal
from bot.config import ServiceConfig
from bot.errors import (
    BotChallenge,
    ChallengeCooldown,
    ChallengeExpired,
    ChallengeNotFound,
    ChallengesOff,
    NotChallenged,
    NotChallenger,
    SelfChallenge,
)
from bot.games import rules, walkaways
from bot.games.locks import KeyedLocks
from bot.games.queries import Store
from bot.games.refusals import (
    CHALLENGE_ACTION,
    ChannelTaken,
    CoolingDown,
    LimitReached,
    PendingTaken,
)
from bot.games.server_queries import GuildStore
from bot.games.servers import Guilds
from bot.i18n import N_
from bot.models import Challenge, ChallengeStatus, First, Game, GameStatus, GuildSettings
from bot.refs import Member, Moment
from bot.tunables import (
    CHALLENGE_COOLDOWN,
    CHALLENGE_REACH,
    CHALLENGE_TIMEOUT,
    DECLINE_COOLDOWN,
    FIRST_MOVE_TIMEOUT,
    GAMES_PER_MEMBER,
    SERVER_GAMES,
    TURN_TIMEOUT,
)

__all__ = ["Challenges"]


REACH_WINDOW = 600.0
"""The window of the cap on how many members one member's challenges may ping."""

UNSHOWN_LAPSE = 10.0
"""Seconds a new challenge stands before its message is recorded; recording it gives the
challenge its full expiry. Discord wants the command's answer within 3 s, so a challenge
still without a message after this was never shown (the bot stopped, or the answer was
refused): it lapses instead of blocking both members, unseen, for the whole expiry."""


class Challenges:
    def __init__(
        self,
        store: Store,
        config: ServiceConfig,
        clock: Callable[[], float],
        rng: random.Random,
        locks: KeyedLocks,
        guilds: Guilds,
    ) -> None:
        self._store = store
        self._challenge_queries = ChallengeQueries(store.db)
        self._guild_store = GuildStore(store.db)
        self._guilds = guilds
        self._config = config
        self._clock = clock
        self._rng = rng
        self._locks = locks

    async def create(
        self,
        guild_id: int,
        channel_id: int,
        challenger_id: int,
        opponent_id: int,
        *,
        opponent_is_bot: bool = False,
        level: str | None = None,
        width: int = 3,
        height: int = 3,
        k: int | None = None,
        first: First | str = First.RANDOM,
        rematch_of: Game | None = None,
        locale: str | None = None,
        parent_id: int | None = None,
    ) -> Challenge:
        """A new pending challenge, refused (nothing written, nobody pinged) if: the
        channel is not one for games, the opponent turned challenges off, either member
        is busy (in the channel, or up to their limit of live games in the server), the
        challenger has a challenge pending in the server, or challenged this opponent
        within the server's cooldown. The first rematch of a finished game is exempt
        from the cooldown, but its message pings nobody if the cooldown still runs
        (``pinged`` False): a challenge pings a member at most once per cooldown.
        ``locale`` is the server's: the language of the challenge and of its game.
        ``parent_id``: the channel whose thread ``channel_id`` is, if it is one.
        ``rematch_of``: the game this challenge plays again, as its caller read it.
        ``k`` None: the board's usual win length; a ``level`` is refused first.
        """
        rules.no_level_with_opponent(level, opponent_id)
        k = rules.win_length(width, height, k)
        settings = await self._vet(
            guild_id,
            channel_id,
            challenger_id,
            opponent_id,
            opponent_is_bot=opponent_is_bot,
            size=(width, height, k),
            first=first,
            parent_id=parent_id,
        )
        order = rules.first_from(first)
        exempt = rematch_of is not None and await self._first_rematch(rematch_of)
        rematch_id = rematch_of.id if rematch_of is not None else None
        async with self._locks[("channel", guild_id, channel_id)]:
            now = self._clock()
            view = await self._store.channel_view(guild_id, channel_id, now)
            for pending in view.challenges:
                if pending.challenger_id == challenger_id and pending.message_id is None:
                    raise unshown_refusal(pending)
            rules.check_channel(
                view,
                challenger_id,
                (challenger_id, opponent_id),
                exclusive=self._config.one_game_per_channel,
            )
            challenge = Challenge(
                id=0,
                guild_id=guild_id,
                channel_id=channel_id,
                message_id=None,
                challenger_id=challenger_id,
                opponent_id=opponent_id,
                width=width,
                height=height,
                k=k,
                first=order,
                status=ChallengeStatus.PENDING,
                created_at=now,
                expires_at=now + min(UNSHOWN_LAPSE, settings[CHALLENGE_TIMEOUT]),
                rematch_of=rematch_id,
                locale=locale,
            )
            try:
                made = await self._challenge_queries.insert_challenge(
                    challenge, cooldown_until=now + settings[CHALLENGE_COOLDOWN], exempt=exempt
                )
            except CoolingDown as error:
                raise await self._cooldown_refusal(made_by=challenge, until=error.until) from None
            except PendingTaken as error:
                raise pending_refusal(error.challenge, now) from None
        # Its message shows the expiry that recording the message gives it, and the clock
        # its game will get (the server's when accepted).
        return dataclasses.replace(
            made, expires_at=now + settings[CHALLENGE_TIMEOUT], turn_seconds=settings[TURN_TIMEOUT]
        )

    async def _vet(
        self,
        guild_id: int,
        channel_id: int,
        challenger_id: int,
        opponent_id: int,
        *,
        opponent_is_bot: bool,
        size: tuple[int, int, int],
        first: First | str,
        parent_id: int | None,
    ) -> GuildSettings:
        """``create``'s checks that read before its lock: the options, the channel, the
        opponent's consent, the challenger's reach, both members' live games. Returns
        the server's settings."""
        rules.validate_options(*size)
        rules.first_from(first)
        if challenger_id == opponent_id:
            raise SelfChallenge()
        if opponent_is_bot:
            raise BotChallenge()
        settings = await self._guilds.get(guild_id)
        rules.check_allowed_channel(settings, channel_id, parent_id)
        if not await self._guilds.accepts_challenges(guild_id, opponent_id):
            # How to turn them back on is the other member's business, not the challenger's.
            raise ChallengesOff(
                N_("{member} has turned challenges off on this server.", member=Member(opponent_id))
            )
        await walkaways.check(self._store.db, settings, guild_id, challenger_id, self._clock())
        await self._check_reach(guild_id, challenger_id, opponent_id, settings[CHALLENGE_REACH])
        live = await self._store.live_games_of(guild_id, challenger_id, opponent_id)
        for member, playing in live.items():
            if len(playing) >= settings[GAMES_PER_MEMBER]:
                raise rules.too_many_games(member, challenger_id, playing, settings)
        return settings

    async def vet(
        self,
        guild_id: int,
        parent_id: int,
        challenger_id: int,
        opponent_id: int,
        *,
        opponent_is_bot: bool = False,
        width: int = 3,
        height: int = 3,
        k: int = 3,
        first: First | str = First.RANDOM,
    ) -> None:
        """Raise what ``create`` would for this challenge in a new thread of ``parent_id``
        (which does not exist yet), writing nothing: its own checks, then the challenger's
        pending challenge in the server and their cooldown towards the opponent, which
        ``create`` meets when it writes. (A new thread holds no game or challenge, so the
        channel's own checks need no reading.) ``create`` still checks it all again."""
        await self._vet(
            guild_id,
            parent_id,
            challenger_id,
            opponent_id,
            opponent_is_bot=opponent_is_bot,
            size=(width, height, k),
            first=first,
            parent_id=None,
        )
        now = self._clock()
        pending = await self._guild_store.pending_of(guild_id, challenger_id)
        if pending is not None:
            raise pending_refusal(pending, now)
        until = await self._guild_store.cooldown_until(
            guild_id, challenger_id, CHALLENGE_ACTION, opponent_id
        )
        if until is not None and until > now:
            declined = await self._challenge_queries.last_declined(
                guild_id, challenger_id, opponent_id
            )
            raise cooldown_refusal(opponent_id, until, declined=declined)

    async def _cooldown_refusal(self, made_by: Challenge, until: float) -> ChallengeCooldown:
        """The refusal of ``made_by`` within its challenger's cooldown towards its
        opponent, saying so if that member declined the last one."""
        c = made_by
        declined = await self._challenge_queries.last_declined(
            c.guild_id, c.challenger_id, c.opponent_id
        )
        return cooldown_refusal(c.opponent_id, until, declined=declined)

    async def _check_reach(
        self, guild_id: int, challenger_id: int, opponent_id: int, reach: int
    ) -> None:
        """ChallengeCooldown if ``challenger_id`` challenged ``reach`` other members here
        in the last ``REACH_WINDOW`` seconds (withdrawn, declined and expired challenges
        count: each pinged someone), unless ``opponent_id`` is one of them."""
        now = self._clock()
        recent = await self._guild_store.challenged_since(
            guild_id, challenger_id, now - REACH_WINDOW
        )
        if opponent_id in recent or len(recent) < reach:
            return
        latest = sorted(recent.values())
        again = latest[len(latest) - reach] + REACH_WINDOW
        raise ChallengeCooldown(
            N_(
                "You've challenged as many different members in 10 minutes as this server"
                " allows ({n}); you can challenge someone new {when}.",
                n=len(recent),
                when=Moment(again),
            )
        )

    async def _first_rematch(self, game: Game) -> bool:
        """Whether a rematch of ``game`` would be its first, after a finished game."""
        if game.status is not GameStatus.FINISHED:
            return False
        return not await self._challenge_queries.has_rematch(game.id)

    async def get(
        self, challenge_id: int, guild_id: int | None = None, message_id: int | None = None
    ) -> Challenge:
        """The challenge; ChallengeNotFound if missing, (with ``guild_id``) elsewhere, or
        (with ``message_id``, the clicked message) shown by another message than that."""
        challenge = await self._challenge_queries.get_challenge(challenge_id)
        if challenge is None or (guild_id is not None and challenge.guild_id != guild_id):
            raise ChallengeNotFound()
        if not rules.on_its_message(challenge.message_id, message_id):
            raise ChallengeNotFound()
        return challenge

    async def set_message(self, challenge: Challenge, message_id: int) -> None:
        """Record the message showing ``challenge`` (as ``create`` returned it), which
        gives the challenge the expiry that message shows."""
        if not await self._challenge_queries.set_challenge_message(
            challenge.id, message_id, challenge.expires_at
        ):
            raise ChallengeNotFound()

    async def _open(
        self, challenge_id: int, guild_id: int | None, now: float, message_id: int | None = None
    ) -> Challenge:
        """The challenge if it can still be answered; else the error saying why not."""
        challenge = await self.get(challenge_id, guild_id, message_id)
        if challenge.status is ChallengeStatus.EXPIRED:
            raise ChallengeExpired()
        if challenge.status is not ChallengeStatus.PENDING:
            raise ChallengeNotFound()
        if now >= challenge.expires_at:
            await self._challenge_queries.expire_challenge(challenge.id, now)
            raise ChallengeExpired()
        return challenge

    async def accept(
        self,
        challenge_id: int,
        user_id: int,
        guild_id: int | None = None,
        message_id: int | None = None,
    ) -> Game:
        """Start the challenge's game; sides follow ``first`` from the challenger's view.
        ``message_id``: the message clicked (ChallengeNotFound if not the challenge's)."""
        return (await self.accept_challenge(challenge_id, user_id, guild_id, message_id))[1]

    async def accept_challenge(
        self, challenge_id: int, user_id: int, guild_id: int | None, message_id: int | None
    ) -> tuple[Challenge, Game]:
        """``accept``, and the challenge as answered with its game."""
        now = self._clock()
        challenge = await self._open(challenge_id, guild_id, now, message_id)
        if user_id != challenge.opponent_id:
            raise NotChallenged()
        settings = await self._guilds.get(challenge.guild_id)
        await walkaways.check(self._store.db, settings, challenge.guild_id, user_id, now)
        async with self._locks[("channel", challenge.guild_id, challenge.channel_id)]:
            view = await self._store.channel_view(challenge.guild_id, challenge.channel_id, now)
            rules.check_channel(
                view,
                user_id,
                (challenge.challenger_id, challenge.opponent_id),
                exclusive=self._config.one_game_per_channel,
                challenges=False,
            )
            first = challenge.first
            if first is First.RANDOM:
                first = self._rng.choice((First.ME, First.OPPONENT))
            x_id, o_id = challenge.challenger_id, challenge.opponent_id
            if first is First.OPPONENT:
                x_id, o_id = o_id, x_id
            game = rules.new_game(
                challenge.guild_id,
                challenge.channel_id,
                x_id=x_id,
                o_id=o_id,
                bot_level=None,
                width=challenge.width,
                height=challenge.height,
                k=challenge.k,
                now=now,
                turn_timeout=settings[TURN_TIMEOUT],
                message_id=challenge.message_id,
                rematch_of=challenge.rematch_of,
                locale=challenge.locale,
                first_move_timeout=settings[FIRST_MOVE_TIMEOUT],
            )
            try:
                accepted = await self._challenge_queries.accept_challenge(
                    challenge_id,
                    game,
                    now,
                    exclusive=self._config.one_game_per_channel,
                    per_member=settings[GAMES_PER_MEMBER],
                    per_server=settings[SERVER_GAMES],
                )
            except ChannelTaken:  # a game started meanwhile (another process): link it
                games = await self._store.live_games(challenge.guild_id, challenge.channel_id)
                raise rules.busy(games) from None
            except LimitReached as error:
                raise await self._guilds.too_many(error, user_id, settings) from None
        if accepted is None:  # answered or expired meanwhile (another process)
            await self._open(challenge_id, guild_id, now)
            raise ChallengeNotFound()
        return accepted

    async def decline(
        self,
        challenge_id: int,
        user_id: int,
        guild_id: int | None = None,
        message_id: int | None = None,
    ) -> Challenge:
        """Turn the challenge down; only the challenged member may (``message_id``: as for
        ``accept``)."""
        now = self._clock()
        challenge = await self._open(challenge_id, guild_id, now, message_id)
        settings = await self._guilds.get(challenge.guild_id)
        wait = now + settings[DECLINE_COOLDOWN]
        return await self._answer(challenge, user_id, ChallengeStatus.DECLINED, now, wait)

    async def withdraw(
        self,
        challenge_id: int,
        user_id: int,
        guild_id: int | None = None,
        message_id: int | None = None,
    ) -> Challenge:
        """Take back a challenge; only its challenger may (``message_id``: as for ``accept``)."""
        now = self._clock()
        challenge = await self._open(challenge_id, guild_id, now, message_id)
        return await self._answer(challenge, user_id, ChallengeStatus.WITHDRAWN, now)

    async def _answer(
        self,
        challenge: Challenge,
        user_id: int,
        status: ChallengeStatus,
        now: float,
        wait_until: float = 0.0,
    ) -> Challenge:
        """Move the open ``challenge`` to ``status`` if ``user_id`` may (``wait_until``:
        a decline keeps its challenger from challenging that member until then)."""
        if status is ChallengeStatus.WITHDRAWN and user_id != challenge.challenger_id:
            raise NotChallenger()
        if status is ChallengeStatus.DECLINED and user_id != challenge.opponent_id:
            raise NotChallenged()
        answered = await self._challenge_queries.answer_challenge(
            challenge.id, status, now, wait_until=wait_until
        )
        if answered is None:  # answered or expired meanwhile (another process)
            await self._open(challenge.id, challenge.guild_id, now)
            raise ChallengeNotFound()
        return answered

    async def expire(self) -> list[Challenge]:
        """Pending challenges past expiry become EXPIRED; returned so their messages change.
        With ``shards`` in the config, only in this process's servers."""
        return await self._challenge_queries.expire_challenges(self._clock(), self._config.shards)
