"""Messages with components: the board, challenges, the leaderboard, and their buttons.

Every board is a Components V2 ``LayoutView``, whatever its size. A 5x5 board needs all
five classic action rows, which leaves no room for Forfeit/Rematch/Review; in V2 the
board rows, the control row and the text above them live in one message (at most 40
components: a 5x5 board is 1 text + 5 rows + 25 cells + 1 row + up to 2 buttons = 34).
One rendering path then serves every size.

Every custom_id carries all its click needs (``ttt:cell:{game}:{cell}:{move_no}``,
``ttt:forfeit:{game}``, ...), so buttons keep working after a restart and a click on an
out-of-date board is recognised by its move number. Cells, the hot path, are read from
the gateway payload (``CellClick``) and board payloads are built as plain dicts; the
other buttons are ``DynamicItem``s whose ``from_custom_id`` only parses. Handlers load
from the database, so every failure is answered. Every rejected click gets an
ephemeral reply: discord.py gives none if ``interaction_check`` says no, so the checks
happen in the handlers (through the service).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

import aiohttp
import discord
from discord import ButtonStyle, Interaction, InteractionResponded, ui
from discord.enums import InteractionResponseType
from discord.webhook.async_ import (
    handle_message_parameters,
    interaction_message_response_params,
)

from bot import render
from bot.errors import (
    ChallengeExpired,
    GameError,
    GameOver,
    NotAPlayer,
    NotChallenged,
    StaleBoard,
)
from bot.models import Challenge, ChallengeStatus, Game, GameStatus, LeaderboardPage
from bot.rest import AnswerClient
from engine import Mark

if TYPE_CHECKING:
    from discord.state import ConnectionState

    from bot.client import TicTacToeBot

__all__ = [
    "CELL_ID",
    "DYNAMIC_ITEMS",
    "EMPTY_LABEL",
    "AcceptButton",
    "DeclineButton",
    "ForfeitButton",
    "LeaderboardPageButton",
    "RematchButton",
    "ReviewButton",
    "admit",
    "board_components",
    "board_view",
    "cell_custom_id",
    "challenge_view",
    "control_button",
    "control_payload",
    "edit_original",
    "guarded",
    "leaderboard_view",
    "play_cell",
    "post_new",
    "reply_error",
    "route_component",
    "send_ephemeral",
    "send_new_message",
    "turn_mentions",
    "update_message",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

EMPTY_LABEL = "\u200b"  # a zero-width space: Discord needs a label or an emoji
GENERIC_ERROR = "Something went wrong on my side; it has been logged. Please try again."
DM_MESSAGE = "Tic-tac-toe is played in servers: invite me to one and use /tictactoe there."
SHUTDOWN_MESSAGE = "I'm restarting; try again in a few seconds."
UNKNOWN_INTERACTION = 10062  # Discord's error code for an interaction it no longer accepts

_ID = r"[1-9][0-9]{0,17}"  # database ids: positive, at most 18 digits
_MARK_STYLE = {Mark.X: ButtonStyle.primary, Mark.O: ButtonStyle.danger}


# -- answering interactions --------------------------------------------------------------


async def send_ephemeral(interaction: Interaction, text: str) -> None:
    """An ephemeral reply, as the response if there was none yet, else as a follow-up."""
    mentions = discord.AllowedMentions.none()
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=mentions)
    else:
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=mentions)


async def update_message(
    interaction: Interaction, view: ui.LayoutView, mentions: discord.AllowedMentions
) -> None:
    """``interaction.response.edit_message(view=...)``, without the edited message back.

    discord.py always asks Discord to send the edited message back (``with_response``)
    and parses it into a ``Message``; a board answer never reads it, and skipping that
    saved about 6% of the bot's CPU under load (bench/load.py), and the emulator's
    encoding of it. See ``_post_callback`` for what may be sent this way.
    """
    await _respond(interaction, InteractionResponseType.message_update, view, mentions)


async def send_new_message(
    interaction: Interaction, view: ui.LayoutView, mentions: discord.AllowedMentions
) -> int | None:
    """``interaction.response.send_message(view=...)``; returns the new message's id, or
    None if Discord did not say. discord.py would parse the whole message that comes
    back (an ``InteractionMessage`` with every button); only its id is read here."""
    kind = InteractionResponseType.channel_message
    data = await _respond(interaction, kind, view, mentions, with_response=True)
    about = data.get("interaction") if isinstance(data, dict) else None
    found = about.get("response_message_id") if isinstance(about, dict) else None
    return None if found is None else int(found)


async def _respond(
    interaction: Interaction,
    kind: InteractionResponseType,
    view: ui.LayoutView,
    mentions: discord.AllowedMentions,
    *,
    with_response: bool = False,
) -> Any:
    """``_post_callback`` for an ``Interaction`` not yet answered; marks it answered."""
    if interaction.response.is_done():
        raise InteractionResponded(interaction)
    state, token = interaction._state, interaction.token
    data = await _post_callback(
        state, interaction.id, token, kind, view, mentions, with_response=with_response
    )
    interaction.response._response_type = kind
    return data


async def edit_original(
    interaction: Interaction, view: ui.LayoutView, mentions: discord.AllowedMentions
) -> int:
    """``interaction.edit_original_response(view=...)``; returns the message's id.

    Discord sends the edited message back whatever we ask; discord.py would parse it into
    an ``InteractionMessage`` with every button (25 cells on a 5x5 board), and only its
    id is read here. Same client, retries and view rule as ``_post_callback``.
    """
    state = interaction._state
    data = await _patch_original(
        state, interaction.application_id, interaction.token, view, mentions
    )
    return int(data["id"])


def _answers(state: ConnectionState) -> AnswerClient:
    """The bot's client for answers (``bot.rest``), made at start-up."""
    answers = cast("TicTacToeBot", state._get_client()).answers
    if answers is None:
        raise RuntimeError("the bot is not started: it has no answer client yet")
    return answers


