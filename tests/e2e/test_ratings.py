"""``/tictactoe-leaderboard`` and ``/tictactoe-stats`` after real games, checked against
Elo computed here.

The module's bot starts on an empty database and every rated game goes through
``Arena.quick_game`` or is added to ``arena.elo`` by hand, so the expected table is exact.
"""

from __future__ import annotations

import re

import pytest

from discord_emulator import CallbackType, Message, User

from .helpers import Arena, EloBook, Player, check_final

pytestmark = pytest.mark.asyncio(loop_scope="module")
POSTGRESQL = True  # the stats, ratings and reviews module on PostgreSQL too (tests/e2e/conftest.py)

# The same members play each other again and again, at once: no challenge cooldown.
# Members here play many quick games against many others: no cooldown, and the widest
# reach a server may allow (20 different members in 10 minutes).
BOT_ENV = {"CHALLENGE_COOLDOWN_SECONDS": "0", "CHALLENGE_REACH": "20"}

ROW = re.compile(
    r"(?P<rank>[0-9]+)\.\W*<@(?P<user>[0-9]+)>\W+(?P<rating>[0-9]+)\**(?P<provisional>\?)?"
    r"\W+(?P<wins>[0-9]+)W (?P<losses>[0-9]+)L (?P<draws>[0-9]+)D\W+(?P<games>[0-9]+) games?"
)
PAGE = re.compile(r"page (?P<page>[0-9]+)/(?P<pages>[0-9]+)", re.IGNORECASE)
DRAW = (0, 4, 8, 2, 6, 3, 5, 7, 1)  # X and O alternate; nobody gets a line


def expected_rows(elo: EloBook) -> list[tuple[int, int, str, bool, int, int, int, int]]:
    """(rank, user, rating as shown, provisional, W, L, D, games) for every rated player."""
    return [
        (rank, user, f"{p.rating:.0f}", p.games < 10, p.wins, p.losses, p.draws, p.games)
        for rank, (user, p) in enumerate(elo.ranking(), start=1)
    ]


def shown_rows(message: Message) -> list[tuple[int, int, str, bool, int, int, int, int]]:
    rows = []
    for found in ROW.finditer(message.text):
        rows.append(
            (
                int(found["rank"]),
                int(found["user"]),
                found["rating"],
                found["provisional"] is not None,
                int(found["wins"]),
                int(found["losses"]),
                int(found["draws"]),
                int(found["games"]),
            )
        )
    return rows


