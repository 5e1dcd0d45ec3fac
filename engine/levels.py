"""Difficulty levels: named move policies built from the strategies.

Every level takes the same steps with its own numbers (its ``Rates``, one set for 3x3,
one for other boards of up to ``EXACT_CELLS`` cells such as 4x4, one for bigger boards
with k up to 4, one for bigger boards with k = 5); the first step that applies decides
the move:

0. on an empty board of up to ``EXACT_CELLS`` cells, with ``random_opening``, open on
   any cell (variety, and the main chance to beat the bot when it plays X; on bigger
   boards a corner opening hands the initiative away for nothing);
1. take a winning cell, if there is one (``takes_wins``);
2. with probability ``block``, block the opponent's winning cell, if there is one;
3. with probability ``random``, play any legal cell;
4. with probability ``mistake``, play one of the moves with a worse result than the
   best, if there are any: worse exactly (loss < draw < win) on boards of up to
   ``EXACT_CELLS`` cells, and on bigger ones with k = 5 where that takes at most
   ``BIG_NODES`` positions (nearly always: ``engine.breaker`` settles most positions
   there at once); otherwise worse as far as the minimax of step 5 sees (a forced loss
   within its horizon < unclear < a forced win);
5. otherwise the best move: ``engine.solver.Perfect`` up to ``EXACT_CELLS`` cells;
   beyond, minimax with the weighted (+100/+10/+1) evaluation, as deep as ``big_depth``
   plies while the search fits in ``BIG_NODES`` positions, or Perfect on its time
   ``budget`` where ``big_depth`` is None.

``impossible`` on 4x4 k=4, 5x5 k=4 and 5x5 k=5 first asks ``engine.book.book_move``
(its book, capped exact choices, on the 5x5 boards capped safe choices):
one move per position, the same in every orientation, proven by ``python -m engine
prove``; only where that has no answer does it search (on 4x4 exactly, on 5x5 k=4 to
its time budget).
``instant_move`` tells a caller whether a move needs no search.

All chances and ties are drawn from the ``rng`` in that order, so a seed replays a game
exactly (except where Perfect searches to a time budget: boards over 16 cells at
``impossible``, past its book). ``choose_move``'s ``budget`` overrides that time budget
for one call, so a caller that has already waited can search for less. ``impossible`` is
Perfect itself, with its book. All the numbers were tuned by measurement:
bench/calibrate.py plays each level against ``random``, ``medium`` and ``perfect`` (on
5x5, ``impossible`` as the exact opponent) and writes docs/levels.md, where neighbouring
levels lose at least 10 points apart against ``perfect`` on 3x3, 4x4 and 5x5 with k = 4
and 5. On 5x5 k=5 only a missed four loses to ``perfect``, so the k=5 rates say how often
a level lets one through: a failed block roll, then a random cell or an exact mistake.
``easy`` to ``hard`` answer in milliseconds (``hard`` on 5x5: at most ``BIG_NODES``
positions for its search, and as many for exact mistakes on k=5, about 35 ms of CPU at
worst), ``impossible`` in milliseconds from its book, else searching for its ``budget``
(1.5 s).
"""

from __future__ import annotations

import math
import numbers
import random
from dataclasses import dataclass

from engine.board import Board
from engine.book import INSTANT_NODES, book_move, uses_book
from engine.minimax import MinimaxResult, NodeCapError
from engine.strategies import (
    WIN_SCORE,
    Strategy,
    make_strategy,
    minimax_search,
    threat_cells,
)

__all__ = [
    "BIG_NODES",
    "DEFAULT_LEVEL",
    "EXACT_CELLS",
    "LEVELS",
    "PERFECT_RATES",
    "Level",
    "LevelStrategy",
    "Rates",
    "UnknownLevelError",
    "choose_move",
    "get_level",
    "instant_move",
    "level_strategy",
    "levels",
]

EXACT_CELLS = 16
"""Boards with at most this many cells (3x3 up to 4x4) are played from exact values."""

_RESULT_RANK = {"loss": 0, "draw": 1, "win": 2}

