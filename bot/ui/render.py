"""Text the bot shows: pure functions of the service's data, no discord objects.

Players are shown as mentions (``<@id>``); whether a mention pings is decided by the
``AllowedMentions`` of each message, not here. A member who erased their data is shown
as "a deleted member" (``DELETED_MEMBER`` in their old games). Cells are numbered from 1
for people.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bot.models import (
    DELETED_MEMBER,
    Challenge,
    ChallengeStatus,
    Game,
    GameStatus,
    LeaderboardPage,
    PlayerStats,
    Record,
    Result,
)
from engine import Mark
from engine.levels import UnknownLevelError, get_level

__all__ = [
    "DELETED_MEMBER_TEXT",
    "MARK_EMOJI",
    "ReviewLike",
    "board_size_text",
    "challenge_text",
    "game_text",
    "leaderboard_text",
    "level_text",
    "review_text",
    "stats_text",
    "turn_ping_text",
]

DELETED_MEMBER_TEXT = "a deleted member"
MARK_EMOJI = {Mark.X: "❌", Mark.O: "⭕"}
_WORDS = {3: "three", 4: "four", 5: "five"}


class ReviewLike(Protocol):
    """What ``render`` needs of ``engine.analysis.Review``."""

    @property
    def turning_point(self) -> int | None: ...

    def summary(self) -> str: ...


def mention(user_id: int) -> str:
    """How a player is named: a mention, or DELETED_MEMBER_TEXT for an erased one."""
    return DELETED_MEMBER_TEXT if user_id == DELETED_MEMBER else f"<@{user_id}>"


def level_text(level: str) -> str:
    """The level's name and, when the engine has one, its description."""
    try:
        description = get_level(level).description
    except UnknownLevelError:  # a retired level's old games still render
        return level
    return f"{level} — {description}" if description else level


def board_size_text(width: int, height: int, k: int) -> str:
    return f"{width}×{height}, {_WORDS.get(k, str(k))} in a row"


def player_text(game: Game, mark: Mark) -> str:
    player = game.player_of(mark)
    if player is None:
        return f"🤖 me ({game.bot_level})"
    return mention(player)


def turn_ping_text(game: Game, *, reminder: bool = False) -> str:
    """The message that tells the player on move it is their turn (or reminds them)."""
    mark = game.turn
    player = game.player_of(mark)
    opponent = game.player_of(mark.other)
    assert player is not None and opponent is not None, "member games only"
    parts = [
        f"{mention(player)}, {'reminder: ' if reminder else ''}it's your turn against "
        f"{mention(opponent)} (you play {mark.value})"
    ]
    if game.message_id is not None:
        parts.append(
            f"https://discord.com/channels/{game.guild_id}/{game.channel_id}/{game.message_id}"
        )
    if game.turn_deadline is not None:
        parts.append(f"time runs out <t:{int(game.turn_deadline)}:R>")
    return " · ".join(parts)


def game_text(game: Game) -> str:
    """The text above the board: who plays what, and whose turn it is or how it ended."""
    lines = [
        f"### Tic-tac-toe · {board_size_text(game.width, game.height, game.k)}",
        f"{MARK_EMOJI[Mark.X]} {player_text(game, Mark.X)}  vs  "
        f"{MARK_EMOJI[Mark.O]} {player_text(game, Mark.O)}",
    ]
    if game.is_bot_game and game.bot_level is not None:
        lines.append(f"Level: {level_text(game.bot_level)}")
    lines.append(_status_line(game))
    return "\n".join(lines)


def _status_line(game: Game) -> str:
    if game.is_live:
        turn = game.turn
        player = game.player_of(turn)
        if player is None:
            return f"{MARK_EMOJI[turn]} My move…"
        deadline = f" — time runs out <t:{int(game.turn_deadline)}:R>" if game.turn_deadline else ""
        return f"{MARK_EMOJI[turn]} {mention(player)}, your move{deadline}."
    winner = _winner_text(game)
    loser_mark = game.winner_mark.other if game.winner_mark is not None else None
    loser = player_text(game, loser_mark) if loser_mark is not None else "A player"
    match game.result:
        case Result.WIN:
            return f"🏆 {winner} won."
        case Result.DRAW:
            return "🤝 A draw."
        case Result.FORFEIT:
            return f"🏳️ {loser} forfeited; {winner} won."
        case Result.TIMEOUT:
            return f"⌛ {loser} ran out of time; {winner} won."
        case _:
            if game.status is GameStatus.ABANDONED or game.result is Result.ABANDONED:
                return "⏹️ The game was stopped; it doesn't count."
            return "The game is over."


