"""Move values and the post-game review, checked against a brute force written here."""

from __future__ import annotations

import doctest
import functools
import random
from collections.abc import Callable

import pytest

import engine.analysis
import engine.reviewing
from engine.analysis import (
    DRAWN,
    LOST_GAME,
    MISSED_WIN,
    MISTAKE,
    O_WINS,
    SLIP_BLOCK,
    SLIP_WIN,
    THREW_WIN,
    UNKNOWN,
    X_WINS,
    Review,
    analyse,
    strength,
)
from engine.board import Board
from engine.errors import IllegalMoveError, InvalidMoveError
from engine.reviewing import last_change, narrow, review
from engine.solver import LOSS, WIN, Perfect, solve
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


def brute_better(moves: list[int], index: int, width: int, height: int, k: int) -> set[int]:
    """The cells at ``moves[index]`` whose position keeps the value before it."""
    value = outcome_of(width, height, k)
    board = Board.from_moves(moves[:index], width, height, k)
    before = value(board.x_bits, board.o_bits)
    kept = set()
    for cell in board.legal_moves():
        after = board.play(cell)
        if value(after.x_bits, after.o_bits) == before:
            kept.add(cell)
    return kept


def random_game(shape: tuple[int, int, int], rng: random.Random) -> list[int]:
    board, moves = Board(*shape), []
    while not board.is_over:
        cell = rng.choice(board.legal_moves())
        moves.append(cell)
        board = board.play(cell)
    return moves


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


def test_the_issues_game_is_decided_by_the_missed_win_not_the_first_swing() -> None:
    """X c2, O c1, X a2, O c3, X b2: X a2 gave O a forced win (the first swing), O c3
    missed it (b2 won), and X won: O c3 decided the game."""
    moves = [5, 2, 3, 8, 4]
    result = review(moves)
    assert result.values == tuple(brute_values(moves))
    assert result.values == (DRAWN, DRAWN, DRAWN, O_WINS, X_WINS, X_WINS)
    assert (result.decider, result.kind, result.better) == (3, THREW_WIN, (4,))
    assert brute_better(moves, 3, 3, 3, 3) == {4}
    # O c3 also left X's line a2-b2-c2 open: a missed block, found without a search.
    assert [(s.move, s.kind, s.cells) for s in result.slips] == [(3, SLIP_BLOCK, (4,))]
    assert result.summary() == (
        "Move 4 (O at cell 9) decided the game: the win became a loss; cell 5 would have won."
    )


def test_review_names_the_losing_move_and_the_moves_that_held() -> None:
    # X centre, O edge (loses: O had to take a corner), then X wins.
    moves = [4, 1, 0, 8, 6, 2, 3]
    result = review(moves)
    assert result.values == tuple(brute_values(moves))
    assert (result.decider, result.kind) == (1, MISTAKE)
    assert set(result.better) <= brute_better(moves, 1, 3, 3, 3) == {0, 2, 6, 8}
    assert result.better == (0, 2, 6)  # at most three, in cell order (draws tie)


def swings(values: list[str]) -> list[int]:
    return [i for i in range(len(values) - 1) if values[i] != values[i + 1]]


@pytest.mark.parametrize("shape", [(3, 3, 3), (3, 4, 3), (4, 3, 4)])
def test_games_with_several_swings_are_decided_by_the_last(shape: tuple[int, int, int]) -> None:
    """Random games, each value checked by brute force; at least ten of them swing two
    or more times, and the review names the last swing and the moves that kept it."""
    rng = random.Random(4)
    several = 0
    for _ in range(60):
        moves = random_game(shape, rng)
        values = brute_values(moves, *shape)
        result = review(moves, *shape)
        assert result.values == tuple(values) and result.complete
        changes = swings(values)
        several += len(changes) >= 2
        if not changes:
            assert (result.decider, result.kind, result.better) == (None, None, ())
            continue
        last = changes[-1]
        assert result.decider == last, (moves, values)
        kept = brute_better(moves, last, *shape)
        assert set(result.better) <= kept and len(result.better) == min(3, len(kept))
        board = Board.from_moves(moves[:last], *shape)
        by_value = {v.cell: v for v in analyse(board)}
        best = [strength(by_value[c]) for c in result.better]
        assert best == sorted(best, reverse=True)  # quicker wins first
        assert max(best) == max(strength(by_value[c]) for c in kept)
    assert several >= 10