BIG_NODES = 8_000
"""The most positions a depth-limited level searches for one move on boards over
EXACT_CELLS cells (its mistakes and its best move together): it deepens two plies at a
time up to its ``big_depth`` while the next depth fits, and plays from the deepest search
that did. About 20 ms of CPU here, 35 ms on a busy machine. It fits depth 4 in the reply
to a centre opening on 5x5, which depth 2 gets wrong (see
docs/decisions.md#hard-searches-to-a-node-budget-on-big-boards). A count of positions,
not a clock, so the same position gets the same move on any machine under any load."""


class UnknownLevelError(ValueError):
    """A difficulty level name that does not exist."""


@dataclass(frozen=True, slots=True)
class Rates:
    """Per-move chances of a level's steps 2-4 (see the module docstring)."""

    random: float
    mistake: float
    block: float


PERFECT_RATES = Rates(random=0.0, mistake=0.0, block=1.0)


@dataclass(frozen=True, slots=True)
class Level:
    """One difficulty level's policy; the module docstring says how the numbers are used."""

    name: str
    description: str
    """What a player reads where they choose the level: true on every board the bot
    offers (tests/bot/test_claims.py checks each claim against the engine)."""
    small: Rates
    """Rates on 3x3."""
    mid: Rates
    """Rates on the other boards of up to EXACT_CELLS cells (4x4, 3x4, 3x5, ...)."""
    big: Rates
    """Rates on boards of more than EXACT_CELLS cells with k up to 4."""
    five: Rates
    """Rates on boards of more than EXACT_CELLS cells with k of 5 or more (5x5 k=5)."""
    big_depth: int | None
    """The deepest minimax search on boards over EXACT_CELLS cells, as far as BIG_NODES
    allows; None plays Perfect there."""
    random_opening: bool = True
    takes_wins: bool = True
    budget: float = 1.5
    """Perfect's time budget in seconds, used only on boards over EXACT_CELLS cells."""

    def rates(self, board: Board) -> Rates:
        """The rates that apply on ``board``'s shape."""
        if board.size <= 9:
            return self.small
        if board.size <= EXACT_CELLS:
            return self.mid
        return self.five if board.k >= 5 else self.big

    @property
    def is_perfect(self) -> bool:
        """True when the level never errs on purpose: it is Perfect."""
        return (
            self.small == self.mid == self.big == self.five == PERFECT_RATES
            and self.big_depth is None
            and not self.random_opening
        )


def N_(text: str) -> str:
    """Mark a text people read, so the bot's ``pybabel extract`` puts it in its catalogs;
    the engine keeps the English (the bot translates ``Level.description`` itself)."""
    return text


_ALL: tuple[Level, ...] = (
    Level(
        name="easy",
        description=N_("Plays loosely and misses many threats, but takes any one-move win."),
        small=Rates(random=0.5, mistake=0.5, block=0.5),
        mid=Rates(random=0.5, mistake=1.0, block=0.2),
        big=Rates(random=0.6, mistake=0.3, block=0.1),
        five=Rates(random=0.6, mistake=1.0, block=0.1),
        big_depth=1,
    ),
    Level(
        name="medium",
        description=N_("Takes one-move wins, blocks most threats, but lets forks through."),
        small=Rates(random=0.35, mistake=0.6, block=1.0),
        mid=Rates(random=0.2, mistake=1.0, block=0.6),
        big=Rates(random=0.25, mistake=0.1, block=0.9),
        five=Rates(random=0.5, mistake=1.0, block=0.55),
        big_depth=2,
    ),
    Level(
        name="hard",
        description=N_("Strong: blocks most threats, but slips now and then."),
        small=Rates(random=0.1, mistake=0.2, block=1.0),
        mid=Rates(random=0.15, mistake=0.6, block=0.8),
        big=Rates(random=0.15, mistake=0.05, block=1.0),
        five=Rates(random=0.0, mistake=0.6, block=0.65),
        big_depth=4,
    ),
    Level(
        name="impossible",
        description=N_("Perfect play: it never loses, unless the first player can force a win."),
        small=PERFECT_RATES,
        mid=PERFECT_RATES,
        big=PERFECT_RATES,
        five=PERFECT_RATES,
        big_depth=None,
        random_opening=False,
    ),
)

