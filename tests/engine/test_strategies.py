"""The strategies: the interface, each tutorial player's rules, and minimax's figures."""

from __future__ import annotations

import functools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.board import Board, Mark
from engine.errors import IllegalMoveError
from engine.minimax import NodeCapError
from engine.strategies import (
    STRATEGY_NAMES,
    WIN_SCORE,
    Minimax,
    UnknownStrategyError,
    forking_cells,
    heuristic_move,
    heuristic_scores,
    make_strategy,
    minimax_search,
    open_lines_eval,
    play_game,
    preference_order,
    random_move,
    rules_candidates,
    rules_move,
    strategy_name,
    table_move,
    threat_cells,
    weighted_eval,
)

CHEAP = ("random", "table", "rules", "heuristic")


def _cheap(name: str) -> object:
    return make_strategy(name)


@st.composite
def live_boards(draw: st.DrawFn, max_side: int = 5, min_marks: int = 0) -> Board:
    width = draw(st.integers(3, max_side))
    height = draw(st.integers(3, max_side))
    k = draw(st.integers(3, max(width, height)))
    board = Board(width, height, k)
    order = draw(st.permutations(range(width * height)))
    length = draw(st.integers(min_marks, width * height - 1))
    for cell in order[:length]:
        after = board.play(cell)
        if after.is_over:
            break
        board = after
    return board


# -- the interface ---------------------------------------------------------------------


def test_registry_names() -> None:
    assert STRATEGY_NAMES == ("random", "table", "rules", "heuristic", "minimax", "perfect")
    for name in CHEAP:
        assert strategy_name(make_strategy(name)) == name
    assert strategy_name(make_strategy("minimax", depth=3)) == "minimax(depth=3,eval=open_lines)"


def test_unknown_names_and_parameters() -> None:
    with pytest.raises(UnknownStrategyError, match="unknown strategy"):
        make_strategy("clever")
    with pytest.raises(UnknownStrategyError, match="takes no parameters"):
        make_strategy("random", depth=2)
    with pytest.raises(UnknownStrategyError, match="depth"):
        make_strategy("minimax", depth=0)
    with pytest.raises(UnknownStrategyError, match="evaluation"):
        make_strategy("minimax", eval="vibes")
    with pytest.raises(ValueError):
        make_strategy("minimax", width=3)
    with pytest.raises(UnknownStrategyError, match="budget"):
        make_strategy("perfect", budget=0)
    assert strategy_name(make_strategy("perfect", budget=0.5)) == "perfect"


@settings(max_examples=60, deadline=None)
@given(live_boards(), st.sampled_from(CHEAP), st.integers(0, 2**32))
def test_cheap_strategies_choose_legal_cells(board: Board, name: str, seed: int) -> None:
    cell = make_strategy(name)(board, random.Random(seed))
    assert cell in board.legal_moves()


@settings(max_examples=40, deadline=None)
@given(live_boards(max_side=4), st.integers(1, 2), st.sampled_from(["open_lines", "weighted"]))
def test_minimax_chooses_legal_cells(board: Board, depth: int, evaluation: str) -> None:
    cell = Minimax(depth, evaluation)(board, random.Random(0))
    assert cell in board.legal_moves()


@pytest.mark.parametrize("name", [*CHEAP, "minimax"])
def test_finished_board_raises(name: str) -> None:
    finished = Board.from_moves([0, 3, 1, 4, 2])
    with pytest.raises(IllegalMoveError):
        make_strategy(name)(finished, random.Random(0))
    drawn = Board.from_moves([0, 1, 2, 4, 3, 5, 7, 6, 8])
    with pytest.raises(IllegalMoveError):
        make_strategy(name)(drawn, random.Random(0))


@pytest.mark.parametrize("name", [*CHEAP, "minimax"])
def test_same_seed_same_game(name: str) -> None:
    strategy = make_strategy(name) if name != "minimax" else Minimax(depth=2)
    for shape in ((3, 3, 3), (4, 4, 3), (5, 5, 4)):
        games = [
            play_game(strategy, random_move, random.Random(seed), Board(*shape)).moves
            for seed in (7, 7, 8)
        ]
        assert games[0] == games[1]
    first = [play_game(random_move, random_move, random.Random(s)).moves for s in range(5)]
    again = [play_game(random_move, random_move, random.Random(s)).moves for s in range(5)]
    assert first == again
    assert len(set(first)) > 1


# -- random and table ------------------------------------------------------------------


def test_random_covers_every_cell() -> None:
    rng = random.Random(3)
    board = Board.from_text("X../.O./...")
    seen = {random_move(board, rng) for _ in range(200)}
    assert seen == set(board.legal_moves())


def test_table_order_3x3_is_centre_corners_sides() -> None:
    assert preference_order(Board()) == (4, 0, 2, 6, 8, 1, 3, 5, 7)


