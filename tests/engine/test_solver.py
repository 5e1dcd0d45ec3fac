"""The exact solver and the ``perfect`` strategy, checked against a brute force written here."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.board import Board, Mark
from engine.errors import EngineError, IllegalMoveError
from engine.solver import (
    DRAW,
    LOSS,
    SCORE_UNIT,
    WIN,
    MoveValue,
    Perfect,
    SearchResult,
    UnsolvableError,
    best_moves,
    deepen,
    move_results,
    move_values,
    result_of,
    solve,
)
from tests.engine.brute import line_masks

# -- brute force --------------------------------------------------------------------------


@functools.cache
def brute(width: int, height: int, k: int) -> Callable[[int, int], int]:
    """Exact score for the player to move, by full minimax over every line of play.

    A win with n marks on the board at the end is worth size + 1 - n to the winner.
    """
    size = width * height
    masks = line_masks(width, height, k)

    @functools.cache
    def score(x: int, o: int) -> int:
        marks = (x | o).bit_count()
        last = x if marks % 2 else o
        if any(last & m == m for m in masks):
            return marks - 1 - size
        if marks == size:
            return 0
        children = []
        for cell in range(size):
            bit = 1 << cell
            if not (x | o) & bit:
                children.append(score(x | bit, o) if marks % 2 == 0 else score(x, o | bit))
        return max(-child for child in children)

    return score


def brute_moves(board: Board) -> dict[int, int]:
    """Each legal move's exact score for the mover."""
    score = brute(board.width, board.height, board.k)
    return {c: -score(b.x_bits, b.o_bits) for c in board.legal_moves() for b in [board.play(c)]}


def brute_mistakes(board: Board) -> int:
    """How many of the mover's replies make the mover's result (win/draw/loss) worse."""
    values = brute_moves(board)
    if not values:
        return 0  # the game is over
    mine = max(values.values())
    return sum(result_of(v) != result_of(mine) for v in values.values())


def brute_picks(board: Board) -> set[int]:
    """The cells ``perfect`` may choose: optimal, then most room for the opponent to err."""
    values = brute_moves(board)
    best = max(values.values())
    optimal = [c for c, v in values.items() if v == best]
    if best > 0:
        return set(optimal)
    errors = {c: brute_mistakes(board.play(c)) for c in optimal}
    most = max(errors.values())
    return {c for c in optimal if errors[c] == most}


class Recorder(random.Random):
    """A Random that remembers what ``choice`` was offered."""

    offered: tuple[int, ...] = ()

    def choice(self, seq: Sequence[int]) -> int:  # type: ignore[override]
        self.offered = tuple(seq)
        return super().choice(seq)


def positions(width: int, height: int, k: int) -> list[Board]:
    """Every unfinished position reachable from the empty board."""
    seen: dict[tuple[int, int], Board] = {}
    stack = [Board(width, height, k)]
    while stack:
        board = stack.pop()
        if board.is_over or (board.x_bits, board.o_bits) in seen:
            continue
        seen[(board.x_bits, board.o_bits)] = board
        stack.extend(board.play(c) for c in board.legal_moves())
    return list(seen.values())


def random_game(shape: tuple[int, int, int], length: int, rng: random.Random) -> Board:
    board = Board(*shape)
    while board.ply < length and not board.is_over:
        board = board.play(rng.choice(board.legal_moves()))
    return board


# -- 3x3 ----------------------------------------------------------------------------------


def test_perfect_plays_optimally_in_all_4520_unfinished_3x3_positions() -> None:
    boards = positions(3, 3, 3)
    assert len(boards) == 4520
    player = Perfect()
    for board in boards:
        rng = Recorder(board.x_bits)
        result = player.search(board, rng)
        values = brute_moves(board)
        best = max(values.values())
        assert values[result.cell] == best, board.text
        assert result.proven
        assert result.score == best * SCORE_UNIT
        assert set(rng.offered) == brute_picks(board), board.text


def test_move_values_match_brute_force_on_3x3() -> None:
    size = 9
    for board in positions(3, 3, 3):
        values = brute_moves(board)
        got = move_values(board)
        assert [v.cell for v in got] == sorted(values)
        for value in got:
            exact = values[value.cell]
            assert value.result == result_of(exact)
            end = size if exact == 0 else size + 1 - abs(exact)
            assert value.plies == end - board.ply
        best = max(values.values())
        assert best_moves(board) == sorted(c for c, v in values.items() if v == best)


def test_perfect_opens_3x3_in_a_corner() -> None:
    """All openings draw; a corner leaves O the most losing replies (seven of eight)."""
    rng = Recorder(0)
    Perfect()(Board(), rng)
    assert set(rng.offered) == {0, 2, 6, 8}
    assert brute_mistakes(Board().play(0)) == 7
    assert brute_mistakes(Board().play(4)) == 4