LEVELS: tuple[str, ...] = tuple(level.name for level in _ALL)
"""Level names, weakest first."""

DEFAULT_LEVEL = "medium"

_BY_NAME = {level.name: level for level in _ALL}


def levels() -> tuple[Level, ...]:
    """Every level, weakest first."""
    return _ALL


def get_level(name: str) -> Level:
    """The level called ``name``; raises UnknownLevelError for any other name."""
    level = _BY_NAME.get(name) if isinstance(name, str) else None
    if level is None:
        raise UnknownLevelError(f"unknown level {name!r}; choose from {', '.join(LEVELS)}")
    return level


_perfect: dict[float, Strategy] = {}
"""Perfect players for the levels' own budgets only, so callers' budgets cannot grow it."""

_LEVEL_BUDGETS = frozenset(level.budget for level in _ALL)


def _perfect_player(budget: float) -> Strategy:
    """Perfect with a time budget of ``budget`` seconds.

    A Perfect holds only its budget (the solver's tables and caches are module-level and
    shared by all of them), so a fresh one for an unusual budget costs nothing; only the
    levels' own budgets are kept.
    """
    player = _perfect.get(budget)
    if player is None:
        player = make_strategy("perfect", budget=budget)
        if budget in _LEVEL_BUDGETS:
            _perfect[budget] = player
    return player


def _checked_budget(budget: object) -> float:
    """``budget`` as seconds; ValueError unless it is a finite real number above 0."""
    if (
        isinstance(budget, bool)
        or not isinstance(budget, numbers.Real)
        or not math.isfinite(budget)
        or budget <= 0
    ):
        raise ValueError(f"budget must be a finite number of seconds above 0, not {budget!r}")
    return float(budget)


def _pick(cells: list[int], rng: random.Random) -> int:
    return cells[0] if len(cells) == 1 else rng.choice(cells)


def _exact_mistakes(board: Board) -> list[int] | None:
    """Moves with a worse exact result than the best move's; None where that is not
    known cheaply (bigger boards with k under 5, or past ``BIG_NODES`` positions)."""
    from engine.solver import UnsolvableError, move_results

    if board.size > EXACT_CELLS and board.k < 5:
        return None
    try:
        results = move_results(board, max_nodes=None if board.size <= EXACT_CELLS else BIG_NODES)
    except UnsolvableError:
        return None
    best = max(_RESULT_RANK[result] for result in results.values())
    return [cell for cell, result in results.items() if _RESULT_RANK[result] < best]


def _searched_class(score: int) -> int:
    return 0 if score <= -WIN_SCORE // 2 else 2 if score >= WIN_SCORE // 2 else 1


def _move_classes(board: Board, depth: int, nodes: int | None) -> tuple[dict[int, int], int]:
    """Each move's class (0 a forced loss, 1 unclear, 2 a forced win, as far as
    depth-``depth`` minimax sees) and the positions searched; NodeCapError past ``nodes``
    (None: no cap)."""
    classes = {}
    spent = 0
    for cell in board.legal_moves():
        child = board.play(cell)
        if child.is_over:
            classes[cell] = 1 if child.winner is None else 2
        elif depth == 1:
            classes[cell] = 1
        else:
            cap = None if nodes is None else nodes - spent
            result = minimax_search(child, depth - 1, "weighted", max_nodes=cap)
            spent += result.nodes
            classes[cell] = 2 - _searched_class(result.score)
    return classes, spent


def _deepening(depth: int) -> range:
    """The depths searched, shallowest first, to reach ``depth``: two plies at a time, so
    that every one ends on the opponent's reply (an odd depth's optimism about the
    mover's last move misleads the weighted evaluation)."""
    return range(2 - depth % 2, depth + 1, 2)


def _searched_mistakes(board: Board, depth: int, nodes: int) -> tuple[list[int], int]:
    """Moves whose minimax result (forced loss, unclear, forced win within the horizon) is
    worse than the best move's, seen as deep as ``depth`` plies allows within ``nodes``
    positions in all (``_deepening``; the first depth is never cut short); and the
    positions searched."""
    first, *deeper_depths = _deepening(depth)
    classes, spent = _move_classes(board, first, None)
    left = nodes - spent
    for plies in deeper_depths:
        try:
            deeper, spent = _move_classes(board, plies, left)
        except NodeCapError:
            left = 0  # the cut-short search spent what was left
            break
        classes, left = deeper, left - spent
    best = max(classes.values())
    return [cell for cell, value in classes.items() if value < best], nodes - left


