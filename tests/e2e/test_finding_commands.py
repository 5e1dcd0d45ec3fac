"""Commands people find, answers in the right language, threads and typed durations, end
to end.

A Japanese Community server whose members read German, Russian and Brazilian Portuguese:
every command starts with ``tictactoe``, and a sync of a new version removes the old
names; ``/tictactoe-help`` answers its reader privately in their language; a member's
Apps menu challenges them with the default options; ``/tictactoe-stats`` answers the
asker privately in their language, or the channel in the server's (``public``); games are
played in threads (public and private) of an allowed channel; the settings take and show
durations such as ``1h30m``.

Expected texts come from the catalogs through ``bot.i18n``, checked to differ from the
English, so a missing translation cannot pass. The module runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from discord.app_commands import TranslationContextLocation as Where

from bot.errors import SelfChallenge
from bot.games import render
from bot.i18n import N_, Duration, Message, Translator, translator
from bot.models import Record
from bot.servers.preferences import marked
from bot.ui.commands_i18n import CommandTranslator
from discord_emulator import CallbackType, Emulator, Permission, User, UserActionError
from discord_emulator import Message as Posted
from tests.e2e.inprocess import BotInProcess
from tests.pgtools import new_pg_database

from .helpers import WAIT, Arena, eventually, refusal

pytestmark = pytest.mark.asyncio(loop_scope="module")

GUILD = {"name": "Tokyo", "locale": "ja"}
"""A Community server whose preferred locale is Japanese."""
POSTGRESQL = True  # the server settings' module on PostgreSQL (tests/e2e/conftest.py)
BOT_ENV = {
    "CHALLENGE_COOLDOWN_SECONDS": "0",
    "GAMES_PER_MEMBER": "5",
    "ABANDON_COOLDOWN_SECONDS": "0",
}
EN = translator(None)
JA, DE, RU, PT = (translator(code) for code in ("ja", "de", "ru", "pt-BR"))
READERS = (("de", DE), ("ru", RU), ("pt-BR", PT))
NAMES = CommandTranslator()
OLD_NAMES = ("leaderboard", "stats")


def said(reader: object, message: Message) -> str:
    """``message`` as ``reader`` reads it, checked to be a translation (not the English)."""
    text = reader(message)  # type: ignore[operator]
    assert text != EN(message), f"{message.singular!r} is not translated"
    return text


def moved(reader: Translator, was: float, now: float) -> str:
    """A duration a change moved, as a settings answer marks it in ``reader``'s language."""
    return marked(reader(Duration(was)), reader(Duration(now)))


def shown_name(name: str, locale: str) -> str:
    """A command's name as a client in ``locale`` lists it."""
    return NAMES.localize(name, locale, Where.command_name) or name


def member(arena: Arena, name: str, locale: str, *, permissions: int = 0) -> User:
    user = arena.member(name, permissions=permissions)
    arena.emu.set_user_locale(user, locale)
    return user


async def forfeit(arena: Arena, user: User, board: Posted) -> None:
    """Forfeit on the board (in the server's Japanese), then its private question's
    danger button (in the member's own language)."""
    asked = await arena.click(user, arena.current(board), label=said(JA, N_("Forfeit")))
    assert asked.type is CallbackType.DEFERRED_UPDATE_MESSAGE
    (question,) = await asked.handle.wait_followups(1)
    assert question.ephemeral
    confirm = question.buttons()[0]
    answer = await arena.click(user, question, custom_id=confirm.custom_id)
    assert answer.type is CallbackType.UPDATE_MESSAGE
    await arena.emu.wait_for(lambda: not arena.board(board).live)


# -- the names ---------------------------------------------------------------------------------


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
async def test_the_next_sync_replaces_the_old_names(
    request: pytest.FixtureRequest, tmp_path: Path, database: str
) -> None:
    """An older version synced /leaderboard and /stats globally; the new version's first
    start syncs (its fingerprint differs) and the bulk overwrite removes them, as on
    Discord; the next start with the same commands sends nothing."""
    env: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        if database == "postgresql":
            env["DATABASE_URL"] = stack.enter_context(
                new_pg_database(request.getfixturevalue("pg_server"))
            )
        async with Emulator(wait_timeout=WAIT) as emu:
            guild = emu.add_guild("Arcade")
            alice = emu.add_user("alice")
            emu.add_member(guild, alice)
            channel = emu.add_text_channel(guild, "games")
            old = [{"name": name, "description": "Old.", "type": 1} for name in OLD_NAMES]
            emu.commands.overwrite(None, old)
            assert emu.commands.find("leaderboard", guild.id) is not None
            async with BotInProcess.launch(emu, tmp_path, **env) as bot:
                await bot.wait_until(emu.wait_for_commands("tictactoe-leaderboard"))
            synced = {(c["type"], c["name"]): c for c in emu.commands.list(None)}
            for name in OLD_NAMES:
                assert (1, name) not in synced
                with pytest.raises(UserActionError):
                    await emu.run_command(alice, channel, name)
            assert all(name.startswith("tictactoe") for kind, name in synced if kind == 1)
            assert (2, "Challenge to tic-tac-toe") in synced
            for locale, _ in READERS:
                board = synced[(1, "tictactoe-leaderboard")]["name_localizations"][locale]
                stats = synced[(1, "tictactoe-stats")]["name_localizations"][locale]
                assert board.startswith("tictactoe-") and board != "tictactoe-leaderboard"
                assert stats.startswith("tictactoe-"), stats
            puts = len([r for r in emu.requests if r.method == "PUT" and "/commands" in r.path])
            async with BotInProcess.launch(emu, tmp_path, **env):
                pass
            again = [r for r in emu.requests if r.method == "PUT" and "/commands" in r.path]
            assert len(again) == puts, "the same commands were synced again"


