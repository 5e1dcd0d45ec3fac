"""The end-to-end suite's helpers and moves: the real bot, Discord users against it.

Each test module shares one bot: its ``arena`` fixture (conftest.py) starts an emulator, a
guild and the bot in the module's event loop once per module (``BOT_ENV`` in the module
adds settings, such as small timeouts), and every test makes its own channels and members
so that tests do not depend on each other. The module's tests must run in the module's
loop::

    pytestmark = pytest.mark.asyncio(loop_scope="module")

The bot sweeps at start-up, and then when a test says so (``arena.sweep()``): time is
moved in the database (``tests.overdue``), not waited for.

After each test the fixture checks what must always hold: no request the emulator could
not route, no interaction that failed or was never answered, no click answered twice, and
no ERROR line or traceback in what the bot logged during the test. At the end of the module
the bot must stop cleanly, as on SIGTERM.

The helpers read boards the way a user sees them (labels, styles, disabled buttons) and
check each board's shape and custom_ids on the way; the expected Elo ratings are computed
here, independently of ``bot.games.ratings``.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.i18n import N_, Translator, translator
from bot.launcher import BotProcess, answered_thinking
from discord_emulator import (
    Button,
    ButtonStyle,
    CallbackType,
    Channel,
    Emulator,
    Guild,
    InteractionHandle,
    InteractionResponse,
    InteractionType,
    Message,
    User,
)
from tests.e2e.inprocess import BotInProcess

EMPTY = "\u25aa\ufe0f"
"""An empty cell's emoji, ▪️. Every cell is one emoji and no label, so all are as wide."""
MARKS = {"\U0001f1fd": "X", "\U0001f17e\ufe0f": "O"}
"""The marks' emoji, 🇽 and 🅾️: the letter on a tile of its colour."""
WAIT = 10.0
"""The longest any single wait on the emulator may take."""

CELL_ID = re.compile(r"\Attt:cell:(?P<game>[0-9]+):(?P<cell>[0-9]+):(?P<move>[0-9]+)\Z")
TAKEN_ID = re.compile(r"\Attt:taken:(?P<game>[0-9]+):(?P<cell>[0-9]+)\Z")
OVER_ID = re.compile(r"\Attt:over:(?P<game>[0-9]+):(?P<cell>[0-9]+)\Z")
MARK_STYLES = {"X": ButtonStyle.PRIMARY, "O": ButtonStyle.DANGER}
"""Each mark's one colour (blurple X, red O); a winning line is green, the last move grey."""
TURN_TIMER = re.compile(r"<t:[0-9]+:R>")
_LOG_ERROR = re.compile(r"^\S+ \S+ (?:ERROR|CRITICAL) .*$", re.MULTILINE)


def log_errors(text: str) -> list[str]:
    """The lines of a bot log at ERROR or CRITICAL level."""
    return _LOG_ERROR.findall(text)


def assert_log_clean(text: str, *, errors: int = 0) -> None:
    """No ERROR line (but ``errors`` expected ones) and no traceback unless one was expected."""
    found = log_errors(text)
    assert len(found) == errors, "\n".join(found) or text
    if not errors:
        assert "Traceback" not in text, text


async def eventually(
    emu: Emulator, predicate: Callable[[], bool], what: str, within: float = WAIT
) -> None:
    """Wait up to ``within`` seconds for ``predicate``; fail saying ``what`` did not happen."""
    try:
        async with asyncio.timeout(within):
            await emu.wait_for(predicate)
    except TimeoutError:
        raise AssertionError(f"not within {within:g} s: {what}") from None


def edited_through_channel(emu: Emulator, message: Message) -> bool:
    """Whether the bot edited ``message`` through the channel endpoint (no interaction token),
    as it must for changes nobody clicked for: timeouts, expiries, restarts."""
    path = f"/channels/{message.channel.id}/messages/{message.id}"
    return any(r.method == "PATCH" and r.path == path and r.status == 200 for r in emu.requests)


# -- answers -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """An interaction and how the bot answered it (never "This interaction failed")."""

    handle: InteractionHandle
    response: InteractionResponse

    @property
    def type(self) -> CallbackType | None:
        return self.response.type

    @property
    def message(self) -> Message:
        assert self.response.message is not None, f"{self.handle!r} has no message"
        return self.response.message

    @property
    def ephemeral(self) -> bool:
        return self.response.ephemeral


