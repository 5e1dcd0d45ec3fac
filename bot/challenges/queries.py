"""The challenges' queries: a challenge stored, answered, accepted (its game inserted in
the same transaction) or expired, each guarded in its SQL (pending and unexpired), so
two answers, or an answer and the expiry sweep, never both land. The statements are in
``bot.games.sql`` with the games' (a channel's view reads both).
"""

from __future__ import annotations

from dataclasses import replace

from bot.db.backend import Database, Unchanged, UniqueViolation
from bot.db.rows import Row, challenge_from_row, challenge_values
from bot.db.shards import owned_values
from bot.games import sql
from bot.games.queries import insert_with_places
from bot.games.refusals import CHALLENGE_ACTION, CoolingDown, PendingTaken, RematchTaken
from bot.games.server_queries import CLAIM_COOLDOWN, COOLDOWN_UNTIL, EXTEND_COOLDOWN
from bot.models import Challenge, ChallengeStatus, Game, Shards

__all__ = ["ChallengeQueries"]

LAST_STATUS = (
    "SELECT status FROM challenges WHERE guild_id = ? AND challenger_id = ? AND opponent_id = ?"
    " ORDER BY id DESC LIMIT 1"
)


class ChallengeQueries:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get_challenge(self, challenge_id: int) -> Challenge | None:
        rows = await self.db.run_alone(sql.GET_CHALLENGE, (challenge_id,))
        return challenge_from_row(rows[0]) if rows else None

    async def insert_challenge(
        self, challenge: Challenge, *, cooldown_until: float, exempt: bool
    ) -> Challenge:
        """Store a new challenge (its ``id`` is ignored) and return it with its id.

        It claims the challenger's cooldown towards the opponent until ``cooldown_until``
        in the same transaction: CoolingDown if one still runs, unless ``exempt`` (then
        stored with ``pinged`` False). PendingTaken if the challenger has a pending
        challenge in the server (challenges_pending_per_challenger), RematchTaken if the
        game it plays again has one (challenges_pending_per_rematch).
        """
        c = challenge
        claim = (c.guild_id, c.challenger_id, CHALLENGE_ACTION, c.opponent_id, cooldown_until)
        first = [(CLAIM_COOLDOWN, (*claim, c.created_at))]

        async def body(opened: list[list[Row]]) -> Challenge:
            claimed = bool(opened[0])
            if not claimed and not exempt:
                (until,) = (await self.db.run(COOLDOWN_UNTIL, claim[:4]))[0]
                raise CoolingDown(float(until))
            values = challenge_values(replace(c, pinged=claimed))
            (row,) = await self.db.run(sql.INSERT_CHALLENGE, values)
            return challenge_from_row(row)

        try:
            return await self.db.transaction(body, first=first)
        except UniqueViolation as error:
            if error.index == "challenges_pending_per_rematch":
                raise RematchTaken() from error
            if error.index != "challenges_pending_per_challenger":
                raise
        rows = await self.db.run_alone(sql.PENDING_OF, (c.guild_id, c.challenger_id))
        raise PendingTaken(challenge_from_row(rows[0]) if rows else None)

    async def pending_rematch(self, game_id: int) -> Challenge | None:
        """The game's pending rematch, if one is (expired or not)."""
        rows = await self.db.run_alone(sql.PENDING_REMATCH, (game_id,))
        return challenge_from_row(rows[0]) if rows else None

    async def has_rematch(self, game_id: int) -> bool:
        """Whether a challenge was ever a rematch of the game."""
        return bool(await self.db.run_alone(sql.HAS_REMATCH, (game_id,)))

    async def set_challenge_message(
        self, challenge_id: int, message_id: int, expires_at: float
    ) -> bool:
        """Remember the message showing the challenge, and set its expiry; False if there
        is no such challenge."""
        row = (message_id, expires_at, challenge_id)
        return bool(await self.db.run_alone(sql.SET_CHALLENGE_MESSAGE, row))

    async def answer_challenge(
        self, challenge_id: int, status: ChallengeStatus, now: float, *, wait_until: float = 0.0
    ) -> Challenge | None:
        """Move a pending, unexpired challenge to ``status``; None if it was not (any more).
        ``wait_until``: the challenger's cooldown towards the opponent runs at least until
        then (a decline's), in the same transaction."""
        first = [(sql.ANSWER_CHALLENGE, (status.value, challenge_id, now))]

        async def body(opened: list[list[Row]]) -> Challenge | None:
            if not opened[0]:
                return None
            answered = challenge_from_row(opened[0][0])
            if wait_until > now:
                a = answered
                key = (a.guild_id, a.challenger_id, CHALLENGE_ACTION, a.opponent_id)
                await self.db.run(EXTEND_COOLDOWN, (*key, wait_until))
            return answered

        return await self.db.transaction(body, first=first)

    async def last_declined(self, guild_id: int, challenger_id: int, opponent_id: int) -> bool:
        """Whether the challenger's last challenge to the opponent here was declined."""
        rows = await self.db.run_alone(LAST_STATUS, (guild_id, challenger_id, opponent_id))
        return bool(rows) and rows[0][0] == ChallengeStatus.DECLINED.value

    async def accept_challenge(
        self,
        challenge_id: int,
        game: Game,
        now: float,
        *,
        exclusive: bool,
        per_member: int,
        per_server: int,
    ) -> tuple[Challenge, Game] | None:
        """Accept a pending, unexpired challenge and insert its game, in one transaction.

        None if the challenge was no longer open; raises ChannelTaken or LimitReached
        (changing nothing) as ``insert_game`` does.
        """
        accepted = ChallengeStatus.ACCEPTED.value
        first = [(sql.ANSWER_CHALLENGE, (accepted, challenge_id, now))]

        async def body(opened: list[list[Row]]) -> tuple[Challenge, Game]:
            if not opened[0]:
                raise Unchanged
            stored = await insert_with_places(self.db, game, exclusive, per_member, per_server)
            (answered,) = await self.db.run(sql.SET_CHALLENGE_GAME, (stored.id, challenge_id))
            return challenge_from_row(answered), stored

        try:
            return await self.db.transaction(body, first=first, lock=game.guild_id)
        except Unchanged:
            return None

    async def expire_challenge(self, challenge_id: int, now: float) -> bool:
        """Expire one pending challenge if it is past its expiry (others wait for the sweep,
        which redraws their messages); False if it was not."""
        rows = await self.db.run_alone(sql.EXPIRE_CHALLENGE, (challenge_id, now))
        return bool(rows)

    async def expire_challenges(self, now: float, shards: Shards | None = None) -> list[Challenge]:
        """Mark pending challenges at or past their expiry (in ``shards``' servers, if
        given) as expired and return them.

        A read comes first: usually none is due, and the UPDATE would take the write lock
        on every sweep for nothing, holding up other processes' writers meanwhile.
        """
        owned = owned_values(shards)
        async with self.db.shared():
            if not await self.db.run(sql.any_challenge_due(shards), (now, *owned)):
                return []
            expired = ChallengeStatus.EXPIRED.value
            rows = await self.db.run(sql.expire_challenges(shards), (expired, now, *owned))
        return sorted(map(challenge_from_row, rows), key=lambda c: c.id)
