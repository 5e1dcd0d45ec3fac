"""Move-choosing strategies: the classic tutorial players, each behind one interface.

A strategy is any callable ``(board, rng) -> cell`` returning a 0-based legal cell. All
randomness comes from the ``random.Random`` passed in, so a seeded game replays exactly.
Every strategy raises IllegalMoveError when asked to move on a finished board.

The family, weakest to strongest on 3x3:

``random``
    any legal cell, uniformly.
``table``
    the first free cell in ``preference_order`` (centre, corners, sides on 3x3).
``rules``
    win, block, fork, stop a fork, else the cell on the most open lines.
``heuristic``
    one ply of lookahead scored by ``weighted_eval`` (+100/+10/+1 per open line).
``minimax``
    depth-limited minimax (alpha-beta unless ``pruning=False``) with the "open lines"
    or the weighted leaf evaluation; wins count for more the sooner they come.
``perfect``
    the exact solver, ``engine.solver.Perfect``.

Searches work on the raw bitboards (``x_bits``/``o_bits`` and the geometry's line
masks), never on Board objects per node.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from engine.board import Board, Mark
from engine.errors import IllegalMoveError

__all__ = [
    "EVALUATIONS",
    "RULES",
    "STRATEGY_NAMES",
    "WIN_SCORE",
    "Minimax",
    "MinimaxResult",
    "Strategy",
    "UnknownStrategyError",
    "forking_cells",
    "heuristic_move",
    "heuristic_scores",
    "make_strategy",
    "minimax_search",
    "open_lines_eval",
    "play_game",
    "preference_order",
    "random_move",
    "rules_candidates",
    "rules_move",
    "strategy_name",
    "table_move",
    "threat_cells",
    "weighted_eval",
]

WIN_SCORE = 1_000_000_000
"""The score of a win on the spot; a win ``p`` plies away scores ``WIN_SCORE - p``.