@pytest.mark.parametrize(("after", "kind"), [(DRAWN, MISSED_WIN), (O_WINS, THREW_WIN)])
def test_review_kinds_on_a_first_player_win(after: str, kind: str) -> None:
    """On 3x4 with three in a row X starts with a won game; find random games whose
    only change turns X's win into ``after`` (3x3 starts drawn, so it has no such)."""
    rng = random.Random(7)
    found = None
    for _ in range(3000):
        moves = random_game((3, 4, 3), rng)
        values = brute_values(moves, 3, 4, 3)
        changes = swings(values)
        if len(changes) == 1 and values[changes[0] + 1] == after:
            found = moves, changes[0]
            break
    assert found is not None
    moves, index = found
    result = review(moves, 3, 4, 3)
    assert result.values[0] == X_WINS
    assert (result.decider, result.kind) == (index, kind)
    assert index % 2 == 0  # only X, who had the win, can throw it
    where = f"Move {index + 1} (X at cell {moves[index] + 1}) decided the game"
    if kind == MISSED_WIN:
        assert result.summary().startswith(f"{where}: the win became a draw; cell ")
    else:
        assert result.summary().startswith(f"{where}: the win became a loss; cell ")
    assert result.summary().endswith(" would have won.")


def test_review_of_perfect_play_names_no_move() -> None:
    rng = random.Random(1)
    for shape in ((3, 3, 3), (4, 4, 4), (4, 4, 3)):
        board, moves, player = Board(*shape), [], Perfect()
        while not board.is_over:
            cell = player(board, rng)
            moves.append(cell)
            board = board.play(cell)
        result = review(moves, *shape)
        assert result.decider is None and result.kind is None and result.better == ()
        assert len(set(result.values)) == 1 and result.complete
        assert result.summary().startswith("No move changed the result")


def test_review_of_an_unfinished_game() -> None:
    result = review([4, 1])
    assert result.values == (DRAWN, DRAWN, X_WINS)
    assert result.decider == 1


def test_review_rejects_bad_moves() -> None:
    with pytest.raises(IllegalMoveError):
        review([4, 4])
    with pytest.raises(InvalidMoveError):
        review([9])


def test_a_decider_needs_every_value_after_it() -> None:
    """A value can swing and swing back (two mistakes), so an unknown value after a
    change hides whether it was the last; the known values at the end decide."""
    assert last_change([DRAWN, O_WINS, X_WINS, X_WINS]) == 1
    assert last_change([DRAWN, O_WINS, UNKNOWN, X_WINS, X_WINS]) is None
    assert last_change([DRAWN, UNKNOWN, DRAWN, X_WINS, X_WINS]) == 2
    assert last_change([UNKNOWN, DRAWN, DRAWN]) is None
    assert last_change([DRAWN, DRAWN, UNKNOWN]) is None
    assert last_change([X_WINS, DRAWN, X_WINS, O_WINS, O_WINS]) == 2


# -- review on 5 x 5 ----------------------------------------------------------------------

MISSED_WIN_5X5 = [17, 6, 15, 19, 7, 4, 18, 16, 3, 21, 10, 5, 0, 11]
"""X's 13th move (a1) leaves its win in one at b3 (11); O wins there."""
MISSED_BLOCK_5X5 = [18, 9, 0, 7, 6, 16, 24, 4, 2, 10, 8, 15, 12]
"""O's 10th move (a3) leaves X's line open at c3 (12), the one cell that blocked it and
won for O; X wins there."""


