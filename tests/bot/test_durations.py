"""Durations as moderators and hosts type them, and as the settings show them."""

from __future__ import annotations

import pytest

from bot.durations import parse_duration, split_duration
from bot.i18n import Duration, translator


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("5m", 300),
        ("1h30m", 5_400),
        ("1h 30m", 5_400),
        ("1d", 86_400),
        ("1D2H", 93_600),
        ("2h3s", 7_203),
        ("90", 90),
        ("30.5", 30.5),
        (" 0 ", 0),
    ],
)
def test_a_typed_duration_is_read(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "soon", "5 minutes", "1.5h", "30m1h", "1h1h", "h", "5m!", "-5m", "nan", "inf"]
)
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


def test_a_duration_is_shown_in_the_readers_units() -> None:
    assert split_duration(5_400) == [("h", 1), ("m", 30)]
    assert split_duration(0) == [("s", 0)]
    en, de, ja, ru = (translator(code) for code in ("en-US", "de", "ja", "ru"))
    assert en(Duration(5_400)) == "1 h 30 min"
    assert en(Duration(90_061)) == "1 d 1 h 1 min 1 s"
    assert de(Duration(86_400)) == "1 T"
    assert ja(Duration(5_400)) == "1時間 30分"
    assert ru(Duration(45)) == "45 с"
