"""Text the bot shows: pure functions of the service's data, no discord objects.

Every function takes the reader's ``Translator`` (``bot.i18n``): a shared message (a
board, a challenge, the leaderboard, a turn notification) is drawn in the server's
locale, a private one (stats, a review) in its reader's. Each sentence is one catalog
entry with ``{fields}``, so translators can reorder it; only the Markdown and emoji stay
out of the entries.

Players are shown as mentions (``<@id>``); whether a mention pings is decided by the
``AllowedMentions`` of each message, not here. A member who erased their data is shown
as "a deleted member" (``DELETED_MEMBER`` in their old games). Reviews, which draw
their own lettered grid, name cells by column letter and row number from the top (a1
top left, ``cell_name``); board buttons show no names. Times are Discord timestamps
(``<t:...:R>``), which each reader's client shows in their own language.
"""

from __future__ import annotations

from bot.games.first_player import first_player_lines
from bot.games.render_end import aborted_text, rating_line
from bot.games.rules import is_abort, is_rated, rated_variant
from bot.i18n import N_, Duration, Message, Translator
from bot.models import (
    DELETED_MEMBER,
    Challenge,
    ChallengeStatus,
    First,
    Game,
    GameStatus,
    Record,
    Result,
)
from bot.reach import by_channel
from engine import Mark
from engine.levels import UnknownLevelError, get_level

__all__ = [
    "DELETED_MEMBER_TEXT",
    "LEVEL_NAMES",
    "MARK_EMOJI",
    "board_size_text",
    "cell_name",
    "challenge_text",
    "duration_text",
    "game_text",
    "last_move_cell",
    "level_name",
    "level_text",
    "record_text",
    "stopped_text",
]

DELETED_MEMBER_TEXT = N_("a deleted member")
MARK_EMOJI = {Mark.X: "🟦", Mark.O: "🟥"}
"""Each mark's colour in text, as its buttons show it (blurple X, red O)."""
LEVEL_NAMES: dict[str, Message] = {
    "easy": N_("easy"),
    "medium": N_("medium"),
    "hard": N_("hard"),
    "impossible": N_("impossible"),
}
"""How people read the engine's level names (``engine.levels.LEVELS``, its identifiers)."""


def _sentence(text: str) -> str:
    """Capitalised, for a sentence that may begin with "a deleted member"."""
    return text[:1].upper() + text[1:]


def mention(user_id: int, t: Translator) -> str:
    """How a player is named: a mention, or DELETED_MEMBER_TEXT for an erased one."""
    return t(DELETED_MEMBER_TEXT) if user_id == DELETED_MEMBER else f"<@{user_id}>"


def level_name(level: str, t: Translator) -> str:
    """A level's name as people read it (a retired level's identifier as it is)."""
    name = LEVEL_NAMES.get(level)
    return t(name) if name is not None else level


def level_text(level: str, t: Translator) -> str:
    """The level's name and, when the engine has one, its description: where a level is
    chosen (the boards name it only)."""
    try:
        description = get_level(level).description
    except UnknownLevelError:  # a retired level's old games still render
        return level
    name = level_name(level, t)
    return f"{name} — {t(description)}" if description else name


def duration_text(seconds: float, t: Translator) -> str:
    """Seconds as people read them: 45 s, 5 min, 1 h 30 min, 1 d (in ``t``'s units)."""
    return t(Duration(seconds))


def cell_name(cell: int, width: int) -> str:
    """A cell as people name it: its column's letter and its row's number from the top."""
    row, column = divmod(cell, width)
    return f"{'abcde'[column]}{row + 1}"


def last_move_cell(game: Game) -> int | None:
    """The cell the board draws as the last move (its mark on a grey button): the last
    move, unless the winning line, drawn green, holds it."""
    if not game.moves:
        return None
    outcome = game.board.outcome()
    if outcome is not None and game.moves[-1] in outcome.line:
        return None
    return game.moves[-1]


def board_size_text(width: int, height: int, k: int, t: Translator) -> str:
    return t(N_("{width}×{height}, {k} in a row", width=width, height=height, k=k))


def player_text(game: Game, mark: Mark, t: Translator) -> str:
    player = game.player_of(mark)
    if player is None:
        return "🤖 " + t(N_("me ({level})", level=level_name(game.bot_level or "?", t)))
    return mention(player, t)


def game_text(game: Game, t: Translator) -> str:
    """The text above the board: who plays what (the bot with its level, once), whose
    turn it is or how it ended, who can force a win on a board that allows it, and what
    the grey button with a mark is."""
    size = board_size_text(game.width, game.height, game.k, t)
    x = f"{MARK_EMOJI[Mark.X]} **X** {player_text(game, Mark.X, t)}"
    o = f"{MARK_EMOJI[Mark.O]} **O** {player_text(game, Mark.O, t)}"
    title = "### " + t(N_("Tic-tac-toe")) + f" · {size}"
    if not game.is_bot_game and not is_rated(game):
        title += " · " + t(N_("unrated"))
    lines = [title, t(N_("{x}  vs  {o}", x=x, o=o)), _status_line(game, t)]
    lines.extend(filter(None, [rating_line(game, lambda user: mention(user, t))]))
    lines += first_player_lines(game, player_text(game, Mark.X, t), t)
    if last_move_cell(game) is not None:
        lines.append("-# " + t(N_("The mark on a grey button is the last move.")))
    return "\n".join(lines)


