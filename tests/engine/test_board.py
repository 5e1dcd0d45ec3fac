"""Board rules: moves, undo, outcomes, the text form and the errors bad input raises."""

from __future__ import annotations

import functools
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.board import Board, Mark, Termination, geometry
from engine.errors import (
    EngineError,
    IllegalMoveError,
    InvalidBoardError,
    InvalidMoveError,
    InvalidPositionError,
)

# -- hypothesis strategies -------------------------------------------------------------


@st.composite
def shapes(draw: st.DrawFn) -> tuple[int, int, int]:
    width = draw(st.integers(3, 5))
    height = draw(st.integers(3, 5))
    k = draw(st.integers(3, max(width, height)))
    return width, height, k


@st.composite
def games(draw: st.DrawFn) -> Board:
    """A board reached by legal play from the empty board, possibly finished."""
    width, height, k = draw(shapes())
    board = Board(width, height, k)
    order = draw(st.permutations(range(width * height)))
    length = draw(st.integers(0, width * height))
    for cell in order[:length]:
        if board.is_over:
            break
        board = board.play(cell)
    return board


@st.composite
def live_games(draw: st.DrawFn) -> Board:
    board = draw(games())
    while board.is_over:
        board = board.undo()
    return board


# -- basics ----------------------------------------------------------------------------


def test_empty_board() -> None:
    board = Board()
    assert board.text == ".../.../..."
    assert board.turn is Mark.X
    assert board.legal_moves() == tuple(range(9))
    assert board.outcome() is None and not board.is_over
    assert board.ply == 0 and board.moves == ()


def test_x_wins_a_row() -> None:
    board = Board.from_moves([0, 3, 1, 4, 2])
    outcome = board.outcome()
    assert outcome is not None
    assert outcome.winner is Mark.X
    assert outcome.line == (0, 1, 2)
    assert outcome.termination is Termination.WIN
    assert board.legal_moves() == ()


def test_draw() -> None:
    # X O X / X O O / O X X
    board = Board.from_moves([0, 1, 2, 4, 3, 5, 7, 6, 8])
    outcome = board.outcome()
    assert outcome is not None and outcome.is_draw
    assert outcome.termination is Termination.DRAW


def test_win_on_the_last_cell_is_a_win_not_a_draw() -> None:
    board = Board.from_text("XOO/OXX/XO.").play(8)
    outcome = board.outcome()
    assert outcome is not None
    assert outcome.winner is Mark.X
    assert outcome.line == (0, 4, 8)


def test_k_shorter_than_the_side() -> None:
    board = Board.from_moves([0, 10, 1, 11, 2], 4, 4, 3)
    assert board.winner is Mark.X
    assert not Board.from_moves([0, 10, 1, 11, 2], 4, 4, 4).is_over


def test_rectangular_board_lines() -> None:
    geo = geometry(5, 3, 5)
    assert len(geo.lines) == 3  # only the rows are long enough
    geo = geometry(3, 4, 3)
    # 4 rows x 1 + 3 columns x 2 + 2 x 2 diagonals
    assert len(geo.lines) == 4 + 6 + 4


def test_pretty_numbers_empty_cells_from_one() -> None:
    text = Board.from_text("X.O/.../...").pretty()
    assert text.splitlines()[0] == " X | 2 | O"
    assert "9" in text
    assert "25" in Board(5, 5, 4).pretty()


# -- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("cell", [-1, 9, 100, "1", 1.0, None, True])
def test_malformed_moves_raise_invalid_move(cell: object) -> None:
    with pytest.raises(InvalidMoveError):
        Board().play(cell)  # type: ignore[arg-type]


def test_taken_cell_is_illegal() -> None:
    with pytest.raises(IllegalMoveError, match="taken"):
        Board().play(4).play(4)


def test_move_after_the_end_is_illegal() -> None:
    board = Board.from_moves([0, 3, 1, 4, 2])
    with pytest.raises(IllegalMoveError, match="over"):
        board.play(8)


def test_undo_of_nothing_is_illegal() -> None:
    with pytest.raises(IllegalMoveError):
        Board().undo()
    with pytest.raises(IllegalMoveError):
        Board.from_text("X../.../...").undo()


@pytest.mark.parametrize(
    ("text", "number"),
    [("5", 4), (" 1 ", 0), ("9", 8)],
)
def test_parse_cell(text: str, number: int) -> None:
    assert Board().parse_cell(text) == number


