"""Elo arithmetic: expected score, the K switch after 30 games, provisional under 10."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.games.ratings import START_RATING, Rating, expected_score, is_provisional, k_factor, rate


def test_expected_score_known_values() -> None:
    assert expected_score(1500, 1500) == 0.5
    # 400 points apart: 10:1 odds.
    assert expected_score(1900, 1500) == pytest.approx(10 / 11)
    assert expected_score(1500, 1900) == pytest.approx(1 / 11)
    assert expected_score(1600, 1400) == pytest.approx(0.7597, abs=1e-4)


@given(st.floats(0, 3000), st.floats(0, 3000))
def test_expected_scores_of_both_sides_add_up_to_one(a: float, b: float) -> None:
    assert expected_score(a, b) + expected_score(b, a) == pytest.approx(1.0)


def test_k_factor_switches_after_thirty_games() -> None:
    assert k_factor(0) == 40
    assert k_factor(29) == 40  # the 30th game is still a newcomer's
    assert k_factor(30) == 20
    assert k_factor(500) == 20


def test_provisional_under_ten_games() -> None:
    assert is_provisional(0)
    assert is_provisional(9)
    assert not is_provisional(10)
    assert Rating(START_RATING, 9).provisional
    assert not Rating(START_RATING, 10).provisional


def test_first_game_between_newcomers() -> None:
    winner, loser = rate(Rating(), Rating(), 1.0)
    assert (winner.value, winner.games) == (1520.0, 1)
    assert (loser.value, loser.games) == (1480.0, 1)
    a, b = rate(Rating(), Rating(), 0.5)
    assert (a.value, b.value) == (1500.0, 1500.0)


def test_each_side_uses_its_own_k() -> None:
    veteran, newcomer = rate(Rating(1500, 30), Rating(1500, 0), 0.0)
    assert veteran.value == pytest.approx(1490.0)  # K = 20
    assert newcomer.value == pytest.approx(1520.0)  # K = 40


def test_upset_moves_more_than_expected_win() -> None:
    favourite_win, _ = rate(Rating(1700, 50), Rating(1300, 50), 1.0)
    favourite_loss, _ = rate(Rating(1700, 50), Rating(1300, 50), 0.0)
    assert favourite_win.value - 1700 == pytest.approx(20 * (1 / 11))
    assert 1700 - favourite_loss.value == pytest.approx(20 * (10 / 11))


@given(st.floats(800, 2500), st.floats(800, 2500), st.sampled_from([0.0, 0.5, 1.0]))
def test_equal_k_conserves_rating_points(a: float, b: float, score: float) -> None:
    new_a, new_b = rate(Rating(a, 40), Rating(b, 40), score)
    assert new_a.value + new_b.value == pytest.approx(a + b)


def test_rejects_impossible_scores() -> None:
    with pytest.raises(ValueError):
        rate(Rating(), Rating(), 0.7)
