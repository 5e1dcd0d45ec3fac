"""``choose_move``'s per-call time budget: validation, where it applies, and its cache."""

from __future__ import annotations

import math
import random

import pytest

from engine import levels
from engine.board import Board
from engine.levels import LEVELS, choose_move, get_level
from engine.solver import Perfect
from engine.strategies import threat_cells

TINY = 0.001
"""A budget far below one clock check's worth of nodes: the search's minimum."""

WIN_5X5 = (0, 10, 1, 11, 2, 20)
"""5x5 k=4, X to move and wins at 3 (XXX.. on the top row); O has no threat."""

BLOCK_5X5 = (5, 6, 24, 7, 20, 8)
"""5x5 k=4, X to move without a win; O threatens only 9 (XOOO. on the second row)."""


@pytest.mark.parametrize(
    "budget", [0, 0.0, -1, -0.5, math.nan, math.inf, -math.inf, True, "1", [1.0]]
)
def test_bad_budgets_raise(budget: object) -> None:
    for board in (Board(), Board(5, 5, 4)):
        with pytest.raises(ValueError, match="budget must be a finite number of seconds"):
            choose_move(board, "impossible", random.Random(0), budget=budget)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="budget"):
        choose_move(Board(), "easy", random.Random(0), budget=budget)  # type: ignore[arg-type]


def test_unknown_level_still_raises_first() -> None:
    with pytest.raises(levels.UnknownLevelError):
        choose_move(Board(), "nightmare", random.Random(0), budget=1.0)


@pytest.mark.parametrize("budget", [1, 0.25, 3.0])
def test_good_budgets_are_accepted(budget: float) -> None:
    assert choose_move(Board(), "impossible", random.Random(0), budget=budget) in range(9)
    board = Board(5, 5, 4).play(12)
    assert choose_move(board, "easy", random.Random(0), budget=budget) in board.legal_moves()


def test_small_budget_on_a_big_board() -> None:
    board = Board(5, 5, 4).play(12)
    assert choose_move(board, "impossible", random.Random(0), budget=TINY) in board.legal_moves()


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("shape", [(3, 3, 3), (4, 4, 4), (4, 3, 3)])
def test_budget_does_not_change_exact_boards(level: str, shape: tuple[int, int, int]) -> None:
    """Up to EXACT_CELLS cells every level plays from exact values: same seed, same cell."""
    board = Board(*shape).play(0)
    for seed in range(5):
        plain = choose_move(board, level, random.Random(seed))
        assert choose_move(board, level, random.Random(seed), budget=TINY) == plain


@pytest.mark.parametrize("level", [name for name in LEVELS if get_level(name).big_depth])
def test_depth_limited_levels_ignore_the_budget(level: str) -> None:
    board = Board.from_moves([12, 6], 5, 5, 4)
    for seed in range(3):
        plain = choose_move(board, level, random.Random(seed))
        assert choose_move(board, level, random.Random(seed), budget=TINY) == plain


def test_tiny_budget_still_wins_and_blocks() -> None:
    won = Board.from_moves(WIN_5X5, 5, 5, 4)
    blocked = Board.from_moves(BLOCK_5X5, 5, 5, 4)
    assert threat_cells(won) == [3]
    assert threat_cells(blocked) == [] and threat_cells(blocked, mover=False) == [9]
    for seed in range(5):
        assert choose_move(won, "impossible", random.Random(seed), budget=TINY) == 3
        assert choose_move(blocked, "impossible", random.Random(seed), budget=TINY) == 9


def test_other_budgets_are_not_cached() -> None:
    """Callers' budgets get a fresh (cheap) Perfect; only the levels' own are kept."""
    board = Board.from_moves([12, 6], 5, 5, 4)
    own = {level.budget for level in levels.levels()}
    for i in range(1, 21):
        budget = TINY * (1 + i / 7)
        player = levels._perfect_player(budget)
        assert isinstance(player, Perfect) and player.budget == budget
        assert choose_move(board, "impossible", random.Random(i), budget=budget) in range(25)
    assert set(levels._perfect) <= own
    impossible = get_level("impossible").budget
    assert levels._perfect_player(impossible) is levels._perfect_player(impossible)
