"""Locales: each user's client language on their interactions, the server's preferred locale,
and localized application commands checked and stored as Discord does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import discord
import pytest
from discord import app_commands

from discord_emulator import LOCALES, Emulator, UserActionError

from .helpers import TIMEOUT, Arena, EmuBot, build_world, running

FRENCH = {
    "play": "jouer",
    "Challenge someone": "Défier quelqu'un",
    "opponent": "adversaire",
    "Who to play": "Contre qui jouer",
    "X": "Croix",
    "ping": "ping",  # identical to the default: Discord ignores it
}
JAPANESE = {"play": "対戦", "opponent": "相手", "Challenge someone": "誰かに挑戦する"}


class Dictionary(app_commands.Translator):
    """Command texts from plain dictionaries, through discord.py's public Translator."""

    def __init__(self, books: dict[discord.Locale, dict[str, str]]) -> None:
        self.books = books

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        return self.books.get(locale, {}).get(string.message)


class TranslatedBot(EmuBot):
    def __init__(self, books: dict[discord.Locale, dict[str, str]]) -> None:
        self.books = books
        super().__init__()

    async def setup_hook(self) -> None:
        await self.tree.set_translator(Dictionary(self.books))
        await super().setup_hook()


@pytest.fixture
async def translated(emu: Emulator) -> AsyncIterator[Arena]:
    world = build_world(emu)
    bot = TranslatedBot({discord.Locale.french: FRENCH, discord.Locale.japanese: JAPANESE})
    async with running(emu, bot):
        await emu.wait_for_commands("play")
        yield Arena(emu=emu, bot=bot, **world)


async def _put(emu: Emulator, commands: Any) -> tuple[int, dict[str, Any] | list[Any]]:
    url = f"{emu.api_base}/applications/{emu.application_id}/commands"
    async with (
        aiohttp.ClientSession() as session,
        session.put(url, json=commands, headers={"Authorization": f"Bot {emu.bot_token}"}) as resp,
    ):
        return resp.status, await resp.json()


async def _get(emu: Emulator, query: str = "", **headers: str) -> list[dict[str, Any]]:
    url = f"{emu.api_base}/applications/{emu.application_id}/commands{query}"
    headers["Authorization"] = f"Bot {emu.bot_token}"
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as resp:
        assert resp.status == 200
        result: list[dict[str, Any]] = await resp.json()
        return result


def test_the_locale_list_is_discords() -> None:
    assert len(LOCALES) == 32
    assert {str(locale.value) for locale in discord.Locale} == set(LOCALES)


async def test_each_user_acts_in_their_own_locale(arena: Arena) -> None:
    emu, alice, bob, channel = arena.emu, arena.alice, arena.bob, arena.channel
    emu.set_user_locale(alice, "ja")
    bob.locale = "pt-BR"  # as a user switching languages in their client
    yuki = emu.add_user("yuki", locale="zh-CN")
    emu.add_member(arena.guild, yuki)
    emu.add_member(arena.guild, emu.add_user("nobody"))

    handle = await emu.run_command(alice, channel, "play", opponent=bob, mark="x")
    assert (handle.payload["locale"], handle.payload["guild_locale"]) == ("ja", "en-US")
    await handle.response()
    assert arena.bot.last_interaction is not None
    assert arena.bot.last_interaction.locale is discord.Locale.japanese
    assert arena.bot.last_interaction.guild_locale is discord.Locale.american_english
    message = (await handle.response()).message
    assert message is not None

    clicks = {}
    for user in (bob, yuki, alice):
        click = await emu.click(user, message, index=0)
        clicks[user.name] = click.payload["locale"]
        await click.response()
        message = emu.message(message.id)
        assert message is not None
    assert clicks == {"bob": "pt-BR", "yuki": "zh-CN", "alice": "ja"}

    # Without a locale of their own, users carry the emulator's default.
    (nobody,) = [u for u in emu.users.values() if u.name == "nobody"]
    plain = await emu.run_command(nobody, channel, "ping")
    assert plain.payload["locale"] == emu.locale == "en-US"
    await plain.response()

    # In a DM there is no server, so no guild_locale.
    dm = await emu.run_command(alice, emu.dm_channel(alice), "ping")
    assert dm.payload["locale"] == "ja" and "guild_locale" not in dm.payload
    await dm.response()