def _deepest_search(board: Board, depth: int, nodes: int) -> MinimaxResult:
    """The deepest minimax search of at most ``depth`` plies that fits, with the shallower
    ones before it, in ``nodes`` positions (``_deepening``; the first depth is never cut
    short)."""
    first, *deeper_depths = _deepening(depth)
    result = minimax_search(board, first, "weighted")
    left = nodes - result.nodes
    for plies in deeper_depths:
        try:
            result = minimax_search(board, plies, "weighted", max_nodes=left)
        except NodeCapError:
            break
        left -= result.nodes
    return result


def choose_move(
    board: Board, level: str, rng: random.Random, *, budget: float | None = None
) -> int:
    """The 0-based cell the bot plays at ``level``; all chance comes from ``rng``.

    ``budget`` (seconds) replaces the level's ``Level.budget`` for this call. It only
    matters where Perfect searches to a time budget (boards over EXACT_CELLS cells at a
    level whose ``big_depth`` is None); smaller boards are solved exactly and the
    depth-limited levels ignore it. Raises ValueError unless ``budget`` is None or a
    finite number above 0, UnknownLevelError for an unknown level and IllegalMoveError
    on a finished board.
    """
    policy = get_level(level)
    seconds = policy.budget if budget is None else _checked_budget(budget)
    moves = board.legal_moves()
    if not moves or policy.is_perfect:
        if moves and uses_book(board):
            cell = book_move(board, cap=None if board.size <= EXACT_CELLS else INSTANT_NODES)
            if cell is not None:
                return cell
        return _perfect_player(seconds)(board, rng)  # also rejects a finished board
    rates = policy.rates(board)
    if policy.random_opening and not board.ply and board.size <= EXACT_CELLS:
        return _pick(list(moves), rng)
    if policy.takes_wins:
        wins = threat_cells(board)
        if wins:
            return _pick(wins, rng)
    if rates.block > 0:
        blocks = threat_cells(board, mover=False)
        if blocks and (rates.block >= 1 or rng.random() < rates.block):
            return _pick(blocks, rng)
    if rates.random > 0 and rng.random() < rates.random:
        return _pick(list(moves), rng)
    mistake = rates.mistake > 0 and rng.random() < rates.mistake
    if mistake:
        worse = _exact_mistakes(board)
        if worse:
            return _pick(worse, rng)
        mistake = worse is None  # known exactly that no move is worse: play the best
    if board.size > EXACT_CELLS and policy.big_depth is not None:
        depth = policy.big_depth
        nodes = BIG_NODES
        if mistake:
            worse, spent = _searched_mistakes(board, depth, nodes)
            if worse:
                return _pick(worse, rng)
            nodes -= spent
        result = _deepest_search(board, depth, nodes)
        return _pick(list(result.best_cells), rng)
    return _perfect_player(seconds)(board, rng)


def instant_move(board: Board, level: str) -> int | None:
    """``choose_move``'s cell at ``level`` if it takes no search (a book move, or an exact
    or safe choice of at most INSTANT_NODES nodes each: a few milliseconds), else None.
    Only ``impossible`` on the book's boards (engine.book) has such moves."""
    policy = get_level(level)
    if not policy.is_perfect or board.is_over or not uses_book(board):
        return None
    return book_move(board, cap=INSTANT_NODES)


class LevelStrategy:
    """A level behind the strategy interface, for self-play and the CLI."""

    def __init__(self, level: str) -> None:
        self.level = get_level(level).name

    @property
    def name(self) -> str:
        return self.level

    def __call__(self, board: Board, rng: random.Random) -> int:
        return choose_move(board, self.level, rng)

    def __repr__(self) -> str:
        return f"LevelStrategy({self.level!r})"


def level_strategy(level: str) -> LevelStrategy:
    """``choose_move`` at ``level`` as a strategy; raises UnknownLevelError."""
    return LevelStrategy(level)
