"""The game service: every rule of challenges, games, ratings and history, without Discord.

The Discord layer calls these coroutines and turns their ``GameError``s into ephemeral
replies. Nothing here keeps game state in memory: each operation loads the row, checks
the rules, and writes with a conditional ``UPDATE`` (see ``Store.save_game``), so two
clicks, a click and a sweep, or two service instances on the same file can never both
land; the loser of such a race gets StaleBoard or GameOver.

Bot moves: a human move that leaves the bot to play is committed at once with status
BOT_TO_MOVE; the reply is then computed in the executor (a process pool), outside any
transaction and without holding any lock, and written by a second short transaction
conditional on the game still being BOT_TO_MOVE at that move number. A crash between the
two leaves a BOT_TO_MOVE game that ``start()`` completes before the bot serves clicks
(and ``sweep()`` completes any left stranded by another instance). The player's move is
thus never lost, and the bot never "forgets" to answer. Each reply's rng is seeded from
the game id and move number, so a game replays identically. Where the reply is a table
lookup (boards of at most ``ServiceConfig.inline_cells`` cells), it is computed on the
spot and both moves are committed in one transaction instead.

Deadlines: every move gives the player now on move ``turn_timeout`` seconds. ``sweep()``
ends overdue games (the player on move loses by TIMEOUT), and so does a click that
arrives after the deadline (it then gets GameOver), so the result does not depend on
when the sweep runs. Results are counted in the same transaction that ends the game.

Locks: a per-game ``asyncio.Lock`` serialises read-modify-write within this process,
and a per-channel lock serialises creating games and challenges in a channel. They only
spare the database pointless conflicts: moves, endings and one-game-per-channel are
guarded in SQL. (The "one pending challenge per member" rule is checked, not enforced,
so two processes could each accept a challenge from the same member at one instant.)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import heapq
import itertools
import logging
import random
import time
import weakref
from collections.abc import Callable, Hashable, Iterable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from bot import ai
from bot.errors import (
    AlreadyPlaying,
    BotChallenge,
    CellTaken,
    ChallengeExpired,
    ChallengeNotFound,
    ChallengePending,
    ChannelBusy,
    GameError,
    GameInProgress,
    GameNotFound,
    GameOver,
    InvalidCell,
    InvalidSettings,
    NotAPlayer,
    NotChallenged,
    NotChallenger,
    NotYourTurn,
    PermissionDenied,
    RematchUnavailable,
    SelfChallenge,
    StaleBoard,
)
from bot.models import (
    Challenge,
    ChallengeStatus,
    First,
    Game,
    GameStatus,
    LeaderboardEntry,
    LeaderboardPage,
    LevelRecord,
    PlayerStats,
    Result,
)
from bot.ratings import is_provisional
from bot.storage import ChannelTaken, ChannelView, Store
from engine import MAX_SIDE, MIN_K, MIN_SIDE, Mark
from engine.levels import LEVELS

if TYPE_CHECKING:
    from engine.analysis import Review

__all__ = ["GameService", "ServiceConfig"]

T = TypeVar("T")
log = logging.getLogger(__name__)

_MAX_PER_PAGE = 50
_MAX_HISTORY = 100
_EXACT_CELLS = 16  # boards up to this size are solved exactly (engine.levels.EXACT_CELLS)
_STRANDED_AFTER = 30.0  # seconds a BOT_TO_MOVE game may wait before sweep() takes it over
TIME_RAN_OUT = "Time ran out for this game: it's over."
_QUEUE_ALLOWANCE = (0.0, 0.25, 1.0, 2.0)  # seconds a job of each cost may be overtaken for


@dataclass(frozen=True)
class ServiceConfig:
    turn_timeout: float = 300.0  # seconds a player has for a move
    challenge_timeout: float = 60.0  # seconds a challenge waits for an answer
    one_game_per_channel: bool = True
    ai_workers: int = 1  # processes in the AI pool
    # Bot replies on boards of at most this many cells are computed on the event loop, not
    # in the executor: 3x3 replies take microseconds (tables), and in the pool they would
    # queue behind long 5x5 searches and miss Discord's 3-second window. 0: all in the pool.
    inline_cells: int = 0
    # Seconds from asking for a bot move to its reply, for searches that run to a time
    # budget (5x5 at impossible): a move that waited in the pool's queue searches only
    # for what is left (engine budget 1.5 s, never under ai.MIN_BUDGET), so under load
    # replies get a little weaker instead of later and later.
    reply_seconds: float = 2.0


def _validate_settings(width: int, height: int, k: int, level: str | None = None) -> None:
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidSettings(f"The board {name} must be a whole number.")
        if not MIN_SIDE <= value <= MAX_SIDE:
            raise InvalidSettings(
                f"The board {name} must be from {MIN_SIDE} to {MAX_SIDE}, not {value}."
            )
    longest = max(width, height)
    if isinstance(k, bool) or not isinstance(k, int) or not MIN_K <= k <= longest:
        raise InvalidSettings(
            f"The win length must be from {MIN_K} to {longest} on a {width}x{height} board,"
            f" not {k}."
        )
    if level is not None and level not in LEVELS:
        raise InvalidSettings(f"Unknown level {level!r}: choose one of {', '.join(LEVELS)}.")


def _first(first: First | str) -> First:
    try:
        return First(first)
    except ValueError:
        choices = ", ".join(f.value for f in First)
        raise InvalidSettings(f"Who starts must be one of {choices}, not {first!r}.") from None


def _who(user_id: int, actor: int) -> str:
    return "You" if user_id == actor else f"<@{user_id}>"


class GameService:
    """The rules of the game on top of a ``Store``; see the module docstring."""

    def __init__(
        self,
        store: Store,
        config: ServiceConfig = ServiceConfig(),
        *,
        clock: Callable[[], float] = time.time,
        executor: concurrent.futures.Executor | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self._store = store
        self._config = config
        self._clock = clock
        self._executor = executor
        self._owns_executor = False
        self._rng = rng if rng is not None else random.Random()
        self._locks: weakref.WeakValueDictionary[Hashable, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._bot_tasks: dict[int, asyncio.Task[Game | None]] = {}
        # Jobs waiting for a pool worker, by when they should start (see _compute).
        self._waiting: list[tuple[float, int, asyncio.Future[None]]] = []
        self._tickets = itertools.count()
        self._in_pool = 0

    @property
    def config(self) -> ServiceConfig:
        return self._config

    # -- life cycle ---------------------------------------------------------------------------

    async def start(self) -> list[Game]:
        """Create and warm up the AI pool (unless given one), then finish owed bot moves.

        Returns the games whose owed move was completed, so their boards can be redrawn.
        """
        if self._executor is None:
            self._executor = ai.create_pool(self._config.ai_workers)
            self._owns_executor = True
            await ai.warm_up_pool(self._executor, self._config.ai_workers)
        if self._config.inline_cells:
            ai.warm_up()  # builds the 3x3 tables here too (~50 ms) before the first click
        owed = await self._store.games_bot_to_move()
        results = await asyncio.gather(
            *(self._bot_move(game) for game in owed), return_exceptions=True
        )
        completed: list[Game] = []
        for game, result in zip(owed, results, strict=True):
            if isinstance(result, BaseException):
                log.error("Could not complete the bot's move in game %s", game.id, exc_info=result)
            else:
                completed.append(result)
        return completed

    async def close(self) -> None:
        """Wait for bot moves in flight, then shut down the pool if this service made it."""
        while pending := [task for task in self._bot_tasks.values() if not task.done()]:
            await asyncio.gather(*pending, return_exceptions=True)
        if self._owns_executor and self._executor is not None:
            executor, self._executor = self._executor, None
            self._owns_executor = False
            await asyncio.to_thread(executor.shutdown, True)

    def _lock(self, key: Hashable) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[key] = lock
        return lock

    # -- challenges ---------------------------------------------------------------------------

    async def challenge(
        self,
        guild_id: int,
        channel_id: int,
        challenger_id: int,
        opponent_id: int,
        *,
        opponent_is_bot: bool = False,
        width: int = 3,
        height: int = 3,
        k: int = 3,
        first: First = First.RANDOM,
    ) -> Challenge:
        _validate_settings(width, height, k)
        return await self._challenge(
            guild_id,
            channel_id,
            challenger_id,
            opponent_id,
            opponent_is_bot=opponent_is_bot,
            width=width,
            height=height,
            k=k,
            first=_first(first),
            rematch_of=None,
        )

    async def _challenge(
        self,
        guild_id: int,
        channel_id: int,
        challenger_id: int,
        opponent_id: int,
        *,
        opponent_is_bot: bool,
        width: int,
        height: int,
        k: int,
        first: First,
        rematch_of: int | None,
    ) -> Challenge:
        if challenger_id == opponent_id:
            raise SelfChallenge()
        if opponent_is_bot:
            raise BotChallenge()
        async with self._lock(("channel", guild_id, channel_id)):
            now = self._clock()
            view = await self._store.channel_view(guild_id, channel_id, now)
            self._check_channel(view, challenger_id, (challenger_id, opponent_id))
            return await self._store.insert_challenge(
                Challenge(
                    id=0,
                    guild_id=guild_id,
                    channel_id=channel_id,
                    message_id=None,
                    challenger_id=challenger_id,
                    opponent_id=opponent_id,
                    width=width,
                    height=height,
                    k=k,
                    first=first,
                    status=ChallengeStatus.PENDING,
                    created_at=now,
                    expires_at=now + self._config.challenge_timeout,
                    rematch_of=rematch_of,
                )
            )

    def _check_channel(self, view: ChannelView, actor: int, members: Iterable[int]) -> None:
        """Raise if a new game or challenge between ``members`` can't start in the channel."""
        members = tuple(members)
        for challenge in view.challenges:
            for member in members:
                if member in (challenge.challenger_id, challenge.opponent_id):
                    who = _who(member, actor)
                    raise ChallengePending(
                        f"{who} already {'have' if who == 'You' else 'has'} a challenge"
                        " waiting for an answer in this channel."
                    )
        for game in view.games:
            for member in members:
                if member in game.human_ids:
                    who = _who(member, actor)
                    raise AlreadyPlaying(
                        f"{who} {'are' if who == 'You' else 'is'} already playing a game"
                        " in this channel."
                    )
        if self._config.one_game_per_channel and (view.games or view.challenges):
            raise ChannelBusy()

    async def set_challenge_message(self, challenge_id: int, message_id: int) -> None:
        if not await self._store.set_challenge_message(challenge_id, message_id):
            raise ChallengeNotFound()

    async def get_challenge(self, challenge_id: int) -> Challenge:
        challenge = await self._store.get_challenge(challenge_id)
        if challenge is None:
            raise ChallengeNotFound()
        return challenge

    async def _open_challenge(self, challenge_id: int, now: float) -> Challenge:
        """The challenge if it can still be answered; else the error saying why not."""
        challenge = await self._store.get_challenge(challenge_id)
        if challenge is None:
            raise ChallengeNotFound()
        if challenge.status is ChallengeStatus.EXPIRED:
            raise ChallengeExpired()
        if challenge.status is not ChallengeStatus.PENDING:
            raise ChallengeNotFound()
        if now >= challenge.expires_at:
            await self._store.expire_challenges(now)
            raise ChallengeExpired()
        return challenge

    async def accept(self, challenge_id: int, user_id: int) -> Game:
        """Start the challenge's game; sides follow ``first`` from the challenger's view."""
        now = self._clock()
        challenge = await self._open_challenge(challenge_id, now)
        if user_id != challenge.opponent_id:
            raise NotChallenged()
        async with self._lock(("channel", challenge.guild_id, challenge.channel_id)):
            view = await self._store.channel_view(challenge.guild_id, challenge.channel_id, now)
            for game in view.games:
                for member in (challenge.challenger_id, challenge.opponent_id):
                    if member in game.human_ids:
                        who = _who(member, user_id)
                        raise AlreadyPlaying(
                            f"{who} {'are' if who == 'You' else 'is'} already playing a game"
                            " in this channel."
                        )
            if self._config.one_game_per_channel and view.games:
                raise ChannelBusy()
            first = challenge.first
            if first is First.RANDOM:
                first = self._rng.choice((First.ME, First.OPPONENT))
            x_id, o_id = (challenge.challenger_id, challenge.opponent_id)
            if first is First.OPPONENT:
                x_id, o_id = o_id, x_id
            game = Game(
                id=0,
                guild_id=challenge.guild_id,
                channel_id=challenge.channel_id,
                message_id=None,
                x_id=x_id,
                o_id=o_id,
                bot_level=None,
                width=challenge.width,
                height=challenge.height,
                k=challenge.k,
                moves=(),
                status=GameStatus.ACTIVE,
                result=None,
                winner_id=None,
                winner_mark=None,
                created_at=now,
                updated_at=now,
                turn_deadline=now + self._config.turn_timeout,
                rematch_of=challenge.rematch_of,
            )
            try:
                accepted = await self._store.accept_challenge(
                    challenge_id, game, now, exclusive=self._config.one_game_per_channel
                )
            except ChannelTaken:
                raise ChannelBusy() from None
        if accepted is None:  # answered or expired meanwhile (another instance)
            await self._open_challenge(challenge_id, now)
            raise ChallengeNotFound()
        return accepted[1]

    async def _answer(self, challenge_id: int, user_id: int, status: ChallengeStatus) -> Challenge:
        now = self._clock()
        challenge = await self._open_challenge(challenge_id, now)
        if status is ChallengeStatus.WITHDRAWN and user_id != challenge.challenger_id:
            raise NotChallenger()
        if status is ChallengeStatus.DECLINED and user_id != challenge.opponent_id:
            raise NotChallenged()
        answered = await self._store.answer_challenge(challenge_id, status, now)
        if answered is None:
            await self._open_challenge(challenge_id, now)
            raise ChallengeNotFound()
        return answered

    async def decline(self, challenge_id: int, user_id: int) -> Challenge:
        return await self._answer(challenge_id, user_id, ChallengeStatus.DECLINED)

    async def withdraw(self, challenge_id: int, user_id: int) -> Challenge:
        """Take back a challenge; only its challenger may."""
        return await self._answer(challenge_id, user_id, ChallengeStatus.WITHDRAWN)

    async def expire_challenges(self) -> list[Challenge]:
        """Pending challenges past expiry become EXPIRED; returned so their messages can change."""
        return await self._store.expire_challenges(self._clock())

    # -- games ---------------------------------------------------------------------------------

    async def start_bot_game(
        self,
        guild_id: int,
        channel_id: int,
        player_id: int,
        *,
        level: str,
        width: int = 3,
        height: int = 3,
        k: int = 3,
        first: First = First.RANDOM,
    ) -> Game:
        """A new game against the bot; if the bot is X, its first move is already made."""
        _validate_settings(width, height, k, level)
        first = _first(first)
        if first is First.RANDOM:
            first = self._rng.choice((First.ME, First.OPPONENT))
        return await self._new_bot_game(
            guild_id,
            channel_id,
            player_id,
            level=level,
            width=width,
            height=height,
            k=k,
            player_is_x=first is First.ME,
            rematch_of=None,
        )

    async def _new_bot_game(
        self,
        guild_id: int,
        channel_id: int,
        player_id: int,
        *,
        level: str,
        width: int,
        height: int,
        k: int,
        player_is_x: bool,
        rematch_of: int | None,
    ) -> Game:
        async with self._lock(("channel", guild_id, channel_id)):
            now = self._clock()
            view = await self._store.channel_view(guild_id, channel_id, now)
            self._check_channel(view, player_id, (player_id,))
            status = GameStatus.ACTIVE if player_is_x else GameStatus.BOT_TO_MOVE
            try:
                game = await self._store.insert_game(
                    Game(
                        id=0,
                        guild_id=guild_id,
                        channel_id=channel_id,
                        message_id=None,
                        x_id=player_id if player_is_x else None,
                        o_id=None if player_is_x else player_id,
                        bot_level=level,
                        width=width,
                        height=height,
                        k=k,
                        moves=(),
                        status=status,
                        result=None,
                        winner_id=None,
                        winner_mark=None,
                        created_at=now,
                        updated_at=now,
                        turn_deadline=now + self._config.turn_timeout if player_is_x else None,
                        rematch_of=rematch_of,
                    ),
                    exclusive=self._config.one_game_per_channel,
                )
            except ChannelTaken:
                raise ChannelBusy() from None
        if game.status is GameStatus.BOT_TO_MOVE:
            return await self._bot_move(game)
        return game

    async def set_game_message(self, game_id: int, message_id: int) -> None:
        if not await self._store.set_game_message(game_id, message_id):
            raise GameNotFound()

    async def get_game(self, game_id: int, guild_id: int | None = None) -> Game:
        """The game; GameNotFound if missing or (with ``guild_id``) in another guild."""
        game = await self._store.get_game(game_id)
        if game is None or (guild_id is not None and game.guild_id != guild_id):
            raise GameNotFound()
        return game

    async def active_game(self, guild_id: int, channel_id: int) -> Game | None:
        """The channel's live game (the newest, if several are allowed), or None."""
        games = await self._store.live_games(guild_id, channel_id)
        return games[0] if games else None

    def _advance(self, game: Game, cell: int, now: float) -> Game:
        """The game after the player to move marks ``cell`` (already checked to be legal)."""
        board = game.board.play(cell)
        outcome = board.outcome()
        if outcome is not None:
            winner = outcome.winner
            return game.after_move(
                board,
                status=GameStatus.FINISHED,
                result=Result.DRAW if winner is None else Result.WIN,
                winner_mark=winner,
                winner_id=None if winner is None else game.player_of(winner),
                updated_at=now,
                turn_deadline=None,
            )
        bot_next = game.is_bot_game and game.player_of(board.turn) is None
        return game.after_move(
            board,
            status=GameStatus.BOT_TO_MOVE if bot_next else GameStatus.ACTIVE,
            updated_at=now,
            turn_deadline=None if bot_next else now + self._config.turn_timeout,
        )

    @staticmethod
    def _ended(game: Game, result: Result, loser: Mark | None, now: float) -> Game:
        """The game ended by forfeit, timeout (``loser`` loses) or abandonment (no loser)."""
        winner = None if loser is None else loser.other
        return dataclasses.replace(
            game,
            status=GameStatus.ABANDONED if result is Result.ABANDONED else GameStatus.FINISHED,
            result=result,
            winner_mark=winner,
            winner_id=None if winner is None else game.player_of(winner),
            updated_at=now,
            turn_deadline=None,
        )

    @staticmethod
    def _overdue(game: Game, now: float) -> bool:
        return (
            game.status is GameStatus.ACTIVE
            and game.turn_deadline is not None
            and now >= game.turn_deadline
        )

    async def _settle_if_overdue(self, game: Game) -> None:
        """Raise GameOver if the player on move ran out of time, settling the timeout first.

        Whatever a user does to a game whose clock ran out (move, forfeit, stop) finds it
        lost on time, as the sweeper would have left it: the result never depends on when
        the sweep runs.
        """
        now = self._clock()
        if self._overdue(game, now):
            ended = self._ended(game, Result.TIMEOUT, game.turn, now)
            if not await self._store.save_game(ended, game):
                ended = await self.get_game(game.id)  # settled elsewhere meanwhile
            raise GameOver(TIME_RAN_OUT, game=ended)

    async def _conflict(self, game_id: int, guild_id: int | None) -> GameError:
        """The error for a write that lost a race: the game ended, or it moved on."""
        game = await self._store.get_game(game_id)
        if game is None or (guild_id is not None and game.guild_id != guild_id):
            return GameNotFound()
        if not game.is_live:
            return GameOver()
        return StaleBoard()

    async def play(
        self,
        game_id: int,
        user_id: int,
        cell: int,
        move_no: int,
        *,
        guild_id: int | None = None,
        await_reply: bool = True,
    ) -> Game:
        """Play ``cell`` (0-based) for ``user_id`` on the board they saw at ``move_no``.

        Checks, in order: GameNotFound, GameOver (also when the player on move ran out of
        time: the timeout is settled here), NotAPlayer, StaleBoard, NotYourTurn,
        InvalidCell, CellTaken. The checks and the write are one transaction. In a bot
        game the result includes the bot's reply, unless ``await_reply`` is False and the
        reply needs a search: then the game comes back at BOT_TO_MOVE, and ``bot_reply``
        completes it.
        """
        now = self._clock()

        def change(game: Game | None) -> Game:  # runs on the database thread
            if game is None or (guild_id is not None and game.guild_id != guild_id):
                raise GameNotFound()
            if self._overdue(game, now):
                return self._ended(game, Result.TIMEOUT, game.turn, now)
            if not game.is_live:
                raise GameOver()
            mark = game.mark_of(user_id)
            if mark is None:
                raise NotAPlayer()
            if move_no != game.move_no:
                raise StaleBoard()
            if game.status is GameStatus.BOT_TO_MOVE or game.turn is not mark:
                raise NotYourTurn()
            if (
                isinstance(cell, bool)
                or not isinstance(cell, int)
                or not 0 <= cell < game.width * game.height
            ):
                raise InvalidCell()
            if game.board.cell(cell) is not None:
                raise CellTaken()
            new = self._advance(game, cell, now)
            if new.status is GameStatus.BOT_TO_MOVE and self._is_inline(new):
                # The reply is a table lookup: commit both moves together.
                new = self._advance(new, self._inline_move(new), now)
            return new

        before, new = await self._store.update_game(game_id, change)
        if new.result is Result.TIMEOUT and before.is_live:
            raise GameOver(TIME_RAN_OUT, game=new)
        if new.status is GameStatus.BOT_TO_MOVE and await_reply:
            return await self._bot_move(new)
        return new

    async def bot_reply(self, game: Game) -> Game:
        """``game`` after the bot's owed move (as stored: if someone else made it, theirs)."""
        if game.status is not GameStatus.BOT_TO_MOVE:
            return game
        return await self._bot_move(game)

    # -- the bot's moves -------------------------------------------------------------------------

    async def _bot_move(self, game: Game) -> Game:
        """Complete the bot's owed move in ``game``; one task per game, immune to cancellation."""
        task = self._bot_tasks.get(game.id)
        if task is None or task.done():
            task = asyncio.create_task(self._complete_bot_move(game))
            self._bot_tasks[game.id] = task
            task.add_done_callback(self._forget_bot_task)
        result = await asyncio.shield(task)
        return game if result is None else result

    def _forget_bot_task(self, task: asyncio.Task[Game | None]) -> None:
        for game_id, known in list(self._bot_tasks.items()):
            if known is task:
                del self._bot_tasks[game_id]

    def _is_inline(self, game: Game) -> bool:
        """Whether the bot's reply here is cheap enough to compute on the event loop."""
        return game.width * game.height <= self._config.inline_cells

    @staticmethod
    def _move_args(game: Game) -> tuple[int, int, int, tuple[int, ...], str, int]:
        """``ai.compute_move``'s arguments for the bot's owed move in ``game``."""
        assert game.bot_level is not None
        seed = ai.move_seed(game.id, game.move_no)
        return (game.width, game.height, game.k, game.moves, game.bot_level, seed)

    @staticmethod
    def _inline_move(game: Game) -> int:
        """The bot's owed move in ``game``, computed here (see ``_is_inline``); the same
        move ``ai.compute_move`` would give for ``_move_args``."""
        assert game.bot_level is not None
        return ai.compute_move_on(game.board, game.bot_level, ai.move_seed(game.id, game.move_no))

    async def _complete_bot_move(self, game: Game) -> Game | None:
        if self._is_inline(game):
            cell = self._inline_move(game)
        else:
            args = self._move_args(game)
            deadline = time.monotonic() + self._config.reply_seconds
            cost = self._search_cost(game)
            cell = await self._compute(ai.compute_move, *args, deadline, cost=cost)
        async with self._lock(game.id):
            new = self._advance(game, cell, self._clock())
            if await self._store.save_game(new, game):
                return new
            return await self._store.get_game(game.id)  # ended or done elsewhere meanwhile

    def _search_cost(self, game: Game) -> int:
        """The pool's queue order for the bot's reply in ``game``, cheapest first.

        0: expected to be quick; 1: a deeper but bounded search (exact on boards up to
        16 cells, fixed depth above); 2: a search to a time budget (Perfect above 16
        cells). Reviews come last (3).
        """
        if not self.is_slow_search(game):
            return 0
        budgeted = game.width * game.height > _EXACT_CELLS and game.bot_level == LEVELS[-1]
        return 2 if budgeted else 1

    async def _compute(self, fn: Callable[..., T], *args: object, cost: int = 3) -> T:
        """Run ``fn(*args)`` in the pool once a worker is free, cheapest first.

        At most ``ai_workers`` jobs are in the pool at a time; the others wait here, each
        until its arrival plus _QUEUE_ALLOWANCE[cost], earliest first. So a reply that
        takes milliseconds does not queue behind searches of 1.5 s (which lose nothing
        by waiting: their budget counts from the request), yet a stream of quick ones
        cannot hold a search back for more than its allowance.
        """
        loop = asyncio.get_running_loop()
        turn = loop.create_future()
        due = loop.time() + _QUEUE_ALLOWANCE[cost]
        heapq.heappush(self._waiting, (due, next(self._tickets), turn))
        self._admit_jobs()
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # admitted just as it was cancelled
                self._in_pool -= 1
                self._admit_jobs()
            raise
        try:
            return await self._run_in_pool(fn, *args)
        finally:
            self._in_pool -= 1
            self._admit_jobs()

    def _admit_jobs(self) -> None:
        while self._waiting and self._in_pool < self._config.ai_workers:
            *_, turn = heapq.heappop(self._waiting)
            if not turn.done():  # else its waiter was cancelled
                self._in_pool += 1
                turn.set_result(None)

    async def _run_in_pool(self, fn: Callable[..., T], *args: object) -> T:
        """Run ``fn(*args)`` in the executor; a broken pool of ours is replaced once."""
        loop = asyncio.get_running_loop()
        if self._executor is None:
            self._executor = ai.create_pool(self._config.ai_workers)
            self._owns_executor = True
        executor = self._executor
        try:
            return await loop.run_in_executor(executor, fn, *args)
        except BrokenProcessPool:
            if not self._owns_executor:
                raise
            if self._executor is executor:  # the first to notice replaces it
                self._executor = ai.create_pool(self._config.ai_workers)
                executor.shutdown(wait=False)
            return await loop.run_in_executor(self._executor, fn, *args)

    def is_slow_search(self, game: Game) -> bool:
        """Whether the bot's next reply may take long enough that the click is answered
        before it (with the player's move and "My move…"), and the reply edited in.

        3x3 is always instant. Above 16 cells every level but the weakest searches deeply;
        4x4-sized boards are slow only for the stronger half of the levels (weakest first
        in LEVELS), which lean on the exact solver.
        """
        if not game.is_bot_game or not game.is_live or game.width * game.height <= 9:
            return False
        strength = LEVELS.index(game.bot_level) if game.bot_level in LEVELS else len(LEVELS)
        if game.width * game.height > _EXACT_CELLS:
            return strength > 0
        return strength >= len(LEVELS) // 2

    # -- ending games ---------------------------------------------------------------------------

    async def _end(
        self,
        game_id: int,
        guild_id: int | None,
        move_no: int | None,
        decide: Callable[[Game], Game],
    ) -> Game:
        """Apply ``decide`` (which checks the user and returns the ended game) to the live game.

        With ``move_no`` a game that moved on gives StaleBoard; without, the latest state
        is ended (retrying if another instance wrote first).
        """
        async with self._lock(game_id):
            for _attempt in range(5):
                game = await self.get_game(game_id, guild_id)
                await self._settle_if_overdue(game)
                if not game.is_live:
                    raise GameOver()
                ended = decide(game)
                if move_no is not None and move_no != game.move_no:
                    raise StaleBoard()
                if await self._store.save_game(ended, game):
                    return ended
                if move_no is not None:
                    break
            raise await self._conflict(game_id, guild_id)

    async def forfeit(
        self, game_id: int, user_id: int, *, move_no: int | None = None, guild_id: int | None = None
    ) -> Game:
        """The player gives up and loses (rated between members).

        ``move_no`` (optional) is the board the player saw: StaleBoard if it moved on.
        """

        def decide(game: Game) -> Game:
            mark = game.mark_of(user_id)
            if mark is None:
                raise NotAPlayer()
            return self._ended(game, Result.FORFEIT, mark, self._clock())

        return await self._end(game_id, guild_id, move_no, decide)

    async def stop(
        self,
        guild_id: int,
        channel_id: int,
        user_id: int,
        *,
        is_moderator: bool,
        move_no: int | None = None,
    ) -> Game:
        """Abandon the channel's live game (unrated, uncounted): its players or a moderator.

        With several live games in the channel, the one ``user_id`` plays in, else the newest.
        """
        games = await self._store.live_games(guild_id, channel_id)
        if not games:
            raise GameNotFound("There's no game in progress in this channel.")
        target = next((g for g in games if user_id in g.human_ids), games[0])

        def decide(game: Game) -> Game:
            if user_id not in game.human_ids and not is_moderator:
                raise PermissionDenied()
            return self._ended(game, Result.ABANDONED, None, self._clock())

        return await self._end(target.id, guild_id, move_no, decide)

    async def sweep(self) -> tuple[list[Game], list[Challenge]]:
        """Settle overdue turns (the player on move loses by TIMEOUT), expire challenges.

        Also completes bot moves left owed for a while by a process that died. Returns
        what changed, so the bot can edit those messages.
        """
        now = self._clock()
        changed: list[Game] = []
        for game in await self._store.overdue_games(now):
            async with self._lock(game.id):
                ended = self._ended(game, Result.TIMEOUT, game.turn, now)
                if await self._store.save_game(ended, game):
                    changed.append(ended)
        for game in await self._store.games_bot_to_move():
            if game.id not in self._bot_tasks and now - game.updated_at >= _STRANDED_AFTER:
                try:
                    changed.append(await self._bot_move(game))
                except Exception:
                    log.exception("Could not complete the bot's move in game %s", game.id)
        return changed, await self._store.expire_challenges(now)

    async def rematch(self, game_id: int, user_id: int) -> Game | Challenge:
        """Play an ended game again with sides swapped.

        Against the bot: the new game at once. Between members: a challenge to the other
        player, whose acceptance starts the game with sides swapped.
        """
        game = await self.get_game(game_id)
        if user_id not in game.human_ids:
            raise NotAPlayer()
        if game.is_live:
            raise RematchUnavailable("Finish this game before asking for a rematch.")
        busy = RematchUnavailable("There's already a game in this channel.")
        active = await self.active_game(game.guild_id, game.channel_id)
        exclusive = self._config.one_game_per_channel
        if active is not None and (exclusive or user_id in active.human_ids):
            raise busy
        try:
            if game.is_bot_game:
                assert game.bot_level is not None
                return await self._new_bot_game(
                    game.guild_id,
                    game.channel_id,
                    user_id,
                    level=game.bot_level,
                    width=game.width,
                    height=game.height,
                    k=game.k,
                    player_is_x=game.x_id is None,
                    rematch_of=game.id,
                )
            other = game.o_id if user_id == game.x_id else game.x_id
            assert other is not None
            return await self._challenge(
                game.guild_id,
                game.channel_id,
                user_id,
                other,
                opponent_is_bot=False,
                width=game.width,
                height=game.height,
                k=game.k,
                first=First.OPPONENT if user_id == game.x_id else First.ME,
                rematch_of=game.id,
            )
        except (ChannelBusy, AlreadyPlaying) as error:
            raise busy from error

    # -- ratings, stats, history -----------------------------------------------------------------

    async def leaderboard(
        self, guild_id: int, page: int = 1, per_page: int = 10
    ) -> LeaderboardPage:
        """Members with rated games by rating, then games, then user id; page is clamped."""
        per_page = min(max(1, per_page), _MAX_PER_PAGE)
        total, page, rows = await self._store.leaderboard(guild_id, page, per_page)
        entries = tuple(
            LeaderboardEntry(
                rank=row.rank or 0,
                user_id=user_id,
                rating=row.rating,
                record=row.record,
                provisional=is_provisional(row.rated_games),
            )
            for user_id, row in rows
        )
        return LeaderboardPage(
            entries=entries,
            page=page,
            pages=max(1, -(-total // per_page)),
            total_players=total,
        )

    async def player_stats(self, guild_id: int, user_id: int, recent: int = 5) -> PlayerStats:
        row = await self._store.player(guild_id, user_id)
        levels = await self._store.bot_records(guild_id, user_id)
        order = {name: i for i, name in enumerate(LEVELS)}
        levels.sort(key=lambda lr: (order.get(lr.level, len(order)), lr.level))
        games = await self._store.history(guild_id, user_id, min(max(0, recent), _MAX_HISTORY))
        return PlayerStats(
            guild_id=guild_id,
            user_id=user_id,
            rating=row.rating,
            provisional=is_provisional(row.rated_games),
            rank=row.rank,
            versus_members=row.record,
            versus_bot=tuple(LevelRecord(lr.level, lr.record) for lr in levels),
            current_streak=row.current_streak,
            best_streak=row.best_streak,
            recent=tuple(games),
        )

    async def history(
        self, guild_id: int, user_id: int | None = None, limit: int = 10
    ) -> list[Game]:
        """Finished and abandoned games of the guild (or of one member), newest first."""
        return await self._store.history(guild_id, user_id, min(max(1, limit), _MAX_HISTORY))

    async def review(self, game_id: int, guild_id: int | None = None) -> Review:
        """The engine's review of an ended game (computed in the executor)."""
        game = await self.get_game(game_id, guild_id)
        if game.is_live:
            raise GameInProgress()
        return await self._compute(ai.review_game, game.moves, game.width, game.height, game.k)
