"""How a message's components read to a user: buttons by row and column, and the text.

Tests pick a button as a person would (its row and column, its label, its place among all
buttons); :func:`flatten_text` gives what the message says, embeds and Text Displays included.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .components import ButtonStyle, ComponentType, walk

__all__ = ["Button", "button_grid", "buttons", "find_button", "flatten_text"]


@dataclass(frozen=True)
class Button:
    """One button of a message as a test sees it.

    ``row``/``col`` locate it in :func:`button_grid`; ``index`` is its position among all
    buttons of the message in document order.
    """

    row: int
    col: int
    index: int
    label: str | None
    style: int
    disabled: bool
    custom_id: str | None
    url: str | None
    emoji: dict[str, Any] | None
    component_id: int | None
    raw: dict[str, Any] = field(repr=False)

    @property
    def clickable(self) -> bool:
        """Whether a click sends an interaction (link and premium buttons do not)."""
        return (
            not self.disabled
            and self.custom_id is not None
            and self.style not in (ButtonStyle.LINK, ButtonStyle.PREMIUM)
        )


def _rows(components: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for component in components:
        if not isinstance(component, dict):
            continue
        kind = component.get("type")
        if kind == ComponentType.ACTION_ROW:
            yield [c for c in component.get("components", []) if isinstance(c, dict)]
        elif kind == ComponentType.CONTAINER:
            yield from _rows(component.get("components", []))
        elif kind == ComponentType.SECTION:
            accessory = component.get("accessory")
            if isinstance(accessory, dict) and accessory.get("type") == ComponentType.BUTTON:
                yield [accessory]


def _button_places(
    components: list[dict[str, Any]],
) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    """Each button's (row, col, index, raw payload); rows without buttons do not count."""
    row_no = index = 0
    for row in _rows(components):
        col = 0
        for raw in row:
            if raw.get("type") != ComponentType.BUTTON:
                continue
            yield row_no, col, index, raw
            col += 1
            index += 1
        if col:
            row_no += 1


def _button(row: int, col: int, index: int, raw: dict[str, Any]) -> Button:
    return Button(
        row=row,
        col=col,
        index=index,
        label=raw.get("label"),
        style=int(raw.get("style", 0)),
        disabled=bool(raw.get("disabled", False)),
        custom_id=raw.get("custom_id"),
        url=raw.get("url"),
        emoji=raw.get("emoji"),
        component_id=raw.get("id"),
        raw=raw,
    )


def button_grid(components: list[dict[str, Any]]) -> list[list[Button]]:
    """Buttons by row; rows without buttons (a select menu) are left out."""
    grid: list[list[Button]] = []
    for row, col, index, raw in _button_places(components):
        if col == 0:
            grid.append([])
        grid[row].append(_button(row, col, index, raw))
    return grid


def find_button(components: list[dict[str, Any]], custom_id: str) -> Button | None:
    """The first button with ``custom_id``, building no other (the load benchmark clicks
    hundreds of times a second)."""
    for row, col, index, raw in _button_places(components):
        if raw.get("custom_id") == custom_id:
            return _button(row, col, index, raw)
    return None


def buttons(components: list[dict[str, Any]]) -> list[Button]:
    return [cell for row in button_grid(components) for cell in row]


def flatten_text(
    content: str, embeds: list[dict[str, Any]], components: list[dict[str, Any]]
) -> str:
    parts: list[str] = [content] if content else []
    for embed in embeds:
        author = embed.get("author") or {}
        footer = embed.get("footer") or {}
        if author.get("name"):
            parts.append(str(author["name"]))
        parts.extend(str(embed[key]) for key in ("title", "description") if embed.get(key))
        for item in embed.get("fields") or []:
            parts.extend(str(item.get(key, "")) for key in ("name", "value"))
        if footer.get("text"):
            parts.append(str(footer["text"]))
    parts.extend(
        str(component.get("content", ""))
        for component in walk(components)
        if component.get("type") == ComponentType.TEXT_DISPLAY
    )
    return "\n".join(parts)