def _winner_text(game: Game) -> str:
    if game.winner_mark is None:
        return "Nobody"
    return player_text(game, game.winner_mark)


def challenge_text(challenge: Challenge) -> str:
    challenger, opponent = mention(challenge.challenger_id), mention(challenge.opponent_id)
    size = board_size_text(challenge.width, challenge.height, challenge.k)
    head = f"### Tic-tac-toe challenge · {size}"
    match challenge.status:
        case ChallengeStatus.PENDING:
            body = (
                f"{opponent}, {challenger} challenges you to a game.\n"
                f"The challenge expires <t:{int(challenge.expires_at)}:R>."
            )
        case ChallengeStatus.ACCEPTED:
            body = f"{opponent} accepted {challenger}'s challenge."
        case ChallengeStatus.DECLINED:
            body = f"{opponent} declined {challenger}'s challenge."
        case ChallengeStatus.WITHDRAWN:
            body = f"{challenger} withdrew the challenge to {opponent}."
        case _:
            body = f"{challenger}'s challenge to {opponent} expired without an answer."
    return f"{head}\n{body[:1].upper()}{body[1:]}"


def record_text(record: Record) -> str:
    return f"{record.wins}W {record.losses}L {record.draws}D"


def leaderboard_text(page: LeaderboardPage) -> str:
    head = f"### Leaderboard · page {page.page}/{page.pages}"
    if not page.entries:
        return f"{head}\nNo rated games yet. Challenge someone with `/tictactoe opponent:`!"
    rows = [
        f"`{entry.rank:>3}.` {mention(entry.user_id)} · **{entry.rating:.0f}**"
        f"{'?' if entry.provisional else ''} · {record_text(entry.record)} · "
        f"{entry.record.games} game{'s' if entry.record.games != 1 else ''}"
        for entry in page.entries
    ]
    footer = f"-# {page.total_players} rated players. ? = provisional rating (few games yet)."
    return "\n".join([head, *rows, footer])


def stats_text(stats: PlayerStats) -> str:
    rating = f"{stats.rating:.0f}{' (provisional)' if stats.provisional else ''}"
    rank = f"#{stats.rank}" if stats.rank is not None else "unranked"
    lines = [
        f"### Stats for {mention(stats.user_id)}",
        f"Rating **{rating}** · {rank}",
        f"Versus members: {record_text(stats.versus_members)}",
    ]
    for level in stats.versus_bot:
        lines.append(f"Versus me ({level.level}): {record_text(level.record)}")
    streak = _streak_text(stats.current_streak)
    lines.append(f"Current streak: {streak} · best: {stats.best_streak}")
    if stats.recent:
        lines.append("Recent games:")
        lines.extend(_recent_line(game, stats.user_id) for game in stats.recent)
    return "\n".join(lines)


def _streak_text(streak: int) -> str:
    if streak > 0:
        return f"{streak} win{'s' if streak != 1 else ''}"
    if streak < 0:
        return f"{-streak} loss{'es' if streak != -1 else ''}"
    return "none"


def _recent_line(game: Game, user_id: int) -> str:
    mark = game.mark_of(user_id)
    other = mark.other if mark is not None else Mark.O
    if game.result in (Result.ABANDONED, None) or game.status is GameStatus.ABANDONED:
        outcome = "stopped"
    elif game.winner_mark is None:
        outcome = "draw"
    else:
        outcome = "won" if game.winner_mark is mark else "lost"
    return (
        f"- {outcome} vs {player_text(game, other)} · "
        f"{board_size_text(game.width, game.height, game.k)} · <t:{int(game.updated_at)}:d>"
    )


def review_text(game: Game, review: ReviewLike) -> str:
    """The moves with 1-based cells, the deciding move marked, and the engine's summary."""
    lines = [f"### Review of game {game.id}", review.summary()]
    lines.extend(_move_lines(game.moves, review.turning_point))
    return "\n".join(lines)


def _move_lines(moves: Sequence[int], turning_point: int | None) -> list[str]:
    out = []
    for index, cell in enumerate(moves):
        mark = Mark.X if index % 2 == 0 else Mark.O
        marker = "  ← this decided it" if index == turning_point else ""
        out.append(f"`{index + 1:>2}.` {MARK_EMOJI[mark]} cell {cell + 1}{marker}")
    return out
