"""A finished game's review as its reader sees it (``engine.analysis.Review``, drawn).

The players and the date; the final position as a grid with coordinates, the deciding
move's cell in brackets; the verdict (the deciding move and the moves that would have
kept what it lost, or that no move changed the result, or how far the review could
see); then the moves by cell name, the deciding one marked, and every missed win in one,
missed block and other settled change of the value noted on its line. Each sentence is
one catalog entry with ``{fields}``; cells are named as on the board (``cell_name``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bot.games.render import MARK_EMOJI, cell_name, player_text
from bot.i18n import N_, Message, Translator
from bot.models import Game, Result
from engine import Mark
from engine.analysis import (
    DRAWN,
    LOST_GAME,
    MISSED_WIN,
    SLIP_WIN,
    THREW_WIN,
    Slip,
    mover_of,
)

__all__ = ["ReviewLike", "review_text"]


class ReviewLike(Protocol):
    """What the review's text needs of ``engine.analysis.Review``."""

    @property
    def moves(self) -> tuple[int, ...]: ...
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def values(self) -> tuple[str, ...]: ...
    @property
    def decider(self) -> int | None: ...
    @property
    def kind(self) -> str | None: ...
    @property
    def better(self) -> tuple[int, ...]: ...
    @property
    def slips(self) -> tuple[Slip, ...]: ...
    @property
    def settled_from(self) -> int: ...
    @property
    def complete(self) -> bool: ...
    def settled(self, index: int) -> bool: ...
    def change(self, index: int) -> str | None: ...


CHANGES: dict[str, Message] = {
    MISSED_WIN: N_("the win became a draw"),
    THREW_WIN: N_("the win became a loss"),
}
"""A settled change of the value on a move's line (a draw that became a loss otherwise)."""


def review_text(game: Game, review: ReviewLike, t: Translator) -> str:
    """The whole review (see the module docstring)."""
    players = N_(
        "Review: {x} vs {o}, {date}",
        x=player_text(game, Mark.X, t),
        o=player_text(game, Mark.O, t),
        date=f"<t:{int(game.updated_at)}:D>",
    )
    lines = ["### " + t(players), _grid(game, review.decider)]
    played_out = game.board.outcome() is not None
    lines.extend(t(message) for message in _verdict(review, played_out))
    if not played_out:
        lines.append(t(_ending(game, t)))
    lines.extend(_move_lines(review, t))
    return "\n".join(lines)


def cells_text(cells: Sequence[int], width: int) -> str:
    """Cells by name, comma-separated: "b2, c3"."""
    return ", ".join(cell_name(cell, width) for cell in cells)


def _grid(game: Game, decider: int | None) -> str:
    """The final position in a code block: columns a-e, rows 1-5 from the top, the
    cell of the deciding move (if one was named) in brackets."""
    board = game.board
    decided = game.moves[decider] if decider is not None else None
    rows = ["  " + "".join(f" {'abcde'[column]} " for column in range(game.width))]
    for row in range(game.height):
        cells = []
        for cell in range(row * game.width, (row + 1) * game.width):
            mark = board.cell(cell)
            shown = "·" if mark is None else mark.value
            cells.append(f"[{shown}]" if cell == decided else f" {shown} ")
        rows.append(f"{row + 1} " + "".join(cells))
    return "```\n" + "\n".join(rows) + "\n```"


def _ending(game: Game, t: Translator) -> Message:
    """How a game that the board did not decide ended: the verdict speaks only of the
    moves, so a forfeit or a time-out must not read as the board's result."""
    loser = game.winner_mark.other if game.winner_mark is not None else None
    player = player_text(game, loser, t) if loser is not None else ""
    if game.result is Result.FORFEIT and loser is not None:
        return N_("Then {player} forfeited, before the game was played out.", player=player)
    if game.result is Result.TIMEOUT and loser is not None:
        return N_("Then {player} ran out of time, before the game was played out.", player=player)
    return N_("Then the game was stopped, before it was played out.")


