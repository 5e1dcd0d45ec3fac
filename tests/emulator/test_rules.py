"""Discord's rules checked directly on the emulator's building blocks, without a bot."""

from __future__ import annotations

import pytest

from discord_emulator import APIError, Emulator, MessageFlag
from discord_emulator.commands import CommandRegistry
from discord_emulator.messages import parse_message_payload


def error_codes(error: APIError) -> set[str]:
    found: set[str] = set()

    def walk(node: dict[str, object]) -> None:
        for key, value in node.items():
            if key == "_errors":
                found.update(entry["code"] for entry in value)  # type: ignore[attr-defined]
            elif isinstance(value, dict):
                walk(value)

    walk(error.errors or {})
    return found


def test_empty_and_oversized_messages() -> None:
    with pytest.raises(APIError) as empty:
        parse_message_payload({"content": ""})
    assert (empty.value.status, empty.value.code) == (400, 50006)
    with pytest.raises(APIError) as long:
        parse_message_payload({"content": "x" * 2001})
    assert error_codes(long.value) == {"BASE_TYPE_MAX_LENGTH"}
    with pytest.raises(APIError) as embeds:
        parse_message_payload({"embeds": [{"title": "t"}] * 11})
    assert "BASE_TYPE_MAX_LENGTH" in error_codes(embeds.value)


def test_allowed_mentions_parse_and_lists_are_exclusive() -> None:
    with pytest.raises(APIError) as caught:
        parse_message_payload(
            {"content": "hi", "allowed_mentions": {"parse": ["users"], "users": ["1"]}}
        )
    assert error_codes(caught.value) == {"MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE"}


def test_components_v2_flag_cannot_be_removed() -> None:
    emu = Emulator()
    channel = emu.add_text_channel(emu.add_guild("g"), "c")
    draft = parse_message_payload(
        {"flags": int(MessageFlag.IS_COMPONENTS_V2), "components": [{"type": 10, "content": "hi"}]}
    )
    message = emu.poster.post(channel, emu.bot, draft)
    assert message.components[0]["id"] == 1  # ids are assigned like Discord does
    with pytest.raises(APIError) as caught:
        parse_message_payload({"flags": 0, "content": "back to classic"}, base=message)
    assert "MESSAGE_CANNOT_REMOVE_COMPONENTS_V2_FLAG" in error_codes(caught.value)


def test_button_rules() -> None:
    link_with_id = {
        "type": 2,
        "style": 5,
        "label": "site",
        "url": "https://example.invalid",
        "custom_id": "x",
    }
    no_label = {"type": 2, "style": 1, "custom_id": "y"}
    with pytest.raises(APIError) as caught:
        parse_message_payload(
            {"content": "x", "components": [{"type": 1, "components": [link_with_id, no_label]}]}
        )
    assert error_codes(caught.value) == {
        "BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED",
        "BUTTON_COMPONENT_LABEL_OR_EMOJI_REQUIRED",
    }


def test_button_emoji_rules() -> None:
    """A button may be an emoji alone, as a board's cells are; text in ``name`` or a
    custom emoji without a snowflake id is refused as Discord refuses it."""

    def cell(custom_id: str, emoji: object) -> dict[str, object]:
        return {"type": 2, "style": 2, "custom_id": custom_id, "emoji": emoji}

    good = [
        cell(f"ok{i}", {"id": None, "name": name})
        for i, name in enumerate(["🇽", "🅾️", "▪️", "1️⃣", "👨\u200d👩\u200d👧"])
    ]
    good.append(cell("custom", {"id": "123456789012345678", "name": "tile", "animated": False}))
    parse_message_payload(
        {"content": "x", "components": [{"type": 1, "components": good[i : i + 5]} for i in (0, 5)]}
    )
    for emoji in ({"name": "X"}, {"name": ":x:"}, {"name": ""}, {"name": "\u200b"}, {"id": "x"}):
        with pytest.raises(APIError) as caught:
            parse_message_payload(
                {"content": "x", "components": [{"type": 1, "components": [cell("c", emoji)]}]}
            )
        assert error_codes(caught.value) == {"BUTTON_COMPONENT_INVALID_EMOJI"}, emoji
    with pytest.raises(APIError) as caught:
        parse_message_payload(
            {"content": "x", "components": [{"type": 1, "components": [cell("c", "🇽")]}]}
        )
    assert "BUTTON_COMPONENT_INVALID_EMOJI" in error_codes(caught.value)


def test_command_overwrite_validation_and_stable_ids() -> None:
    ids = iter(range(100, 200))
    registry = CommandRegistry(1, lambda: next(ids))
    with pytest.raises(APIError) as caught:
        registry.overwrite(
            None,
            [
                {
                    "name": "Play",
                    "description": "d",
                    "options": [
                        {"type": 3, "name": "a", "description": "d"},
                        {"type": 3, "name": "b", "description": "d", "required": True},
                    ],
                }
            ],
        )
    assert error_codes(caught.value) == {
        "APPLICATION_COMMAND_INVALID_NAME",
        "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
    }
    first = registry.overwrite(None, [{"name": "play", "description": "d"}])
    again = registry.overwrite(None, [{"name": "play", "description": "changed"}])
    assert first[0]["id"] == again[0]["id"] and again[0]["description"] == "changed"
    assert registry.overwrite(None, []) == [] and registry.find("play", None) is None


def test_command_localizations_follow_the_rules_of_what_they_localize() -> None:
    registry = CommandRegistry(1, iter(range(100, 200)).__next__)
    choice = {"name": "a", "value": "a", "name_localizations": {"de": "x" * 101}}
    option = {
        "type": 3,
        "name": "size",
        "description": "d",
        "name_localizations": {"de": "Größe", "ja": "サイズ"},
        "choices": [choice],
    }
    command = {
        "name": "play",
        "description": "d",
        "name_localizations": {"de": "spiel en", "hi": "खेल"},
        "description_localizations": {"de": ""},
        "options": [option],
    }
    with pytest.raises(APIError) as caught:
        registry.overwrite(None, [command])
    assert error_codes(caught.value) == {
        "APPLICATION_COMMAND_INVALID_NAME",  # "spiel en" (a space), "Größe" (upper case)
        "BASE_TYPE_BAD_LENGTH",  # the empty description, the 101-character choice
    }
    errors = caught.value.errors or {}
    assert set(errors["0"]["name_localizations"]) == {"de"}  # Hindi's vowel sign is fine
    assert set(errors["0"]["options"]["0"]["name_localizations"]) == {"de"}
    option["name_localizations"]["de"] = "größe"
    choice["name_localizations"]["de"] = "ein"
    command["name_localizations"]["de"] = "spielen"
    command["description_localizations"]["de"] = "Spielen"
    stored = registry.overwrite(None, [command])
    assert stored[0]["name_localizations"] == {"de": "spielen", "hi": "खेल"}
    assert stored[0]["options"][0]["name_localizations"]["ja"] == "サイズ"
