"""What the bot's messages look like: boards, challenges, the leaderboard, as discord.py views.

Every message is a Components V2 ``LayoutView``, whatever the board's size: a 5x5 board
needs all five classic action rows, leaving none for Forfeit/Rematch/Review, while V2
fits the text, the board and the controls (a 5x5 board is 1 text + 5 rows + 25 cells +
1 row + up to 2 buttons = 34 of the 40 components allowed).

Every custom_id carries all its click needs (``ttt:cell:{game}:{cell}:{move_no}``,
``ttt:forfeit:{game}``, ...; written and read by ``bot.ui.ids``), so buttons keep working
after a restart, and a click on an out-of-date board is recognised by its move number.

The views only draw: they are stopped before they are sent, so discord.py keeps no copy
of them in its view store (a board is redrawn at every move; stored views would pile
up, one per message, for ever). Their clicks are routed by custom_id in
``bot.ui.router``.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import ButtonStyle, ui

from bot.games import render
from bot.games.rules import is_abort, loses_rating
from bot.i18n import N_, Message, Translator, translator
from bot.models import Challenge, ChallengeStatus, Game
from bot.ui import ids
from engine import Mark

__all__ = [
    "CELL_EMOJI",
    "EMPTY_EMOJI",
    "LAST_MOVE_STYLE",
    "MARK_STYLE",
    "board_view",
    "challenge_mentions",
    "challenge_view",
    "drawing",
    "forfeit_view",
    "message_view",
    "release",
    "sections_view",
    "text_view",
]

CELL_EMOJI = {Mark.X: "\U0001f1fd", Mark.O: "\U0001f17e\ufe0f"}
"""Each mark's emoji on its cells, 🇽 and 🅾️: its letter in white on a tile of its colour
(blue X, red O), so a mark still shows whose it is on a green or grey button."""
EMPTY_EMOJI = "\u25aa\ufe0f"
"""An empty cell's emoji, ▪️: a small dark square that recedes on the grey button. Every
cell shows one emoji and no label, so every cell button is as wide as the others."""
MARK_STYLE = {Mark.X: ButtonStyle.primary, Mark.O: ButtonStyle.danger}
"""Each mark's one colour: blurple X, red O (``render.MARK_EMOJI`` matches them)."""
LAST_MOVE_STYLE = ButtonStyle.secondary
"""The last move's button: its mark's tile on grey, unless it is on the winning line."""
_EMOJI: dict[Mark | None, discord.PartialEmoji] = {
    mark: discord.PartialEmoji(name=name)
    for mark, name in [*CELL_EMOJI.items(), (None, EMPTY_EMOJI)]
}
"""The cells' emoji made once (discord.py would parse a string for each of up to 25 cells
at every redraw)."""
_CONTROLS: dict[type[ids.Forfeit | ids.Rematch | ids.Review], tuple[Message, str, ButtonStyle]] = {
    ids.Forfeit: (N_("Forfeit"), "🏳️", ButtonStyle.secondary),
    ids.Rematch: (N_("Rematch"), "🔁", ButtonStyle.primary),
    ids.Review: (N_("Review"), "🔍", ButtonStyle.secondary),
}


def drawing(*items: ui.Item[Any]) -> ui.LayoutView:
    """A view of ``items`` that only draws (see the module docstring)."""
    view = ui.LayoutView(timeout=None)
    for item in items:
        view.add_item(item)
    view.stop()
    return view


def release(view: ui.View | ui.LayoutView) -> None:
    """Break a sent view's reference cycles (each item points back at its row and view)
    with discord.py's public ``clear_items``, so that reference counting frees its ~30
    objects as soon as the answer is sent, instead of the garbage collector finding
    them at its next pass (that pass runs more often, and walks everything young, for
    every cycle left behind)."""
    for item in view.children:
        if isinstance(item, ui.ActionRow):
            item.clear_items()
    view.clear_items()


def _control(
    kind: type[ids.Forfeit | ids.Rematch | ids.Review], game_id: int, t: Translator
) -> ui.Button[Any]:
    label, emoji, style = _CONTROLS[kind]
    return ui.Button(label=t(label), emoji=emoji, style=style, custom_id=kind(game_id).format())