def test_table_order_bigger_boards() -> None:
    order = preference_order(Board(4, 4, 4))
    # Diagonal cells lie on three lines: the centre four, then the corners.
    assert order[:8] == (5, 6, 9, 10, 0, 3, 12, 15)
    assert sorted(order) == list(range(16))
    assert preference_order(Board(5, 5, 5))[0] == 12


def test_table_takes_the_first_free_cell() -> None:
    rng = random.Random(0)
    assert table_move(Board(), rng) == 4
    assert table_move(Board.from_text(".../.X./..."), rng) == 0
    assert table_move(Board.from_text("OXO/XX./..."), rng) == 6


# -- rules -----------------------------------------------------------------------------


def test_rules_win_beats_block() -> None:
    board = Board.from_text("XX./OO./...")
    assert rules_candidates(board) == ("win", (2,))
    assert rules_move(board, random.Random(0)) == 2


def test_rules_blocks() -> None:
    board = Board.from_text("XX./O../...")
    assert rules_candidates(board) == ("block", (2,))


def test_rules_forks() -> None:
    # X: 1 and 5, O: 2 and 9 (1-based). X at 4 or 7 makes two threats at once.
    board = Board.from_text("XO./.X./..O")
    assert forking_cells(board) == [3, 6]
    rule, cells = rules_candidates(board)
    assert rule == "fork"
    assert set(cells) <= {3, 6}
    for seed in range(10):
        after = board.play(rules_move(board, random.Random(seed)))
        assert len(threat_cells(after, mover=False)) == 2


def test_rules_stops_a_fork_by_forcing_a_block_on_a_side() -> None:
    # X on opposite corners, O in the centre: X forks at 3 or 7. Taking a corner would
    # force X to block on the other corner, which is X's fork; a side is the answer.
    board = Board.from_text("X../.O./..X")
    assert set(forking_cells(board, mover=False)) == {2, 6}
    rule, cells = rules_candidates(board)
    assert rule == "force"
    assert set(cells) <= {1, 3, 5, 7}


def test_rules_takes_a_fork_cell_when_no_threat_helps() -> None:
    # O to move; X forks at 3, 5, 8 or 9 (1-based). O's only threat (5, aiming at 9)
    # forces X onto 9, itself a fork; so O takes a fork cell.
    board = Board.from_text("OX./O.X/X..")
    assert forking_cells(board, mover=False) == [2, 4, 7, 8]
    rule, cells = rules_candidates(board)
    assert rule == "block_fork"
    assert set(cells) <= {2, 4, 7, 8}


def test_rules_open_lines() -> None:
    assert rules_candidates(Board()) == ("open_lines", (4,))
    # Against a corner the centre is the cell on most open lines.
    assert rules_candidates(Board.from_text("X../.../...")) == ("open_lines", (4,))
    # Against the centre, every corner ties.
    assert rules_candidates(Board.from_text(".../.X./...")) == ("open_lines", (0, 2, 6, 8))


def test_rules_never_loses_3x3() -> None:
    """Every branch: any opponent move, any of the rules' tied choices."""

    @functools.cache
    def worst(text: str, me: Mark) -> int:
        board = Board.from_text(text)
        if board.is_over:
            return 0 if board.winner is None else (1 if board.winner is me else -1)
        cells = rules_candidates(board)[1] if board.turn is me else board.legal_moves()
        return min(worst(board.play(c).text, me) for c in cells)

    assert worst(Board().text, Mark.X) == 0
    assert worst(Board().text, Mark.O) == 0


# -- evaluations and heuristic ---------------------------------------------------------


def test_evaluations_on_a_known_position() -> None:
    board = Board.from_text("XX./.O./...")
    x, o = board.x_bits, board.o_bits
    # X: top row two (10) + left column one (1); O: middle row and anti-diagonal (1 + 1).
    assert weighted_eval(board, x, o) == 11 - 2
    assert weighted_eval(board, o, x) == -9
    # Open lines: X 2 + 1, O 1 + 1.
    assert open_lines_eval(board, x, o) == 3 - 2


def test_heuristic_scores_a_known_position() -> None:
    board = Board.from_text("X../.O./...")
    scores = heuristic_scores(board)
    assert scores[2] == 10  # X: row 10 + two singles; O: two singles
    assert scores[8] == 1  # X: four singles; O: three
    assert scores[1] == 9
    assert max(scores.values()) == 10
    assert {c for c, s in scores.items() if s == 10} == {2, 6}
    assert {heuristic_move(board, random.Random(s)) for s in range(20)} == {2, 6}


def test_heuristic_takes_a_win() -> None:
    board = Board.from_text("XX./OO./...")
    assert heuristic_scores(board)[2] == WIN_SCORE
    assert heuristic_move(board, random.Random(0)) == 2