Far above any evaluation (below 10**6 on every board up to 5x5), so no heuristic
estimate is ever mistaken for a forced result.
"""


class Strategy(Protocol):
    """Chooses a legal 0-based cell for the player to move."""

    def __call__(self, board: Board, rng: random.Random) -> int: ...


class UnknownStrategyError(ValueError):
    """A strategy name or parameter that the registry does not know."""


# -- per-shape tables ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Tables:
    """Precomputed bit masks for one board shape (width, height, k)."""

    k: int
    size: int
    full: int
    line_masks: tuple[int, ...]
    cell_masks: tuple[tuple[int, ...], ...]  # masks of the lines through each cell
    order: tuple[int, ...]  # preference order, best first


@functools.cache
def _tables(width: int, height: int, k: int) -> _Tables:
    geo = Board(width, height, k).geometry
    cell_masks = tuple(
        tuple(geo.line_masks[i] for i in geo.lines_through[cell]) for cell in range(geo.size)
    )
    return _Tables(
        k=k,
        size=geo.size,
        full=geo.full_mask,
        line_masks=geo.line_masks,
        cell_masks=cell_masks,
        order=_preference(width, height, cell_masks),
    )


def _tables_of(board: Board) -> _Tables:
    return _tables(board.width, board.height, board.k)


def _preference(
    width: int, height: int, cell_masks: tuple[tuple[int, ...], ...]
) -> tuple[int, ...]:
    def key(cell: int) -> tuple[int, int, int]:
        row, col = divmod(cell, width)
        # Four times the squared distance to the centre: whole numbers on any board.
        dist = (2 * row - (height - 1)) ** 2 + (2 * col - (width - 1)) ** 2
        return (-len(cell_masks[cell]), dist, cell)

    return tuple(sorted(range(width * height), key=key))


def preference_order(board: Board) -> tuple[int, ...]:
    """The ``table`` strategy's order of all cells, most preferred first.

    Cells on more winning lines come first; ties go to the cell nearer the centre, then
    to the lower index (reading order). On 3x3 this is the tutorial's table: centre,
    corners (1, 3, 7, 9), sides (2, 4, 6, 8) in 1-based numbers.
    """
    return _tables_of(board).order


def _mover_bits(board: Board) -> tuple[int, int]:
    """(mover's bits, opponent's bits)."""
    x, o = board.x_bits, board.o_bits
    return (x, o) if x.bit_count() == o.bit_count() else (o, x)


def _require_moves(board: Board) -> tuple[int, ...]:
    moves = board.legal_moves()
    if not moves:
        raise IllegalMoveError("the game is over; there is no move to choose")
    return moves


def _bit_cells(bits: int) -> list[int]:
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


# -- evaluations -----------------------------------------------------------------------


def _line_score(me: int, opp: int, masks: tuple[int, ...], weights: tuple[int, ...]) -> int:
    score = 0
    for mask in masks:
        mine = me & mask
        theirs = opp & mask
        if theirs:
            if not mine:
                score -= weights[theirs.bit_count()]
        elif mine:
            score += weights[mine.bit_count()]
    return score


@functools.cache
def _open_weights(k: int) -> tuple[int, ...]:
    return tuple(range(k + 1))


@functools.cache
def _power_weights(k: int) -> tuple[int, ...]:
    return (0, *(10 ** (n - 1) for n in range(1, k + 1)))


def open_lines_eval(board: Board, me: int, opp: int) -> int:
    """The C# tutorial's estimate: over every line still winnable by a player (none of the
    other's marks on it), that player's marks on it; ``me``'s sum minus ``opp``'s.

    ``me``/``opp`` are bitboards; ``board`` only supplies the shape.
    """
    t = _tables_of(board)
    return _line_score(me, opp, t.line_masks, _open_weights(t.k))


def weighted_eval(board: Board, me: int, opp: int) -> int:
    """The Java tutorial's estimate, generalised to k: a line holding ``n`` of one
    player's marks and none of the other's is worth ``10**(n-1)`` to that player
    (+100/+10/+1 on 3x3); ``me``'s total minus ``opp``'s.
    """
    t = _tables_of(board)
    return _line_score(me, opp, t.line_masks, _power_weights(t.k))


EVALUATIONS: dict[str, tuple[Callable[[int], tuple[int, ...]], str]] = {
    "open_lines": (_open_weights, "marks on each line still winnable, mine minus theirs"),
    "weighted": (_power_weights, "10**(n-1) for n marks on an open line, mine minus theirs"),
}


# -- threats and forks -----------------------------------------------------------------


def _threats(me: int, opp: int, t: _Tables) -> int:
    """Bit mask of the empty cells that would complete a line for ``me``."""
    need = t.k - 1
    cells = 0
    for mask in t.line_masks:
        if opp & mask:
            continue
        mine = me & mask
        if mine.bit_count() == need:
            cells |= mask & ~mine
    return cells


def _forks(me: int, opp: int, t: _Tables) -> int:
    """Bit mask of the empty cells where ``me`` would get two or more winning cells."""
    empty = t.full & ~(me | opp)
    cells = 0
    for cell in _bit_cells(empty):
        if _threats(me | 1 << cell, opp, t).bit_count() >= 2:
            cells |= 1 << cell
    return cells


def threat_cells(board: Board, mover: bool = True) -> list[int]:
    """The cells that would win on the spot for the player to move (or, with
    ``mover=False``, for the other player): the empty cell of each line holding k-1 of
    that player's marks and nothing else.
    """
    me, opp = _mover_bits(board)
    if not mover:
        me, opp = opp, me
    if board.is_over:
        return []
    return _bit_cells(_threats(me, opp, _tables_of(board)))


def forking_cells(board: Board, mover: bool = True) -> list[int]:
    """The cells where that player would create a fork: two or more different winning
    cells at once, so that one block cannot stop both.
    """
    me, opp = _mover_bits(board)
    if not mover:
        me, opp = opp, me
    if board.is_over:
        return []
    return _bit_cells(_forks(me, opp, _tables_of(board)))


# -- simple strategies -----------------------------------------------------------------


def random_move(board: Board, rng: random.Random) -> int:
    """Any legal cell, uniformly at random."""
    return rng.choice(_require_moves(board))


def table_move(board: Board, rng: random.Random) -> int:
    """The first free cell in ``preference_order``; ignores ``rng``."""
    _require_moves(board)
    taken = board.x_bits | board.o_bits
    for cell in _tables_of(board).order:
        if not taken >> cell & 1:
            return cell
    raise AssertionError("unreachable: a board that is not over has an empty cell")


def _pick(cells: list[int], rng: random.Random) -> int:
    return cells[0] if len(cells) == 1 else rng.choice(cells)


def _most_open(cells: list[int], me: int, opp: int, t: _Tables) -> list[int]:
    """Those of ``cells`` on the most lines free of the opponent's marks; among those,
    the ones on the most lines still free of ``me``'s marks (lines the move takes away
    from the opponent).
    """
    counts = [
        (
            sum(1 for mask in t.cell_masks[c] if not opp & mask),
            sum(1 for mask in t.cell_masks[c] if not me & mask),
        )
        for c in cells
    ]
    top = max(counts)
    return [c for c, n in zip(cells, counts, strict=True) if n == top]


RULES = ("win", "block", "fork", "force", "block_fork", "open_lines")
"""The rule names of ``rules_candidates``, in the order they are tried."""


def rules_candidates(board: Board) -> tuple[str, tuple[int, ...]]:
    """The rule that decides the ``rules`` strategy's move and the cells it allows.

    In order: ``win`` on the spot; ``block`` the opponent's winning cell; ``fork`` (a
    move leaving two or more different winning cells); if the opponent has a fork cell,
    ``force``: make a threat whose forced block is not a fork for them, else
    ``block_fork``: take one of their fork cells; last, ``open_lines``: the cells on the
    most lines still free of the opponent's marks, then on the most lines still free of
    the mover's (taking the most away from the opponent). Fork and threat choices are
    narrowed by that same last rule.
    """
    _require_moves(board)
    t = _tables_of(board)
    me, opp = _mover_bits(board)
    empty = t.full & ~(me | opp)

    wins = _threats(me, opp, t)
    if wins:
        return "win", tuple(_bit_cells(wins))
    blocks = _threats(opp, me, t)
    if blocks:
        return "block", tuple(_bit_cells(blocks))
    forks = _forks(me, opp, t)
    if forks:
        return "fork", tuple(_most_open(_bit_cells(forks), me, opp, t))
    their_forks = _forks(opp, me, t)
    if their_forks:
        safe = []
        for cell in _bit_cells(empty):
            after = me | 1 << cell
            forced = _threats(after, opp, t)
            # A single threat: the opponent must block on `forced`; fine unless that
            # block gives them two winning cells. (Two threats would be a fork, rule 3.)
            if forced.bit_count() == 1 and _threats(opp | forced, after, t).bit_count() < 2:
                safe.append(cell)
        if safe:
            return "force", tuple(_most_open(safe, me, opp, t))
        return "block_fork", tuple(_most_open(_bit_cells(their_forks), me, opp, t))
    return "open_lines", tuple(_most_open(_bit_cells(empty), me, opp, t))


def rules_move(board: Board, rng: random.Random) -> int:
    """The Java tutorial's rule-based player generalised to k in a row: the first rule of
    ``rules_candidates`` that applies, a random one of the cells it allows.
    """
    return _pick(list(rules_candidates(board)[1]), rng)


def heuristic_scores(board: Board) -> dict[int, int]:
    """Each legal move's one-ply score for the mover: ``weighted_eval`` of the position
    after it, or ``WIN_SCORE`` for a move that wins on the spot.
    """
    moves = _require_moves(board)
    t = _tables_of(board)
    me, opp = _mover_bits(board)
    weights = _power_weights(t.k)
    scores = {}
    for cell in moves:
        after = me | 1 << cell
        if any(after & mask == mask for mask in t.cell_masks[cell]):
            scores[cell] = WIN_SCORE
        else:
            scores[cell] = _line_score(after, opp, t.line_masks, weights)
    return scores


def heuristic_move(board: Board, rng: random.Random) -> int:
    """The Java tutorial's one-ply player: a random one of the moves with the best
    ``heuristic_scores``. It never looks at the opponent's reply.
    """
    scores = heuristic_scores(board)
    top = max(scores.values())
    return _pick([cell for cell, score in scores.items() if score == top], rng)


# -- minimax ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MinimaxResult:
    """What one search found: the root value for the mover, every move achieving it (in
    index order) and the number of positions visited, the root included.
    """

    score: int
    best_cells: tuple[int, ...]
    nodes: int


class _Search:
    """One minimax search over bitboards; scores are from the root mover's view."""

    __slots__ = ("cell_masks", "full", "limit", "line_masks", "nodes", "order", "weights")

    def __init__(self, t: _Tables, weights: tuple[int, ...], limit: int) -> None:
        self.cell_masks = t.cell_masks
        self.line_masks = t.line_masks
        self.full = t.full
        self.order = t.order
        self.weights = weights
        self.limit = limit
        self.nodes = 0

    def leaf(self, root: int, other: int) -> int:
        return _line_score(root, other, self.line_masks, self.weights)

    def plain(self, mover: int, waiting: int, root_moves: bool, ply: int) -> int:
        """Plain minimax of the position where ``mover`` is to play (full tree)."""
        self.nodes += 1
        taken = mover | waiting
        if taken == self.full:
            return 0
        if ply >= self.limit:
            return self.leaf(mover, waiting) if root_moves else self.leaf(waiting, mover)
        best = None
        for cell in self.order:
            bit = 1 << cell
            if taken & bit:
                continue
            after = mover | bit
            if any(after & mask == mask for mask in self.cell_masks[cell]):
                self.nodes += 1
                value = WIN_SCORE - (ply + 1)
                if not root_moves:
                    value = -value
            else:
                value = self.plain(waiting, after, not root_moves, ply + 1)
            if best is None or (value > best if root_moves else value < best):
                best = value
        assert best is not None
        return best

    def alphabeta(
        self, mover: int, waiting: int, root_moves: bool, ply: int, alpha: int, beta: int
    ) -> int:
        """Fail-hard alpha-beta value of the position, clamped to [alpha, beta]."""
        self.nodes += 1
        taken = mover | waiting
        if taken == self.full:
            return 0
        if ply >= self.limit:
            return self.leaf(mover, waiting) if root_moves else self.leaf(waiting, mover)
        empty_cells = [c for c in self.order if not taken >> c & 1]
        # A win on the spot is the best any move can do: take it without looking further
        # (the C# tutorial's early exit on a winning child).
        for cell in empty_cells:
            after = mover | 1 << cell
            if any(after & mask == mask for mask in self.cell_masks[cell]):
                self.nodes += 1
                value = WIN_SCORE - (ply + 1)
                value = value if root_moves else -value
                return max(alpha, min(beta, value))
        if root_moves:
            for cell in empty_cells:
                value = self.alphabeta(waiting, mover | 1 << cell, False, ply + 1, alpha, beta)
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        return beta
            return alpha
        for cell in empty_cells:
            value = self.alphabeta(waiting, mover | 1 << cell, True, ply + 1, alpha, beta)
            if value < beta:
                beta = value
                if alpha >= beta:
                    return alpha
        return beta


