"""What players see, in three languages: bright marks, fair ratings, Withdraw, readable
reviews and a compact bot level.

Each test runs with the server and its players in one language (German, Japanese,
Polish): the board and the challenge are drawn in the server's, refusals and reviews in
the reader's. Expected texts come from the catalogs through ``bot.i18n``, each checked
to differ from the English, so a missing translation cannot pass.
"""

from __future__ import annotations

import re

import pytest

from bot.errors import CellTaken, GameOver, NotChallenged, NotChallenger
from bot.games import render
from bot.i18n import N_, Message, Translator, translator
from bot.models import Record
from discord_emulator import ButtonStyle, CallbackType, User
from engine.levels import get_level

from .helpers import WAIT, Arena, check_final, eventually, refusal

pytestmark = pytest.mark.asyncio(loop_scope="module")

BOT_ENV = {"CHALLENGE_COOLDOWN_SECONDS": "0", "GAMES_PER_MEMBER": "5"}
COMMUNITY = True  # the server switches languages between tests
LOCALES = ["de", "ja", "pl"]
EN = translator(None)
RATING = re.compile(r"\*\*([0-9]+)")


def said(t: Translator, message: Message) -> str:
    """``message`` as ``t`` reads it, checked to be a translation (not the English)."""
    text = t(message)
    assert text != EN(message), f"{message.singular!r} is not translated"
    return text


async def speaking(arena: Arena, locale: str) -> Translator:
    """The server speaks ``locale`` from now on (its new games and challenges)."""
    if arena.guild.locale != locale:
        arena.emu.set_guild_locale(arena.guild, locale)
        await eventually(arena.emu, lambda: arena.guild.locale == locale, "the switch", WAIT)
    return translator(locale)


def member(arena: Arena, name: str, locale: str) -> User:
    user = arena.member(name)
    arena.emu.set_user_locale(user, locale)
    return user


@pytest.mark.parametrize("locale", LOCALES)
async def test_marks_stay_bright_and_a_taken_cell_is_refused(arena: Arena, locale: str) -> None:
    t = await speaking(arena, locale)
    alice, bob = member(arena, "alice", locale), member(arena, "bob", locale)
    channel = arena.channel()
    board = await arena.member_game(alice, bob, channel)
    await arena.move(alice, board, 4)
    await arena.move(bob, board, 0)
    state = arena.board(board)  # read_board: no mark disabled, each in its colour
    assert state.cells[4].style == ButtonStyle.PRIMARY and not state.cells[4].disabled
    # Bob's O is the last move: on grey, and the line under the board says what grey means.
    assert state.last == 0 and state.marks[0] == "O" and not state.cells[0].disabled
    assert state.cells[0].style == ButtonStyle.SECONDARY
    assert said(t, N_("The mark on a grey button is the last move.")) in state.text
    # The header's colours are the buttons': blue X, red O.
    assert f"🟦 **X** {alice.mention}" in state.text and f"🟥 **O** {bob.mention}" in state.text

    edits = arena.current(board).edits
    for user, cell in ((alice, 4), (alice, 0), (bob, 4)):
        answer = await arena.click(user, arena.current(board), custom_id=state.cell_id(cell))
        text = await refusal(answer)
        if user is alice:
            assert text == said(t, CellTaken.default_message)
    assert arena.current(board).edits == edits and arena.board(board).marks == state.marks

    await arena.move(alice, board, 8)
    state = arena.board(board)  # Alice's X is now the last move, Bob's O red again
    assert state.last == 8 and state.cells[0].style == ButtonStyle.DANGER
    assert state.cells[8].style == ButtonStyle.SECONDARY

    for user, cell in ((bob, 3), (alice, 1), (bob, 5), (alice, 7)):
        await arena.move(user, board, cell)
    final = arena.board(board)
    assert check_final(final, 3) == "X"  # the line green, marks bright, empty cells off
    assert final.last is None, "the winning move is on the line, which is green"
    assert said(t, N_("{player} won.", player=alice.mention)) in final.text
    edits = arena.current(board).edits
    text = await refusal(await arena.click(bob, arena.current(board), row=0, col=0))
    assert text == said(t, GameOver.default_message)
    assert arena.current(board).edits == edits


async def rating_of(arena: Arena, user: User, channel: object) -> str:
    answer = await arena.command(user, channel, "tictactoe-stats")  # type: ignore[arg-type]
    found = RATING.search(answer.message.text)
    assert found, answer.message.text
    return found[1]


@pytest.mark.parametrize("locale", LOCALES)
async def test_a_won_variant_is_announced_and_played_unrated(arena: Arena, locale: str) -> None:
    t = await speaking(arena, locale)
    alice, bob = member(arena, "alice", locale), member(arena, "bob", locale)
    channel = arena.channel()

    # 4 x 4 with four in a row is a draw under perfect play: rated, and it says so.
    fair = await arena.challenge(alice, bob, channel, size="4x4", first="me")
    assert said(t, N_("Rated: the result changes both players' ratings.")) in fair.text
    await arena.click(alice, arena.current(fair), label=said(t, N_("Withdraw")))

    # With three in a row the first player wins by force: unrated, said before accepting.
    challenge = await arena.challenge(alice, bob, channel, size="4x4", win_length=3, first="me")
    text = challenge.text
    assert render.board_size_text(4, 4, 3, t) in text.splitlines()[0]
    unrated = N_(
        "Unrated: on this board the first player can always force a win, so the result"
        " doesn't change ratings."
    )
    assert said(t, unrated) in text
    assert said(t, N_("{player} moves first.", player=alice.mention)) in text
    clock = N_("Turn clock: {time} per move.", time=render.duration_text(300, t))
    assert said(t, clock) in text
    state = await arena.accept(bob, challenge, side=4)
    assert said(t, N_("unrated")) in state.text.splitlines()[0]
    first = N_(
        "On this board the first player can always force a win: {player} moves first.",
        player=alice.mention,
    )
    assert said(t, first) in state.text  # on the board too, before the first move
    for user, cell in ((alice, 0), (bob, 4), (alice, 1), (bob, 5), (alice, 2)):
        await arena.move(user, challenge, cell, side=4)
    final = arena.board(challenge, 4)
    assert check_final(final, 3) == "X" and said(t, first) not in final.text
    assert await rating_of(arena, alice, channel) == "1500"
    assert await rating_of(arena, bob, channel) == "1500"
    stats = (await arena.command(alice, channel, "tictactoe-stats")).message.text
    record = N_("Versus members: {record}", record=render.record_text(Record(), t))
    assert said(t, record) in stats and said(t, N_("unranked")) in stats, stats