async def _post_callback(
    state: ConnectionState,
    interaction_id: int,
    token: str,
    kind: InteractionResponseType,
    view: ui.LayoutView,
    mentions: discord.AllowedMentions,
    *,
    with_response: bool = False,
) -> Any:
    """Answer an interaction with ``view`` as discord.py's ``InteractionResponse`` would,
    but through the bot's lean client (``bot.rest``), returning the callback's raw JSON
    (None without ``with_response``) instead of parsing it into objects; the caller
    marks the response done. Only views that need nothing from discord.py's view store
    may be sent this way, as it never sees them: a ``PrebuiltView``, or one whose
    buttons are ``DynamicItem``s (registered at start-up, see ``DYNAMIC_ITEMS``).
    """
    params = interaction_message_response_params(
        type=kind.value,
        view=view,
        allowed_mentions=mentions,
        previous_allowed_mentions=state.allowed_mentions,
    )
    return await _answers(state).post_callback(
        interaction_id, token, params.payload, with_response=with_response
    )


async def _patch_original(
    state: ConnectionState,
    application_id: int,
    token: str,
    view: ui.LayoutView,
    mentions: discord.AllowedMentions,
) -> Any:
    """Edit an interaction's original response to ``view``; Discord's raw JSON back."""
    with handle_message_parameters(
        view=view, allowed_mentions=mentions, previous_allowed_mentions=state.allowed_mentions
    ) as params:
        return await _answers(state).edit_original(application_id, token, params.payload)