def minimax_search(
    board: Board,
    depth: int | None = None,
    evaluation: str = "open_lines",
    pruning: bool = True,
) -> MinimaxResult:
    """Search ``depth`` plies ahead (None: to the end) and value every move for the mover.

    Leaves at the depth limit are scored by ``evaluation`` (``"open_lines"`` or
    ``"weighted"``); a win ``p`` plies from the root scores ``WIN_SCORE - p`` and a loss
    the negative, so faster wins and slower losses are preferred. With ``pruning`` the
    search uses alpha-beta plus an early exit when a side can win on the spot; the root
    still values each move exactly enough to find every equally good one, so both modes
    return the same score and ``best_cells``. Plain mode visits every node of the game
    tree: 549,946 from the empty 3x3 board at full depth.
    """
    moves = _require_moves(board)
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise ValueError(f"depth must be a whole number of plies from 1, or None; not {depth!r}")
    if evaluation not in EVALUATIONS:
        raise UnknownStrategyError(
            f"unknown evaluation {evaluation!r}; choose from {', '.join(EVALUATIONS)}"
        )
    t = _tables_of(board)
    weights = EVALUATIONS[evaluation][0](t.k)
    search = _Search(t, weights, t.size if depth is None else depth)
    search.nodes = 1  # the root
    me, opp = _mover_bits(board)
    ordered = [c for c in t.order if c in moves]
    values: dict[int, int] = {}
    best = -WIN_SCORE - 1
    for cell in ordered:
        after = me | 1 << cell
        if any(after & mask == mask for mask in t.cell_masks[cell]):
            search.nodes += 1
            value = WIN_SCORE - 1
        elif pruning:
            # Window (best - 1, +inf): a move at least as good as the best so far comes
            # back exact, a worse one comes back as at most best - 1.
            value = search.alphabeta(opp, after, False, 1, best - 1, WIN_SCORE)
        else:
            value = search.plain(opp, after, False, 1)
        values[cell] = value
        best = max(best, value)
    best_cells = tuple(sorted(c for c, v in values.items() if v == best))
    return MinimaxResult(score=best, best_cells=best_cells, nodes=search.nodes)


