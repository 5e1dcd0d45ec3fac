"""Erasing a member's, or a whole server's, data on request.

A member's erasure deletes their rows (standing, records against the bot, cooldowns,
consent, seats, challenges from or to them) and puts ``DELETED_MEMBER`` in their place in
the ended games they played, which stay in the other players' history. A server's erasure
deletes every row of that server; turn_pings, calloffs, reviews and live_seats go with
their games (ON DELETE CASCADE: the store turns foreign keys on for its connection).

Each erasure is one transaction, begun IMMEDIATE so that no game can start between the
check for live games and the deletes, and committed durably (synchronous = FULL): once
the member is told their data is gone, a power cut does not bring it back.
"""

from __future__ import annotations

from dataclasses import replace

from bot.db.backend import Database
from bot.db.rows import (
    CHALLENGE_COLUMNS,
    GAME_COLUMNS,
    IS_ENDED,
    IS_LIVE,
    IS_PENDING,
    PLAYER_COLUMNS,
    Row,
    challenge_from_row,
    game_from_row,
    player_from_row,
)
from bot.models import (
    DELETED_MEMBER,
    Challenge,
    ChallengeStatus,
    Game,
    GuildData,
    MemberData,
    PlayerRow,
)

__all__ = ["LiveGames", "PrivacyStore"]

# -- one member --------------------------------------------------------------------------

MEMBER_LIVE_GAMES = (
    f"SELECT {GAME_COLUMNS} FROM games WHERE guild_id = ? AND {IS_LIVE}"
    " AND (x_id = ? OR o_id = ?) ORDER BY id"
)
MEMBER_PLAYER = f"SELECT {PLAYER_COLUMNS} FROM players WHERE guild_id = ? AND user_id = ?"
MEMBER_BOT_LEVELS = "SELECT COUNT(*) FROM bot_records WHERE guild_id = ? AND user_id = ?"
_MEMBER_ENDED_IDS = (
    f"SELECT id FROM games WHERE guild_id = ? AND {IS_ENDED} AND x_id = ?"
    f" UNION SELECT id FROM games WHERE guild_id = ? AND {IS_ENDED} AND o_id = ?"
)
MEMBER_ENDED_GAMES = f"SELECT COUNT(*) FROM ({_MEMBER_ENDED_IDS})"
"""One lookup per mark in the partial indexes games_ended_by_x/_o (see sql.MEMBER_HISTORY)."""
MEMBER_CHALLENGES = (
    "SELECT COUNT(*) FROM challenges WHERE guild_id = ? AND (challenger_id = ? OR opponent_id = ?)"
)

DELETE_MEMBER_CHALLENGES = (
    "DELETE FROM challenges WHERE guild_id = ? AND (challenger_id = ? OR opponent_id = ?)"
    f" RETURNING {CHALLENGE_COLUMNS}"
)
"""Deleted rather than anonymised: a challenge between two members who both erased their
data would break ``opponent_id <> challenger_id``, and an answered challenge adds nothing
its game does not keep."""
ANONYMISE_WINNER = (
    f"UPDATE games SET winner_id = {DELETED_MEMBER} WHERE id IN ({_MEMBER_ENDED_IDS})"
    " AND winner_id = ?"
)
"""Before ANONYMISE_X/_O: it finds the member's games by their mark, since no index has
winner_id (see docs/decisions.md#member-games-found-by-mark)."""
ANONYMISE_X = (
    f"UPDATE games SET x_id = {DELETED_MEMBER}, x_rating_before = NULL, x_rating_after = NULL"
    f" WHERE guild_id = ? AND {IS_ENDED} AND x_id = ? RETURNING id"
)
ANONYMISE_O = (
    f"UPDATE games SET o_id = {DELETED_MEMBER}, o_rating_before = NULL, o_rating_after = NULL"
    f" WHERE guild_id = ? AND {IS_ENDED} AND o_id = ? RETURNING id"
)
"""Their rating before and after each game goes with their id."""
DELETE_PLAYER = "DELETE FROM players WHERE guild_id = ? AND user_id = ?"
DELETE_BOT_RECORDS = "DELETE FROM bot_records WHERE guild_id = ? AND user_id = ? RETURNING level"
DELETE_COOLDOWNS = "DELETE FROM cooldowns WHERE guild_id = ? AND user_id = ?"
"""Their own cooldowns. Another member's cooldown on challenging them (target = them) stays
until it runs out (a minute by default, 10 minutes after they declined): it protects them
from a fresh ping."""
DELETE_CHALLENGE_BLOCK = "DELETE FROM challenge_blocks WHERE guild_id = ? AND user_id = ?"
DELETE_MEMBER_PREFS = "DELETE FROM member_prefs WHERE guild_id = ? AND user_id = ?"
DELETE_SEATS = "DELETE FROM live_seats WHERE guild_id = ? AND user_id = ?"
DELETE_TURN_PINGS = (
    "DELETE FROM turn_pings WHERE user_id = ?"
    " AND (SELECT guild_id FROM games WHERE id = turn_pings.game_id) = ?"
)
"""Read from the small table (a row per live game at most), not from the guild's games."""
DELETE_CALLOFFS = (
    "DELETE FROM calloffs WHERE proposer_id = ?"
    " AND (SELECT guild_id FROM games WHERE id = calloffs.game_id) = ?"
)
DELETE_CALLOFF_DECLINES = (
    "DELETE FROM calloff_declines WHERE proposer_id = ?"
    " AND (SELECT guild_id FROM games WHERE id = calloff_declines.game_id) = ?"
)