async def test_help_answers_privately_in_the_readers_language(arena: Arena) -> None:
    channel = arena.channel()
    for locale, reader in READERS:
        user = member(arena, "reader", locale)
        answer = await arena.command(user, channel, "tictactoe-help")
        assert answer.ephemeral, answer
        text = answer.message.text
        assert said(reader, N_("Tic-tac-toe commands")) in text
        assert said(reader, N_("How a game goes")) in text
        for name in ("tictactoe-leaderboard", "tictactoe-stats", "tictactoe-help"):
            assert f"`/{shown_name(name, locale)}` — " in text, text
        about = said(reader, N_("This server's tic-tac-toe ranking."))
        assert about in text
        menu = shown_name("Challenge to tic-tac-toe", locale)
        assert menu != "Challenge to tic-tac-toe" and menu in text
        assert f"/{shown_name('tictactoe', locale)}" in text


# -- the member menu ---------------------------------------------------------------------------


async def test_the_member_menu_challenges_with_the_default_options(arena: Arena) -> None:
    alice, bob = member(arena, "alice", "de"), member(arena, "bob", "ru")
    carol = member(arena, "carol", "pt-BR")
    channel = arena.channel()
    handle = await arena.emu.run_user_command(alice, channel, "Challenge to tic-tac-toe", bob)
    answer = await arena.answer(handle)
    assert answer.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE and not answer.ephemeral
    names = {"challenger": alice.mention, "opponent": bob.mention}
    challenge = answer.message
    assert said(JA, N_("{opponent}, {challenger} challenges you to a game.", **names)) in (
        challenge.text
    )
    assert challenge.pings.users == {bob.id}
    accepted = await arena.click(bob, arena.current(challenge), label=said(JA, N_("Accept")))
    assert accepted.type is CallbackType.UPDATE_MESSAGE
    board = arena.board(challenge)  # the default: 3 x 3, three in a row
    assert board.live and len(board.marks) == 9

    # Each refusal in its reader's language: Carol on herself, a member on the bot's menu.
    for user, reader in ((carol, PT), (bob, RU)):
        handle = await arena.emu.run_user_command(user, channel, "Challenge to tic-tac-toe", user)
        assert await refusal(await arena.answer(handle)) == said(
            reader, SelfChallenge.default_message
        )
    # On the bot itself: a game against it at the default level, as /tictactoe would.
    handle = await arena.emu.run_user_command(
        carol, arena.channel(), "Challenge to tic-tac-toe", arena.emu.bot
    )
    answer = await arena.answer(handle)
    if answer.type is CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE:
        game = await answer.handle.edited_original()
    else:
        game = answer.message
    assert arena.board(game).live and not game.ephemeral
    await forfeit(arena, carol, game)
    with pytest.raises(UserActionError):  # the client offers the menu on members only
        outsider = arena.emu.add_user("outsider")
        await arena.emu.run_user_command(alice, channel, "Challenge to tic-tac-toe", outsider)


# -- stats -------------------------------------------------------------------------------------


async def test_stats_answer_privately_unless_asked_in_public(arena: Arena) -> None:
    channel = arena.channel()
    for locale, reader in READERS:
        user = member(arena, "asker", locale)
        mine = await arena.command(user, channel, "tictactoe-stats")
        assert mine.ephemeral and mine.message.visible_to == user.id
        record = render.record_text(Record(), reader)
        assert said(reader, N_("Versus members: {record}", record=record)) in mine.message.text
        shared = await arena.command(user, channel, "tictactoe-stats", public=True)
        assert not shared.ephemeral and shared.message.pings.nobody
        record = render.record_text(Record(), JA)
        assert said(JA, N_("Versus members: {record}", record=record)) in shared.message.text


# -- threads -----------------------------------------------------------------------------------


