"""A 5 x 5 k=4 game in which ``impossible`` has to search, for tests of the search pool.

``impossible`` answers almost every 5 x 5 position from its book or a proof of a few
milliseconds (``engine.levels.instant_move``), on the event loop; only a few positions it
can reach as O still send it to the pool for its whole time budget. Tests of what a
search does to the bot (the pool's order, "My move…", a reply cut short by a crash) play
a line into one of those. The line is found here, not written down, so that a bigger book
moves it instead of breaking the tests: a depth-first walk over the player's moves (X,
first), with the bot's replies as the bot makes them.
"""

from __future__ import annotations

import functools

from engine.board import Board, Mark
from engine.levels import instant_move

__all__ = ["SIDE", "WIN_LENGTH", "line_past_the_book"]

SIDE, WIN_LENGTH = 5, 4


@functools.cache
def line_past_the_book() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The player's clicks and the bot's instant replies to all but the last: after the
    last click, the bot (O, at ``impossible``) has no instant move and searches. Cells
    are numbered row by row from 0."""
    seen: set[tuple[int, int]] = set()

    def walk(board: Board, clicks: tuple[int, ...], replies: tuple[int, ...]):
        if board.is_over or (board.x_bits, board.o_bits) in seen:
            return None
        seen.add((board.x_bits, board.o_bits))
        if board.turn is Mark.O:
            reply = instant_move(board, "impossible")
            if reply is None:
                return clicks, replies
            return walk(board.play(reply), clicks, (*replies, reply))
        for cell in board.legal_moves():
            found = walk(board.play(cell), (*clicks, cell), replies)
            if found is not None:
                return found
        return None

    found = walk(Board(SIDE, SIDE, WIN_LENGTH), (), ())
    assert found is not None, "impossible answers every 5x5 k=4 position without a search"
    return found