class CellClick:
    """A click on a board cell, read straight from the gateway's INTERACTION_CREATE.

    Building discord.py's ``Interaction`` (with the clicked message and every button on
    it) and dispatching it through ``on_interaction`` took about 8% of the bot's CPU under
    bench/load.py, and playing a cell needs only the ids kept here. The
    ``Interaction`` is built on first use of ``interaction``: a refusal, an error to
    answer. Answers go out as ``update_message``'s do.
    """

    __slots__ = (
        "_answered",
        "_data",
        "_interaction",
        "_state",
        "application_id",
        "cell",
        "channel_id",
        "game_id",
        "guild_id",
        "id",
        "message_id",
        "move_no",
        "token",
        "user_id",
    )

    def __init__(
        self,
        state: ConnectionState,
        match: re.Match[str],
        *,
        data: dict[str, Any] | None = None,
        interaction: Interaction | None = None,
    ) -> None:
        """From the gateway's ``data``, or from discord.py's ``interaction``."""
        self._state = state
        self._data = data
        self._interaction = interaction
        self._answered: InteractionResponseType | None = None
        self.game_id, self.cell, self.move_no = (int(match[g]) for g in ("game", "cell", "move"))
        if interaction is not None:
            self.id, self.token = interaction.id, interaction.token
            self.application_id = interaction.application_id
            self.guild_id, self.channel_id = interaction.guild_id, interaction.channel_id
            self.user_id = interaction.user.id
            self.message_id = None if interaction.message is None else interaction.message.id
            return
        assert data is not None
        self.id, self.token = int(data["id"]), str(data["token"])
        self.application_id = int(data["application_id"])
        self.guild_id = _snowflake(data.get("guild_id"))
        self.channel_id = _snowflake(data.get("channel_id"))
        member = data.get("member")
        user = member["user"] if isinstance(member, dict) else data["user"]
        self.user_id = int(user["id"])
        message = data.get("message")
        self.message_id = _snowflake(message.get("id")) if isinstance(message, dict) else None

    @classmethod
    def from_gateway(cls, data: Any, state: ConnectionState) -> CellClick | None:
        """The cell click in an INTERACTION_CREATE payload; None for anything else, and
        for a payload this cannot read (discord.py then parses it, and ``route_component``
        plays it if it is a cell after all)."""
        try:
            if data["type"] != discord.InteractionType.component.value:
                return None
            custom_id = data["data"]["custom_id"]
            match = CELL_ID.fullmatch(custom_id) if isinstance(custom_id, str) else None
            return None if match is None else cls(state, match, data=data)
        except (KeyError, TypeError, ValueError):
            return None

    @property
    def client(self) -> discord.Client:
        return self._state._get_client()

    @property
    def interaction(self) -> Interaction:
        """discord.py's ``Interaction`` for this click, built on first use."""
        if self._interaction is None:
            self._interaction = Interaction(data=self._data, state=self._state)  # type: ignore[arg-type]
            if self._answered is not None:
                self._interaction.response._response_type = self._answered
        return self._interaction

    def is_answered(self) -> bool:
        if self._interaction is not None:
            return self._interaction.response.is_done()
        return self._answered is not None

    async def update(self, view: ui.LayoutView, mentions: discord.AllowedMentions) -> None:
        """``update_message`` for this click."""
        if self._interaction is not None:
            await update_message(self._interaction, view, mentions)
            return
        if self._answered is not None:
            raise InteractionResponded(self.interaction)
        kind = InteractionResponseType.message_update
        await _post_callback(self._state, self.id, self.token, kind, view, mentions)
        self._answered = kind

    async def edit_original(self, view: ui.LayoutView, mentions: discord.AllowedMentions) -> None:
        """``edit_original`` for this click."""
        await _patch_original(self._state, self.application_id, self.token, view, mentions)

    def release(self) -> None:
        if self._interaction is not None:
            release(self._interaction)


def _snowflake(value: Any) -> int | None:
    return None if value is None else int(value)


async def reply_error(interaction: Interaction, error: BaseException) -> None:
    """Answer a failed interaction: a GameError's own text, else a generic line + a log."""
    if isinstance(error, GameError):
        text = error.user_message
    elif isinstance(error, discord.NotFound) and error.code == UNKNOWN_INTERACTION:
        # Discord gave up on the interaction (no answer within 3 s): nobody to tell.
        log.warning("Too late to answer %s: %s", _describe(interaction), error)
        return
    else:
        log.error(
            "Unexpected error handling %s from user %s in guild %s",
            _describe(interaction),
            interaction.user.id,
            interaction.guild_id,
            exc_info=error,
        )
        text = GENERIC_ERROR
    try:
        await send_ephemeral(interaction, text)
    except (discord.HTTPException, aiohttp.ClientError, RuntimeError) as exc:  # a dead
        # token, or a session closed at shutdown
        log.warning("Could not report an error to the user: %s", exc)


def _describe(interaction: Interaction) -> str:
    if interaction.command is not None:
        return f"/{interaction.command.qualified_name}"
    data = cast("dict[str, Any]", interaction.data or {})
    return f"component {data.get('custom_id', '?')!r}"


async def admit(action: Interaction | CellClick) -> TicTacToeBot | None:
    """The bot, if this interaction may go ahead; else it is answered (a DM, a shutdown)."""
    bot = cast("TicTacToeBot", action.client)
    refusal = None
    if action.guild_id is None:
        refusal = DM_MESSAGE
    elif bot.is_shutting_down:
        refusal = SHUTDOWN_MESSAGE
    if refusal is None:
        return bot
    interaction = _interaction_of(action)
    try:
        await send_ephemeral(interaction, refusal)
    except (discord.HTTPException, aiohttp.ClientError, RuntimeError) as exc:  # "Session is
        # closed": the answer raced the shutdown
        log.warning("Could not answer %s: %s", _describe(interaction), exc)
    return None