@pytest.mark.parametrize("locale", LOCALES)
async def test_withdraw_is_the_challengers_and_decline_the_challenged(
    arena: Arena, locale: str
) -> None:
    t = await speaking(arena, locale)
    alice, bob = member(arena, "alice", locale), member(arena, "bob", locale)
    carol = member(arena, "carol", locale)
    channel = arena.channel()
    challenge = await arena.challenge(alice, bob, channel)
    accept, decline, withdraw = (said(t, N_(w)) for w in ("Accept", "Decline", "Withdraw"))
    assert [b.label for b in arena.current(challenge).buttons()] == [accept, decline, withdraw]

    for user in (bob, carol):
        text = await refusal(await arena.click(user, arena.current(challenge), label=withdraw))
        assert text == said(t, NotChallenger.default_message)
    for user in (alice, carol):
        text = await refusal(await arena.click(user, arena.current(challenge), label=decline))
        assert text == said(t, NotChallenged.default_message)
    # A second challenge is refused, and the refusal names the Withdraw button.
    again = await arena.command(alice, arena.channel(), "tictactoe", opponent=carol)
    assert again.ephemeral and withdraw in again.message.text, again.message.text
    assert arena.current(challenge).edits == 0

    answer = await arena.click(alice, arena.current(challenge), label=withdraw)
    assert answer.type is CallbackType.UPDATE_MESSAGE
    closed = arena.current(challenge)
    names = {"challenger": alice.mention, "opponent": bob.mention}
    assert said(t, N_("{challenger} withdrew the challenge to {opponent}.", **names)) in (
        closed.text
    )
    assert all(button.disabled for button in closed.buttons())

    # Bob declines Carol's challenge with his own button.
    second = await arena.challenge(carol, bob, channel)
    await arena.click(bob, arena.current(second), label=decline)
    names = {"challenger": carol.mention, "opponent": bob.mention}
    assert said(t, N_("{opponent} declined {challenger}'s challenge.", **names)) in (
        arena.current(second).text
    )


@pytest.mark.parametrize("locale", LOCALES)
async def test_a_review_shows_the_grid_and_names_cells(arena: Arena, locale: str) -> None:
    t = await speaking(arena, locale)
    alice, bob = member(arena, "alice", locale), member(arena, "bob", locale)
    channel = arena.channel()
    board = await arena.member_game(alice, bob, channel)
    for user, cell in ((alice, 4), (bob, 1), (alice, 0), (bob, 2), (alice, 8)):
        await arena.move(user, board, cell)
    final = arena.board(board)
    assert check_final(final, 3) == "X"
    review = await arena.click(bob, final.message, label=said(t, N_("Review")))
    assert review.ephemeral
    lines = review.message.text.splitlines()
    date = re.search(r"<t:[0-9]+:D>", lines[0])
    assert date is not None, lines[0]
    title = N_("Review: {x} vs {o}, {date}", x=alice.mention, o=bob.mention, date=date[0])
    assert lines[0] == "### " + said(t, title)
    # The final position with coordinates; O's 1st move (b1) let X fork: it decided,
    # and a corner would have held. O's c1 then missed the block at c3 too late.
    assert lines[1:6] == ["```", "   a  b  c ", "1  X [O] O ", "2  ·  X  · ", "3  ·  ·  X "]
    verdict = N_(
        "Move {n} ({mark} {cell}) decided the game: the draw became a loss.",
        n=2,
        mark="O",
        cell="b1",
    )
    assert lines[7] == said(t, verdict), lines
    held = N_("Any of {cells} would have held the draw.", cells="a1, c1, a3")
    assert lines[8] == said(t, held), lines
    decided = said(t, N_("this decided it"))
    better = said(t, N_("better: {cells}", cells="a1, c1, a3"))
    block = said(t, N_("missed the block at {cells}", cells="c3"))
    assert lines[9:] == [
        "` 1.` 🟦 X b2",
        f"` 2.` 🟥 O b1  ← {decided} · {better}",
        "` 3.` 🟦 X a1",
        f"` 4.` 🟥 O c1  ← {block}",
        "` 5.` 🟦 X c3",
    ]


@pytest.mark.parametrize("locale", LOCALES)
async def test_a_bot_game_names_its_level_once(arena: Arena, locale: str) -> None:
    t = await speaking(arena, locale)
    alice, channel = member(arena, "alice", locale), arena.channel()
    board = await arena.start_bot_game(alice, channel, difficulty="hard", first="me")
    await arena.move(alice, board, 4)
    text = arena.board(board).text
    level = said(t, N_("me ({level})", level=render.level_name("hard", t)))
    assert text.count(level) == 1, text
    assert t(get_level("hard").description) not in text
    assert len(text.splitlines()) == 4, text  # title, players, whose move, coordinates