async def test_games_in_the_threads_of_an_allowed_channel(arena: Arena) -> None:
    mod = member(arena, "mod", "de", permissions=Permission.MANAGE_GUILD)
    alice, bob = member(arena, "alice", "ru"), member(arena, "bob", "pt-BR")
    carol = member(arena, "carol", "de")
    games, elsewhere = arena.channel(), arena.channel()
    await arena.command(mod, games, "tictactoe-settings", add_channel=games)
    try:
        public = arena.emu.add_thread(games, "rematch night", owner=alice)
        await arena.emu.wait_for(lambda: bool(arena.emu.dispatched("THREAD_CREATE")))
        created = arena.emu.dispatched("THREAD_CREATE")[-1]
        assert created["parent_id"] == str(games.id) and created["type"] == 11
        board = await arena.start_bot_game(alice, public, first="me")
        assert board.channel is public
        await arena.move(alice, board, 4, thinking=None)
        assert arena.board(board).marks[4] == "X" and arena.board(board).move_no == 2
        await forfeit(arena, alice, board)

        # A private thread: its members play; others cannot even see it.
        private = arena.emu.add_thread(games, "duel", owner=alice, private=True, members=[bob])
        with pytest.raises(UserActionError):
            await arena.emu.run_command(carol, private, "tictactoe")
        asked = await arena.command(alice, private, "tictactoe", opponent=bob, first="me")
        challenge = asked.message
        assert not challenge.ephemeral and challenge.channel is private
        await arena.click(bob, arena.current(challenge), label=said(JA, N_("Accept")))
        state = arena.board(challenge)
        moved = await arena.click(alice, state.message, custom_id=state.cell_id(4))
        assert moved.type is CallbackType.UPDATE_MESSAGE
        assert arena.board(challenge).marks[4] == "X"
        await forfeit(arena, bob, challenge)

        # A thread deleted with a game in it: the game ends unrated, as in a channel.
        doomed = arena.emu.add_thread(games, "short-lived", owner=bob)
        await arena.start_bot_game(bob, doomed, first="me")
        arena.emu.delete_channel(doomed)
        await eventually(
            arena.emu,
            lambda: f"Channel {doomed.id} deleted: 1 game(s) ended unrated" in arena.bot.log(),
            "the deleted thread's game ended",
            WAIT,
        )

        # A thread of a channel that is not listed is refused, in each reader's language.
        outside = arena.emu.add_thread(elsewhere, "side", owner=carol)
        for user, reader in ((carol, DE), (alice, RU), (bob, PT)):
            text = await refusal(await arena.command(user, outside, "tictactoe"))
            where = f"<#{games.id}>"
            assert text == said(
                reader, N_("Games on this server are played in {where}.", where=where)
            )
    finally:
        await arena.command(mod, games, "tictactoe-settings", reset=True)


# -- durations ---------------------------------------------------------------------------------


async def test_the_settings_take_and_show_durations(arena: Arena) -> None:
    channel = arena.channel()
    typed: dict[str, Any] = {
        "turn_clock": "1h30m",
        "challenge_expiry": "5m",
        "challenge_cooldown": "90s",
        "notify_after": "2m",
    }
    try:
        for locale, reader in READERS:
            mod = member(arena, "mod", locale, permissions=Permission.MANAGE_GUILD)
            await arena.command(mod, channel, "tictactoe-settings", reset=True)
            saved = await arena.command(mod, channel, "tictactoe-settings", **typed)
            text = saved.message.text
            assert saved.ephemeral and said(reader, N_("Saved. The settings now:")) in text
            turn = said(reader, N_("Turn clock: {time}", time=moved(reader, 300, 5400)))
            assert turn in text and reader(N_("{n} h", n=1)) in turn, text
            expiry = N_("Challenges expire after: {time}", time=moved(reader, 60, 300))
            assert said(reader, expiry) in text
            day = await arena.command(mod, channel, "tictactoe-settings", turn_clock="1d")
            turn = N_("Turn clock: {time}", time=moved(reader, 5400, 86_400))
            assert said(reader, turn) in day.message.text
            assert reader(N_("{n} d", n=1)) in day.message.text  # units may read as in English

            # Unreadable or out of bounds: refused in the moderator's language, nothing saved.
            wrong = await arena.command(mod, channel, "tictactoe-settings", turn_clock="soon")
            label = N_("The turn clock")
            expected = N_(
                "{setting}: write a time such as 90s, 5m, 1h30m or 1d, not {value}.",
                setting=label,
                value="'soon'",
            )
            assert await refusal(wrong) == said(reader, expected)
            short = await arena.command(mod, channel, "tictactoe-settings", turn_clock="10s")
            bounds = {"low": Duration(30), "high": Duration(86_400), "value": Duration(10)}
            expected = N_(
                "{setting} must be from {low} to {high}, not {value}.", setting=label, **bounds
            )
            assert await refusal(short) == said(reader, expected)
            kept = await arena.command(mod, channel, "tictactoe-settings")
            assert (
                said(reader, N_("Turn clock: {time}", time=Duration(86_400))) in kept.message.text
            )
    finally:
        mod = member(arena, "mod", "ja", permissions=Permission.MANAGE_GUILD)
        await arena.command(mod, channel, "tictactoe-settings", reset=True)
