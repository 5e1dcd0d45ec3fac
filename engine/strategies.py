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

import random
from collections.abc import Callable
from typing import Any

from engine.board import Board, Mark
from engine.lines import (
    EVALUATIONS,
    WIN_SCORE,
    Strategy,
    UnknownStrategyError,
    _bit_cells,
    _forks,
    _line_score,
    _mover_bits,
    _pick,
    _power_weights,
    _require_moves,
    _Tables,
    _tables_of,
    _threats,
    forking_cells,
    open_lines_eval,
    preference_order,
    threat_cells,
    weighted_eval,
)
from engine.minimax import Minimax, MinimaxResult, minimax_search

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