@contextlib.asynccontextmanager
async def guarded(action: Interaction | CellClick) -> AsyncIterator[None]:
    """Run one admitted user action: count it in flight, answer any error it raises.

    An exception inside is answered ephemerally (see ``reply_error``) and not re-raised.
    The action is the interaction's last user, so it is released at the end (see
    ``release``): nothing may answer it after the block.
    """
    bot = cast("TicTacToeBot", action.client)
    async with bot.in_flight():
        try:
            yield
        except Exception as error:
            await reply_error(_interaction_of(action), error)
        finally:
            if isinstance(action, CellClick):
                action.release()
            else:
                release(action)


def _interaction_of(action: Interaction | CellClick) -> Interaction:
    return action.interaction if isinstance(action, CellClick) else action


def turn_mentions(game: Game) -> discord.AllowedMentions:
    """Only the player whose turn it is may be pinged by a board message."""
    player = game.current_player_id
    if player is None:
        return discord.AllowedMentions.none()
    return discord.AllowedMentions(
        everyone=False, roles=False, replied_user=False, users=[discord.Object(player)]
    )


# -- the board ------------------------------------------------------------------------


CELL_ID = re.compile(rf"\Attt:cell:(?P<game>{_ID}):(?P<cell>[0-9]{{1,2}}):(?P<move>[0-9]{{1,2}})\Z")
"""A cell's custom_id: the game, the cell (0-based) and the move number the board showed.

Cells are not ``DynamicItem``s: discord.py would rebuild the whole clicked message as a
view before each callback, about a tenth of a click's CPU. The bot takes cell clicks from
the gateway payload itself (``CellClick.from_gateway``) and calls ``play_cell``;
``route_component`` plays any that reach discord.py all the same.
"""


QUICK_REPLY_SECONDS = 1.0
"""How long a click waits for a bot reply expected to be quick (a small board, a weak
level) before answering with "My move…" anyway: such a reply can still queue behind
long searches in the pool, and Discord allows 3 seconds for the answer."""


def cell_custom_id(game_id: int, cell: int, move_no: int) -> str:
    return f"ttt:cell:{game_id}:{cell}:{move_no}"


async def play_cell(click: CellClick) -> None:
    """A click on a board cell: play it, and answer with the new board.

    The player's move is checked and stored in one transaction before anything is sent,
    so a refused click gets a plain ephemeral answer. A bot reply that needs a search
    (bigger boards) is not awaited inside Discord's 3 seconds: the answer shows the
    player's move with "My move…", and the board is edited again when the search is done.
    The same happens when a reply expected to be quick is not there within
    QUICK_REPLY_SECONDS.
    """
    if (bot := await admit(click)) is None:
        return
    async with guarded(click):
        service = bot.service
        try:
            game = await service.play(
                click.game_id,
                click.user_id,
                click.cell,
                click.move_no,
                guild_id=click.guild_id,
                await_reply=False,
            )
        except (StaleBoard, GameOver) as error:
            # The clicked board is out of date: perhaps the answer to an earlier click
            # never reached Discord (an error, a timeout, a crash after the commit).
            await reply_error(click.interaction, error)
            await refresh_board(
                bot,
                click.game_id,
                guild_id=click.guild_id,
                channel_id=click.channel_id,
                message_id=click.message_id,
            )
            return
        if game.status is GameStatus.BOT_TO_MOVE:
            reply = asyncio.ensure_future(service.bot_reply(game))
            if not service.is_slow_search(game):  # usually quick, unless the pool is busy
                await asyncio.wait({reply}, timeout=QUICK_REPLY_SECONDS)
            if not reply.done():
                await click.update(board_view(game), discord.AllowedMentions.none())
                game = await reply
                await click.edit_original(board_view(game), turn_mentions(game))
                return
            game = reply.result()
        await click.update(board_view(game), turn_mentions(game))