def is_turn_ping(message: Message) -> bool:
    """Whether ``message`` is a turn notification: the bot's plain message (no components,
    never edited), public, sent to the channel or as a click's follow-up (type 0)."""
    return (
        not message.components
        and not message.ephemeral
        and message.type == 0
        and message.edits == 0
        and message.content.startswith("<@")
    )


def is_calloff(message: Message) -> bool:
    """Whether ``message`` is a proposal to call a game off (its Agree / Play on)."""
    return any(b.custom_id.startswith("ttt:calloff-") for b in message.buttons())


async def refusal(answer: Answer) -> str:
    """The text of the private reply a refused action got: the response itself, or after a
    deferral its follow-up. Fails unless the reply is ephemeral and the only answer."""
    if answer.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE:
        assert answer.ephemeral, f"a refusal must be ephemeral: {answer.message!r}"
        return answer.message.text
    assert answer.response.deferred, f"unexpected answer {answer.type!r}"
    (followup,) = await answer.handle.wait_followups(1)
    assert followup.ephemeral, f"a refusal must be ephemeral: {followup!r}"
    assert answer.handle.original_edits == 0, "a refused click must not change the board"
    return followup.text


def snapshot(message: Message) -> Message:
    """The message as a user's client still shows it while the bot edits the real one."""
    frozen = copy.copy(message)
    frozen.components = copy.deepcopy(message.components)
    return frozen


# -- boards --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BoardState:
    """A board message read as a user sees it, after its shape was checked."""

    message: Message
    game_id: int
    side: int
    marks: tuple[str | None, ...]
    cells: tuple[Button, ...]
    last: int | None
    """The cell shown as the last move (its mark on grey), unless the winning line has it."""
    controls: tuple[str | None, ...]
    """The control buttons' labels, in the game's language."""
    kinds: tuple[str, ...]
    """What the controls do, from their custom_ids: ("forfeit",) or ("rematch", "review")."""

    @property
    def move_no(self) -> int:
        return sum(mark is not None for mark in self.marks)

    @property
    def live(self) -> bool:
        return self.kinds == ("forfeit",)

    @property
    def text(self) -> str:
        return self.message.text

    def free(self) -> list[int]:
        """The cells that can be played: empty and enabled (marks are enabled too)."""
        return [
            i
            for i, button in enumerate(self.cells)
            if not button.disabled and self.marks[i] is None
        ]

    def cell_id(self, cell: int) -> str:
        custom_id = self.cells[cell].custom_id
        assert custom_id is not None
        return custom_id

    def success_cells(self) -> set[int]:
        return {i for i, b in enumerate(self.cells) if b.style == ButtonStyle.SUCCESS}


def shown(button: Button) -> str:
    """What a cell shows: "X", "O" or ``EMPTY``; a cell is one Unicode emoji, no label."""
    assert button.label is None, f"a cell has no label (every cell as wide): {button!r}"
    emoji = button.emoji or {}
    name = emoji.get("name")
    assert emoji.get("id") is None and (name == EMPTY or name in MARKS), f"cell {button!r}"
    return MARKS.get(name, EMPTY)