def exact_value(moves: list[int], index: int) -> str:
    """The value before ``moves[index]`` on 5x5 k=4, by the plain solver (no budget)."""
    board = Board.from_moves(moves[:index], 5, 5, 4)
    outcome = board.outcome()
    if outcome is not None:
        return DRAWN if outcome.winner is None else f"{outcome.winner.value} wins"
    score = solve(board, max_nodes=50_000_000)
    if score == 0:
        return DRAWN
    return f"{(board.turn if score > 0 else board.turn.other).value} wins"


def test_a_missed_win_on_5x5_is_found_and_decides() -> None:
    moves = MISSED_WIN_5X5
    result = review(moves, 5, 5, 4)
    assert (result.decider, result.kind, result.better) == (12, THREW_WIN, (11,))
    assert (12, SLIP_WIN, (11,)) in [(s.move, s.kind, s.cells) for s in result.slips]
    start = result.settled_from
    assert start <= 12
    for index in range(start, len(moves) + 1):
        assert result.values[index] == exact_value(moves, index), index


def test_a_missed_block_on_5x5_is_found_and_decides() -> None:
    moves = MISSED_BLOCK_5X5
    result = review(moves, 5, 5, 4)
    assert (result.decider, result.kind, result.better) == (9, THREW_WIN, (12,))
    assert (9, SLIP_BLOCK, (12,)) in [(s.move, s.kind, s.cells) for s in result.slips]
    for index in range(result.settled_from, len(moves) + 1):
        assert result.values[index] == exact_value(moves, index), index


def test_slips_need_no_budget_and_a_decider_needs_its_values() -> None:
    """With no nodes at all the slips are still found; the values that need a search
    stay unknown, and no move is named unless the known values establish it."""
    for moves in (MISSED_WIN_5X5, MISSED_BLOCK_5X5):
        full = review(moves, 5, 5, 4)
        bare = review(moves, 5, 5, 4, max_nodes=0)
        assert bare.slips == full.slips
        for index, value in enumerate(bare.values):
            assert value in (UNKNOWN, full.values[index])
        assert bare.decider in (None, full.decider)
        if bare.decider is None:
            assert not bare.complete
    # MISSED_BLOCK's decider needs a search (the value before it): none without one.
    assert review(MISSED_BLOCK_5X5, 5, 5, 4, max_nodes=0).decider is None


AGAINST_IMPOSSIBLE = [12, 6, 18, 8, 17, 7, 5, 9]
"""hard (X) against impossible (O): every value before O's win is known from the proofs
(impossible's book moves keep the value, its side is never lost), with no search."""
IMPOSSIBLE_X = [12, 7, 6, 18, 11, 16, 13, 10, 14]
"""impossible (X) against medium: O's first reply lost, which only the proofs tell."""
MEDIUM_HARD = [12, 6, 21, 8, 7, 17, 5, 11, 16, 13, 18, 20, 2, 3, 19, 14, 15, 10, 0, 22, 23]
MEDIUM_HARD += [1, 24, 4, 9]


def check_known_values(moves: list[int], start: int = 0) -> Review:
    """The review of ``moves``, each value it claims from ``start`` on checked by the
    plain solver (the first few positions cost it seconds each)."""
    result = review(moves, 5, 5, 4)
    for index, value in enumerate(result.values[start:], start):
        if value != UNKNOWN:
            assert value == exact_value(moves, index), index
    return result


def test_every_value_a_5x5_review_claims_is_exact() -> None:
    result = check_known_values(MEDIUM_HARD, start=3)  # the rest: the slow test below
    assert result.values[:3] == (DRAWN,) * 3  # X's centre is the book's: X is not lost
    assert (result.decider, result.kind) == (7, MISSED_WIN)


def test_the_proofs_settle_a_game_against_impossible() -> None:
    result = review(AGAINST_IMPOSSIBLE, 5, 5, 4, max_nodes=20_000)
    assert result.values == (DRAWN,) * 5 + (O_WINS,) * 4
    assert (result.decider, result.kind) == (4, MISTAKE)