def _verdict(review: ReviewLike, played_out: bool = True) -> list[Message]:
    """The verdict's sentences: ``Review.summary``'s, as catalog entries. A game the
    board did not decide (``played_out`` False) is spoken of by its position's value."""
    if review.decider is not None:
        return _decided(review, review.decider)
    start = review.settled_from
    if start >= len(review.moves):
        return [
            N_(
                "No verdict: on this {width}×{height} board not one move could be settled"
                " within the review's budget of about a second of search.",
                width=review.width,
                height=review.height,
            )
        ]
    value = review.values[start]
    if start == 0 and not played_out:
        if value == DRAWN:
            return [N_("No move changed the position's value: a draw with best play.")]
        mark = value.split()[0]
        return [N_("No move changed the position's value: {mark} had a forced win.", mark=mark)]
    if start == 0:
        if value == DRAWN:
            return [N_("No move changed the result: a draw with best play, and a draw it stayed.")]
        mark = value.split()[0]
        return [N_("No move changed the result: {mark} had a forced win and kept it.", mark=mark)]
    if value == DRAWN:
        first = N_(
            "No move from move {n} on changed the result: a draw with best play from there.",
            n=start + 1,
        )
    else:
        first = N_(
            "No move from move {n} on changed the result: {mark} had a forced win from there.",
            n=start + 1,
            mark=value.split()[0],
        )
    return [first, _reach(review)]


def _decided(review: ReviewLike, index: int) -> list[Message]:
    """The deciding move, what it lost, and the moves that would have kept it."""
    mark = mover_of(index).value
    where = {"n": index + 1, "mark": mark, "cell": cell_name(review.moves[index], review.width)}
    if review.kind == MISSED_WIN:
        said = [N_("Move {n} ({mark} {cell}) decided the game: the win became a draw.", **where)]
    elif review.kind == THREW_WIN:
        said = [N_("Move {n} ({mark} {cell}) decided the game: the win became a loss.", **where)]
    elif review.kind == LOST_GAME:
        other = mover_of(index + 1).value
        said = [
            N_(
                "Move {n} ({mark} {cell}) decided the game: after it, {other} had a forced win.",
                other=other,
                **where,
            )
        ]
    else:
        said = [N_("Move {n} ({mark} {cell}) decided the game: the draw became a loss.", **where)]
    better = review.better
    if better:
        cells = cells_text(better, review.width)
        if review.kind in (MISSED_WIN, THREW_WIN):
            fields = {"mark": mark, "cell": where["cell"], "cells": cells}
            if len(better) == 1:
                said.append(N_("{mark} {cell} missed the win at {cells}.", **fields))
            else:
                said.append(N_("{mark} {cell} missed the win: any of {cells} won.", **fields))
        elif review.kind == LOST_GAME and len(better) == 1:
            said.append(N_("{cells} would have held at least a draw.", cells=cells))
        elif review.kind == LOST_GAME:
            said.append(N_("Any of {cells} would have held at least a draw.", cells=cells))
        elif len(better) == 1:
            said.append(N_("{cells} would have held the draw.", cells=cells))
        else:
            said.append(N_("Any of {cells} would have held the draw.", cells=cells))
    if not review.complete:
        said.append(_reach(review))
    return said


def _reach(review: ReviewLike) -> Message:
    """Which moves the review could not settle, as ranges of move numbers ("1–9, 12"):
    one entry for a single move, one for several (no count is shown, so no plural)."""
    open_moves = [i + 1 for i in range(len(review.moves)) if not review.settled(i)]
    spans: list[str] = []
    for number in open_moves:
        if spans and number - 1 in open_moves:
            spans[-1] = spans[-1].split("–")[0] + f"–{number}"
        else:
            spans.append(str(number))
    shown = {"moves": ", ".join(spans)}
    if len(open_moves) == 1:
        return N_("Beyond the review's reach (about a second of search): move {moves}.", **shown)
    return N_("Beyond the review's reach (about a second of search): moves {moves}.", **shown)


def _move_lines(review: ReviewLike, t: Translator) -> list[str]:
    """One line per move: its number, mark and cell; the deciding move marked, with the
    better moves; a missed win in one or block, and any other settled change, noted."""
    slips = {slip.move: slip for slip in review.slips}
    out = []
    for index, cell in enumerate(review.moves):
        mark = mover_of(index)
        notes: list[str] = []
        if index == review.decider:
            notes.append(t(N_("this decided it")))
        slip = slips.get(index)
        named: tuple[int, ...] = ()
        if slip is not None:
            named = slip.cells
            cells = cells_text(slip.cells, review.width)
            if slip.kind == SLIP_WIN:
                notes.append(t(N_("missed the win at {cells}", cells=cells)))
            else:
                notes.append(t(N_("missed the block at {cells}", cells=cells)))
        if index == review.decider:
            if review.better and review.better != named:
                better = cells_text(review.better, review.width)
                notes.append(t(N_("better: {cells}", cells=better)))
        else:
            change = review.change(index)
            if change is not None:
                notes.append(t(CHANGES.get(change, N_("the draw became a loss"))))
        marker = "  ← " + " · ".join(notes) if notes else ""
        name = cell_name(cell, review.width)
        out.append(f"`{index + 1:>2}.` {MARK_EMOJI[mark]} {mark.value} {name}{marker}")
    return out