async def test_locale_codes_are_discords_only(emu: Emulator) -> None:
    for bad in ("en", "fr-FR", "pt-PT", "EN-US", "zh", ""):
        with pytest.raises(ValueError, match="not a Discord locale"):
            emu.add_user("someone", locale=bad)
        with pytest.raises(ValueError):
            emu.add_guild("Somewhere", locale=bad)
    with pytest.raises(ValueError):
        Emulator(locale="xx")
    assert Emulator(locale="ko").locale == "ko"
    ok = emu.add_user("ok", locale="es-419")
    assert ok.locale == "es-419"


async def test_a_locale_assigned_by_hand_is_checked_when_the_user_acts(arena: Arena) -> None:
    arena.alice.locale = "french"
    with pytest.raises(ValueError, match="not a Discord locale"):
        await arena.emu.run_command(arena.alice, arena.channel, "ping")
    assert arena.emu.interactions == {}


async def test_server_locale_and_guild_update(emu: Emulator) -> None:
    alice = emu.add_user("alice", locale="fr")
    tokyo = emu.add_guild("Tokyo", locale="ja")
    plain = emu.add_guild("Plain")
    channel = emu.add_text_channel(tokyo, "games")
    emu.add_member(tokyo, alice)
    bot = EmuBot()
    async with running(emu, bot):
        await emu.wait_for_commands("ping")
        created = {g["id"]: g for g in emu.dispatched("GUILD_CREATE")}
        assert created[str(tokyo.id)]["preferred_locale"] == "ja"
        assert created[str(tokyo.id)]["features"] == ["COMMUNITY"]
        assert created[str(plain.id)]["preferred_locale"] == "en-US"
        seen = bot.get_guild(tokyo.id)
        assert seen is not None and seen.preferred_locale is discord.Locale.japanese

        handle = await emu.run_command(alice, channel, "ping")
        assert (handle.payload["locale"], handle.payload["guild_locale"]) == ("fr", "ja")
        assert handle.payload["guild"] == {
            "id": str(tokyo.id),
            "locale": "ja",
            "features": ["COMMUNITY"],
        }
        await handle.response()

        emu.set_guild_locale(tokyo, "de")
        (update,) = emu.dispatched("GUILD_UPDATE")
        assert update["id"] == str(tokyo.id) and update["preferred_locale"] == "de"
        assert "members" not in update and "channels" not in update
        await emu.wait_for(lambda: seen.preferred_locale is discord.Locale.german)
        assert seen.name == "Tokyo" and seen.get_channel(channel.id) is not None
        after = await emu.run_command(alice, channel, "ping")
        assert after.payload["guild_locale"] == "de"
        await after.response()

        # Only a Community server has a primary language setting.
        with pytest.raises(UserActionError, match="not a Community server"):
            emu.set_guild_locale(plain, "de")
        with pytest.raises(ValueError):
            emu.set_guild_locale(tokyo, "deutsch")
        with pytest.raises(ValueError):
            emu.add_guild("Berlin", locale="de", community=False)
        assert len(emu.dispatched("GUILD_UPDATE")) == 1
        assert tokyo.locale == "de" and plain.locale == "en-US"


