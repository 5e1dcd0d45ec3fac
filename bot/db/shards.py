"""The condition that keeps once-only work to a process's own shards' servers.

``owned(shards, column)`` is appended to a statement's WHERE: Discord's routing formula,
``((guild_id >> 22) % count) IN (ids)``, with the count and the ids bound as parameters
(``owned_values``), so the text depends only on how many ids there are. ``>>`` and ``%``
on integers mean the same in SQLite and PostgreSQL (bigint), and there is no cast. With
``shards`` None (the process runs every shard) the condition is empty and the statement
is the one it always was, with the same query plan.

A statement that binds by name (``:now``) takes ``owned_named`` and ``owned_names``.
"""

from __future__ import annotations

from bot.models import Shards

__all__ = ["owned", "owned_named", "owned_names", "owned_values"]


def owned(shards: Shards | None, column: str = "guild_id") -> str:
    """`` AND ((column >> 22) % ?) IN (?, ...)``, or "" for every server."""
    if shards is None:
        return ""
    marks = ", ".join("?" * len(shards.ids))
    return f" AND (({column} >> 22) % ?) IN ({marks})"


def owned_values(shards: Shards | None) -> tuple[int, ...]:
    """The parameters of ``owned(shards)``, in its order: the count, then the ids."""
    return () if shards is None else (shards.count, *shards.ids)


def owned_named(shards: Shards | None, column: str = "guild_id") -> str:
    """``owned`` with named parameters (``:shard_count``, ``:shard_a``, ``:shard_b``...)."""
    if shards is None:
        return ""
    names = ", ".join(f":{_name(i)}" for i in range(len(shards.ids)))
    return f" AND (({column} >> 22) % :shard_count) IN ({names})"


def owned_names(shards: Shards | None) -> dict[str, int]:
    """The parameters of ``owned_named(shards)``."""
    if shards is None:
        return {}
    return {"shard_count": shards.count} | {_name(i): id_ for i, id_ in enumerate(shards.ids)}


def _name(index: int) -> str:
    """``shard_a`` ... ``shard_z``, ``shard_aa``...: letters only, so that no name ends in
    digits that a translation to PostgreSQL's ``$n`` could read as text after it."""
    letters = ""
    while True:
        index, rest = divmod(index, 26)
        letters = chr(ord("a") + rest) + letters
        if not index:
            return f"shard_{letters}"
        index -= 1