async def refresh_board(
    bot: TicTacToeBot,
    game_id: int,
    *,
    guild_id: int | None,
    channel_id: int | None,
    message_id: int | None,
) -> None:
    """Redraw the clicked board message from the database, through its channel.

    Each edit is followed by a fresh read, and repeated (a few times at most) if the game
    moved on meanwhile, so the message ends at the stored state even if another click's
    answer lands in between (every answer is sent after its commit). A game waiting for
    the bot is left alone: whoever computes that move draws it.
    """
    if message_id is None or channel_id is None:
        return
    message = bot.get_partial_messageable(channel_id).get_partial_message(message_id)
    drawn: tuple[int, GameStatus] | None = None
    for _attempt in range(3):
        try:
            game = await bot.service.get_game(game_id, guild_id=guild_id)
        except GameError:
            return
        state = (game.move_no, game.status)
        if state == drawn or game.status is GameStatus.BOT_TO_MOVE:
            return
        try:
            await message.edit(
                view=board_view(game), allowed_mentions=discord.AllowedMentions.none()
            )
        except discord.HTTPException as exc:
            log.warning("Could not redraw the board of game %s: %s", game_id, exc)
            return
        drawn = state


class ForfeitButton(ui.DynamicItem[ui.Button], template=rf"\Attt:forfeit:(?P<game>{_ID})\Z"):
    """Resign a live game."""

    def __init__(self, game_id: int) -> None:
        self.game_id = game_id
        super().__init__(control_button("forfeit", game_id))

    @classmethod
    async def from_custom_id(
        cls, interaction: Interaction, item: ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(int(match["game"]))

    async def callback(self, interaction: Interaction) -> None:
        if (bot := await admit(interaction)) is None:
            return
        async with guarded(interaction):
            try:
                game = await bot.service.forfeit(
                    self.game_id, interaction.user.id, guild_id=interaction.guild_id
                )
            except GameOver as error:
                # Perhaps the clock ran out first (settled just now): show how it ended.
                await reply_error(interaction, error)
                source = interaction.message
                message_id = None if source is None else source.id
                await refresh_board(
                    bot,
                    self.game_id,
                    guild_id=interaction.guild_id,
                    channel_id=interaction.channel_id,
                    message_id=message_id,
                )
                return
            await update_message(interaction, board_view(game), discord.AllowedMentions.none())


class RematchButton(ui.DynamicItem[ui.Button], template=rf"\Attt:rematch:(?P<game>{_ID})\Z"):
    """Play again: a new game against the bot, or a new challenge to the same member."""

    def __init__(self, game_id: int) -> None:
        self.game_id = game_id
        super().__init__(control_button("rematch", game_id))

    @classmethod
    async def from_custom_id(
        cls, interaction: Interaction, item: ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(int(match["game"]))

    async def callback(self, interaction: Interaction) -> None:
        if (bot := await admit(interaction)) is None:
            return
        async with guarded(interaction):
            service = bot.service
            old = await service.get_game(self.game_id, guild_id=interaction.guild_id)
            if old.mark_of(interaction.user.id) is None:
                raise NotAPlayer()
            if old.is_bot_game and may_search_slowly(old.width, old.height):
                await interaction.response.defer(thinking=True)
            result = await service.rematch(self.game_id, interaction.user.id)
            await post_new(interaction, result)


async def post_new(interaction: Interaction, result: Game | Challenge) -> None:
    """Post a new board or challenge as this interaction's response and record its message.

    After a deferral (``thinking``) the placeholder becomes the message.
    """
    bot = cast("TicTacToeBot", interaction.client)
    if isinstance(result, Game):
        view, mentions = board_view(result), turn_mentions(result)
    else:
        view, mentions = challenge_view(result), challenge_mentions(result)
    if interaction.response.is_done():
        message_id = await edit_original(interaction, view, mentions)
    else:
        found = await send_new_message(interaction, view, mentions)
        message_id = (await interaction.original_response()).id if found is None else found
    if isinstance(result, Game):
        await bot.service.set_game_message(result.id, message_id)
    else:
        await bot.service.set_challenge_message(result.id, message_id)


def may_search_slowly(width: int, height: int) -> bool:
    """Whether the bot's opening move here might outlast the 3-second window (as the service
    judges replies: only 3x3 is always instant)."""
    return width * height > 9


class ReviewButton(ui.DynamicItem[ui.Button], template=rf"\Attt:review:(?P<game>{_ID})\Z"):
    """Show the finished game's moves and the move that decided it, to the clicker only."""

    def __init__(self, game_id: int) -> None:
        self.game_id = game_id
        super().__init__(control_button("review", game_id))

    @classmethod
    async def from_custom_id(
        cls, interaction: Interaction, item: ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(int(match["game"]))

    async def callback(self, interaction: Interaction) -> None:
        if (bot := await admit(interaction)) is None:
            return
        async with guarded(interaction):
            game = await bot.service.get_game(self.game_id, guild_id=interaction.guild_id)
            review = await bot.service.review(self.game_id, guild_id=interaction.guild_id)
            await send_ephemeral(interaction, render.review_text(game, review))


class PrebuiltView(ui.LayoutView):
    """A Components V2 message whose component payload was built directly as dicts.

    Building discord.py items for a board, on every click, cost about a sixth of the
    click's CPU. discord.py asks a view it sends only for ``to_components()`` and
    ``has_components_v2()``; with no items, it keeps nothing in its view store (our
    buttons are routed by custom_id). tests/bot/test_render.py rebuilds every payload
    with discord.py's own component classes to check that it reads back unchanged.
    """

    def __init__(self, components: list[dict[str, Any]]) -> None:
        super().__init__(timeout=None)
        self._components = components

    def to_components(self) -> list[dict[str, Any]]:
        return self._components

    def has_components_v2(self) -> bool:
        return True


_CONTROLS: dict[str, tuple[str, str, ButtonStyle]] = {
    "forfeit": ("Forfeit", "🏳️", ButtonStyle.secondary),
    "rematch": ("Rematch", "🔁", ButtonStyle.primary),
    "review": ("Review", "🔍", ButtonStyle.secondary),
}
"""A board's control buttons (label, emoji, style), by the custom_id's kind."""


def control_button(kind: str, game_id: int) -> ui.Button[Any]:
    """A board control as a discord.py button, for its ``DynamicItem``."""
    label, emoji, style = _CONTROLS[kind]
    return ui.Button(label=label, emoji=emoji, style=style, custom_id=f"ttt:{kind}:{game_id}")


def control_payload(kind: str, game_id: int) -> dict[str, Any]:
    """``control_button(kind, game_id).to_component_dict()``, without building the button
    and its ``DynamicItem`` on every click (about 3% of a click's CPU)."""
    label, emoji, style = _CONTROLS[kind]
    return {
        "type": 2,
        "style": style.value,
        "disabled": False,
        "label": label,
        "custom_id": f"ttt:{kind}:{game_id}",
        "emoji": {"id": None, "name": emoji},
    }


def _cell(custom_id: str, label: str, style: ButtonStyle, disabled: bool) -> dict[str, Any]:
    """A cell's payload, keyed as discord.py's ``Button.to_dict`` writes it."""
    return {
        "type": 2,
        "style": style.value,
        "disabled": disabled,
        "label": label,
        "custom_id": custom_id,
    }


def board_components(game: Game) -> list[dict[str, Any]]:
    """The board message's payload: text, one action row per board row, then the controls."""
    board = game.board
    outcome = board.outcome()
    line = frozenset(outcome.line) if outcome is not None else frozenset()
    locked = not game.is_live or game.current_player_id is None
    components: list[dict[str, Any]] = [{"type": 10, "content": render.game_text(game)}]
    for row in range(game.height):
        buttons = []
        for cell in range(row * game.width, (row + 1) * game.width):
            mark = board.cell(cell)
            if mark is None:
                label, style, disabled = EMPTY_LABEL, ButtonStyle.secondary, locked
            else:
                label, style, disabled = mark.value, _MARK_STYLE[mark], True
            if cell in line:
                style = ButtonStyle.success
            custom_id = cell_custom_id(game.id, cell, game.move_no)
            buttons.append(_cell(custom_id, label, style, disabled))
        components.append({"type": 1, "components": buttons})
    # Their clicks are routed by ForfeitButton, RematchButton and ReviewButton.
    controls = [control_payload("forfeit" if game.is_live else "rematch", game.id)]
    if not game.is_live and game.moves:
        controls.append(control_payload("review", game.id))
    components.append({"type": 1, "components": controls})
    return components


def board_view(game: Game) -> ui.LayoutView:
    """The whole board message (see ``board_components``)."""
    return PrebuiltView(board_components(game))


# -- challenges -----------------------------------------------------------------------


class AcceptButton(ui.DynamicItem[ui.Button], template=rf"\Attt:accept:(?P<challenge>{_ID})\Z"):
    """The challenged member accepts; the challenge message becomes the board."""

    def __init__(self, challenge_id: int, *, disabled: bool = False) -> None:
        self.challenge_id = challenge_id
        super().__init__(
            ui.Button(
                label="Accept",
                style=ButtonStyle.success,
                disabled=disabled,
                custom_id=f"ttt:accept:{challenge_id}",
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: Interaction, item: ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(int(match["challenge"]))

    async def callback(self, interaction: Interaction) -> None:
        if (bot := await admit(interaction)) is None:
            return
        async with guarded(interaction):
            user_id = interaction.user.id
            game = await answer_challenge(
                bot, interaction, self.challenge_id, lambda c: bot.service.accept(c.id, user_id)
            )
            if game is None:
                return
            await update_message(interaction, board_view(game), turn_mentions(game))
            if interaction.message is not None:
                await bot.service.set_game_message(game.id, interaction.message.id)


class DeclineButton(ui.DynamicItem[ui.Button], template=rf"\Attt:decline:(?P<challenge>{_ID})\Z"):
    """The challenged member declines, or the challenger withdraws."""

    def __init__(self, challenge_id: int, *, disabled: bool = False) -> None:
        self.challenge_id = challenge_id
        super().__init__(
            ui.Button(
                label="Decline",
                style=ButtonStyle.danger,
                disabled=disabled,
                custom_id=f"ttt:decline:{challenge_id}",
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: Interaction, item: ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(int(match["challenge"]))

    async def callback(self, interaction: Interaction) -> None:
        if (bot := await admit(interaction)) is None:
            return
        async with guarded(interaction):
            user_id = interaction.user.id

            def act(challenge: Challenge) -> Awaitable[Challenge]:
                if user_id == challenge.challenger_id:
                    return bot.service.withdraw(challenge.id, user_id)
                return bot.service.decline(challenge.id, user_id)

            challenge = await answer_challenge(bot, interaction, self.challenge_id, act)
            if challenge is None:
                return
            await interaction.response.edit_message(
                view=challenge_view(challenge), allowed_mentions=discord.AllowedMentions.none()
            )


async def answer_challenge(
    bot: TicTacToeBot,
    interaction: Interaction,
    challenge_id: int,
    act: Callable[[Challenge], Awaitable[T]],
) -> T | None:
    """Run ``act`` on this server's challenge; None if it had expired (told and redrawn)."""
    challenge = await bot.service.get_challenge(challenge_id)
    if challenge.guild_id != interaction.guild_id:
        raise NotChallenged()
    try:
        return await act(challenge)
    except ChallengeExpired as error:
        await reply_error(interaction, error)
        await bot.redraw(await bot.service.get_challenge(challenge_id))
        return None


def challenge_view(challenge: Challenge) -> ui.LayoutView:
    """The challenge message; its buttons are disabled once it is no longer pending."""
    closed = challenge.status is not ChallengeStatus.PENDING
    view = ui.LayoutView(timeout=None)
    view.add_item(ui.TextDisplay(render.challenge_text(challenge)))
    view.add_item(
        ui.ActionRow(
            AcceptButton(challenge.id, disabled=closed),
            DeclineButton(challenge.id, disabled=closed),
        )
    )
    return view


def challenge_mentions(challenge: Challenge) -> discord.AllowedMentions:
    """A new challenge pings the challenged member and nobody else."""
    return discord.AllowedMentions(
        everyone=False,
        roles=False,
        replied_user=False,
        users=[discord.Object(challenge.opponent_id)],
    )


# -- the leaderboard ------------------------------------------------------------------


class LeaderboardPageButton(ui.DynamicItem[ui.Button], template=r"\Attt:lb:(?P<page>[0-9]{1,6})\Z"):
    """Turn the leaderboard message to ``page`` (the service clamps it)."""

    def __init__(self, page: int, *, label: str = "Page", disabled: bool = False) -> None:
        self.page = page
        super().__init__(
            ui.Button(
                label=label,
                style=ButtonStyle.secondary,
                disabled=disabled,
                custom_id=f"ttt:lb:{page}",
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: Interaction, item: ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        return cls(int(match["page"]))

    async def callback(self, interaction: Interaction) -> None:
        if (bot := await admit(interaction)) is None:
            return
        async with guarded(interaction):
            assert interaction.guild_id is not None  # admit refuses DMs
            page = await bot.service.leaderboard(interaction.guild_id, max(1, self.page))
            await interaction.response.edit_message(
                view=leaderboard_view(page), allowed_mentions=discord.AllowedMentions.none()
            )


def leaderboard_view(page: LeaderboardPage) -> ui.LayoutView:
    """One page of the ranking with previous/next buttons (ids differ: page-1 != page+1)."""
    view = ui.LayoutView(timeout=None)
    view.add_item(ui.TextDisplay(render.leaderboard_text(page)))
    view.add_item(
        ui.ActionRow(
            LeaderboardPageButton(page.page - 1, label="◀ Previous", disabled=page.page <= 1),
            LeaderboardPageButton(page.page + 1, label="Next ▶", disabled=page.page >= page.pages),
        )
    )
    return view


def text_view(text: str) -> ui.LayoutView:
    """A V2 message with text only (stats)."""
    view = ui.LayoutView(timeout=None)
    view.add_item(ui.TextDisplay(text))
    return view


# -- clicks discord.py drops ------------------------------------------------------------


def is_on_message(interaction: Interaction, custom_id: str) -> bool:
    """Whether the clicked custom_id is on the message as Discord sent it with the click.

    discord.py dispatches a dynamic item only in that case, and drops the click silently
    otherwise (a board that changed after the user's client last drew it); this mirrors
    its lookup so that exactly one of the two answers.
    """
    message = interaction.message
    if message is None:
        return False
    # The components as parsed, not a View built from them (that costs ~5% of a click).
    return any(found == custom_id for found in _custom_ids(message.components))


def _custom_ids(components: Iterable[Any]) -> Iterator[str]:
    """The custom_ids of ``components`` and of everything nested in them."""
    for component in components:
        custom_id = getattr(component, "custom_id", None)
        if isinstance(custom_id, str):
            yield custom_id
        yield from _custom_ids(getattr(component, "children", None) or ())
        accessory = getattr(component, "accessory", None)
        if accessory is not None:
            yield from _custom_ids((accessory,))


async def route_component(interaction: Interaction) -> None:
    """Every component click discord.py parses reaches this (``on_interaction``): the
    buttons are discord.py's ``DynamicItem``s, and what none of them takes is answered
    (see ``answer_unrouted_click``). Cells are played here only if they got past
    ``CellClick.from_gateway``."""
    data = cast("dict[str, Any]", interaction.data or {})
    custom_id = data.get("custom_id")
    if not isinstance(custom_id, str):
        return
    cell = CELL_ID.fullmatch(custom_id)
    if cell is not None:  # one CellClick.from_gateway could not read
        await play_cell(CellClick(interaction._state, cell, interaction=interaction))
    else:
        await answer_unrouted_click(interaction, custom_id)


async def answer_unrouted_click(interaction: Interaction, custom_id: str) -> None:
    """Answer a click that no item will: an out-of-date message, an unknown button."""
    found = _match(custom_id)
    if found is not None and is_on_message(interaction, custom_id):
        return  # discord.py dispatches it to its DynamicItem
    if await admit(interaction) is None:
        return
    async with guarded(interaction):
        if found is None:
            raise GameError("This button is no longer in use.")
        raise GameError("This message changed since you saw it; look at it again.")


def release(interaction: Interaction) -> None:
    """Break the reference cycle between a handled interaction and its ``response``.

    discord.py's ``Interaction`` and the ``InteractionResponse`` it caches point at each
    other, so without this an interaction, with the clicked message and every component
    parsed from it, is freed only by the garbage collector. Clicks in flight while it
    runs outlive two collections and reach the oldest generation, whose collections
    (every few seconds under load) then took 7-37 ms, the longest pauses the bot had.
    ``guarded`` calls it when an action is done: every action answers its interaction
    itself, and discord.py uses it no more once the callback has returned.
    """
    with contextlib.suppress(AttributeError):
        del interaction._cs_response  # type: ignore[attr-defined]


def _match(custom_id: str) -> tuple[type[ui.DynamicItem[Any]], re.Match[str]] | None:
    for item_cls in DYNAMIC_ITEMS:
        match = item_cls.__discord_ui_compiled_template__.fullmatch(custom_id)
        if match is not None:
            return item_cls, match
    return None


DYNAMIC_ITEMS: tuple[type[ui.DynamicItem[Any]], ...] = (
    ForfeitButton,
    RematchButton,
    ReviewButton,
    AcceptButton,
    DeclineButton,
    LeaderboardPageButton,
)
"""The buttons discord.py routes (registered in ``setup_hook``); cells are routed by
``route_component``."""