def test_perfect_wins_fast_and_loses_slowly() -> None:
    # X wins at once on index 2 (0-based), or later with 0, 1, 3 or 4.
    board = Board.from_text(".../..X/OOX")
    values = brute_moves(board)
    assert values == {0: 3, 1: 1, 2: 5, 3: 3, 4: 3}
    for seed in range(5):
        result = Perfect().search(board, random.Random(seed))
        assert (result.cell, result.result, result.plies) == (2, WIN, 1)
    # O loses whatever it does: at once, unless it blocks on index 6 and loses later.
    board = Board.from_text(".../..O/.XX")
    assert set(brute_moves(board).values()) == {-5, -3}
    result = Perfect().search(board, random.Random(0))
    assert (result.cell, result.result, result.plies) == (6, LOSS, 4)


# -- other shapes up to 16 cells ----------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "min_marks"), [((3, 3, 3), 0), ((4, 4, 4), 5), ((5, 5, 4), 15), ((5, 5, 5), 14)]
)
def test_move_results_match_brute_force(shape: tuple[int, int, int], min_marks: int) -> None:
    """Results without distances: the breaker's shortcuts and narrow windows change none."""
    rng = random.Random(7)
    size = shape[0] * shape[1]
    mixed = 0
    for _ in range(40):
        board = random_game(shape, rng.randint(min_marks, size - 1), rng)
        if board.is_over:
            continue
        expected = {c: result_of(v) for c, v in brute_moves(board).items()}
        assert move_results(board) == expected, board.text
        mixed += len(set(expected.values())) > 1
    assert mixed >= 5  # positions where some moves are worse than others were checked


@pytest.mark.parametrize(
    "shape", [(3, 4, 3), (4, 3, 3), (3, 4, 4), (4, 3, 4), (3, 5, 4), (5, 3, 3), (4, 4, 3)]
)
def test_solver_matches_brute_force_on_sampled_positions(shape: tuple[int, int, int]) -> None:
    rng = random.Random(sum(shape))
    size = shape[0] * shape[1]
    player = Perfect()
    min_marks = 0 if size <= 12 else 5  # the brute force needs a few marks on bigger boards
    for _ in range(60):
        board = random_game(shape, rng.randint(min_marks, size - 1), rng)
        if board.is_over:
            continue
        values = brute_moves(board)
        best = max(values.values())
        assert solve(board) == best, board.text
        assert {v.cell: v for v in move_values(board)} == {
            c: _value(c, v, board.ply, size) for c, v in values.items()
        }
        assert best_moves(board) == sorted(c for c, v in values.items() if v == best)
        recorder = Recorder(1)
        result = player.search(board, recorder)
        assert result.proven and result.depth == size - board.ply
        assert set(recorder.offered) == brute_picks(board), board.text


def _value(cell: int, exact: int, ply: int, size: int) -> MoveValue:
    end = size if exact == 0 else size + 1 - abs(exact)
    return MoveValue(cell, result_of(exact), end - ply)


def test_4x4_k4_from_empty() -> None:
    board = Board(4, 4, 4)
    assert solve(board) == 0
    result = Perfect().search(board, random.Random(3))
    assert result == SearchResult(result.cell, 0, True, 16, result.nodes, result=DRAW, plies=16)
    assert all(v.result == DRAW and v.plies == 16 for v in move_values(board))


def _never_loses(
    board: Board,
    player: Perfect,
    side: Mark,
    must_win: bool,
    seen: set[tuple[int, int]],
) -> int:
    """Perfect plays ``side`` against every sequence of replies; returns the number of
    distinct positions checked (``seen`` skips transpositions)."""
    key = (board.x_bits, board.o_bits)
    if key in seen:
        return 0
    seen.add(key)
    if board.is_over:
        assert board.winner is not side.other, board.text
        if must_win:
            assert board.winner is side, board.text
        return 1
    if board.turn is side:
        cell = player(board, random.Random(key[0] ^ key[1]))
        return 1 + _never_loses(board.play(cell), player, side, must_win, seen)
    return 1 + sum(
        _never_loses(board.play(c), player, side, must_win, seen) for c in board.legal_moves()
    )


def _starts(count: int, marks: tuple[int, int], seed: int) -> list[tuple[Board, int]]:
    """Random 4x4 k=4 positions not yet lost for the side to move, with their values."""
    rng = random.Random(seed)
    out: list[tuple[Board, int]] = []
    while len(out) < count:
        board = random_game((4, 4, 4), rng.randint(*marks), rng)
        if not board.is_over and (value := solve(board)) >= 0:
            out.append((board, value))
    return out


