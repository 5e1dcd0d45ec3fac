"""The published figures of tic-tac-toe and its m,n,k relatives.

Each figure is computed twice: by a deliberately plain brute force written here (its
own lines, its own symmetries, no pruning beyond "stop at a win") and, where it applies,
by the engine's solver.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest

from engine.board import Board
from engine.solver import solve

# -- a plain brute force ----------------------------------------------------------------


def lines_of(width: int, height: int, k: int) -> list[int]:
    """Bit masks of every k-in-a-row on the board, written independently of the engine."""
    masks = []
    for row in range(height):
        for col in range(width):
            for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(row + d_row * i, col + d_col * i) for i in range(k)]
                if all(0 <= r < height and 0 <= c < width for r, c in cells):
                    masks.append(sum(1 << (r * width + c) for r, c in cells))
    return masks


def has_line(bits: int, masks: list[int]) -> bool:
    return any(bits & mask == mask for mask in masks)


def brute_value(width: int, height: int, k: int) -> Callable[[int, int], int]:
    """Win/draw/loss (+1/0/-1) for the player to move, memoised on (x, o)."""
    size = width * height
    masks = lines_of(width, height, k)
    centre = ((height - 1) / 2, (width - 1) / 2)
    order = sorted(
        range(size), key=lambda c: abs(c // width - centre[0]) + abs(c % width - centre[1])
    )

    @functools.cache
    def value(x: int, o: int) -> int:
        x_to_move = (x | o).bit_count() % 2 == 0
        last = o if x_to_move else x
        if has_line(last, masks):
            return -1
        if (x | o).bit_count() == size:
            return 0
        best = -1
        for cell in order:
            bit = 1 << cell
            if (x | o) & bit:
                continue
            child = value(x | bit, o) if x_to_move else value(x, o | bit)
            best = max(best, -child)
            if best == 1:
                break
        return best

    return value


@functools.cache
def tree_3x3() -> dict[tuple[int, int], tuple[int, int, int, int]]:
    """For every reachable 3x3 position: (X wins, O wins, draws, tree nodes) below it."""
    masks = lines_of(3, 3, 3)
    table: dict[tuple[int, int], tuple[int, int, int, int]] = {}

    def walk(x: int, o: int) -> tuple[int, int, int, int]:
        if (x, o) in table:
            return table[(x, o)]
        marks = (x | o).bit_count()
        if has_line(x, masks):
            result = (1, 0, 0, 1)
        elif has_line(o, masks):
            result = (0, 1, 0, 1)
        elif marks == 9:
            result = (0, 0, 1, 1)
        else:
            x_wins = o_wins = draws = 0
            nodes = 1
            for cell in range(9):
                bit = 1 << cell
                if (x | o) & bit:
                    continue
                a, b, c, d = walk(x | bit, o) if marks % 2 == 0 else walk(x, o | bit)
                x_wins, o_wins, draws, nodes = x_wins + a, o_wins + b, draws + c, nodes + d
            result = (x_wins, o_wins, draws, nodes)
        table[(x, o)] = result
        return result

    walk(0, 0)
    return table


def square_images(x: int, o: int) -> set[tuple[int, int]]:
    """The position under the 8 symmetries of the 3x3 square."""

    def moved(bits: int, fn: Callable[[int, int], tuple[int, int]]) -> int:
        out = 0
        for cell in range(9):
            if bits >> cell & 1:
                r, c = fn(cell // 3, cell % 3)
                out |= 1 << (r * 3 + c)
        return out

    maps: list[Callable[[int, int], tuple[int, int]]] = [
        lambda r, c: (r, c),
        lambda r, c: (c, 2 - r),
        lambda r, c: (2 - r, 2 - c),
        lambda r, c: (2 - c, r),
        lambda r, c: (r, 2 - c),
        lambda r, c: (2 - r, c),
        lambda r, c: (c, r),
        lambda r, c: (2 - c, 2 - r),
    ]
    return {(moved(x, fn), moved(o, fn)) for fn in maps}


# -- 3x3 ----------------------------------------------------------------------------------


def test_3x3_has_255168_games() -> None:
    x_wins, o_wins, draws, _ = tree_3x3()[(0, 0)]
    assert x_wins + o_wins + draws == 255_168
    assert (x_wins, o_wins, draws) == (131_184, 77_904, 46_080)


def test_3x3_game_tree_has_549946_nodes() -> None:
    assert tree_3x3()[(0, 0)][3] == 549_946


def test_3x3_has_5478_positions_958_finished_765_up_to_symmetry() -> None:
    table = tree_3x3()
    finished = [pos for pos in table if _ended(*pos)]
    assert len(table) == 5_478
    assert len(finished) == 958
    classes = {min(square_images(x, o)) for x, o in table}
    assert len(classes) == 765


def _ended(x: int, o: int) -> bool:
    masks = lines_of(3, 3, 3)
    return has_line(x, masks) or has_line(o, masks) or (x | o).bit_count() == 9


def test_3x3_perfect_play_is_a_draw() -> None:
    assert brute_value(3, 3, 3)(0, 0) == 0
    assert solve(Board()) == 0


def test_solver_agrees_with_brute_force_on_every_3x3_position() -> None:
    value = brute_value(3, 3, 3)
    for x, o in tree_3x3():
        board = Board.from_text(_text(x, o, 3, 3))
        score = solve(board)
        assert (score > 0) - (score < 0) == value(x, o), board.text


def _text(x: int, o: int, width: int, height: int) -> str:
    cells = ["X" if x >> c & 1 else "O" if o >> c & 1 else "." for c in range(width * height)]
    return "/".join("".join(cells[r * width : (r + 1) * width]) for r in range(height))


# -- bigger boards ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "height", "k", "expected"),
    [
        (4, 4, 3, 1),  # first-player win
        (3, 4, 3, 1),
        (4, 3, 3, 1),
        (3, 4, 4, 0),
        (3, 5, 3, 1),
    ],
)
def test_small_shapes_agree_with_brute_force(
    width: int, height: int, k: int, expected: int
) -> None:
    assert brute_value(width, height, k)(0, 0) == expected
    score = solve(Board(width, height, k))
    assert (score > 0) - (score < 0) == expected


def test_4x4_k4_is_a_draw() -> None:
    assert solve(Board(4, 4, 4)) == 0


def test_5x5_k3_is_a_first_player_win() -> None:
    score = solve(Board(5, 5, 3))
    assert score > 0
    # X wins as soon as it can: with its third mark, the fifth of the game.
    assert score == 25 + 1 - 5


@pytest.mark.slow
def test_4x4_k4_is_a_draw_by_brute_force() -> None:
    assert brute_value(4, 4, 4)(0, 0) == 0


@pytest.mark.slow
def test_5x5_k3_is_a_first_player_win_by_brute_force() -> None:
    assert brute_value(5, 5, 3)(0, 0) == 1


@pytest.mark.slow
def test_4x4_k4_has_9722011_reachable_positions() -> None:
    """Breadth first, one ply at a time, so that only two plies are ever in memory."""
    masks = lines_of(4, 4, 4)
    level = {(0, 0)}
    total = 1
    for marks in range(16):
        following = set()
        for x, o in level:
            if has_line(x, masks) or has_line(o, masks):
                continue
            for cell in range(16):
                bit = 1 << cell
                if not (x | o) & bit:
                    following.add((x | bit, o) if marks % 2 == 0 else (x, o | bit))
        total += len(following)
        level = following
    assert total == 9_722_011


@pytest.mark.slow
@pytest.mark.parametrize("k", [4, 5])
def test_5x5_k4_and_k5_are_draws(k: int) -> None:
    """Exact solves from the empty 5x5 board, far too long for the default run: on the
    reference machine about 25 s (10 million nodes) for k=5 and 4 minutes (75 million
    nodes, the transposition table capped at its usual size) for k=4."""
    assert solve(Board(5, 5, k), max_nodes=10**9) == 0
