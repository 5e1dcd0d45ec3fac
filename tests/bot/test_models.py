"""The game state's cached position (``Game.board``) and how it is carried over."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.models import Game
from engine import Board

from .test_render import make_game


def game(moves: tuple[int, ...] = (), size: int = 3) -> Game:
    return make_game(moves, size=(size, size, 3))


@given(st.permutations(range(16)), st.integers(min_value=0, max_value=16))
def test_a_position_carried_move_by_move_is_the_replayed_one(order: list[int], n: int) -> None:
    state = game(size=4)
    for cell in order[:n]:
        if state.board.outcome() is not None:
            break
        state = state.after_move(state.board.play(cell), updated_at=1.0)
    replayed = Board.from_moves(state.moves, 4, 4, 3)
    assert state.board.moves == replayed.moves
    assert state.board.outcome() == replayed.outcome()
    assert state.board.turn is replayed.turn


def test_replace_does_not_carry_a_stale_position() -> None:
    before = game((0, 4))
    assert before.board.moves == (0, 4)  # cached now
    after = dataclasses.replace(before, moves=(0, 4, 8))
    assert after.board.moves == (0, 4, 8)
    assert after == game((0, 4, 8))  # the cache takes no part in equality


def test_after_move_refuses_a_position_that_is_not_one_move_on() -> None:
    start = game((0,))
    with pytest.raises(ValueError, match="one move on"):
        start.after_move(Board.from_moves((1, 2), 3, 3, 3))
    with pytest.raises(ValueError, match="one move on"):
        start.after_move(Board.from_moves((0, 4, 8), 3, 3, 3))
