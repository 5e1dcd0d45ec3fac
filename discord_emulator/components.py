"""Message components: their types, Discord's validation rules, and id assignment.

Classic messages hold at most 5 action rows of at most 5 buttons (or one select menu).
Messages flagged IS_COMPONENTS_V2 hold a layout of up to 40 components counted at every depth
(action rows, buttons, sections, text displays, media galleries, separators, containers...).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from enum import IntEnum
from typing import Any

from .errors import FormErrors, Path

__all__ = ["ButtonStyle", "ComponentType", "assign_ids", "validate_components", "walk"]


class ComponentType(IntEnum):
    ACTION_ROW = 1
    BUTTON = 2
    STRING_SELECT = 3
    TEXT_INPUT = 4
    USER_SELECT = 5
    ROLE_SELECT = 6
    MENTIONABLE_SELECT = 7
    CHANNEL_SELECT = 8
    SECTION = 9
    TEXT_DISPLAY = 10
    THUMBNAIL = 11
    MEDIA_GALLERY = 12
    FILE = 13
    SEPARATOR = 14
    CONTAINER = 17


class ButtonStyle(IntEnum):
    PRIMARY = 1
    SECONDARY = 2
    SUCCESS = 3
    DANGER = 4
    LINK = 5
    PREMIUM = 6


SELECTS = frozenset({3, 5, 6, 7, 8})
V2_TOP_LEVEL = frozenset({1, 9, 10, 12, 13, 14, 17})
CONTAINER_CHILDREN = frozenset({1, 9, 10, 12, 13, 14})
MAX_ACTION_ROWS = 5
MAX_ROW_WIDTH = 5
MAX_V2_COMPONENTS = 40
MAX_V2_TEXT = 4000
MAX_CUSTOM_ID = 100
MAX_BUTTON_LABEL = 80


def walk(components: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every component depth-first in document order, a section's accessory after its texts."""
    for component in components:
        if not isinstance(component, dict):
            continue
        yield component
        children = component.get("components")
        if isinstance(children, list):
            yield from walk(children)
        accessory = component.get("accessory")
        if isinstance(accessory, dict):
            yield accessory


def assign_ids(components: list[dict[str, Any]]) -> None:
    """Give every component without an ``id`` the next free number, as Discord does."""
    used = {c["id"] for c in walk(components) if isinstance(c.get("id"), int)}
    counter = 0
    for component in walk(components):
        if isinstance(component.get("id"), int):
            continue
        counter += 1
        while counter in used:
            counter += 1
        component["id"] = counter


def validate_components(
    components: Any, *, v2: bool, errors: FormErrors, path: Path = ("components",)
) -> None:
    """Record every rule ``components`` breaks into ``errors``."""
    _Validator(errors, v2).check(components, path)


_CHECKS = {
    ComponentType.ACTION_ROW: "action_row",
    ComponentType.BUTTON: "button",
    ComponentType.SECTION: "section",
    ComponentType.TEXT_DISPLAY: "text_display",
    ComponentType.THUMBNAIL: "media_item",
    ComponentType.MEDIA_GALLERY: "media_gallery",
    ComponentType.FILE: "file",
    ComponentType.SEPARATOR: "separator",
    ComponentType.CONTAINER: "container",
}
"""The check for each component type (any other is a select menu); built once, as are
the two sets below: the load benchmark validates hundreds of payloads a second."""
_IN_A_ROW = frozenset({ComponentType.BUTTON, *SELECTS})
_BUTTON_STYLES = frozenset(ButtonStyle)


def _valid_emoji(emoji: Any) -> bool:
    """Whether a component's partial emoji (``{"id", "name", "animated"}``) is one Discord
    takes: a custom emoji by its snowflake ``id``, or a Unicode emoji by its characters in
    ``name``. Discord checks the name against its emoji list; this approximates that list:
    at least one character beyond ASCII, no ASCII letter (``"X"`` or ``":x:"`` is text,
    not an emoji), no space or control, and short (a flag or a family is a few characters).
    """
    if not isinstance(emoji, dict):
        return False
    if emoji.get("id") is not None:
        return str(emoji["id"]).isdigit()
    name = emoji.get("name")
    if not isinstance(name, str) or not 0 < len(name) <= _MAX_EMOJI_CHARACTERS:
        return False
    if any(c.isascii() and c.isalpha() for c in name) or all(c.isascii() for c in name):
        return False
    return not any(unicodedata.category(c)[0] in "ZC" and c not in _EMOJI_JOINERS for c in name)


