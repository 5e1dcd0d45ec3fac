"""Players read the bot in their own language, end to end.

A Japanese server (Discord's preferred locale ``ja``) where Alice's client is in German,
Bob's in Ukrainian and Carol's in Korean: what the channel sees (the challenge, the board,
the turn notification, the leaderboard) is in Japanese; what one of them alone sees (a
refusal, a review, their stats) is in their language. Then the server switches to
Brazilian Portuguese: a new game follows, the old one keeps the language it began in,
and a player whose client is in Latin American Spanish is answered in it.

Expected texts come from the catalogs through ``bot.i18n`` (never written out here), and
each is checked to differ from the English, so a missing translation cannot pass.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from bot.errors import CellTaken, NotChallenged, NotYourTurn
from bot.i18n import N_, Message, translator
from bot.models import Record
from bot.ui import render
from tests.bot.e2e_helpers import BotProcess, full_collections_held_back
from tests.discord_emulator import CallbackType, Emulator, User
from tests.discord_emulator import Message as Posted

from .conftest import WAIT, Arena, assert_log_clean, eventually, refusal

pytestmark = pytest.mark.asyncio(loop_scope="module")

# A turn that waits a second gets its notification (the Japanese one is checked).
BOT_ENV = {"CHALLENGE_COOLDOWN_SECONDS": "0", "GAMES_PER_MEMBER": "5", "PING_GRACE_SECONDS": "1"}
EN = translator(None)
JA, DE, UK, KO, PT, ES = (translator(code) for code in ("ja", "de", "uk", "ko", "pt-BR", "es-419"))


def said(reader: object, message: Message) -> str:
    """``message`` as ``reader`` reads it, checked to be a translation (not the English)."""
    text = reader(message)  # type: ignore[operator]
    assert text != EN(message), f"{message.singular!r} is not translated"
    return text


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_arena(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Arena]:
    """The bot in a Community server whose preferred locale is Japanese."""
    workdir = tmp_path_factory.mktemp("languages")
    with full_collections_held_back():
        async with Emulator(wait_timeout=WAIT) as emu:
            guild = emu.add_guild("Tokyo", locale="ja")
            async with BotProcess.launch(emu, workdir, dev_guild=guild, **BOT_ENV) as bot:
                yield Arena(emu, guild, bot, workdir)
                code = await bot.stop()
            assert code == 0, bot.log()
            assert not emu.unrouted, emu.unrouted
            assert_log_clean(bot.log())


def member(arena: Arena, name: str, locale: str) -> User:
    user = arena.member(name)
    arena.emu.set_user_locale(user, locale)
    return user


def labels(message: Posted) -> list[str]:
    return [button.label for button in message.buttons() if button.label != "\u200b"]


async def test_a_member_game_in_a_japanese_server(arena: Arena) -> None:
    alice, bob = member(arena, "alice", "de"), member(arena, "bob", "uk")
    carol = member(arena, "carol", "ko")
    channel = arena.channel()
    names = {"challenger": alice.mention, "opponent": bob.mention}

    answer = await arena.command(alice, channel, "tictactoe", opponent=bob, first="me")
    challenge = answer.message
    assert said(JA, N_("{opponent}, {challenger} challenges you to a game.", **names)) in (
        challenge.text
    )
    accept, decline = said(JA, N_("Accept")), said(JA, N_("Decline"))
    assert labels(challenge) == [accept, decline]

    # A refusal is for the one who clicked: Carol reads Korean.
    text = await refusal(await arena.click(carol, arena.current(challenge), label=accept))
    assert text == said(KO, NotChallenged.default_message)

    answer = await arena.click(bob, arena.current(challenge), label=accept)
    assert answer.type is CallbackType.UPDATE_MESSAGE
    board = arena.board(challenge)
    assert board.text.startswith("### " + said(JA, N_("Tic-tac-toe")))
    assert labels(board.message)[-1] == said(JA, N_("Forfeit"))
    ping = await arena.turn_ping(alice, channel, after=0)
    fields = {"player": alice.mention, "opponent": bob.mention, "mark": "X"}
    head = N_("{player}, it's your turn against {opponent} (you play {mark}).", **fields)
    assert ping.content.startswith(said(JA, head)), ping.content

    text = await refusal(await arena.click(bob, board.message, custom_id=board.cell_id(4)))
    assert text == said(UK, NotYourTurn.default_message)

    for user, cell in ((alice, 0), (bob, 3), (alice, 1), (bob, 4), (alice, 2)):
        state = arena.board(challenge)
        await arena.click(user, state.message, custom_id=state.cell_id(cell))
    final = arena.board(challenge)
    assert said(JA, N_("{player} won.", player=alice.mention)) in final.text, final.text
    assert labels(final.message)[-2:] == [said(JA, N_("Rematch")), said(JA, N_("Review"))]

    # Bob's review is his alone: Ukrainian, as is every line of it.
    review = await arena.click(bob, final.message, label=said(JA, N_("Review")))
    assert review.ephemeral
    game_id = int(final.message.buttons()[-1].custom_id.rsplit(":", 1)[1])
    lines = review.message.text.splitlines()
    assert lines[0] == "### " + said(UK, N_("Review of game {id}", id=game_id))
    assert said(UK, N_("cell {cell}", cell=1)) in lines[2], lines

    # Alice's stats answer her, in German; the leaderboard is the server's, in Japanese.
    stats = await arena.command(alice, channel, "tictactoe-stats")
    record = render.record_text(Record(wins=1), DE)
    assert said(DE, N_("Versus members: {record}", record=record)) in stats.message.text
    board_of_ranks = await arena.command(bob, channel, "tictactoe-leaderboard")
    heading = N_("Leaderboard · page {page}/{pages}", page=1, pages=1)
    assert board_of_ranks.message.text.startswith("### " + said(JA, heading))


async def test_the_server_changes_its_language(arena: Arena) -> None:
    """A game begun in Japanese stays Japanese; games begun after the switch follow it."""
    dana = member(arena, "dana", "es-419")
    old_channel, new_channel = arena.channel(), arena.channel()
    before = await arena.start_bot_game(dana, old_channel, first="me", difficulty="easy")
    arena.emu.set_guild_locale(arena.guild, "pt-BR")
    await eventually(arena.emu, lambda: arena.guild.locale == "pt-BR", "the switch", WAIT)

    after = await arena.start_bot_game(dana, new_channel, first="me", difficulty="easy")
    level = N_("Level: {level}", level=render.level_text("easy", PT))
    assert said(PT, level) in arena.board(after).text
    assert JA(N_("Level: {level}", level=render.level_text("easy", JA))) in (
        arena.board(before).text
    )

    # An occupied cell: Dana reads Latin American Spanish, whatever the server speaks.
    state = arena.board(after)
    await arena.click(dana, state.message, custom_id=state.cell_id(0))
    state = arena.board(after)
    # Cell 0's button is disabled now: only a forged click can still name it.
    forged = state.cell_id(state.free()[0]).rsplit(":", 2)[0] + f":0:{state.move_no}"
    taken = await refusal(await arena.raw_click(dana, state.message, forged))
    assert taken == said(ES, CellTaken.default_message)
    # The old board, redrawn by a click after the switch, is still Japanese.
    old = arena.board(before)
    free = old.marks.index(None)
    await arena.click(dana, old.message, custom_id=old.cell_id(free))
    assert arena.board(before).marks[free] == "X"
    assert JA(N_("Tic-tac-toe")) in arena.board(before).text