class Minimax:
    """Depth-limited minimax as a strategy: a random choice among the best moves.

    ``depth`` counts plies (None searches to the end); ``evaluation`` scores the leaves
    at the limit; ``pruning=False`` runs the plain tutorial minimax. ``last_nodes`` and
    ``last_score`` describe the most recent search.
    """

    def __init__(
        self, depth: int | None = None, evaluation: str = "open_lines", pruning: bool = True
    ) -> None:
        if depth is not None and (
            isinstance(depth, bool) or not isinstance(depth, int) or depth < 1
        ):
            raise UnknownStrategyError(
                f"depth must be a whole number of plies from 1, or None; not {depth!r}"
            )
        if evaluation not in EVALUATIONS:
            raise UnknownStrategyError(
                f"unknown evaluation {evaluation!r}; choose from {', '.join(EVALUATIONS)}"
            )
        self.depth = depth
        self.evaluation = evaluation
        self.pruning = bool(pruning)
        self.last_nodes = 0
        self.last_score = 0

    @property
    def name(self) -> str:
        depth = "full" if self.depth is None else str(self.depth)
        plain = "" if self.pruning else ",plain"
        return f"minimax(depth={depth},eval={self.evaluation}{plain})"

    def __repr__(self) -> str:
        return (
            f"Minimax(depth={self.depth!r}, evaluation={self.evaluation!r}, "
            f"pruning={self.pruning!r})"
        )

    def __call__(self, board: Board, rng: random.Random) -> int:
        result = minimax_search(board, self.depth, self.evaluation, self.pruning)
        self.last_nodes = result.nodes
        self.last_score = result.score
        return _pick(list(result.best_cells), rng)