def test_generalised_weights_on_a_bigger_board() -> None:
    board = Board.from_text("XXX./..../..../OO..", k=4)
    x, o = board.x_bits, board.o_bits
    # X: top row 3 of 4 (100), column 3 and the diagonal (1 + 1); columns 1-2 are shared.
    # O: bottom row 2 of 4 (10) and the anti-diagonal (1).
    assert weighted_eval(board, x, o) == 102 - 11
    assert open_lines_eval(board, x, o) == 5 - 3


# -- minimax ---------------------------------------------------------------------------


def test_plain_minimax_visits_the_whole_tree() -> None:
    result = minimax_search(Board(), depth=None, pruning=False)
    assert result.nodes == 549_946
    assert result.score == 0
    assert result.best_cells == tuple(range(9))


def test_alpha_beta_visits_far_fewer_nodes() -> None:
    result = minimax_search(Board())
    assert result.score == 0
    assert result.best_cells == tuple(range(9))
    assert result.nodes < 20_000
    strategy = Minimax()
    strategy(Board(), random.Random(0))
    assert strategy.last_nodes == result.nodes


@pytest.mark.parametrize("pruning", [True, False])
def test_node_cap_stops_a_search_that_needs_more(pruning: bool) -> None:
    board = Board(5, 5, 4).play(12)
    full = minimax_search(board, 2, "weighted", pruning)
    assert minimax_search(board, 2, "weighted", pruning, max_nodes=full.nodes) == full
    with pytest.raises(NodeCapError):
        minimax_search(board, 2, "weighted", pruning, max_nodes=full.nodes - 1)


def test_minimax_prefers_the_fastest_win() -> None:
    board = Board.from_text("XO./.XO/...")
    result = minimax_search(board)
    assert result.best_cells == (8,)
    assert result.score == WIN_SCORE - 1
    # Some slower move also wins by force, but scores less.
    slower = [
        c
        for c in board.legal_moves()
        if c != 8 and not board.play(c).is_over and minimax_search(board.play(c)).score < 0
    ]
    assert slower


def test_minimax_delays_a_loss() -> None:
    # O is lost (X forks after the block), but blocking loses later than anything else.
    board = Board.from_text("XX./.../O..")
    result = minimax_search(board)
    assert result.best_cells == (2,)
    assert result.score == -(WIN_SCORE - 4)


def test_minimax_breaks_ties_at_random() -> None:
    strategy = Minimax()
    cells = {strategy(Board(), random.Random(seed)) for seed in range(40)}
    assert len(cells) > 3


def test_depth_one_is_the_best_child_evaluation() -> None:
    board = Board.from_text("X../.O./...")
    x, o = board.x_bits, board.o_bits
    expected = {c: open_lines_eval(board, x | 1 << c, o) for c in board.legal_moves()}
    result = minimax_search(board, depth=1, evaluation="open_lines")
    assert result.score == max(expected.values())
    assert set(result.best_cells) == {c for c, v in expected.items() if v == result.score}


@settings(max_examples=40, deadline=None)
@given(live_boards(max_side=3, min_marks=2))
def test_pruning_finds_the_same_moves_3x3(board: Board) -> None:
    plain = minimax_search(board, pruning=False)
    pruned = minimax_search(board)
    assert (pruned.score, pruned.best_cells) == (plain.score, plain.best_cells)
    assert pruned.nodes <= plain.nodes


@settings(max_examples=30, deadline=None)
@given(live_boards(max_side=4), st.integers(1, 3), st.sampled_from(["open_lines", "weighted"]))
def test_pruning_finds_the_same_moves_with_a_depth_limit(
    board: Board, depth: int, evaluation: str
) -> None:
    plain = minimax_search(board, depth, evaluation, pruning=False)
    pruned = minimax_search(board, depth, evaluation)
    assert (pruned.score, pruned.best_cells) == (plain.score, plain.best_cells)


def test_full_minimax_never_loses_to_random() -> None:
    strategy = Minimax()
    rng = random.Random(5)
    for _ in range(30):
        assert play_game(strategy, random_move, rng).winner is not Mark.O
        assert play_game(random_move, strategy, rng).winner is not Mark.X


def test_strength_order_against_random() -> None:
    """Quick measurement: random < table < heuristic <= rules in points against random."""

    def points(name: str) -> float:
        strategy = make_strategy(name)
        rng = random.Random(11)
        total = 0.0
        for _ in range(150):
            for x, o, me in ((strategy, random_move, Mark.X), (random_move, strategy, Mark.O)):
                winner = play_game(x, o, rng).winner
                total += 1.0 if winner is me else 0.5 if winner is None else 0.0
        return total / 300

    scores = {name: points(name) for name in CHEAP}
    assert scores["random"] < scores["table"] < scores["heuristic"] <= scores["rules"] + 0.02
    assert scores["rules"] > 0.9


def test_depth_limited_minimax_is_quick_on_5x5() -> None:
    board = Board(5, 5, 4).play(12).play(6)
    strategy = Minimax(depth=3, evaluation="weighted")
    assert strategy(board, random.Random(0)) in board.legal_moves()
    assert strategy.last_nodes < 50_000
