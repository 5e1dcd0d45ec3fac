"""Move values and the post-game review, checked against a brute force written here."""

from __future__ import annotations

import doctest
import functools
import random
from collections.abc import Callable

import pytest

import engine.analysis
from engine.analysis import (
    DRAWN,
    MISSED_WIN,
    MISTAKE,
    O_WINS,
    UNKNOWN,
    X_WINS,
    Review,
    analyse,
    review,
    strength,
)
from engine.board import Board
from engine.errors import IllegalMoveError, InvalidMoveError
from engine.solver import LOSS, WIN, Perfect
from tests.engine.brute import line_masks

# -- brute force --------------------------------------------------------------------------


@functools.cache
def outcome_of(width: int, height: int, k: int) -> Callable[[int, int], str]:
    """The value of a position under perfect play: X_WINS, O_WINS or DRAWN."""
    size = width * height
    masks = line_masks(width, height, k)

    @functools.cache
    def value(x: int, o: int) -> str:
        marks = (x | o).bit_count()
        if any(x & m == m for m in masks):
            return X_WINS
        if any(o & m == m for m in masks):
            return O_WINS
        if marks == size:
            return DRAWN
        x_moves = marks % 2 == 0
        results = set()
        for cell in range(size):
            bit = 1 << cell
            if not (x | o) & bit:
                results.add(value(x | bit, o) if x_moves else value(x, o | bit))
        order = [X_WINS, DRAWN, O_WINS] if x_moves else [O_WINS, DRAWN, X_WINS]
        return next(r for r in order if r in results)

    return value


def brute_values(moves: list[int], width: int = 3, height: int = 3, k: int = 3) -> list[str]:
    value = outcome_of(width, height, k)
    board = Board(width, height, k)
    out = [value(0, 0)]
    for cell in moves:
        board = board.play(cell)
        out.append(value(board.x_bits, board.o_bits))
    return out


# -- analyse ------------------------------------------------------------------------------


def test_analyse_sorts_best_first() -> None:
    values = analyse(Board.from_text("XX./OO./..."))
    assert [(v.cell, v.result, v.plies) for v in values] == [
        (2, WIN, 1),
        (5, "draw", 5),
        (6, LOSS, 2),
        (7, LOSS, 2),
        (8, LOSS, 2),
    ]
    assert [strength(v) for v in values] == sorted((strength(v) for v in values), reverse=True)


def test_analyse_the_empty_boards() -> None:
    assert {(v.result, v.plies) for v in analyse(Board())} == {("draw", 9)}
    values = analyse(Board(4, 4, 3))
    assert values[0].result == WIN and values[0].plies == 5
    assert all(v.result != LOSS for v in values[:4])


def test_analyse_rejects_a_finished_board() -> None:
    with pytest.raises(IllegalMoveError, match="the game is over"):
        analyse(Board.from_moves([0, 3, 1, 4, 2]))


# -- review -------------------------------------------------------------------------------


def test_review_finds_the_losing_move() -> None:
    # X centre, O edge (loses: O had to take a corner), then X wins.
    moves = [4, 1, 0, 8, 6, 2, 3]
    result = review(moves)
    assert result.values == tuple(brute_values(moves))
    assert result.values[:3] == (DRAWN, DRAWN, X_WINS)
    assert result.values[-1] == X_WINS
    assert (result.turning_point, result.kind) == (1, MISTAKE)
    assert result.summary() == "Move 2 (O at cell 2) threw the game: the draw became a loss."
    assert result.note is None