@pytest.mark.slow
def test_the_proofs_values_are_exact() -> None:
    """The values the proofs gave, checked by the plain solver (about a minute)."""
    assert check_known_values(AGAINST_IMPOSSIBLE).complete
    check_known_values(MEDIUM_HARD)
    result = check_known_values(IMPOSSIBLE_X)
    assert result.values[:3] == (DRAWN, DRAWN, X_WINS) and result.decider == 1


def test_a_5x5_review_is_the_same_whatever_was_searched_before() -> None:
    first = review(MISSED_BLOCK_5X5, 5, 5, 4)
    solve(Board.from_moves(MISSED_BLOCK_5X5[:6], 5, 5, 4), max_nodes=100_000)
    assert review(MISSED_BLOCK_5X5, 5, 5, 4) == first


LOST_GAME_5X5 = [6, 23, 8, 5, 12, 17, 11, 16, 13, 14, 10]
"""O's first reply (e5) let X force a win; the value before it is beyond the budget."""


def test_a_decider_whose_value_before_is_out_of_reach() -> None:
    """X's own move cannot have made X win, so whatever the value after X b2 was, O's e5
    changed it: the deciding move is certain, its value before is not (LOST_GAME)."""
    moves = LOST_GAME_5X5
    result = review(moves, 5, 5, 4, max_nodes=150_000)  # a bigger budget settles it
    assert result.values[:3] == (DRAWN, UNKNOWN, X_WINS)
    assert (result.decider, result.kind) == (1, LOST_GAME) and result.settled(1)
    assert exact_value(moves, 1) in (DRAWN, O_WINS)  # a draw, in fact
    for index in range(2, len(moves) + 1):
        assert result.values[index] == exact_value(moves, index), index
    assert result.better and all(
        exact_value([*moves[:1], cell], 2) != X_WINS for cell in result.better
    )
    assert result.summary().startswith(
        "Move 2 (O at cell 24) decided the game: after it X had a forced win; cell 13"
    )


def test_narrowing_uses_the_direction_of_every_move() -> None:
    values = [DRAWN, UNKNOWN, UNKNOWN, O_WINS]
    possible = narrow(values)
    assert values == [DRAWN, UNKNOWN, UNKNOWN, O_WINS]
    assert possible[1] == {DRAWN, O_WINS}  # X's move cannot have helped X
    assert last_change(values, possible) is None  # X's first or third move: either
    values = [DRAWN, UNKNOWN, UNKNOWN, X_WINS]
    narrow(values)
    assert values == [DRAWN, UNKNOWN, X_WINS, X_WINS]  # X's last move cannot have helped
    values = [DRAWN, UNKNOWN, X_WINS]
    assert last_change(values, narrow(values)) == 1


def test_no_verdict_only_when_no_move_is_settled() -> None:
    # An unfinished 5x5 game (a forfeit, say) whose every position needs a search.
    result = review([12, 6], 5, 5, 4, max_nodes=0)
    assert result.values == (DRAWN, UNKNOWN, UNKNOWN) and result.decider is None
    assert result.summary() == "No verdict: no move could be settled within the review's budget."
    partial = review([12, 6, 7, 0], 5, 5, 4, max_nodes=0)
    assert partial.decider is None


def test_review_of_a_big_board_late_positions_are_exact() -> None:
    rng = random.Random(8)
    moves = random_game((5, 5, 4), rng)
    result = review(moves, 5, 5, 4, max_nodes=20_000)
    start = result.settled_from
    assert start < len(moves)  # at least the last move is settled
    value = outcome_of(5, 5, 4)
    replay = Board(5, 5, 4)
    checked = 0
    for index, cell in enumerate(moves, start=1):
        replay = replay.play(cell)
        if 25 - index <= 8 and result.values[index] != UNKNOWN:
            assert result.values[index] == value(replay.x_bits, replay.o_bits)
            checked += 1
    assert checked >= 1
    if start > 0:
        assert result.summary().startswith(f"No move from move {start + 1} on") or (
            result.decider is not None and result.decider >= start
        )


def test_doctests() -> None:
    for module in (engine.analysis, engine.reviewing):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted >= 1
