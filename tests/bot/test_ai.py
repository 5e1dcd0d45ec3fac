"""``compute_move``'s deadline: the search budget it leaves, and play under a spent one."""

from __future__ import annotations

import math
import pickle
import random
import time

import pytest

from bot.games import ai
from bot.games.ai import MIN_BUDGET, compute_move, search_budget
from engine.board import Board
from engine.levels import LEVELS, choose_move, get_level
from engine.strategies import threat_cells

WIN_5X5 = (0, 10, 1, 11, 2, 20)
"""5x5 k=4, X to move and wins at 3 only; O has no threat."""

BLOCK_5X5 = (5, 6, 24, 7, 20, 8)
"""5x5 k=4, X to move without a win; O threatens only 9."""

O_WINS_5X5 = (0, 6, 24, 7, 20, 8, 4)
"""5x5 k=4, O to move and wins at 5 or 9."""

PINNED_3X3 = {
    "easy": [1, 0, 2],
    "medium": [1, 0, 2],
    "hard": [0, 0, 6],
    "impossible": [2, 0, 2],
}
"""compute_move(3, 3, 3, (4,), level, seed) for seeds 1, 2, 3, as before deadlines."""


def expired() -> float:
    return time.monotonic() - 60.0


def test_min_budget_is_a_small_positive_number() -> None:
    assert 0 < MIN_BUDGET <= 0.1
    assert all(get_level(name).budget > MIN_BUDGET for name in LEVELS)


def test_search_budget() -> None:
    assert search_budget(1.5, 100.0, 10.0) == 1.5  # plenty of time: the level's budget
    assert search_budget(1.5, 10.5, 10.0) == pytest.approx(0.5)  # what is left
    assert search_budget(1.5, 10.0, 10.0) == MIN_BUDGET  # due now
    assert search_budget(1.5, 5.0, 10.0) == MIN_BUDGET  # overdue
    assert search_budget(1.5, math.inf, 10.0) == 1.5
    assert search_budget(1.5, -math.inf, 10.0) == MIN_BUDGET
    with pytest.raises(ValueError, match="NaN"):
        search_budget(1.5, math.nan, 10.0)


def test_nan_deadline_raises() -> None:
    with pytest.raises(ValueError, match="NaN"):
        compute_move(3, 3, 3, (), "easy", 0, math.nan)


@pytest.mark.parametrize("level", LEVELS)
def test_no_deadline_replays_as_before(level: str) -> None:
    assert [compute_move(3, 3, 3, (4,), level, seed) for seed in (1, 2, 3)] == PINNED_3X3[level]
    for seed in range(10):
        board = Board.from_moves([4, 0])
        assert compute_move(3, 3, 3, (4, 0), level, seed) == choose_move(
            board, level, random.Random(seed)
        )


@pytest.mark.parametrize("level", LEVELS)
def test_deadline_does_not_change_exact_boards(level: str) -> None:
    """Up to 16 cells the move does not depend on time, so a deadline changes nothing."""
    for width, height, k, moves in ((3, 3, 3, (4,)), (4, 4, 4, (5, 0))):
        for seed in range(4):
            plain = compute_move(width, height, k, moves, level, seed)
            assert compute_move(width, height, k, moves, level, seed, expired()) == plain
            late = time.monotonic() + 60.0
            assert compute_move(width, height, k, moves, level, seed, late) == plain


@pytest.mark.parametrize("level", LEVELS)
def test_expired_deadline_plays_legal_cells(level: str) -> None:
    rng = random.Random(level)
    board = Board(5, 5, 4)
    while not board.is_over and board.ply < 12:
        cell = compute_move(5, 5, 4, board.moves, level, rng.getrandbits(64), expired())
        assert cell in board.legal_moves()
        board = board.play(cell)
        if not board.is_over:
            board = board.play(rng.choice(board.legal_moves()))


@pytest.mark.parametrize("level", LEVELS)
def test_expired_deadline_takes_a_win(level: str) -> None:
    for moves in (WIN_5X5, O_WINS_5X5):
        wins = threat_cells(Board.from_moves(moves, 5, 5, 4))
        assert wins
        for seed in range(3):
            assert compute_move(5, 5, 4, moves, level, seed, expired()) in wins


@pytest.mark.parametrize("level", [name for name in LEVELS if get_level(name).big.block >= 1])
def test_expired_deadline_blocks(level: str) -> None:
    board = Board.from_moves(BLOCK_5X5, 5, 5, 4)
    assert not threat_cells(board) and threat_cells(board, mover=False) == [9]
    for seed in range(3):
        assert compute_move(5, 5, 4, BLOCK_5X5, level, seed, expired()) == 9


def test_compute_move_pickles() -> None:
    assert pickle.loads(pickle.dumps(compute_move)) is ai.compute_move