async def test_localized_commands_sync_and_keep_default_names(translated: Arena) -> None:
    emu, alice, bob, channel = translated.emu, translated.alice, translated.bob, translated.channel
    play = emu.commands.find("play", None)
    assert play is not None
    assert play["name_localizations"] == {"fr": "jouer", "ja": "対戦"}
    assert play["description_localizations"]["fr"] == "Défier quelqu'un"
    opponent, mark, _size = play["options"]
    assert opponent["name_localizations"] == {"fr": "adversaire", "ja": "相手"}
    assert opponent["description_localizations"] == {"fr": "Contre qui jouer"}
    assert mark["choices"][0]["name_localizations"] == {"fr": "Croix"}
    ping = emu.commands.find("ping", None)
    assert ping is not None and ping["name_localizations"] is None  # "ping" == default

    # A French user reads /jouer, but the interaction carries the default names.
    emu.set_user_locale(alice, "fr")
    handle = await emu.run_command(alice, channel, "play", opponent=bob, mark="x")
    assert handle.payload["data"]["name"] == "play"
    assert [o["name"] for o in handle.payload["data"]["options"]] == ["opponent", "mark"]
    assert handle.payload["locale"] == "fr"
    await handle.response()
    assert translated.bot.seen[-1]["mark"] == "x"
    with pytest.raises(UserActionError, match="run it as 'play'"):
        await emu.run_command(alice, channel, "jouer", opponent=bob, mark="x")
    with pytest.raises(UserActionError, match="no option 'adversaire'"):
        await emu.run_command(alice, channel, "play", adversaire=bob, mark="x")

    # Batch GETs give the requester's localization only, full dictionaries on request.
    fetched = await asyncio.wait_for(translated.bot.tree.fetch_commands(), TIMEOUT)
    assert {c.name for c in fetched} >= {"play", "ping"}
    assert all(c.name_localizations == {} for c in fetched)
    (plain,) = [c for c in await _get(emu) if c["name"] == "play"]
    assert "name_localizations" not in plain and "name_localized" not in plain
    (french,) = [c for c in await _get(emu, **{"X-Discord-Locale": "fr"}) if c["name"] == "play"]
    assert (french["name_localized"], french["options"][0]["name_localized"]) == (
        "jouer",
        "adversaire",
    )
    assert french["options"][1]["choices"][0]["name_localized"] == "Croix"
    assert "description_localized" not in french["options"][2]
    (japanese,) = [
        c for c in await _get(emu, **{"Accept-Language": "ja,en;q=0.5"}) if c["name"] == "play"
    ]
    assert japanese["name_localized"] == "対戦"
    (full,) = [c for c in await _get(emu, "?with_localizations=true") if c["name"] == "play"]
    assert full["name_localizations"] == {"fr": "jouer", "ja": "対戦"}
    assert "name_localized" not in full


async def test_a_bad_translation_fails_the_sync(emu: Emulator) -> None:
    build_world(emu)
    bot = TranslatedBot({discord.Locale.german: {"play": "Spielen"}})
    with pytest.raises(discord.HTTPException) as caught:
        async with running(emu, bot):
            pass
    assert caught.value.status == 400 and caught.value.code == 50035
    assert "name_localizations.de" in caught.value.text
    assert emu.commands.scopes == {}


def _command(**fields: Any) -> dict[str, Any]:
    option = {
        "type": 3,
        "name": "mark",
        "description": "Your mark",
        "choices": [{"name": "X", "value": "x"}],
    }
    option.update(fields.pop("option", {}))
    other = {"type": 4, "name": "size", "description": "Board size"}
    return {"name": "play", "description": "Play a game", "options": [option, other], **fields}


