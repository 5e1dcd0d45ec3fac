"""``bot.ui.gate.Pace``: one action per key per interval (slowmode, public answers)."""

from __future__ import annotations

from bot.ui.gate import Pace


def test_a_key_is_held_for_its_interval_and_others_are_free() -> None:
    now = [1000.0]
    pace = Pace(lambda: now[0])
    assert pace.take(("guild", 1), 30) is None
    assert pace.take(("guild", 1), 30) == 1030.0  # held: when it frees
    assert pace.take(("guild", 2), 30) is None  # another member
    now[0] += 30
    assert pace.take(("guild", 1), 30) is None  # free again, held anew
    assert pace.take(("guild", 1), 30) == 1060.0


def test_no_interval_holds_nothing_and_a_key_given_back_is_free() -> None:
    pace = Pace(lambda: 0.0)
    assert pace.take("k", 0) is None and pace.take("k", 0) is None  # no slowmode
    assert pace.take("k", 60) is None and pace.take("k", 60) == 60.0
    pace.give_back("k")  # what it was taken for did not happen
    assert pace.take("k", 60) is None