@pytest.mark.parametrize("text", ["0", "10", "", "x", "-1", "1.5", "4 5"])
def test_parse_cell_rejects(text: str) -> None:
    with pytest.raises(InvalidMoveError):
        Board().parse_cell(text)


@pytest.mark.parametrize(
    "text",
    ["", "XXX", "XX/OO/..", "X.O/.X./..O/", "X.O/.X/..O", "X.Q/.../...", "....../.../...", 3],
)
def test_malformed_texts(text: object) -> None:
    with pytest.raises(InvalidBoardError) as info:
        Board.from_text(text)  # type: ignore[arg-type]
    assert not isinstance(info.value, InvalidPositionError)


@pytest.mark.parametrize(
    "text",
    [
        "O../.../...",  # O moved first
        "XX./.../...",  # X moved twice
        "XXX/OOO/...",  # both won
        "XXX/OO./O..",  # O moved after X won
        "OOO/XX./XX.",  # O won but X moved after
        "XXX/.O./O.O",  # O moved after X's line
        "XXXX/OOO./O.../....",  # 4x4: O moved after X's line
    ],
)
def test_unreachable_positions(text: str) -> None:
    with pytest.raises(InvalidPositionError):
        Board.from_text(text)


def test_two_lines_need_a_shared_last_cell() -> None:
    # X has two rows that share no cell: no single last move made both.
    with pytest.raises(InvalidPositionError):
        Board.from_text("XXX/OO./XXX/OO./O..", k=3)
    # Two lines through one cell are fine: the last move closed both.
    board = Board.from_text("XXX/OXO/OOX")
    assert board.winner is Mark.X


def test_bad_k_is_an_invalid_board() -> None:
    with pytest.raises(InvalidBoardError):
        Board.from_text(".../.../...", k=4)
    with pytest.raises(InvalidBoardError):
        Board(3, 3, 2)
    with pytest.raises(InvalidBoardError):
        Board(6, 3, 3)


def test_errors_are_value_errors() -> None:
    for error in (InvalidMoveError, IllegalMoveError, InvalidBoardError, InvalidPositionError):
        assert issubclass(error, EngineError)
        assert issubclass(error, ValueError)


# -- known figures ---------------------------------------------------------------------


def _reachable(board: Board) -> set[Board]:
    seen = {board}
    frontier = [board]
    while frontier:
        nxt = []
        for position in frontier:
            for cell in position.legal_moves():
                child = position.play(cell)
                if child not in seen:
                    seen.add(child)
                    nxt.append(child)
        frontier = nxt
    return seen


def test_3x3_reachable_positions() -> None:
    positions = _reachable(Board())
    assert len(positions) == 5478
    assert sum(p.is_over for p in positions) == 958
    canonical = set()
    for position in positions:
        images = (position.transformed(perm) for perm in position.geometry.symmetries)
        canonical.add(min((image.x_bits, image.o_bits) for image in images))
    assert len(canonical) == 765


def test_3x3_game_counts() -> None:
    @functools.cache
    def count(x: int, o: int) -> tuple[int, int, int]:
        board = Board.from_text(_text(x, o))
        outcome = board.outcome()
        if outcome is not None:
            if outcome.winner is Mark.X:
                return (1, 0, 0)
            if outcome.winner is Mark.O:
                return (0, 1, 0)
            return (0, 0, 1)
        totals = [0, 0, 0]
        for cell in board.legal_moves():
            child = board.play(cell)
            for i, n in enumerate(count(child.x_bits, child.o_bits)):
                totals[i] += n
        return (totals[0], totals[1], totals[2])

    x_wins, o_wins, draws = count(0, 0)
    assert (x_wins, o_wins, draws) == (131_184, 77_904, 46_080)
    assert x_wins + o_wins + draws == 255_168


def _text(x: int, o: int) -> str:
    chars = ["X" if x >> c & 1 else "O" if o >> c & 1 else "." for c in range(9)]
    return "/".join("".join(chars[r * 3 : r * 3 + 3]) for r in range(3))


# -- properties ------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(games())
def test_text_round_trip(board: Board) -> None:
    again = Board.from_text(board.text, k=board.k)
    assert again == board
    assert hash(again) == hash(board)
    assert again.outcome() == board.outcome()
    assert again.turn is board.turn
    assert again.legal_moves() == board.legal_moves()


