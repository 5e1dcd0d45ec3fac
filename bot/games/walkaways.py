"""Members who leave games without moving: a short wait before their next game.

Starting a game and walking away (stopping it, forfeiting it or letting the first-move
clock run out before one's own first move) holds a channel and a server slot for
nothing; done in a loop it fills a server. So a member who leaves a game without having
moved in it may not start a game against the bot, challenge or accept a challenge in
that server until the server's ``ABANDON_COOLDOWN`` has passed. A moderator's stop, a
removal or a deleted channel holds nobody off.

The moment is kept in the ``cooldowns`` table (action ``left_unmoved``, target 0) as the
moment plus the setting's upper bound, so the server's value as it is when the member
next starts applies, and the row is pruned once no value could still hold them.
"""

from __future__ import annotations

from bot.db.backend import Database
from bot.errors import StartCooldown
from bot.games.server_queries import COOLDOWN_UNTIL, EXTEND_COOLDOWN
from bot.i18n import N_
from bot.models import Game, GuildSettings
from bot.refs import Moment
from bot.tunables import ABANDON_COOLDOWN
from engine import Mark

__all__ = ["LEFT_UNMOVED", "check", "left_without_moving", "record"]

LEFT_UNMOVED = "left_unmoved"
"""The ``cooldowns.action`` of a member who left a game without a move (target 0)."""


def left_without_moving(game: Game, member: int) -> bool:
    """Whether ``member``, a player of ``game``, has made no move in it."""
    mark = game.mark_of(member)
    if mark is None:
        return False
    return game.move_no < (1 if mark is Mark.X else 2)  # X makes moves 0, 2, ...; O 1, 3, ...


async def record(db: Database, game: Game, member: int | None, now: float) -> None:
    """Hold ``member`` off after ``game`` ended at ``now``, if they made no move in it
    (None, or a member who moved: nothing)."""
    if member is None or not left_without_moving(game, member):
        return
    until = now + ABANDON_COOLDOWN.high
    await db.run_alone(EXTEND_COOLDOWN, (game.guild_id, member, LEFT_UNMOVED, 0, until))


async def check(
    db: Database, settings: GuildSettings, guild_id: int, member: int, now: float
) -> None:
    """StartCooldown if ``member`` left a game here without a move within the server's
    ``ABANDON_COOLDOWN``, saying when they may start again."""
    rows = await db.run_alone(COOLDOWN_UNTIL, (guild_id, member, LEFT_UNMOVED, 0))
    if not rows:
        return
    again = float(rows[0][0]) - ABANDON_COOLDOWN.high + settings[ABANDON_COOLDOWN]
    if again > now:
        raise StartCooldown(
            N_(
                "You left your last game here without making a move; you can start or"
                " accept a new one {when}.",
                when=Moment(again),
            )
        )