@pytest.mark.parametrize(
    ("command", "path", "code"),
    [
        (_command(name_localizations={"fr-FR": "jouer"}), "name_localizations.fr-FR", "CHOICES"),
        (_command(name_localizations={"en": "play2"}), "name_localizations.en", "CHOICES"),
        (_command(name_localizations={"fr": "Jouer"}), "name_localizations.fr", "INVALID_NAME"),
        (_command(name_localizations={"ru": "Игра"}), "name_localizations.ru", "INVALID_NAME"),
        (_command(name_localizations={"fr": "a" * 33}), "name_localizations.fr", "BAD_LENGTH"),
        (_command(name_localizations={"fr": ""}), "name_localizations.fr", "BAD_LENGTH"),
        (_command(name_localizations={"fr": "jouer !"}), "name_localizations.fr", "INVALID_NAME"),
        (_command(name_localizations={"de": "spiel?"}), "name_localizations.de", "INVALID_NAME"),
        (_command(name_localizations=["fr", "jouer"]), "name_localizations", "CONVERT"),
        (
            _command(description_localizations={"fr": "x" * 101}),
            "description_localizations.fr",
            "BAD_LENGTH",
        ),
        (_command(description_localizations={"fr": ""}), "description_localizations.fr", "LENGTH"),
        (
            _command(option={"name_localizations": {"fr": "Marque"}}),
            "options.0.name_localizations.fr",
            "INVALID_NAME",
        ),
        (
            _command(option={"description_localizations": {"jp": "印"}}),
            "options.0.description_localizations.jp",
            "CHOICES",
        ),
        (
            _command(option={"name_localizations": {"fr": "size"}}),  # another option's name
            "options.0.name_localizations.fr",
            "ALREADY_EXISTS",
        ),
        (
            _command(
                option={
                    "choices": [
                        {"name": "X", "value": "x", "name_localizations": {"fr": "y" * 101}}
                    ]
                }
            ),
            "options.0.choices.0.name_localizations.fr",
            "BAD_LENGTH",
        ),
        (
            {"type": 2, "name": "Challenge", "description_localizations": {"fr": "Défier"}},
            "description_localizations.fr",
            "INVALID_DESCRIPTION",
        ),
    ],
)
async def test_bad_localizations_get_invalid_form_body(
    emu: Emulator, command: dict[str, Any], path: str, code: str
) -> None:
    status, body = await _put(emu, [command])
    assert status == 400
    assert isinstance(body, dict) and (body["code"], body["message"]) == (
        50035,
        "Invalid Form Body",
    )
    node = body["errors"]["0"]
    for part in path.split("."):
        node = node[part]
    assert code in node["_errors"][0]["code"], node
    assert emu.commands.scopes == {}


async def test_good_localizations_are_stored(emu: Emulator) -> None:
    names = {"hi": "खेलें", "th": "เล่น", "ja": "対戦", "el": "παιχνίδι", "ko": "게임", "fr": "play"}
    sibling = {"fr": "taille", "de": "größe"}
    command = _command(
        name_localizations=names,
        description_localizations={"ja": "ゲームをする", "uk": "Зіграти партію"},
        option={
            "name_localizations": {"fr": "marque", "de": "zeichen"},
            "choices": [{"name": "X", "value": "x", "name_localizations": {"ja": "バツ印 X"}}],
        },
    )
    command["options"][1]["name_localizations"] = sibling
    menu_names = {"fr": "Défier ce joueur"}
    user_command = {
        "type": 2,
        "name": "Challenge",
        "name_localizations": menu_names,
    }
    status, body = await _put(emu, [command, user_command, _command(name="plain")])
    assert status == 200, body
    assert isinstance(body, list)
    stored, menu, plain = body
    assert stored["name_localizations"] == {k: v for k, v in names.items() if k != "fr"}
    assert stored["description_localizations"]["uk"] == "Зіграти партію"
    assert stored["options"][0]["name_localizations"] == {"fr": "marque", "de": "zeichen"}
    assert stored["options"][0]["choices"][0]["name_localizations"] == {"ja": "バツ印 X"}
    assert stored["options"][1]["name_localizations"] == sibling
    assert menu["name_localizations"] == menu_names
    assert plain["name_localizations"] is None and plain["description_localizations"] is None
    assert emu.commands.list(None) == body
    (hindi,) = [c for c in await _get(emu, **{"X-Discord-Locale": "hi"}) if c["name"] == "play"]
    assert hindi["name_localized"] == "खेलें"
    # en-GB readers fall back to en-US and es-419 to es-ES, as in the client.
    await _put(emu, [_command(name_localizations={"en-US": "game", "es-ES": "jugar"})])
    british = (await _get(emu, **{"X-Discord-Locale": "en-GB"}))[0]
    latam = (await _get(emu, **{"X-Discord-Locale": "es-419"}))[0]
    assert (british["name_localized"], latam["name_localized"]) == ("game", "jugar")