def _status_line(game: Game, t: Translator) -> str:
    if game.is_live:
        turn = game.turn
        player = game.player_of(turn)
        if player is None:
            return MARK_EMOJI[turn] + " " + t(N_("My move…"))
        who = mention(player, t)
        if game.turn_deadline:
            when = f"<t:{int(game.turn_deadline)}:R>"
            line = N_("{player}, your move — time runs out {when}.", player=who, when=when)
        else:
            line = N_("{player}, your move.", player=who)
        return f"{MARK_EMOJI[turn]} {t(line)}"
    match game.result:
        case Result.WIN:
            return f"🏆 {_won(game, t)}"
        case Result.DRAW:
            return "🤝 " + t(N_("A draw."))
        case Result.FORFEIT:
            forfeited = N_("{player} forfeited.", player=_loser(game, t))
            return f"🏳️ {_sentence(t(forfeited))} {_won(game, t)}"
        case Result.TIMEOUT if game.winner_mark is None:  # rules.time_out: no first move
            late = N_(
                "{player} didn't make the first move in time: aborted, it doesn't count.",
                player=player_text(game, game.turn, t),
            )
            return f"⏹️ {t(late)}"
        case Result.TIMEOUT:
            ran_out = N_("{player} ran out of time.", player=_loser(game, t))
            return f"⌛ {_sentence(t(ran_out))} {_won(game, t)}"
        case _:
            if is_abort(game):
                return aborted_text(t)
            if game.status is GameStatus.ABANDONED or game.result is Result.ABANDONED:
                stopped = N_("The game was stopped; it doesn't count.")
                return f"⏹️ {t(stopped)}"
            return t(N_("The game is over."))


def _won(game: Game, t: Translator) -> str:
    """Who won, as a sentence: "I won." when the bot did."""
    if game.winner_mark is None:
        return t(N_("Nobody won."))
    if game.player_of(game.winner_mark) is None:
        return t(N_("I won."))
    return _sentence(t(N_("{player} won.", player=player_text(game, game.winner_mark, t))))


def _loser(game: Game, t: Translator) -> str:
    if game.winner_mark is None:
        return t(N_("a player"))
    return player_text(game, game.winner_mark.other, t)


def stopped_text(member_id: int, t: Translator) -> str:
    """The channel's notice that a game was stopped without a result."""
    stopped = N_("{member} stopped the game; it doesn't count.", member=mention(member_id, t))
    return "⏹️ " + t(stopped)


def challenge_text(challenge: Challenge, t: Translator) -> str:
    """The challenge; while it waits for an answer, everything the challenged member
    agrees to by accepting: the board and line (the title), who moves first, whether it
    is rated, the turn clock and when it expires."""
    names = {
        "challenger": mention(challenge.challenger_id, t),
        "opponent": mention(challenge.opponent_id, t),
    }
    size = board_size_text(challenge.width, challenge.height, challenge.k, t)
    head = "### " + t(N_("Tic-tac-toe challenge")) + f" · {size}"
    body: list[Message]
    match challenge.status:
        case ChallengeStatus.PENDING:
            body = [N_("{opponent}, {challenger} challenges you to a game.", **names)]
            match challenge.first:
                case First.ME:
                    body.append(N_("{player} moves first.", player=names["challenger"]))
                case First.OPPONENT:
                    body.append(N_("{player} moves first.", player=names["opponent"]))
                case _:
                    body.append(N_("Who moves first is drawn at random."))
            if not by_channel(challenge.guild_id):
                body.append(
                    N_(
                        "Unrated: games outside servers that added me count only in each"
                        " player's own record."
                    )
                )
            elif rated_variant(challenge.width, challenge.height, challenge.k):
                body.append(N_("Rated: the result changes both players' ratings."))
            else:
                body.append(
                    N_(
                        "Unrated: on this board the first player can always force a win, so"
                        " the result doesn't change ratings."
                    )
                )
            if challenge.turn_seconds is not None:
                clock = duration_text(challenge.turn_seconds, t)
                body.append(N_("Turn clock: {time} per move.", time=clock))
            when = f"<t:{int(challenge.expires_at)}:R>"
            body.append(N_("The challenge expires {when}.", when=when))
        case ChallengeStatus.ACCEPTED:
            body = [N_("{opponent} accepted {challenger}'s challenge.", **names)]
        case ChallengeStatus.DECLINED:
            body = [N_("{opponent} declined {challenger}'s challenge.", **names)]
        case ChallengeStatus.WITHDRAWN:
            body = [N_("{challenger} withdrew the challenge to {opponent}.", **names)]
        case _:
            body = [
                N_("{challenger}'s challenge to {opponent} expired without an answer.", **names)
            ]
    return "\n".join([head, *(_sentence(t(line)) for line in body)])


def record_text(record: Record, t: Translator) -> str:
    """Wins, losses and draws, abbreviated (W/L/D in English)."""
    wins, losses, draws = record.wins, record.losses, record.draws
    return t(N_("{wins}W {losses}L {draws}D", wins=wins, losses=losses, draws=draws))