def board_view(game: Game) -> ui.LayoutView:
    """The game's message: text, one action row per board row, then the controls; in
    the game's locale (the server's, stored with it), whoever's click redraws it.

    Every cell is one emoji without a label (a mark's tile, or ▪️ when empty): Discord
    sizes a button by its content, and an emoji is drawn at one fixed size, so the
    columns line up on every board and in every client. The last move is its mark's tile
    on a grey button (``render.last_move_cell``), the winning line green.

    No mark is ever on a disabled button: Discord fades disabled buttons, so the marks
    stay at full colour and a click on one is answered (``ttt:taken``, ``ttt:over``:
    "already taken", "already over"). Only empty cells are disabled: all of them on a
    finished board, so it reads as over, and while the bot is to move."""
    t = translator(game.locale)
    board = game.board
    outcome = board.outcome()
    line = frozenset(outcome.line) if outcome is not None else frozenset()
    last = render.last_move_cell(game)
    locked = not game.is_live or game.current_player_id is None
    rows: list[ui.Item[Any]] = [ui.TextDisplay(render.game_text(game, t))]
    for row in range(game.height):
        buttons = []
        for cell in range(row * game.width, (row + 1) * game.width):
            mark = board.cell(cell)
            if mark is None:
                style = ButtonStyle.secondary
            elif cell in line:
                style = ButtonStyle.success
            else:
                style = LAST_MOVE_STYLE if cell == last else MARK_STYLE[mark]
            buttons.append(_cell_button(game, cell, mark, style, locked))
        rows.append(ui.ActionRow(*buttons))
    controls = [_control(ids.Forfeit if game.is_live else ids.Rematch, game.id, t)]
    if not game.is_live and game.moves:
        controls.append(_control(ids.Review, game.id, t))
    rows.append(ui.ActionRow(*controls))
    return drawing(*rows)


def _cell_button(
    game: Game, cell: int, mark: Mark | None, style: ButtonStyle, locked: bool
) -> ui.Button[Any]:
    if not game.is_live:
        custom_id = ids.Over(game.id, cell).format()
    elif mark is not None:
        custom_id = ids.Taken(game.id, cell).format()
    else:
        custom_id = ids.Cell(game.id, cell, game.move_no).format()
    if mark is None:
        return ui.Button(emoji=_EMOJI[None], style=style, disabled=locked, custom_id=custom_id)
    return ui.Button(emoji=_EMOJI[mark], style=style, custom_id=custom_id)


def message_view(item: Game | Challenge) -> ui.LayoutView:
    """The view of a game's message (``board_view``) or a challenge's (``challenge_view``)."""
    return board_view(item) if isinstance(item, Game) else challenge_view(item)


def challenge_view(challenge: Challenge) -> ui.LayoutView:
    """The challenge message, in its locale: Accept and Decline for the challenged member,
    Withdraw for the challenger; all disabled once it is no longer pending."""
    t = translator(challenge.locale)
    closed = challenge.status is not ChallengeStatus.PENDING
    buttons: list[ui.Button[ui.LayoutView]] = [
        ui.Button(label=t(label), style=style, disabled=closed, custom_id=custom_id.format())
        for label, style, custom_id in (
            (N_("Accept"), ButtonStyle.success, ids.Accept(challenge.id)),
            (N_("Decline"), ButtonStyle.danger, ids.Decline(challenge.id)),
            (N_("Withdraw"), ButtonStyle.secondary, ids.Withdraw(challenge.id)),
        )
    ]
    text: ui.TextDisplay[ui.LayoutView] = ui.TextDisplay(render.challenge_text(challenge, t))
    return drawing(text, ui.ActionRow(*buttons))


def challenge_mentions(challenge: Challenge) -> discord.AllowedMentions:
    """A new challenge pings the challenged member and nobody else, unless it may not
    (``pinged`` False: a rematch within the cooldown)."""
    if not challenge.pinged:
        return discord.AllowedMentions.none()
    return discord.AllowedMentions(
        everyone=False,
        roles=False,
        replied_user=False,
        users=[discord.Object(challenge.opponent_id)],
    )


def forfeit_view(game: Game, until: float, t: Translator) -> ui.View:
    """The private question before a forfeit, asked by Forfeit on the board and by
    /tictactoe-stop in a game that would count: confirm (danger; it holds at this move
    until ``until``), propose calling it off where a forfeit would cost rating, or keep
    playing. In the asker's language (``t``); ephemeral, so its buttons carry no user id."""
    view = ui.View(timeout=None)
    confirm = N_("End it (doesn't count)") if is_abort(game) else N_("Forfeit (counts as a loss)")
    quit_ = ids.Quit(game.id, game.move_no, int(until))
    view.add_item(ui.Button(label=t(confirm), style=ButtonStyle.danger, custom_id=quit_.format()))
    if loses_rating(game):
        calloff = ids.Calloff(game.id).format()
        label = t(N_("Propose calling it off"))
        view.add_item(ui.Button(label=label, style=ButtonStyle.secondary, custom_id=calloff))
    keep = ids.KeepPlaying(game.id).format()
    view.add_item(ui.Button(label=t(N_("Keep playing")), custom_id=keep))
    view.stop()
    return view


def text_view(text: str) -> ui.LayoutView:
    """A V2 message with text only (stats)."""
    return drawing(ui.TextDisplay(text))


def sections_view(head: str, rows: list[tuple[str, ui.Button[Any]]], foot: str) -> ui.LayoutView:
    """``head``, then each row's text with its button beside it (a section), then ``foot``."""
    sections = [ui.Section(ui.TextDisplay(text), accessory=button) for text, button in rows]
    return drawing(ui.TextDisplay(head), *sections, ui.TextDisplay(foot))