def read_board(message: Message, side: int) -> BoardState:
    """Check a board message's layout and custom_ids and return what it shows.

    Components V2; ``side`` rows of ``side`` cell buttons (rows top to bottom, cells left
    to right), each one emoji: empty cells ▪️ on grey, taken cells 🇽 on blurple or 🅾️ on
    red, green on the winning line, and never disabled (Discord fades disabled buttons);
    the last move, unless on the winning line, is its mark on grey, the only one; then one
    control row: Forfeit while live, Rematch (and Review once a move was made) at the end. A
    live board's empty cells carry ``ttt:cell:{game}:{cell}:{move_no}``, its marks
    ``ttt:taken:{game}:{cell}``; a finished board's cells ``ttt:over:{game}:{cell}``,
    and there the empty ones, only they, are disabled.
    """
    assert message.components_v2, f"a board is a Components V2 message: {message!r}"
    assert not message.ephemeral and not message.deleted
    grid = message.button_grid()
    assert len(grid) == side + 1, f"{side} board rows and a control row: {grid!r}"
    cells = [button for row in grid[:side] for button in row]
    assert all(len(row) == side for row in grid[:side]), grid
    marks: list[str | None] = []
    grey: list[int] = []
    for index, button in enumerate(cells):
        seen = shown(button)
        marks.append(None if seen == EMPTY else seen)
        if seen == EMPTY:
            assert button.style == ButtonStyle.SECONDARY, button
            continue
        assert not button.disabled, f"a mark must not be faded (disabled): {button!r}"
        assert button.style in (MARK_STYLES[seen], ButtonStyle.SUCCESS, ButtonStyle.SECONDARY)
        if button.style == ButtonStyle.SECONDARY:
            grey.append(index)
    move_no = sum(mark is not None for mark in marks)
    won = any(button.style == ButtonStyle.SUCCESS for button in cells)
    assert len(grey) == (1 if move_no and not won else 0), f"the last move on grey: {grey}"
    last = grey[0] if grey else None
    if last is not None:  # X moves first: the last move is X's after an odd number
        assert marks[last] == ("X" if move_no % 2 else "O"), (last, marks)
    controls = tuple(button.label for button in grid[side])
    kinds = tuple((button.custom_id or "").split(":")[1] for button in grid[side])
    games = set()
    for index, button in enumerate(cells):
        custom_id = button.custom_id or ""
        if kinds != ("forfeit",):
            found = OVER_ID.match(custom_id)
        elif marks[index] is None:
            found = CELL_ID.match(custom_id)
            assert found and int(found["move"]) == move_no, f"move number in {custom_id!r}"
        else:
            found = TAKEN_ID.match(custom_id)
        assert found, f"cell {index} custom_id {custom_id!r}"
        assert int(found["cell"]) == index, f"cell {index} has id {custom_id!r}"
        games.add(int(found["game"]))
    assert len(games) == 1, f"cells of several games: {games}"
    if kinds == ("forfeit",):
        assert not grid[side][0].disabled, "Forfeit works while the game is live"
        empty = [b for b, mark in zip(cells, marks, strict=True) if mark is None]
        assert all(not b.disabled for b in empty), "a live board's empty cells can be played"
    else:
        assert kinds in (("rematch", "review"), ("rematch",)), f"controls {controls!r}"
        assert (kinds == ("rematch", "review")) == (move_no > 0), controls
        for button, mark in zip(cells, marks, strict=True):
            assert button.disabled is (mark is None), f"on a finished board {button!r}"
    return BoardState(message, games.pop(), side, tuple(marks), tuple(cells), last, controls, kinds)


def lines(side: int, k: int) -> list[tuple[int, ...]]:
    """Every run of ``k`` cells in a row, column or diagonal of a ``side`` x ``side`` board."""
    found = []
    steps = ((0, 1), (1, 0), (1, 1), (1, -1))
    for row, col in itertools.product(range(side), repeat=2):
        for dr, dc in steps:
            end_row, end_col = row + dr * (k - 1), col + dc * (k - 1)
            if 0 <= end_row < side and 0 <= end_col < side:
                found.append(tuple((row + dr * i) * side + col + dc * i for i in range(k)))
    return found


def winner(marks: Sequence[str | None], side: int, k: int) -> tuple[str, set[tuple[int, ...]]]:
    """("X" or "O" or "", the winning lines) of a board; "" when nobody has a line."""
    for mark in ("X", "O"):
        won = {line for line in lines(side, k) if all(marks[c] == mark for c in line)}
        if won:
            return mark, won
    return "", set()


