"""The texts of erasure on request (``/tictactoe-forget-me``, ``/tictactoe-forget-server``):
what would be erased, asked before, and what was, said after; in the asker's language."""

from __future__ import annotations

from bot.games.render import record_text
from bot.i18n import N_, Nn_, Translator
from bot.models import GuildData, MemberData
from bot.privacy.service import CONFIRM_SECONDS

__all__ = ["guild_done", "guild_question", "member_done", "member_question"]


def _valid_for(t: Translator) -> str:
    minutes = round(CONFIRM_SECONDS / 60)
    return "-# " + t(
        Nn_(
            "These buttons work for {n} minute; only you see them.",
            "These buttons work for {n} minutes; only you see them.",
            minutes,
        )
    )


def member_question(data: MemberData, t: Translator) -> str:
    player = data.player
    return "\n".join(
        [
            "### " + t(N_("Erase your tic-tac-toe data in this server?")),
            t(N_("This erases, in this server only:")),
            "- "
            + t(
                N_(
                    "your rating ({rating}), your record against members ({record}) and your"
                    " streaks",
                    rating=f"{player.rating:.0f}",
                    record=record_text(player.record, t),
                )
            ),
            "- "
            + t(
                Nn_(
                    "your records against me ({n} level)",
                    "your records against me ({n} levels)",
                    data.bot_levels,
                )
            ),
            "- "
            + t(
                Nn_(
                    "{n} challenge from or to you (pending ones are withdrawn), your cooldowns"
                    " and your choice about challenges",
                    "{n} challenges from or to you (pending ones are withdrawn), your cooldowns"
                    " and your choice about challenges",
                    data.challenges,
                )
            ),
            t(
                Nn_(
                    "Your {n} past game stays in the other players' history, showing you as a"
                    " deleted member. Other members' ratings don't change. This can't be undone.",
                    "Your {n} past games stay in the other players' history, showing you as a"
                    " deleted member. Other members' ratings don't change. This can't be undone.",
                    data.ended_games,
                )
            ),
            _valid_for(t),
        ]
    )


def member_done(data: MemberData, t: Translator) -> str:
    withdrawn = len(data.withdrawn)
    lines = [
        "🗑️ "
        + t(
            Nn_(
                "Done: your rating, records, streaks, cooldowns and challenges in this server"
                " are erased. Your {n} past game now shows a deleted member.",
                "Done: your rating, records, streaks, cooldowns and challenges in this server"
                " are erased. Your {n} past games now show a deleted member.",
                data.ended_games,
            )
        ),
    ]
    if withdrawn:
        lines.append(
            t(
                Nn_(
                    "{n} pending challenge withdrawn.",
                    "{n} pending challenges withdrawn.",
                    withdrawn,
                )
            )
        )
    return "\n".join(lines)


def _guild_counts(data: GuildData, t: Translator) -> dict[str, str]:
    return {
        "games": t(Nn_("{n} game", "{n} games", data.games)),
        "challenges": t(Nn_("{n} challenge", "{n} challenges", data.challenges)),
        "members": t(Nn_("{n} member", "{n} members", data.players)),
    }


def guild_question(data: GuildData, t: Translator) -> str:
    counts = _guild_counts(data, t)
    return "\n".join(
        [
            "### " + t(N_("Erase everything I hold about this server?")),
            "- "
            + t(
                N_(
                    "{games} (every member's history), {challenges}",
                    games=counts["games"],
                    challenges=counts["challenges"],
                )
            ),
            "- "
            + t(
                N_(
                    "the ratings and records of {members}, their cooldowns and choices about"
                    " challenges",
                    members=counts["members"],
                )
            ),
            "- " + t(N_("this server's settings and allowed channels")),
            t(N_("Every member's stats start again from nothing. This can't be undone.")),
            _valid_for(t),
        ]
    )


def guild_done(data: GuildData, t: Translator) -> str:
    done = N_(
        "Done: {games}, {challenges}, the ratings of {members} and this server's settings"
        " are erased.",
        **_guild_counts(data, t),
    )
    return "🗑️ " + t(done)