_MAX_EMOJI_CHARACTERS = 16
_EMOJI_JOINERS = frozenset("\u200d\ufe0f") | {chr(c) for c in range(0xE0020, 0xE0080)}
"""Format characters inside emoji: the zero-width joiner (families, professions), the
emoji variation selector, and the tags of subdivision flags."""


class _Validator:
    def __init__(self, errors: FormErrors, v2: bool) -> None:
        self.errors = errors
        self.v2 = v2
        self.total = 0
        self.text_length = 0
        self.custom_ids: set[str] = set()
        self.ids: set[int] = set()

    def check(self, components: Any, path: Path) -> None:
        if not isinstance(components, list):
            self.errors.add(path, "BASE_TYPE_ARRAY", "Must be an array.")
            return
        if self.v2:
            for i, component in enumerate(components):
                self.component(component, (*path, i), V2_TOP_LEVEL)
            if self.total > MAX_V2_COMPONENTS:
                self.errors.add(
                    path,
                    "COMPONENT_MAX_TOTAL_COMPONENTS_EXCEEDED",
                    f"Must be {MAX_V2_COMPONENTS} or fewer in total (found {self.total}).",
                )
            if self.text_length > MAX_V2_TEXT:
                self.errors.add(
                    path,
                    "COMPONENT_MAX_TEXT_LENGTH_EXCEEDED",
                    f"Text displays must total {MAX_V2_TEXT} or fewer characters.",
                )
            return
        if len(components) > MAX_ACTION_ROWS:
            self.errors.add(
                path, "BASE_TYPE_MAX_LENGTH", f"Must be {MAX_ACTION_ROWS} or fewer in length."
            )
        for i, component in enumerate(components):
            self.component(component, (*path, i), frozenset({ComponentType.ACTION_ROW}))

    def component(self, component: Any, path: Path, allowed: frozenset[int]) -> None:
        if not isinstance(component, dict):
            self.errors.add(
                path, "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType"
            )
            return
        self.total += 1
        kind = component.get("type")
        if kind not in allowed:
            choices = ", ".join(str(c) for c in sorted(allowed))
            self.errors.add(
                (*path, "type"),
                "UNION_TYPE_CHOICES",
                f'Value of field "type" must be one of ({choices}).',
            )
            return
        if "id" in component:
            self.unique_id(component["id"], (*path, "id"))
        handler = getattr(self, _CHECKS.get(kind, "select"))
        handler(component, path)

    def unique_id(self, value: Any, path: Path) -> None:
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**31:
            self.errors.add(path, "NUMBER_TYPE_COERCE", f"Value {value!r} is not int32.")
        elif value in self.ids:
            self.errors.add(path, "COMPONENT_ID_DUPLICATED", "Component id cannot be duplicated")
        else:
            self.ids.add(value)

    def custom_id(self, component: dict[str, Any], path: Path, *, required: bool) -> None:
        value = component.get("custom_id")
        path = (*path, "custom_id")
        if value is None:
            if required:
                self.errors.add(path, "BASE_TYPE_REQUIRED", "This field is required")
            return
        if not isinstance(value, str) or not value:
            self.errors.add(path, "BASE_TYPE_MIN_LENGTH", "Must be 1 or more in length.")
        elif len(value) > MAX_CUSTOM_ID:
            self.errors.add(
                path, "BASE_TYPE_MAX_LENGTH", f"Must be {MAX_CUSTOM_ID} or fewer in length."
            )
        elif value in self.custom_ids:
            self.errors.add(
                path, "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated"
            )
        else:
            self.custom_ids.add(value)

    def children(self, component: dict[str, Any], path: Path, low: int, high: int) -> list[Any]:
        children = component.get("components")
        path = (*path, "components")
        if not isinstance(children, list):
            self.errors.add(path, "BASE_TYPE_REQUIRED", "This field is required")
            return []
        if len(children) < low:
            self.errors.add(path, "BASE_TYPE_MIN_LENGTH", f"Must be {low} or more in length.")
        if len(children) > high:
            self.errors.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {high} or fewer in length.")
        return children

    def action_row(self, component: dict[str, Any], path: Path) -> None:
        children = self.children(component, path, 1, MAX_ROW_WIDTH)
        kinds = [c.get("type") for c in children if isinstance(c, dict)]
        if any(kind in SELECTS for kind in kinds) and len(children) > 1:
            self.errors.add(
                (*path, "components"),
                "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                "The specified component exceeds the maximum width",
            )
        for i, child in enumerate(children):
            self.component(child, (*path, "components", i), _IN_A_ROW)

    def button(self, component: dict[str, Any], path: Path) -> None:
        style = component.get("style")
        if style not in _BUTTON_STYLES:
            self.errors.add(
                (*path, "style"), "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3, 4, 5, 6}."
            )
            return
        label = component.get("label")
        if label is not None and (not isinstance(label, str) or len(label) > MAX_BUTTON_LABEL):
            self.errors.add(
                (*path, "label"),
                "BASE_TYPE_MAX_LENGTH",
                f"Must be {MAX_BUTTON_LABEL} or fewer in length.",
            )
        if style == ButtonStyle.LINK:
            if not component.get("url"):
                self.errors.add((*path, "url"), "BASE_TYPE_REQUIRED", "This field is required")
            if component.get("custom_id") is not None:
                self.errors.add(
                    (*path, "custom_id"),
                    "BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED",
                    "A link button cannot have a custom id",
                )
        elif style == ButtonStyle.PREMIUM:
            if not component.get("sku_id"):
                self.errors.add((*path, "sku_id"), "BASE_TYPE_REQUIRED", "This field is required")
        else:
            if component.get("url") is not None:
                self.errors.add(
                    (*path, "url"),
                    "BUTTON_COMPONENT_URL_NOT_ALLOWED",
                    "Only link buttons can have a url",
                )
            self.custom_id(component, path, required=True)
        emoji = component.get("emoji")
        if emoji is not None and not _valid_emoji(emoji):
            self.errors.add(
                (*path, "emoji", "name"), "BUTTON_COMPONENT_INVALID_EMOJI", "Invalid emoji"
            )
        if style != ButtonStyle.PREMIUM and not label and not emoji:
            self.errors.add(
                path,
                "BUTTON_COMPONENT_LABEL_OR_EMOJI_REQUIRED",
                "A button needs a label or an emoji",
            )

    def select(self, component: dict[str, Any], path: Path) -> None:
        self.custom_id(component, path, required=True)
        if component.get("type") == ComponentType.STRING_SELECT:
            options = component.get("options")
            if not isinstance(options, list) or not 1 <= len(options) <= 25:
                self.errors.add(
                    (*path, "options"),
                    "BASE_TYPE_BAD_LENGTH",
                    "Must be between 1 and 25 in length.",
                )

    def section(self, component: dict[str, Any], path: Path) -> None:
        for i, child in enumerate(self.children(component, path, 1, 3)):
            self.component(child, (*path, "components", i), frozenset({ComponentType.TEXT_DISPLAY}))
        accessory = component.get("accessory")
        if accessory is None:
            self.errors.add((*path, "accessory"), "BASE_TYPE_REQUIRED", "This field is required")
        else:
            self.component(
                accessory,
                (*path, "accessory"),
                frozenset({ComponentType.BUTTON, ComponentType.THUMBNAIL}),
            )

    def text_display(self, component: dict[str, Any], path: Path) -> None:
        content = component.get("content")
        if not isinstance(content, str) or not content:
            self.errors.add((*path, "content"), "BASE_TYPE_REQUIRED", "This field is required")
            return
        self.text_length += len(content)

    def media_item(self, component: dict[str, Any], path: Path) -> None:
        media = component.get("media")
        if not isinstance(media, dict) or not media.get("url"):
            self.errors.add((*path, "media"), "BASE_TYPE_REQUIRED", "This field is required")

    def media_gallery(self, component: dict[str, Any], path: Path) -> None:
        items = component.get("items")
        if not isinstance(items, list) or not 1 <= len(items) <= 10:
            self.errors.add(
                (*path, "items"), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 10 in length."
            )
            return
        for i, item in enumerate(items):
            if isinstance(item, dict):
                self.media_item(item, (*path, "items", i))
            else:
                self.errors.add(
                    (*path, "items", i),
                    "MODEL_TYPE_CONVERT",
                    "Only dictionaries may be used in a ModelType",
                )

    def file(self, component: dict[str, Any], path: Path) -> None:
        media = component.get("file")
        if not isinstance(media, dict) or not str(media.get("url", "")).startswith("attachment://"):
            self.errors.add(
                (*path, "file"), "BASE_TYPE_REQUIRED", "An attachment:// url is required"
            )

    def separator(self, component: dict[str, Any], path: Path) -> None:
        if component.get("spacing", 1) not in (1, 2):
            self.errors.add((*path, "spacing"), "BASE_TYPE_CHOICES", "Value must be one of {1, 2}.")

    def container(self, component: dict[str, Any], path: Path) -> None:
        for i, child in enumerate(self.children(component, path, 1, MAX_V2_COMPONENTS)):
            self.component(child, (*path, "components", i), CONTAINER_CHILDREN)
