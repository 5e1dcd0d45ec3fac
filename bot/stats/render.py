"""The texts of what games recorded: a leaderboard page and a member's stats, in the
reader's language (the server's for the channel, the asker's for a private answer)."""

from __future__ import annotations

from bot.games.render import board_size_text, level_name, mention, player_text, record_text
from bot.games.rules import is_abort
from bot.i18n import N_, Nn_, Translator
from bot.models import Game, GameStatus, LeaderboardPage, PlayerStats, Result
from bot.reach import by_channel
from engine import Mark

__all__ = ["leaderboard_text", "stats_text"]


def leaderboard_text(page: LeaderboardPage, t: Translator) -> str:
    head = "### " + t(N_("Leaderboard · page {page}/{pages}", page=page.page, pages=page.pages))
    if page.past is not None:
        head += "\n" + t(N_("There is no page {asked}; this is the last page.", asked=page.past))
    if not page.entries:
        return head + "\n" + t(N_("No rated games yet. Challenge someone with /tictactoe!"))
    rows = [
        f"`{entry.rank:>3}.` {mention(entry.user_id, t)} · **{entry.rating:.0f}**"
        f"{'?' if entry.provisional else ''} · {record_text(entry.record, t)} · "
        + t(Nn_("{n} game", "{n} games", entry.record.games))
        for entry in page.entries
    ]
    players = t(Nn_("{n} rated player.", "{n} rated players.", page.total_players))
    footer = f"-# {players} " + t(N_("? = provisional rating (few games yet)."))
    return "\n".join([head, *rows, footer])


def stats_text(stats: PlayerStats, t: Translator) -> str:
    rating = f"{stats.rating:.0f}"
    if stats.provisional:
        rating = t(N_("{rating} (provisional)", rating=rating))
    rank = f"#{stats.rank}" if stats.rank is not None else t(N_("unranked"))
    lines = [
        "### " + t(N_("Stats for {player}", player=mention(stats.user_id, t))),
        t(N_("Rating **{rating}** · {rank}", rating=rating, rank=rank)),
        t(N_("Versus members: {record}", record=record_text(stats.versus_members, t))),
    ]
    if not by_channel(stats.guild_id):
        del lines[1]  # the players' own record (bot.reach): unrated, ranked nowhere
    for level in stats.versus_bot:
        record = record_text(level.record, t)
        lines.append(
            t(N_("Versus me ({level}): {record}", level=level_name(level.level, t), record=record))
        )
    streak = _streak_text(stats.current_streak, t)
    lines.append(
        t(N_("Current streak: {streak} · best: {best}", streak=streak, best=stats.best_streak))
    )
    if stats.recent:
        lines.append(t(N_("Recent games:")))
        lines.extend(_recent_line(game, stats.user_id, t) for game in stats.recent)
    return "\n".join(lines)


def _streak_text(streak: int, t: Translator) -> str:
    if streak > 0:
        return t(Nn_("{n} win", "{n} wins", streak))
    if streak < 0:
        return t(Nn_("{n} loss", "{n} losses", -streak))
    return t(N_("none"))


def _recent_line(game: Game, user_id: int, t: Translator) -> str:
    mark = game.mark_of(user_id)
    other = player_text(game, mark.other if mark is not None else Mark.O, t)
    if game.result in (Result.ABANDONED, None) or game.status is GameStatus.ABANDONED:
        outcome = N_("stopped, against {opponent}", opponent=other)
        if is_abort(game):
            outcome = N_("aborted, against {opponent}", opponent=other)
    elif game.winner_mark is None:
        outcome = N_("drew with {opponent}", opponent=other)
    elif game.winner_mark is mark:
        outcome = N_("won against {opponent}", opponent=other)
    else:
        outcome = N_("lost to {opponent}", opponent=other)
    size = board_size_text(game.width, game.height, game.k, t)
    return f"- {t(outcome)} · {size} · <t:{int(game.updated_at)}:d>"
