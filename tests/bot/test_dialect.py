"""The store's placeholders as PostgreSQL takes them (bot/db/dialect.py)."""

from __future__ import annotations

import pytest

from bot.db.dialect import parameters, translate


def test_question_marks_are_numbered_in_order() -> None:
    text, names = translate("UPDATE t SET a = ? WHERE id = ? AND s = 'a?b'")
    assert (text, names) == ("UPDATE t SET a = $1 WHERE id = $2 AND s = 'a?b'", None)
    assert parameters(names, [5, 6]) == (5, 6)


def test_each_name_is_one_number_however_often_it_stands() -> None:
    sql = "SELECT :shard_10, :shard_1, :now, :shard_10 WHERE x = 'a:b' AND y::text = ''"
    text, names = translate(sql)
    assert text == "SELECT $1, $2, $3, $1 WHERE x = 'a:b' AND y::text = ''"
    assert names == ("shard_10", "shard_1", "now")
    values = {"now": 1.5, "shard_1": 1, "shard_10": 10}
    assert parameters(names, values) == (10, 1, 1.5)


def test_mixed_or_mismatched_placeholders_are_refused() -> None:
    with pytest.raises(ValueError, match="mixes"):
        translate("SELECT ? WHERE a = :a")
    with pytest.raises(TypeError):
        parameters(None, {"a": 1})
    with pytest.raises(TypeError):
        parameters(("a",), [1])