@settings(max_examples=200, deadline=None)
@given(live_games(), st.data())
def test_play_undo_round_trip(board: Board, data: st.DataObject) -> None:
    cell = data.draw(st.sampled_from(board.legal_moves()))
    after = board.play(cell)
    assert after.cell(cell) is board.turn
    assert after.ply == board.ply + 1
    assert after.moves == (*board.moves, cell)
    back = after.undo()
    assert back == board
    assert back.moves == board.moves
    assert back.outcome() is None
    assert back.turn is board.turn


@settings(max_examples=200, deadline=None)
@given(games())
def test_game_invariants(board: Board) -> None:
    assert board.ply == len(board.moves)
    nx, no = board.x_bits.bit_count(), board.o_bits.bit_count()
    assert nx - no in (0, 1)
    assert board.turn is (Mark.X if nx == no else Mark.O)
    assert not board.x_bits & board.o_bits
    outcome = board.outcome()
    if outcome is None:
        assert board.legal_moves() == board.empty_cells()
        assert board.legal_moves()
    else:
        assert board.legal_moves() == ()
        if outcome.winner is not None:
            assert outcome.line in board.geometry.lines
            assert all(board.cell(c) is outcome.winner for c in outcome.line)
            # The last move made the line.
            assert board.moves[-1] in outcome.line
        else:
            assert not board.empty_cells()


@settings(max_examples=100, deadline=None)
@given(games())
def test_symmetries_preserve_the_result(board: Board) -> None:
    for perm in board.geometry.symmetries:
        image = board.transformed(perm)
        assert image.ply == board.ply
        assert image.winner == board.winner
        assert image.is_over == board.is_over
        assert Board.from_text(image.text, k=board.k) == image


@settings(max_examples=100, deadline=None)
@given(games())
def test_pickle_round_trip(board: Board) -> None:
    again = pickle.loads(pickle.dumps(board))
    assert again == board
    assert again.moves == board.moves
    assert again.outcome() == board.outcome()


@settings(max_examples=200, deadline=None)
@given(games(), st.integers(-50, 50))
def test_bad_moves_raise_the_right_error(board: Board, cell: int) -> None:
    if not 0 <= cell < board.size:
        with pytest.raises(InvalidMoveError):
            board.play(cell)
    elif board.is_over or board.cell(cell) is not None:
        with pytest.raises(IllegalMoveError):
            board.play(cell)
    else:
        assert board.play(cell).cell(cell) is board.turn


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_parse_cell_accepts_only_numbers_in_range(text: str) -> None:
    board = Board()
    try:
        cell = board.parse_cell(text)
    except InvalidMoveError:
        return
    assert 0 <= cell < 9
    assert int(text.strip()) == cell + 1


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="XO.xo/ q", max_size=40))
def test_from_text_never_raises_anything_else(text: str) -> None:
    try:
        board = Board.from_text(text)
    except InvalidBoardError:
        return
    assert Board.from_text(board.text, k=board.k) == board


@settings(max_examples=200, deadline=None)
@given(games())
def test_doctored_texts_are_invalid_positions(board: Board) -> None:
    # Give O one more mark than X: never reachable.
    text = board.text
    extra = text.count("X") - text.count("O") + 1
    chars = list(text)
    for i, char in enumerate(chars):
        if extra == 0:
            break
        if char == ".":
            chars[i] = "O"
            extra -= 1
    if extra:
        return
    with pytest.raises(InvalidPositionError):
        Board.from_text("".join(chars), k=board.k)


def test_from_bits_is_from_text_by_bits() -> None:
    board = Board.from_text("X.O./.X../..../...O", k=3)
    again = Board.from_bits(board.x_bits, board.o_bits, 4, 4, 3)
    assert again == board and again.turn is Mark.X and again.moves == ()
    assert Board.from_bits(0b111, 0b11000, 3, 3, 3).winner is Mark.X


@pytest.mark.parametrize(
    ("x", "o"),
    [(1, 1), (1 << 9, 0), (0, 1), (0b11, 0)],  # shared cell, off the board, O first, X twice
)
def test_from_bits_rejects_what_no_game_reaches(x: int, o: int) -> None:
    with pytest.raises(InvalidPositionError):
        Board.from_bits(x, o)