def check_page(message: Message, elo: EloBook, page: int) -> None:
    pages = max(1, -(-len(elo.players) // 10))
    found = PAGE.search(message.text)
    assert found and (int(found["page"]), int(found["pages"])) == (page, pages), message.text
    expected = expected_rows(elo)[(page - 1) * 10 : page * 10]
    assert shown_rows(message) == expected, message.text
    assert message.pings.nobody, "the leaderboard pings no one"
    allowed = message.allowed_mentions or {}
    assert not allowed.get("parse") and not allowed.get("users"), allowed
    previous, following = message.buttons()
    assert previous.disabled == (page == 1) and following.disabled == (page == pages)


async def play_draw(arena: Arena, x: User, o: User) -> None:
    channel = arena.channel("draw")
    board = await arena.member_game(x, o, channel)
    for index, cell in enumerate(DRAW):
        await arena.move(x if index % 2 == 0 else o, board, cell)
    state = arena.board(board)
    assert check_final(state, 3) == "" and "draw" in state.text.lower(), state.text
    arena.elo.add(x.id, o.id, 0.5)


async def test_leaderboard_and_stats_after_many_games(arena: Arena) -> None:
    viewer = arena.member("viewer")
    channel = arena.channel("quick")
    # Nobody has played yet.
    answer = await arena.command(viewer, channel, "tictactoe-leaderboard")
    assert not arena.elo.players, "this test expects a fresh database"
    check_page(answer.message, arena.elo, 1)
    assert "No rated games" in answer.message.text, answer.message.text
    text = await stats(arena, viewer, viewer)
    check_rating(text, Player(), rank=None)
    assert "Versus members: 0W 0L 0D" in text, text
    assert not recent_lines(text), text

    champ = arena.member("champ")
    players = [arena.member(f"p{i}") for i in range(1, 12)]
    for loser in players[:10]:
        await arena.quick_game(champ, loser, channel)
    await arena.quick_game(players[10], players[0], channel)
    await play_draw(arena, players[1], players[2])
    # Two regulars, close in strength: their 31st game is rated with K = 20.
    regular, rival = arena.member("regular"), arena.member("rival")
    for game in range(31):
        winner, loser = (regular, rival) if game % 2 == 0 else (rival, regular)
        await arena.quick_game(winner, loser, channel)
    assert arena.elo.players[regular.id].games == 31
    # Games against the bot are not rated, but show in the stats.
    p1 = players[0]
    for level in ("easy", "hard"):
        board = await arena.start_bot_game(p1, channel, difficulty=level, first="me")
        await arena.forfeit(p1, board)
    assert len(arena.elo.players) == 14

    # (Each public answer here by another member: one member's are a cooldown apart.)
    answer = await arena.command(arena.member("viewer"), channel, "tictactoe-leaderboard")
    assert answer.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE and not answer.ephemeral
    board = answer.message
    check_page(board, arena.elo, 1)
    ranking = [user for user, _ in arena.elo.ranking()]
    champ_row = shown_rows(board)[ranking.index(champ.id)]
    assert champ_row[1] == champ.id and not champ_row[3], "not provisional after 10 games"

    turned = await arena.click(viewer, arena.current(board), label="Next ▶")
    assert turned.type is CallbackType.UPDATE_MESSAGE
    check_page(arena.current(board), arena.elo, 2)
    turned = await arena.click(viewer, arena.current(board), label="◀ Previous")
    assert turned.type is CallbackType.UPDATE_MESSAGE
    check_page(arena.current(board), arena.elo, 1)

    answer = await arena.command(arena.member("viewer"), channel, "tictactoe-leaderboard", page=2)
    check_page(answer.message, arena.elo, 2)
    answer = await arena.command(arena.member("viewer"), channel, "tictactoe-leaderboard", page=99)
    check_page(answer.message, arena.elo, 2)  # past the end: the last page, saying so
    assert "There is no page 99; this is the last page." in answer.message.text
    assert "There is no page" not in arena.current(board).text
    # A Next button drawn when the ranking was longer (here: forged on page 2's message)
    # turns to the last page there is, saying so too.
    turned = await arena.raw_click(viewer, answer.message, "ttt:lb:3")
    assert turned.type is CallbackType.UPDATE_MESSAGE
    check_page(arena.current(answer.message), arena.elo, 2)
    assert "There is no page 3" in arena.current(answer.message).text
    await arena.click(viewer, arena.current(answer.message), label="◀ Previous")
    check_page(arena.current(answer.message), arena.elo, 1)
    assert "There is no page" not in arena.current(answer.message).text

    # Stats: rating, rank, record against members and each level, streaks, recent games.
    text = await stats(arena, viewer, champ)
    check_rating(text, arena.elo.players[champ.id], rank=ranking.index(champ.id) + 1)
    assert "Versus members: 10W 0L 0D" in text and "Versus me (" not in text, text
    assert "Current streak: 10 wins" in text and "best: 10" in text, text
    recent = recent_lines(text)
    assert len(recent) == 5, text
    expected_opponents = [p.id for p in reversed(players[5:10])]  # newest first
    for line, opponent in zip(recent, expected_opponents, strict=True):
        assert line.startswith("- won against") and f"<@{opponent}>" in line, line

    text = await stats(arena, viewer, p1)
    check_rating(text, arena.elo.players[p1.id], rank=ranking.index(p1.id) + 1)
    assert "Versus members: 0W 2L 0D" in text, text
    assert "Versus me (easy): 0W 1L 0D" in text and "Versus me (hard): 0W 1L 0D" in text, text
    assert "Current streak: 4 losses" in text and "best: 0" in text, text
    recent = recent_lines(text)
    assert len(recent) == 4, text
    assert recent[0].startswith("- lost to") and "hard" in recent[0], recent
    assert recent[1].startswith("- lost to") and "easy" in recent[1], recent
    assert f"<@{players[10].id}>" in recent[2] and f"<@{champ.id}>" in recent[3], recent

    text = await stats(arena, viewer, players[1])
    check_rating(text, arena.elo.players[players[1].id], rank=ranking.index(players[1].id) + 1)
    assert "Versus members: 0W 1L 1D" in text and "Current streak: none" in text, text
    assert recent_lines(text)[0].startswith("- drew with"), text

    text = await stats(arena, viewer, regular)
    check_rating(text, arena.elo.players[regular.id], rank=ranking.index(regular.id) + 1)
    assert "Versus members: 16W 15L 0D" in text and "Current streak: 1 win " in text, text


async def stats(arena: Arena, viewer: User, member: User) -> str:
    channel = arena.channel("stats")
    answer = await arena.command(viewer, channel, "tictactoe-stats", member=member)
    assert answer.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE, answer
    message = answer.message
    assert message.pings.nobody and not (message.allowed_mentions or {}).get("users")
    assert f"<@{member.id}>" in message.text
    return message.text


def check_rating(text: str, player: Player, *, rank: int | None) -> None:
    """The rating as shown (rounded), provisional under 10 games, and the rank if ranked."""
    found = re.search(r"Rating\W*([0-9]+)", text)
    assert found and found[1] == f"{player.rating:.0f}", (text, player)
    assert ("provisional" in text) == (player.games < 10), text
    ranks = re.findall(r"#([0-9]+)", text)
    assert ranks == ([] if rank is None else [str(rank)]), (text, rank)


def recent_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ")]
