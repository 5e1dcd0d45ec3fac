"""The value of each variant's empty board, derived against the solver's own answer."""

from __future__ import annotations

import pytest

from engine import MAX_SIDE, MIN_K, MIN_SIDE, Board, InvalidBoardError
from engine.solver import DRAW, WIN, result_of, solve
from engine.values import is_fair, opening_value

SHAPES = [
    (w, h, k)
    for w in range(MIN_SIDE, MAX_SIDE + 1)
    for h in range(MIN_SIDE, MAX_SIDE + 1)
    for k in range(MIN_K, max(w, h) + 1)
]


def test_every_supported_variant_has_a_value() -> None:
    values = {shape: opening_value(*shape) for shape in SHAPES}
    assert set(values.values()) == {WIN, DRAW}
    # Three in a row is a draw only on 3 x 3; every longer line is a draw up to 5 x 5.
    assert [s for s, v in values.items() if v == WIN] == [s for s in SHAPES if s[2] == 3][1:]
    assert is_fair(3, 3, 3) and is_fair(4, 4, 4) and is_fair(5, 5, 4) and is_fair(5, 5, 5)
    assert not is_fair(4, 4, 3) and not is_fair(5, 5, 3) and not is_fair(3, 4, 3)


@pytest.mark.parametrize("shape", [s for s in SHAPES if s[0] * s[1] <= 16])
def test_derived_values_agree_with_a_search(shape: tuple[int, int, int]) -> None:
    """Boards the solver decides without a node limit: the derivation must agree."""
    assert opening_value(*shape) == result_of(solve(Board(*shape)))


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(5, 4, 4), (4, 5, 4), (5, 4, 5)])
def test_derived_values_agree_on_twenty_cells(shape: tuple[int, int, int]) -> None:
    assert opening_value(*shape) == result_of(solve(Board(*shape), max_nodes=5_000_000))


def test_an_unplayable_shape_is_refused() -> None:
    with pytest.raises(InvalidBoardError):
        opening_value(3, 3, 4)