# -- a whole server ----------------------------------------------------------------------

GUILD_LIVE_GAMES = f"SELECT {GAME_COLUMNS} FROM games WHERE guild_id = ? AND {IS_LIVE} ORDER BY id"
GUILD_COUNTS = (  # games: ended + live, each counted in a partial index
    f"SELECT (SELECT COUNT(*) FROM games WHERE guild_id = :guild AND {IS_ENDED})"
    f" + (SELECT COUNT(*) FROM games WHERE guild_id = :guild AND {IS_LIVE}),"
    " (SELECT COUNT(*) FROM challenges WHERE guild_id = :guild),"
    " (SELECT COUNT(*) FROM players WHERE guild_id = :guild),"
    " (SELECT COUNT(*) FROM guild_settings WHERE guild_id = :guild)"
    " + (SELECT COUNT(*) FROM game_channels WHERE guild_id = :guild)"
)
GUILD_PENDING_CHALLENGES = (
    f"SELECT {CHALLENGE_COLUMNS} FROM challenges WHERE guild_id = ? AND {IS_PENDING} ORDER BY id"
)
ERASE_GUILD = (
    "DELETE FROM challenges WHERE guild_id = :guild",
    "DELETE FROM live_seats WHERE guild_id = :guild",
    "DELETE FROM games WHERE guild_id = :guild",  # cascades: turn_pings, calloffs, reviews
    "DELETE FROM players WHERE guild_id = :guild",
    "DELETE FROM bot_records WHERE guild_id = :guild",
    "DELETE FROM guild_settings WHERE guild_id = :guild",
    "DELETE FROM game_channels WHERE guild_id = :guild",
    "DELETE FROM cooldowns WHERE guild_id = :guild",
    "DELETE FROM challenge_blocks WHERE guild_id = :guild",
    "DELETE FROM member_prefs WHERE guild_id = :guild",
    "DELETE FROM left_guilds WHERE guild_id = :guild",
)
"""Every table with a guild_id; challenges before the games they point to."""


class LiveGames(Exception):
    """An erasure was refused, writing nothing: these live games are in the way."""

    def __init__(self, games: list[Game]) -> None:
        super().__init__(f"{len(games)} live game(s)")
        self.games = games


def _withdrawn(rows: list[Row]) -> tuple[Challenge, ...]:
    """The pending challenges among deleted rows, as the erasure withdrew them."""
    return tuple(
        replace(c, status=ChallengeStatus.WITHDRAWN)
        for c in map(challenge_from_row, rows)
        if c.status is ChallengeStatus.PENDING
    )


class PrivacyStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def member_data(self, guild_id: int, user_id: int) -> tuple[MemberData, list[Game]]:
        """What the server holds about the member, and their live games there (one snapshot)."""
        g, u = guild_id, user_id
        first = [
            (MEMBER_LIVE_GAMES, (g, u, u)),
            (MEMBER_PLAYER, (g, u)),
            (MEMBER_BOT_LEVELS, (g, u)),
            (MEMBER_ENDED_GAMES, (g, u, g, u)),
            (MEMBER_CHALLENGES, (g, u, u)),
        ]

        async def body(opened: list[list[Row]]) -> tuple[MemberData, list[Game]]:
            live, player, ((levels,),), ((ended,),), ((challenges,),) = opened
            row = player_from_row(player[0]) if player else PlayerRow()
            return MemberData(row, levels, ended, challenges), [game_from_row(r) for r in live]

        return await self._db.transaction(body, first=first, snapshot=True)

    async def erase_member(self, guild_id: int, user_id: int) -> MemberData:
        """Erase the member's data in the server (see the module's doc) and return what was
        erased, their pending challenges as withdrawn. Raises LiveGames, writing nothing,
        while they play a live game there."""
        g, u = guild_id, user_id
        first = [(MEMBER_LIVE_GAMES, (g, u, u)), (MEMBER_PLAYER, (g, u))]

        async def body(opened: list[list[Row]]) -> MemberData:
            live, player = opened
            if live:
                raise LiveGames([game_from_row(r) for r in live])
            challenges, _, x_games, o_games, _, levels, *_ = await self._db.batch(
                [
                    (DELETE_MEMBER_CHALLENGES, (g, u, u)),
                    (ANONYMISE_WINNER, (g, u, g, u, u)),
                    (ANONYMISE_X, (g, u)),
                    (ANONYMISE_O, (g, u)),
                    (DELETE_PLAYER, (g, u)),
                    (DELETE_BOT_RECORDS, (g, u)),
                    (DELETE_COOLDOWNS, (g, u)),
                    (DELETE_CHALLENGE_BLOCK, (g, u)),
                    (DELETE_MEMBER_PREFS, (g, u)),
                    (DELETE_SEATS, (g, u)),
                    (DELETE_TURN_PINGS, (u, g)),
                    (DELETE_CALLOFFS, (u, g)),
                    (DELETE_CALLOFF_DECLINES, (u, g)),
                ]
            )
            ended = len({r[0] for r in x_games} | {r[0] for r in o_games})
            row = player_from_row(player[0]) if player else PlayerRow()
            return MemberData(row, len(levels), ended, len(challenges), _withdrawn(challenges))

        return await self._db.transaction(body, first=first, lock=g, durable=True)

    async def guild_data(self, guild_id: int) -> tuple[GuildData, list[Game]]:
        """What the bot holds about the server, and its live games (one snapshot)."""
        first = [(GUILD_LIVE_GAMES, (guild_id,)), (GUILD_COUNTS, {"guild": guild_id})]

        async def body(opened: list[list[Row]]) -> tuple[GuildData, list[Game]]:
            live, ((games, challenges, players, settings),) = opened
            data = GuildData(games, challenges, players, settings)
            return data, [game_from_row(r) for r in live]

        return await self._db.transaction(body, first=first, snapshot=True)

    async def erase_guild(self, guild_id: int) -> GuildData:
        """Delete every row the bot holds for the server and return what there was, its
        pending challenges as withdrawn. Raises LiveGames, writing nothing, while the
        server has live games."""
        first = [
            (GUILD_LIVE_GAMES, (guild_id,)),
            (GUILD_COUNTS, {"guild": guild_id}),
            (GUILD_PENDING_CHALLENGES, (guild_id,)),
        ]

        async def body(opened: list[list[Row]]) -> GuildData:
            live, ((games, challenges, players, settings),), pending = opened
            if live:
                raise LiveGames([game_from_row(r) for r in live])
            await self._db.batch([(statement, {"guild": guild_id}) for statement in ERASE_GUILD])
            return GuildData(games, challenges, players, settings, _withdrawn(pending))

        return await self._db.transaction(body, first=first, lock=guild_id, durable=True)
