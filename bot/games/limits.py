"""The limits on live games, as the database keeps them: server slots and member seats.

A live game holds one numbered slot of its server (``games.guild_slot``, unique among
the server's live games by the partial index games_live_per_guild_slot) and each of its
members holds one numbered seat (``live_seats``, primary key guild + member + seat). A
new game takes the lowest free slot below the server's cap and, for each member, the
lowest free seat below the per-member limit, in the transaction that inserts it; ending
the game frees them. Because slots and seats are unique keys, two processes racing for
the last place cannot both take it: the loser's insert fails (SQLite also serialises the
two ``BEGIN IMMEDIATE`` transactions, so it sees the place taken and is told why).
"""

from __future__ import annotations

from bot.db.backend import Database, Statement
from bot.db.rows import G_GAME_COLUMNS, IS_LIVE
from bot.models import Game
from bot.reach import by_channel

__all__ = [
    "FREE_SEATS",
    "LimitReached",
    "check_places",
    "claim_places",
    "live_games_of",
    "seat_rows",
]

GUILD_SLOTS = f"SELECT guild_slot, id FROM games WHERE guild_id = ? AND {IS_LIVE} ORDER BY id"
MEMBER_SEATS = "SELECT slot, game_id FROM live_seats WHERE guild_id = ? AND user_id = ?"
TAKE_SEAT = "INSERT INTO live_seats (guild_id, user_id, slot, game_id) VALUES (?, ?, ?, ?)"
FREE_SEATS = "DELETE FROM live_seats WHERE game_id = ?"


def live_games_of(members: int) -> str:
    """Each of ``members`` members' live games in a guild, through their seats, oldest
    first (parameters: the guild, then the members; rows: the member, then the game)."""
    return (
        f"SELECT s.user_id, {G_GAME_COLUMNS}"
        " FROM live_seats AS s JOIN games AS g ON g.id = s.game_id"
        f" WHERE s.guild_id = ? AND s.user_id IN ({', '.join('?' * members)}) ORDER BY g.id"
    )


class LimitReached(Exception):
    """A new game would pass a limit: the per-member one for ``user_id``, or the
    server's cap when ``user_id`` is None. ``game_ids``: the live games in the way."""

    def __init__(self, user_id: int | None, game_ids: tuple[int, ...]) -> None:
        who = "the server" if user_id is None else f"member {user_id}"
        super().__init__(f"{who} has no free place for another live game")
        self.user_id = user_id
        self.game_ids = game_ids


def _lowest_free(taken: set[int], limit: int) -> int | None:
    return next((n for n in range(limit) if n not in taken), None)


async def claim_places(
    db: Database, game: Game, per_member: int, per_server: int
) -> tuple[int | None, list[tuple[int, int]]]:
    """(the server slot, [(member, seat)]) a new ``game`` takes; LimitReached if none.
    A game stored already ended (an import, a test's history) takes none.

    Run inside the transaction that inserts the game (``seat_rows`` then writes the seats).
    """
    if not game.is_live:
        return None, []
    return await check_places(db, game.guild_id, game.human_ids, per_member, per_server)


async def check_places(
    db: Database, guild_id: int, members: tuple[int, ...], per_member: int, per_server: int
) -> tuple[int | None, list[tuple[int, int]]]:
    """The places a new live game of ``members`` would take (claimed by the caller's
    transaction, if any); LimitReached if there is none."""
    reads: list[Statement] = [(GUILD_SLOTS, (guild_id,))]
    reads += [(MEMBER_SEATS, (guild_id, member)) for member in members]
    slots, *taken = await db.batch(reads)  # one round trip: the transaction holds the lock
    slot = _lowest_free({row[0] for row in slots if row[0] is not None}, per_server)
    if not by_channel(guild_id):
        slot = None  # the players' own space is no server: no server cap (bot.reach)
    elif slot is None:
        raise LimitReached(None, tuple(row[1] for row in slots))
    seats: list[tuple[int, int]] = []
    for member, rows in zip(members, taken, strict=True):
        seat = _lowest_free({row[0] for row in rows}, per_member)
        if seat is None:
            raise LimitReached(member, tuple(sorted(row[1] for row in rows)))
        seats.append((member, seat))
    return slot, seats


def seat_rows(game: Game, seats: list[tuple[int, int]]) -> list[tuple[str, tuple[int, ...]]]:
    """The statements that give the stored ``game`` (with its id) its members' seats."""
    return [(TAKE_SEAT, (game.guild_id, member, seat, game.id)) for member, seat in seats]