# -- registry --------------------------------------------------------------------------


def _make_perfect(budget: float = 2.0) -> Strategy:
    # Imported here so that this module loads without the solver (and without a cycle).
    from engine.solver import Perfect

    if isinstance(budget, bool) or not isinstance(budget, int | float) or not budget > 0:
        raise UnknownStrategyError(f"budget must be a positive number of seconds, not {budget!r}")
    return Perfect(budget=float(budget))


def _no_params(fn: Strategy) -> Callable[[], Strategy]:
    def factory() -> Strategy:
        return fn

    return factory


def _make_minimax(
    depth: int | None = None, eval: str = "open_lines", pruning: bool = True
) -> Strategy:
    return Minimax(depth=depth, evaluation=eval, pruning=pruning)


_FACTORIES: dict[str, Callable[..., Strategy]] = {
    "random": _no_params(random_move),
    "table": _no_params(table_move),
    "rules": _no_params(rules_move),
    "heuristic": _no_params(heuristic_move),
    "minimax": _make_minimax,
    "perfect": _make_perfect,
}

STRATEGY_NAMES: tuple[str, ...] = tuple(_FACTORIES)

_PARAMS: dict[str, tuple[str, ...]] = {
    "minimax": ("depth", "eval", "pruning"),
    "perfect": ("budget",),
}


def make_strategy(name: str, **params: Any) -> Strategy:
    """A strategy by registry name; ``minimax`` takes ``depth``, ``eval``, ``pruning``
    and ``perfect`` takes ``budget`` (seconds). Raises UnknownStrategyError for an
    unknown name or parameter.
    """
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UnknownStrategyError(
            f"unknown strategy {name!r}; choose from {', '.join(STRATEGY_NAMES)}"
        )
    allowed = _PARAMS.get(name, ())
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        takes = f"takes {', '.join(allowed)}" if allowed else "takes no parameters"
        raise UnknownStrategyError(
            f"strategy {name!r} {takes}; got {', '.join(map(repr, unknown))}"
        )
    return factory(**params)


_FUNCTION_NAMES: dict[object, str] = {
    random_move: "random",
    table_move: "table",
    rules_move: "rules",
    heuristic_move: "heuristic",
}


def strategy_name(strategy: Strategy) -> str:
    """A short label: the registry name of a plain-function strategy, else the object's
    ``name`` attribute, else its function or class name.
    """
    known = _FUNCTION_NAMES.get(strategy)
    if known is not None:
        return known
    name = getattr(strategy, "name", None)
    if isinstance(name, str):
        return name
    return getattr(strategy, "__name__", type(strategy).__name__)


def play_game(x: Strategy, o: Strategy, rng: random.Random, board: Board | None = None) -> Board:
    """Play ``x`` against ``o`` from ``board`` (default: an empty 3x3) to the end.

    Both draw on the one ``rng``, so a seed fixes the whole game. Returns the final board,
    whose ``moves`` hold the game.
    """
    board = Board() if board is None else board
    while not board.is_over:
        player = x if board.turn is Mark.X else o
        board = board.play(player(board, rng))
    return board