def test_perfect_never_loses_4x4_k4_against_every_reply() -> None:
    player = Perfect()
    checked = 0
    for board, value in _starts(40, (5, 9), 44):
        checked += _never_loses(board, player, board.turn, value > 0, set())
    assert checked > 5000


@pytest.mark.parametrize("side", [Mark.X, Mark.O])
def test_perfect_never_loses_4x4_k4_against_random_players(side: Mark) -> None:
    rng = random.Random(side.value)
    player = Perfect()
    for _ in range(25):
        board = Board(4, 4, 4)
        while not board.is_over:
            mover = player if board.turn is side else lambda b, r: r.choice(b.legal_moves())
            board = board.play(mover(board, rng))
        assert board.winner is not side.other


@pytest.mark.slow
def test_perfect_never_loses_4x4_k4_against_every_reply_from_early_positions() -> None:
    """Exhaustive over the opponent's replies from 30 positions with 3 to 5 marks."""
    player = Perfect()
    for board, value in _starts(30, (3, 5), 4):
        _never_loses(board, player, board.turn, value > 0, set())


# -- symmetry -----------------------------------------------------------------------------


@st.composite
def small_positions(draw: st.DrawFn) -> Board:
    width, height = draw(st.sampled_from([(3, 3), (3, 4), (4, 3), (4, 4), (3, 5), (5, 3)]))
    k = draw(st.integers(3, max(width, height)))
    board = Board(width, height, k)
    order = draw(st.permutations(range(width * height)))
    marks = draw(st.integers(4 if width * height == 16 else 0, width * height - 1))
    for cell in order[:marks]:
        if board.is_over:
            break
        board = board.play(cell)
    return board


@settings(max_examples=60, deadline=None)
@given(small_positions())
def test_symmetric_positions_have_equal_values(board: Board) -> None:
    score = solve(board)
    values = {v.cell: v for v in move_values(board)} if not board.is_over else {}
    for perm in board.geometry.symmetries:
        image = board.transformed(perm)
        assert solve(image) == score
        if values:
            moved = {v.cell: v for v in move_values(image)}
            assert {perm[c]: (v.result, v.plies) for c, v in values.items()} == {
                c: (v.result, v.plies) for c, v in moved.items()
            }


# -- finished boards and limits -----------------------------------------------------------


def test_finished_boards() -> None:
    won = Board.from_moves([0, 3, 1, 4, 2])  # X completes the top row with its third mark
    assert solve(won) == -(10 - 5)
    assert solve(Board.from_moves([0, 1, 2, 4, 3, 5, 7, 6, 8])) == 0  # a full board, drawn
    for call in (
        lambda: Perfect()(won, random.Random(0)),
        lambda: Perfect().search(won, random.Random(0)),
        lambda: move_values(won),
        lambda: best_moves(won),
        lambda: deepen(won, 0.1),
    ):
        with pytest.raises(IllegalMoveError, match="the game is over"):
            call()


def test_a_pairing_proves_5x5_k5_drawn_at_once() -> None:
    """Every move on the empty 5x5 k=5 board draws: the breaker's pairing bound proves
    it in a few thousand nodes, where the plain search could not finish."""
    values = move_values(Board(5, 5, 5), max_nodes=5_000)
    assert {v.result for v in values} == {"draw"} and len(values) == 25


def test_too_big_to_solve_raises_unsolvable() -> None:
    with pytest.raises(UnsolvableError) as info:
        solve(Board(5, 5, 4), max_nodes=5_000)
    assert isinstance(info.value, EngineError)
    with pytest.raises(UnsolvableError):
        move_values(Board(5, 5, 4), max_nodes=5_000)
    # The solver still works afterwards (its caches stay consistent).
    assert solve(Board(4, 4, 4)) == 0


def test_small_cache_caps_keep_results_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """With tiny caps the tables age and are dropped mid-search; values stay exact."""
    import engine.exact as solver_module

    monkeypatch.setattr(solver_module, "_SOLVERS", {})
    monkeypatch.setattr(solver_module, "_TT_LIMIT", 300)
    monkeypatch.setattr(solver_module, "_WINS_LIMIT", 200)
    monkeypatch.setattr(solver_module, "_CHOICE_LIMIT", 5)
    monkeypatch.setattr(solver_module, "_CHECK_EVERY", 64)
    assert solve(Board(4, 4, 4)) == 0
    rng = random.Random(12)
    for _ in range(30):
        board = random_game((3, 4, 4), rng.randint(0, 10), rng)
        if board.is_over:
            continue
        values = brute_moves(board)
        assert solve(board) == max(values.values())
        recorder = Recorder(0)
        Perfect().search(board, recorder)
        assert set(recorder.offered) == brute_picks(board)
    cached = solver_module._SOLVERS[(3, 4, 4)]
    assert len(cached.tt) <= 300 + 64 * 2 and len(cached.choices) <= 6