def pick_cell(state: BoardState, k: int, me: str) -> int:
    """A simple player: win if it can, else block, else the centre, a corner, the first free."""
    free = state.free()
    assert free, "no cell to play"
    other = "O" if me == "X" else "X"
    for mark in (me, other):
        for line in lines(state.side, k):
            values = [state.marks[c] for c in line]
            empty = [c for c in line if state.marks[c] is None]
            if values.count(mark) == k - 1 and len(empty) == 1 and empty[0] in free:
                return empty[0]
    last = state.side * state.side - 1
    for cell in (last // 2, 0, state.side - 1, last - state.side + 1, last):
        if cell in free:
            return cell
    return free[0]


def check_final(state: BoardState, k: int) -> str:
    """Check a finished board (disabled, winning line styled) and return "X", "O" or ""."""
    assert not state.live, f"the game should be over: {state.text}"
    assert [b.disabled for b in state.cells] == [m is None for m in state.marks]
    mark, won = winner(state.marks, state.side, k)
    success = state.success_cells()
    if mark:
        assert tuple(sorted(success)) in won, f"the winning line is highlighted: {success}"
    else:
        assert not success, f"nothing to highlight without a winner: {success}"
    return mark


# -- Elo, computed on our own ----------------------------------------------------------------


@dataclass
class Player:
    rating: float = 1500.0
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0


class EloBook:
    """The ratings the bot should show: 1500 to start, K = 40 for a player's first 30 rated
    games (20 after), each side updated with its own K; provisional under 10 games."""

    def __init__(self) -> None:
        self.players: dict[int, Player] = {}

    def add(self, a: int, b: int, score_a: float) -> None:
        """One rated game between members ``a`` and ``b`` in which ``a`` scored ``score_a``."""
        pa = self.players.setdefault(a, Player())
        pb = self.players.setdefault(b, Player())
        expect_a = 1 / (1 + 10 ** ((pb.rating - pa.rating) / 400))
        expect_b = 1 / (1 + 10 ** ((pa.rating - pb.rating) / 400))
        new_a = pa.rating + (40 if pa.games < 30 else 20) * (score_a - expect_a)
        new_b = pb.rating + (40 if pb.games < 30 else 20) * ((1 - score_a) - expect_b)
        for player, rating, score in ((pa, new_a, score_a), (pb, new_b, 1 - score_a)):
            player.rating = rating
            player.games += 1
            player.wins += score == 1
            player.losses += score == 0
            player.draws += score == 0.5

    def ranking(self) -> list[tuple[int, Player]]:
        """By rating (highest first), then more games, then the lower user id."""
        return sorted(
            self.players.items(),
            key=lambda item: (-round(item[1].rating, 6), -item[1].games, item[0]),
        )


# -- the arena -----------------------------------------------------------------------------


@dataclass
class Arena:
    """One emulator, one guild (the bot's dev server) and the bot serving it: in the
    test's loop (``BotInProcess``), or a process where the process is the subject."""

    emu: Emulator
    guild: Guild
    bot: BotInProcess | BotProcess
    workdir: Path
    elo: EloBook = field(default_factory=EloBook)
    expected_log_errors: int = 0
    """ERROR lines the current test expects the bot to log (a provoked failure)."""
    logged_errors: int = 0
    """ERROR lines expected by the module's tests so far."""
    database: str | Path | None = None
    """The bot's database (a SQLite file or a PostgreSQL URL), for tests that read it."""
    _names: Iterator[int] = field(default_factory=itertools.count)

    async def sweep(self) -> None:
        """One sweep of the bot's, now (timeouts, expiries, turn notifications), instead
        of waiting for its sweeper to come round; what it sent has gone out."""
        assert isinstance(self.bot, BotInProcess), "a process sweeps on its own clock"
        await self.bot.sweep()

    async def sweep_until(self, predicate: Callable[[], bool], what: str, sweeps: int = 5) -> None:
        """Sweep until ``predicate`` holds, as the sweeper's later rounds would (a request
        Discord refused is tried again by the next sweep); fail saying ``what`` did not
        happen within ``sweeps`` sweeps."""
        for _ in range(sweeps):
            await self.sweep()
            if predicate():
                return
        raise AssertionError(f"not within {sweeps} sweeps: {what}")

    def speaks(self) -> Translator:
        """The guild's language: that of its boards and challenges."""
        return translator(self.guild.locale)

    def channel(self, name: str = "games", *, slowmode: int = 0) -> Channel:
        return self.emu.add_text_channel(
            self.guild, f"{name}-{next(self._names)}", slowmode=slowmode
        )

    def member(self, name: str, *, permissions: int = 0) -> User:
        user = self.emu.add_user(f"{name}{next(self._names)}")
        self.emu.add_member(self.guild, user, permissions=permissions)
        return user

    def board(self, message: Message | int, side: int = 3) -> BoardState:
        """The current state of a board message."""
        current = self.emu.message(message if isinstance(message, int) else message.id)
        assert current is not None
        return read_board(current, side)

    def current(self, message: Message) -> Message:
        found = self.emu.message(message.id)
        assert found is not None
        return found

    async def answer(self, handle: InteractionHandle) -> Answer:
        response = await handle.response()
        assert not response.failed, f"{handle!r} failed; the bot said:\n{self.bot.log()}"
        return Answer(handle, response)

    async def command(self, user: User, channel: Channel, name: str, /, **options: Any) -> Answer:
        return await self.answer(await self.emu.run_command(user, channel, name, **options))

    async def click(self, user: User, message: Message, **which: Any) -> Answer:
        """``user`` clicks a button of ``message`` (as given: pass a snapshot for an old view)."""
        return await self.answer(await self.emu.click(user, message, **which))

    async def raw_click(self, user: User, message: Message, custom_id: str) -> Answer:
        """A click carrying ``custom_id`` on ``message`` as it is now, as a client with an
        outdated copy of the message would send it (or one that forged the id)."""
        handle = await self.emu.send_raw_interaction(
            user,
            message.channel,
            type=InteractionType.MESSAGE_COMPONENT,
            data={"custom_id": custom_id, "component_type": 2},
            message=self.current(message),
        )
        return await self.answer(handle)

    # -- games against the bot -----------------------------------------------------------

    async def start_bot_game(self, user: User, channel: Channel, **options: Any) -> Message:
        """``/tictactoe`` without an opponent; the board message once it is posted."""
        answer = await self.command(user, channel, "tictactoe", **options)
        if answer.type is CallbackType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE:
            message = await answer.handle.edited_original()
        else:
            assert answer.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE, answer
            message = answer.message
        assert not message.ephemeral and message.components_v2, message
        return self.current(message)

    async def move(
        self,
        user: User,
        board: Message,
        cell: int,
        *,
        side: int = 3,
        thinking: bool | None = False,
    ) -> Answer:
        """``user`` plays ``cell``; the click must get an update (7) that redraws the board:
        with the bot's reply in it, or with ``thinking`` showing the player's move and
        "My move…", followed by one edit with the reply (either one with ``None``)."""
        state = self.board(board, side)
        answer = await self.click(user, state.message, custom_id=state.cell_id(cell))
        assert answer.type is CallbackType.UPDATE_MESSAGE, (answer, self.bot.log())
        if thinking is None:
            thinking = answered_thinking(answer.handle)
        if thinking:
            assert answered_thinking(answer.handle), (answer.handle.callback_data, self.bot.log())
            await answer.handle.edited_original()
            assert answer.handle.original_edits == 1
        else:
            assert not answered_thinking(answer.handle)
        assert not answer.handle.followups, answer.handle.followups
        return answer

    async def play_out(
        self,
        user: User,
        board: Message,
        me: str,
        *,
        side: int = 3,
        k: int = 3,
        thinking: bool | None = False,
    ) -> BoardState:
        """Play ``pick_cell`` moves for ``user`` (``me`` = their mark) against the bot until
        the game ends; each click must show the move and the bot's reply at once."""
        state = self.board(board, side)
        for _ in range(side * side):
            if not state.live:
                break
            assert f"<@{user.id}>, your move" in state.text, state.text
            cell = pick_cell(state, k, me)
            await self.move(user, board, cell, side=side, thinking=thinking)
            after = self.board(board, side)
            assert after.marks[cell] == me, f"my {me} at cell {cell}: {after.marks}"
            changed = [i for i in range(side * side) if after.marks[i] != state.marks[i]]
            assert all(state.marks[i] is None for i in changed)
            if after.live:
                assert len(changed) == 2, f"my move and the bot's reply at once: {changed}"
                reply = next(i for i in changed if i != cell)
                assert after.last == reply, f"the bot's reply {reply} is marked: {after.last}"
            else:
                assert len(changed) in (1, 2), changed
            state = after
        assert not state.live, "the game should have ended"
        return state

    # -- games between members -----------------------------------------------------------

    async def challenge(
        self, challenger: User, opponent: User, channel: Channel, **options: Any
    ) -> Message:
        """``/tictactoe opponent:`` -> a public challenge that pings only the opponent."""
        answer = await self.command(challenger, channel, "tictactoe", opponent=opponent, **options)
        assert answer.type is CallbackType.CHANNEL_MESSAGE_WITH_SOURCE, answer
        message = answer.message
        assert not message.ephemeral
        assert f"<@{opponent.id}>" in message.text
        allowed = message.allowed_mentions or {}
        assert [int(u) for u in allowed.get("users", [])] == [opponent.id], allowed
        assert not allowed.get("parse") and not allowed.get("roles"), allowed
        assert message.pings.users <= {opponent.id} and not message.pings.everyone
        labels = [(b.label, b.disabled) for b in message.buttons()]
        t = self.speaks()
        expected = [(t(N_(word)), False) for word in ("Accept", "Decline", "Withdraw")]
        assert labels == expected, labels
        return self.current(message)

    async def accept(self, opponent: User, challenge: Message, side: int = 3) -> BoardState:
        accept = self.speaks()(N_("Accept"))
        answer = await self.click(opponent, self.current(challenge), label=accept)
        assert answer.type is CallbackType.UPDATE_MESSAGE, (answer, self.bot.log())
        state = self.board(challenge, side)
        assert state.live and state.move_no == 0
        return state

    async def member_game(
        self, x: User, o: User, channel: Channel, *, side: int = 3, **options: Any
    ) -> Message:
        """A started game between two members, ``x`` (the challenger) to move. Nobody is
        pinged by the start: ``x`` only if they let their turn wait (the sweep's)."""
        size = {"size": f"{side}x{side}"} if side != 3 else {}
        challenge = await self.challenge(x, o, channel, first="me", **size, **options)
        state = await self.accept(o, challenge, side)
        when = TURN_TIMER.search(state.text)
        assert when is not None, state.text
        move = N_("{player}, your move — time runs out {when}.", player=x.mention, when=when[0])
        assert self.speaks()(move) in state.text, state.text
        # The challenge notified ``o`` when posted; the board (its edit) notifies nobody.
        assert state.message.pings.users <= {o.id} and state.message.mentions.nobody
        return state.message

    # -- turn notifications --------------------------------------------------------------

    def turn_pings(self, channel: Channel, *, deleted: bool = False) -> list[Message]:
        """The bot's turn notifications in ``channel``, oldest first (``is_turn_ping``:
        sent to the channel, or as a click's follow-up); only those still standing
        unless ``deleted``."""
        return [
            message
            for message in self.emu.messages(channel, include_deleted=deleted)
            if message.author is self.emu.bot and is_turn_ping(message)
        ]

    async def turn_ping(self, user: User, channel: Channel, *, after: int) -> Message:
        """The turn notification sent once ``after`` had been sent in ``channel``: it must
        notify ``user`` alone, and be the only one standing there. The sweep sends it
        (a bot process's own, every second)."""
        if isinstance(self.bot, BotInProcess):
            await self.sweep()
        await eventually(
            self.emu,
            lambda: len(self.turn_pings(channel, deleted=True)) > after,
            f"a turn notification for {user.name}",
            WAIT,
        )
        sent = self.turn_pings(channel, deleted=True)
        assert len(sent) == after + 1, sent
        ping = sent[-1]
        assert ping.content.startswith(f"<@{user.id}>"), ping.content
        assert ping.pings.users == {user.id} and not ping.pings.roles, ping.pings
        assert not ping.pings.everyone
        await eventually(
            self.emu,
            lambda: self.turn_pings(channel) == [ping],
            "the older turn notifications deleted",
            WAIT,
        )
        return ping

    async def ask_forfeit(self, user: User, board: Message) -> Message:
        """Forfeit on the board: a private question (confirm, [call off], keep playing),
        and nothing changes yet. The question's message."""
        before = self.current(board).text
        controls = self.current(board).button_grid()[-1]
        (forfeit,) = [b.custom_id for b in controls if (b.custom_id or "").startswith("ttt:forf")]
        asked = await self.click(user, self.current(board), custom_id=forfeit)
        # A deferred update: the board stays as it is, and the click's token redraws it
        # once the player answers the question, which is a follow-up for them alone.
        assert asked.type is CallbackType.DEFERRED_UPDATE_MESSAGE, (asked, self.bot.log())
        (question,) = await asked.handle.wait_followups(1)
        assert question.ephemeral and question.pings.nobody, question
        kinds = [(b.custom_id or "").split(":")[1] for b in question.buttons()]
        assert kinds[0] == "quit" and kinds[-1] == "keep", kinds
        assert self.current(board).text == before, "asking changes nothing"
        return question

    async def forfeit(self, user: User, board: Message, side: int = 3) -> BoardState:
        """Forfeit as a player does: the board's Forfeit asks privately, its danger
        button confirms (the question becomes the answer, the board is redrawn): a
        forfeit, or an abort if not both players had moved."""
        question = await self.ask_forfeit(user, board)
        confirm = question.buttons()[0]
        assert confirm.style == ButtonStyle.DANGER, confirm
        done = await self.click(user, question, custom_id=confirm.custom_id)
        assert done.type is CallbackType.UPDATE_MESSAGE, (done, self.bot.log())
        await self.emu.wait_for(lambda: not self.board(board, side).live)
        state = self.board(board, side)
        assert "forfeited" in state.text or "Aborted" in state.text, state.text
        return state

    async def quick_game(self, winner: User, loser: User, channel: Channel) -> None:
        """A rated member game the loser forfeits once both moved (recorded in ``elo``)."""
        board = await self.member_game(winner, loser, channel)
        await self.move(winner, board, 4)
        await self.move(loser, board, 0)
        state = await self.forfeit(loser, board)
        assert "forfeited" in state.text, state.text
        self.elo.add(winner.id, loser.id, 1.0)


# -- fixtures ------------------------------------------------------------------------------