@pytest.mark.parametrize(("after", "kind"), [(DRAWN, MISSED_WIN), (O_WINS, MISTAKE)])
def test_review_kinds_on_a_first_player_win(after: str, kind: str) -> None:
    """On 3x4 with three in a row X starts with a won game; find random games whose
    first change turns X's win into ``after`` (3x3 starts drawn, so it has no such)."""
    rng = random.Random(7)
    found = None
    for _ in range(3000):
        board, moves = Board(3, 4, 3), []
        while not board.is_over:
            cell = rng.choice(board.legal_moves())
            moves.append(cell)
            board = board.play(cell)
        values = brute_values(moves, 3, 4, 3)
        changes = [i for i in range(len(moves)) if values[i] != values[i + 1]]
        if changes and values[changes[0] + 1] == after:
            found = moves, changes[0]
            break
    assert found is not None
    moves, index = found
    result = review(moves, 3, 4, 3)
    assert result.values[0] == X_WINS
    assert (result.turning_point, result.kind) == (index, kind)
    assert index % 2 == 0  # only X, who had the win, can throw it
    where = f"Move {index + 1} (X at cell {moves[index] + 1})"
    if kind == MISSED_WIN:
        assert result.summary() == f"{where} missed a win: the win became a draw."
    else:
        assert result.summary() == f"{where} threw the game: the win became a loss."


def test_review_of_perfect_play_has_no_turning_point() -> None:
    rng = random.Random(1)
    for shape in ((3, 3, 3), (4, 4, 4), (4, 4, 3)):
        board, moves, player = Board(*shape), [], Perfect()
        while not board.is_over:
            cell = player(board, rng)
            moves.append(cell)
            board = board.play(cell)
        result = review(moves, *shape)
        assert result.turning_point is None and result.kind is None
        assert len(set(result.values)) == 1
        assert result.summary().startswith("No move changed the result")


def test_review_agrees_with_brute_force_on_random_games() -> None:
    rng = random.Random(3)
    for shape in ((3, 3, 3), (3, 4, 3), (4, 3, 4)):
        for _ in range(40):
            board, moves = Board(*shape), []
            while not board.is_over:
                cell = rng.choice(board.legal_moves())
                moves.append(cell)
                board = board.play(cell)
            values = brute_values(moves, *shape)
            result = review(moves, *shape)
            assert result.values == tuple(values)
            changes = [i for i in range(len(moves)) if values[i] != values[i + 1]]
            assert result.turning_point == (changes[0] if changes else None)
            assert isinstance(result, Review) and result.moves == tuple(moves)


def test_review_of_an_unfinished_game() -> None:
    result = review([4, 1])
    assert result.values == (DRAWN, DRAWN, X_WINS)
    assert result.turning_point == 1


def test_review_rejects_bad_moves() -> None:
    with pytest.raises(IllegalMoveError):
        review([4, 4])
    with pytest.raises(InvalidMoveError):
        review([9])


def test_review_of_a_big_board_stays_bounded() -> None:
    rng = random.Random(5)
    board, moves = Board(5, 5, 4), []
    while not board.is_over:
        cell = rng.choice(board.legal_moves())
        moves.append(cell)
        board = board.play(cell)
    result = review(moves, 5, 5, 4, max_nodes=20_000)
    assert result.values[0] == UNKNOWN
    assert result.values[-1] in (X_WINS, O_WINS, DRAWN)
    assert result.turning_point is None and result.kind is None
    assert result.note is not None and "too big" in result.note
    assert result.summary().startswith("No verdict")


def test_review_of_a_big_board_late_positions_are_exact() -> None:
    rng = random.Random(8)
    board, moves = Board(5, 5, 4), []
    while not board.is_over:
        cell = rng.choice(board.legal_moves())
        moves.append(cell)
        board = board.play(cell)
    result = review(moves, 5, 5, 4, max_nodes=200_000)
    known = len(result.values) - result.values.count(UNKNOWN)
    assert known >= 6
    assert UNKNOWN not in result.values[-known:]  # solved from the end backwards
    # The positions with at most eight empty cells, checked by brute force.
    value = outcome_of(5, 5, 4)
    replay = Board(5, 5, 4)
    checked = 0
    for index, cell in enumerate(moves, start=1):
        replay = replay.play(cell)
        if 25 - index <= 8:
            assert result.values[index] == value(replay.x_bits, replay.o_bits)
            checked += 1
    assert checked >= 1


def test_doctests() -> None:
    result = doctest.testmod(engine.analysis)
    assert result.failed == 0 and result.attempted >= 2
