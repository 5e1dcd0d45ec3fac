"""The static proofs that a side can no longer complete a line (engine.breaker), checked
against a full minimax that knows nothing of them."""

from __future__ import annotations

import random

import pytest

from engine.board import Board, geometry
from engine.breaker import breaker_for
from tests.engine.test_solver import brute, random_game


def test_the_5x5_k5_pairing_is_found_on_the_empty_board() -> None:
    breaker = breaker_for(geometry(5, 5, 5))
    assert breaker.cannot_win(0, 0)
    # 5x5 k=4 has no pairing of its 28 lines (its 3x3 centre would need 12 cells).
    assert not breaker_for(geometry(5, 5, 4)).cannot_win(0, 0)


def test_a_line_one_cell_short_is_never_called_safe() -> None:
    board = Board.from_text("XXX../OO.../...../...../.....", k=4)
    assert not breaker_for(board.geometry).cannot_win(board.x_bits, board.o_bits)


def test_every_line_blocked_is_safe() -> None:
    board = Board.from_text("XO./OX./...")
    assert breaker_for(board.geometry).cannot_win(board.o_bits | 1 << 8, board.x_bits | 1 << 6)


@pytest.mark.parametrize("shape", [(4, 3, 3), (4, 4, 4), (5, 4, 4)])
def test_safe_means_no_forced_win_whoever_moves(shape: tuple[int, int, int]) -> None:
    """Wherever a side is called unable to win, full minimax agrees: the mover scores at
    most a draw if it is the maker, at least a draw if the other side is."""
    score = brute(*shape)
    breaker = breaker_for(geometry(*shape))
    rng = random.Random(5)
    checked = 0
    for _ in range(400):
        size = shape[0] * shape[1]
        board = random_game(shape, rng.randint(size * 3 // 5, size - 2), rng)
        if board.is_over:
            continue
        x, o = board.x_bits, board.o_bits
        me, opp = (x, o) if board.ply % 2 == 0 else (o, x)
        value = score(x, o)
        if breaker.cannot_win(me, opp):
            assert value <= 0, board.text
            checked += 1
        if breaker.cannot_win(opp, me):
            assert value >= 0, board.text
            checked += 1
    assert checked > 5
