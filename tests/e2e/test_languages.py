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

import re

import pytest

from bot.errors import CellTaken, GameOver, NotChallenged, NotChallenger, NotYourTurn
from bot.games import render
from bot.i18n import N_, Message, translator
from bot.models import Record
from discord_emulator import CallbackType, User
from discord_emulator import Message as Posted
from engine.levels import get_level
from tests.overdue import elapse

from .helpers import WAIT, Arena, eventually, refusal

pytestmark = pytest.mark.asyncio(loop_scope="module")

# A turn that waits a second gets its notification (the Japanese one is checked).
GUILD = {"name": "Tokyo", "locale": "ja"}
"""A Community server whose preferred locale is Japanese."""
BOT_ENV = {"CHALLENGE_COOLDOWN_SECONDS": "0", "GAMES_PER_MEMBER": "5", "PING_GRACE_SECONDS": "1"}
EN = translator(None)
JA, DE, UK, KO, PT, ES = (translator(code) for code in ("ja", "de", "uk", "ko", "pt-BR", "es-419"))


def said(reader: object, message: Message) -> str:
    """``message`` as ``reader`` reads it, checked to be a translation (not the English)."""
    text = reader(message)  # type: ignore[operator]
    assert text != EN(message), f"{message.singular!r} is not translated"
    return text


def member(arena: Arena, name: str, locale: str) -> User:
    user = arena.member(name)
    arena.emu.set_user_locale(user, locale)
    return user


def labels(message: Posted) -> list[str]:
    return [button.label for button in message.buttons() if button.label is not None]


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
    assert labels(challenge) == [accept, decline, said(JA, N_("Withdraw"))]
    # What Bob agrees to, before he accepts: who moves first, rated, the clock.
    assert said(JA, N_("{player} moves first.", player=alice.mention)) in challenge.text
    assert said(JA, N_("Rated: the result changes both players' ratings.")) in challenge.text
    clock = N_("Turn clock: {time} per move.", time=render.duration_text(300, JA))
    assert said(JA, clock) in challenge.text, challenge.text
    # Withdraw is the challenger's: Bob is refused it, in Ukrainian.
    withdraw = said(JA, N_("Withdraw"))
    text = await refusal(await arena.click(bob, arena.current(challenge), label=withdraw))
    assert text == said(UK, NotChallenger.default_message)

    # A refusal is for the one who clicked: Carol reads Korean.
    text = await refusal(await arena.click(carol, arena.current(challenge), label=accept))
    assert text == said(KO, NotChallenged.default_message)

    answer = await arena.click(bob, arena.current(challenge), label=accept)
    assert answer.type is CallbackType.UPDATE_MESSAGE
    board = arena.board(challenge)
    assert board.text.startswith("### " + said(JA, N_("Tic-tac-toe")))
    # The game is named once in the header (not "三目並べ · 3×3・3目並べ").
    assert board.text.splitlines()[0].count("目並べ") == 1, board.text
    assert "a1" not in board.text, "no button shows a cell's name"
    grey = said(JA, N_("The mark on a grey button is the last move."))
    assert grey not in board.text, "no move yet, so no grey button with a mark"
    assert labels(board.message)[-1] == said(JA, N_("Forfeit"))
    await elapse(arena.database, challenge.id, 1)  # the grace (PING_GRACE_SECONDS)
    ping = await arena.turn_ping(alice, channel, after=0)
    fields = {"player": alice.mention, "opponent": bob.mention, "mark": "X"}
    head = N_("{player}, it's your turn against {opponent} (you play {mark}).", **fields)
    assert ping.content.startswith(said(JA, head)), ping.content

    text = await refusal(await arena.click(bob, board.message, custom_id=board.cell_id(4)))
    assert text == said(UK, NotYourTurn.default_message)

    for user, cell in ((alice, 0), (bob, 3), (alice, 1), (bob, 4), (alice, 2)):
        state = arena.board(challenge)
        await arena.click(user, state.message, custom_id=state.cell_id(cell))
        # The last move is on grey, said in Japanese; the winning one (a1-c1) is green.
        assert (grey in arena.board(challenge).text) is (cell != 2)
    final = arena.board(challenge)
    assert said(JA, N_("{player} won.", player=alice.mention)) in final.text, final.text
    assert f"{alice.mention} さんの勝ちです。" in final.text  # さん, as on the rest of the board
    # A mark of the finished board: at full colour, and a click on it is answered.
    text = await refusal(await arena.click(carol, final.message, row=0, col=0))
    assert text == said(KO, GameOver.default_message)
    assert labels(final.message)[-2:] == [said(JA, N_("Rematch")), said(JA, N_("Review"))]

    # Bob's review is his alone: Ukrainian, as is every line of it.
    review = await arena.click(bob, final.message, label=said(JA, N_("Review")))
    assert review.ephemeral
    lines = review.message.text.splitlines()
    date = re.search(r"<t:[0-9]+:D>", lines[0])
    assert date is not None, lines[0]
    title = N_("Review: {x} vs {o}, {date}", x=alice.mention, o=bob.mention, date=date[0])
    assert lines[0] == "### " + said(UK, title)  # the players and the date, no game id
    grid = [line.replace("[", " ").replace("]", " ") for line in lines[1:6]]
    assert grid == ["```", "   a  b  c ", "1  X  X  X ", "2  O  O  · ", "3  ·  ·  · "], lines
    assert sum(line.count("[") for line in lines[2:6]) == 1, "the deciding move, on the grid"
    assert "`" + " 1.` 🟦 X a1" in review.message.text and "🟥 O b2" in review.message.text

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
    # The level once, by name: its description is where it is chosen, not on the board.
    level = said(PT, N_("me ({level})", level=render.level_name("easy", PT)))
    assert arena.board(after).text.count(level) == 1
    assert PT(get_level("easy").description) not in arena.board(after).text
    assert JA(N_("me ({level})", level=render.level_name("easy", JA))) in (arena.board(before).text)

    # An occupied cell: Dana reads Latin American Spanish, whatever the server speaks.
    state = arena.board(after)
    await arena.click(dana, state.message, custom_id=state.cell_id(0))
    state = arena.board(after)
    # Cell 0's mark is a live button: a click on it is answered, and changes nothing.
    taken = await refusal(await arena.click(dana, state.message, row=0, col=0))
    assert taken == said(ES, CellTaken.default_message)
    assert arena.board(after).marks == state.marks
    # The old board, redrawn by a click after the switch, is still Japanese.
    old = arena.board(before)
    free = old.marks.index(None)
    await arena.click(dana, old.message, custom_id=old.cell_id(free))
    assert arena.board(before).marks[free] == "X"
    assert JA(N_("Tic-tac-toe")) in arena.board(before).text