def test_perfect_replays_the_same_whatever_the_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.exact as solver_module

    rng = random.Random(21)
    boards = [random_game((4, 4, 4), rng.randint(0, 8), rng) for _ in range(8)]
    boards = [b for b in boards if not b.is_over]
    warm = [Perfect().search(b, random.Random(5)) for b in boards]
    monkeypatch.setattr(solver_module, "_SOLVERS", {})
    cold = [Perfect().search(b, random.Random(5)) for b in reversed(boards)]
    assert [r.cell for r in warm] == [r.cell for r in reversed(cold)]


# -- boards bigger than 16 cells: iterative deepening ------------------------------------


def test_deepen_takes_a_win_and_blocks_a_threat() -> None:
    board = Board.from_text("XXX../OOO../...../...../.....", k=4)
    result = deepen(board, 0.5, random.Random(0))
    assert (result.cell, result.proven, result.result, result.plies) == (3, True, WIN, 1)
    board = Board.from_text("XX.../OOO../X..../...../.....", k=4)  # O threatens index 8
    assert deepen(board, 0.5, random.Random(0), max_depth=2).cell == 8


def test_deepen_reports_depth_and_is_not_proven_early() -> None:
    result = deepen(Board(5, 5, 4), 10.0, random.Random(0), max_depth=3)
    assert result.depth == 3
    assert not result.proven and result.result is None
    assert -SCORE_UNIT < result.score < SCORE_UNIT


def test_deepen_proves_late_positions_like_the_solver() -> None:
    rng = random.Random(55)
    checked = 0
    while checked < 15:
        board = random_game((5, 5, 4), rng.randint(15, 21), rng)
        if board.is_over:
            continue
        result = deepen(board, 30.0, rng)
        exact = solve(board)
        assert result.proven, board.text
        assert result.score == exact * SCORE_UNIT
        assert result.cell in best_moves(board)
        assert (result.result, result.plies) == (
            _value(result.cell, exact, board.ply, 25).result,
            _value(result.cell, exact, board.ply, 25).plies,
        )
        checked += 1


def test_perfect_is_exact_late_in_5x5_games() -> None:
    rng = random.Random(66)
    player = Perfect(budget=30.0)
    checked = 0
    while checked < 12:
        board = random_game((5, 5, 4), rng.randint(11, 20), rng)
        if board.is_over:
            continue
        result = player.search(board, Recorder(checked))
        assert result.proven and result.depth == 25 - board.ply
        assert result.score == solve(board) * SCORE_UNIT
        assert result.cell in best_moves(board)
        checked += 1


def test_perfect_on_5x5_k3_proves_the_win() -> None:
    result = Perfect(budget=5.0).search(Board(5, 5, 3), random.Random(0))
    assert result.proven and result.result == WIN and result.plies == 5
    assert result.score == solve(Board(5, 5, 3)) * SCORE_UNIT


def test_perfect_with_a_node_limit_replays_exactly() -> None:
    board = Board.from_moves([12, 6], 5, 5, 4)
    player = Perfect(budget=60.0, max_nodes=20_000)
    first = player.search(board, random.Random(9))
    second = player.search(board, random.Random(9))
    assert first == second
    assert not first.proven and first.depth >= 3


def test_doctests() -> None:
    import doctest

    import engine.solver as solver_module

    result = doctest.testmod(solver_module)
    assert result.failed == 0 and result.attempted >= 2


@pytest.mark.parametrize("shape", [(3, 3, 3), (4, 3, 3), (4, 4, 4), (5, 4, 4), (5, 5, 5)])
def test_position_keys_follow_every_symmetry(shape: tuple[int, int, int]) -> None:
    """The table-built keys (engine.geometry.key_tables) against the definition: X bits
    | O bits << size of the board turned by each symmetry; and the transposition
    table's incremental keys agree with them."""
    from engine.exact import _solver

    rng = random.Random(9)
    board = Board(*shape)
    solver = _solver(board)
    size = board.size
    for _ in range(200):
        cells = rng.sample(range(size), rng.randrange(size + 1))
        x = sum(1 << c for c in cells[::2])
        o = sum(1 << c for c in cells[1::2])
        turned = [
            sum(1 << perm[c] for c in range(size) if x >> c & 1)
            | sum(1 << perm[c] for c in range(size) if o >> c & 1) << size
            for perm in board.geometry.symmetries
        ]
        keys = solver.keys_of(x, o)
        assert list(keys) == turned
        free = [c for c in range(size) if not (x | o) >> c & 1]
        if free and len(cells) % 2 == 0:
            assert solver.child_keys(keys, free[0], len(cells)) == solver.keys_of(
                x | 1 << free[0], o
            )
