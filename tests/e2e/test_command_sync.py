"""The bot's first start syncs every command to Discord with every language's names,
descriptions and choices (``python -m bot`` against the emulator)."""

from __future__ import annotations

from pathlib import Path

from bot.launcher import BotProcess
from discord_emulator import Emulator
from tests.bot.test_command_i18n import slash_commands


async def test_a_sync_sends_every_language_to_discord(tmp_path: Path) -> None:
    async with Emulator() as emu:
        emu.add_guild("Arcade")
        async with BotProcess.launch(emu, tmp_path):
            pass
        assert not emu.unrouted
    synced = {command["name"]: command for command in emu.commands.list(None)}
    menu = synced.pop("Challenge to tic-tac-toe")
    assert menu["type"] == 2 and menu["description"] == ""
    assert menu["name_localizations"]["de"] == "Zu Tic-Tac-Toe herausfordern"
    assert menu["name_localizations"]["ja"] == "三目並べで挑戦する"
    assert set(synced) == {command.name for command in slash_commands()}
    stop = synced["tictactoe-stop"]
    assert stop["name_localizations"]["de"] == "tictactoe-abbrechen"
    assert stop["description_localizations"]["ja"].startswith("このチャンネルの対局を中止")
    assert "de" not in (synced["tictactoe"]["name_localizations"] or {})  # the same in German
    assert "en-GB" not in stop["name_localizations"]  # no catalog of its own
    options = {option["name"]: option for option in synced["tictactoe"]["options"]}
    assert options["opponent"]["name_localizations"]["ru"] == "соперник"
    easy = options["difficulty"]["choices"][0]
    assert easy["value"] == "easy" and easy["name_localizations"]["de"].startswith("leicht — ")
    settings = {option["name"] for option in synced["tictactoe-settings"]["options"]}
    assert "turn_clock" in settings  # the names the bot reads stay English
