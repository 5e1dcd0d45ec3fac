"""The store's statements as PostgreSQL takes them: ``?`` and ``:name`` become ``$n``.

The store writes each statement once, in the placeholder styles SQLite takes. asyncpg takes
only numbered ones, positional. ``translate`` rewrites a text once (cached) and says how
to order a mapping's values; quoted literals and ``::`` are left alone, so a rule for the
shared SQL is: casts as ``CAST(x AS t)``, never a name right after ``::``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["parameters", "translate"]

_TOKENS = re.compile(r"'(?:[^']|'')*'|::|\?|:([A-Za-z_]\w*)")


@functools.lru_cache(maxsize=1024)
def translate(statement: str) -> tuple[str, tuple[str, ...] | None]:
    """(PostgreSQL text, the names in ``$n`` order, or None for positional ``?``)."""
    names: list[str] = []
    positional = 0

    def number(match: re.Match[str]) -> str:
        nonlocal positional
        token, name = match.group(0), match.group(1)
        if token == "?":
            positional += 1
            return f"${positional}"
        if name is None:  # a literal or a cast
            return token
        if name not in names:
            names.append(name)
        return f"${names.index(name) + 1}"

    text = _TOKENS.sub(number, statement)
    if positional and names:
        raise ValueError(f"a statement mixes ? and :name placeholders: {statement[:60]!r}")
    return text, tuple(names) if names else None


def parameters(names: tuple[str, ...] | None, values: Any) -> Sequence[Any]:
    """``values`` (a sequence, or a mapping for named placeholders) in ``$n`` order."""
    if names is None:
        if isinstance(values, Mapping):
            raise TypeError("named parameters given to a statement with ? placeholders")
        return tuple(values)
    if not isinstance(values, Mapping):
        raise TypeError("a statement with :name placeholders needs a mapping")
    return tuple(values[name] for name in names)
