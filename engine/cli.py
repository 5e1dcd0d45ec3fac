"""Command line: ``python -m engine play|move|analyse|selfplay|book|prove``.

With ``engine.cli_proofs`` (``book`` and ``prove``), the one place in ``engine`` that
reads stdin and writes stdout. A "player" on the command line is a level name (``easy``
... ``impossible``) or a strategy spec: a strategy name with optional parameters,
``minimax:depth=3,eval=weighted`` or ``perfect:budget=0.5``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Sequence
from typing import TextIO

from engine.board import Board, Mark
from engine.cli_proofs import add_book_options, add_prove_options, run_book, run_prove
from engine.errors import EngineError, IllegalMoveError, InvalidMoveError
from engine.levels import DEFAULT_LEVEL, LEVELS, UnknownLevelError, level_strategy
from engine.strategies import (
    STRATEGY_NAMES,
    Strategy,
    UnknownStrategyError,
    make_strategy,
    strategy_name,
)

__all__ = ["build_parser", "main", "parse_player", "parse_size"]

_QUIT = {"q", "quit", "exit"}


# -- argument helpers ------------------------------------------------------------------


def parse_size(text: str) -> tuple[int, int]:
    """``"4x3"`` -> (width 4, height 3); for argparse."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.strip().isdecimal() for p in parts):
        raise argparse.ArgumentTypeError(f"size must look like 3x3, not {text!r}")
    return int(parts[0]), int(parts[1])


def _param_value(text: str) -> object:
    lowered = text.lower()
    if lowered in ("none", "full"):
        return None
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_player(spec: str) -> Strategy:
    """A level name, or a strategy spec ``name[:key=value,...]``.

    Raises UnknownLevelError/UnknownStrategyError (both ValueErrors) for unknown names.
    """
    spec = spec.strip()
    if spec in LEVELS:
        return level_strategy(spec)
    name, _, rest = spec.partition(":")
    params: dict[str, object] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise UnknownStrategyError(f"strategy parameter {item!r} must look like key=value")
        params[key.strip()] = _param_value(value.strip())
    if name not in STRATEGY_NAMES:
        raise UnknownStrategyError(
            f"unknown player {name!r}: use a level ({', '.join(LEVELS)}) "
            f"or a strategy ({', '.join(STRATEGY_NAMES)})"
        )
    return make_strategy(name, **params)


def _player_from_args(args: argparse.Namespace) -> Strategy:
    if args.strategy is not None:
        return parse_player(args.strategy)
    return level_strategy(args.level or DEFAULT_LEVEL)


def _add_player_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--level",
        choices=LEVELS,
        help=f"difficulty level (default {DEFAULT_LEVEL})",
    )
    group.add_argument(
        "--strategy",
        metavar="SPEC",
        help=f"a strategy instead of a level: {', '.join(STRATEGY_NAMES)}, "
        "optionally with parameters, e.g. minimax:depth=3,eval=weighted",
    )


def _add_shape_options(parser: argparse.ArgumentParser, size: bool = True) -> None:
    if size:
        parser.add_argument(
            "--size", type=parse_size, default=(3, 3), metavar="WxH", help="board size (3x3)"
        )
    parser.add_argument(
        "--k", type=int, default=None, help="marks in a row to win (default: the shorter side)"
    )


def _seeded(seed: int | None) -> random.Random:
    return random.Random(seed)


def _new_board(args: argparse.Namespace) -> Board:
    width, height = args.size
    return Board(width, height, min(width, height) if args.k is None else args.k)


# -- play ------------------------------------------------------------------------------


def _play(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    board = _new_board(args)
    bot = _player_from_args(args)
    rng = _seeded(args.seed)
    first = args.first if args.first != "random" else rng.choice(("me", "bot"))
    human = Mark.X if first == "me" else Mark.O
    out = stdout.write
    out(
        f"{board.width}x{board.height}, {board.k} in a row. You are {human.value}, "
        f"the bot ({strategy_name(bot)}) is {human.other.value}. Type a cell number, "
        "or q to quit.\n"
    )
    show = True
    while not board.is_over:
        if show:
            out("\n" + board.pretty() + "\n\n")
        show = True
        if board.turn is human:
            out(f"Your move (1-{board.size}): ")
            stdout.flush()
            line = stdin.readline()
            if not line:
                out("\nBye.\n")
                return 0
            entry = line.strip()
            if entry.lower() in _QUIT:
                out("Bye.\n")
                return 0
            try:
                board = board.play(board.parse_cell(entry))
            except (InvalidMoveError, IllegalMoveError) as error:
                out(f"{error}. Try again.\n")
                show = False
        else:
            cell = bot(board, rng)
            board = board.play(cell)
            out(f"The bot plays {board.cell_number(cell)}.\n")
    out("\n" + board.pretty(numbers=False) + "\n\n")
    winner = board.winner
    if winner is None:
        out("A draw.\n")
    elif winner is human:
        out("You win!\n")
    else:
        out("The bot wins.\n")
    return 0


# -- move ------------------------------------------------------------------------------


def _move(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Answer each line as soon as it is read, flushed, so that a program can drive the
    engine one position at a time (and time each answer)."""
    player = _player_from_args(args)
    rng = _seeded(args.seed)
    k = args.k
    for number, line in enumerate(iter(stdin.readline, ""), start=1):
        try:
            board = Board.from_text(line.strip(), k=k)
            if board.is_over:
                raise IllegalMoveError("the game is over")
            cell = player(board, rng)
        except EngineError as error:
            stderr.write(f"line {number}: {line.strip()!r}: {error}\n")
            return 1
        stdout.write(f"{board.cell_number(cell)}\n")
        stdout.flush()
    return 0


# -- analyse ---------------------------------------------------------------------------


def _analyse(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from engine.solver import move_values

    try:
        board = Board.from_text(args.position, k=args.k)
        if board.is_over:
            winner = board.winner
            result = "a draw" if winner is None else f"{winner.value} has won"
            raise IllegalMoveError(f"the game is over ({result})")
        values = move_values(board)
    except EngineError as error:
        stderr.write(f"{args.position!r}: {error}\n")
        return 1
    order = {"win": 0, "draw": 1, "loss": 2}
    values.sort(key=lambda v: (order[v.result], v.plies if v.result == "win" else -v.plies, v.cell))
    mover = board.turn.value
    stdout.write(board.pretty() + "\n\n")
    stdout.write(
        f"{mover} to move. Each cell's result for {mover} with best play on both sides, and\n"
        "how many plies (this move included) until the game ends:\n"
    )
    for value in values:
        plies = f"{value.plies} {'ply' if value.plies == 1 else 'plies'}"
        stdout.write(f"{board.cell_number(value.cell):>3}  {value.result:<4}  in {plies}\n")
    return 0


# -- selfplay --------------------------------------------------------------------------


def _selfplay(args: argparse.Namespace, stdout: TextIO) -> int:
    x = parse_player(args.x)
    o = parse_player(args.o)
    rng = _seeded(args.seed)
    start = _new_board(args)
    counts = {Mark.X: 0, None: 0, Mark.O: 0}
    for _ in range(args.games):
        board = start
        while not board.is_over:
            player = x if board.turn is Mark.X else o
            board = board.play(player(board, rng))
        counts[board.winner] += 1
    games = args.games
    stdout.write(
        f"{games} games on {start.width}x{start.height}, k={start.k}: "
        f"X = {strategy_name(x)}, O = {strategy_name(o)}\n"
    )
    stdout.write(f"{'':<8}{'games':>7}{'percent':>9}\n")
    for label, key in (("X wins", Mark.X), ("draws", None), ("O wins", Mark.O)):
        share = 100 * counts[key] / games if games else 0.0
        stdout.write(f"{label:<8}{counts[key]:>7}{share:>8.1f}%\n")
    return 0


# -- entry point -----------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m engine", description="Tic-tac-toe on m,n,k boards, in the terminal."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    play = commands.add_parser("play", help="play a game against the bot")
    _add_player_options(play)
    _add_shape_options(play)
    play.add_argument(
        "--first", choices=("me", "bot", "random"), default="me", help="who plays X (me)"
    )
    play.add_argument("--seed", type=int, default=None, help="seed for the bot's choices")

    move = commands.add_parser(
        "move", help="read positions (one a line, e.g. X.O/.X./...) and print the bot's cells"
    )
    _add_player_options(move)
    _add_shape_options(move, size=False)
    move.add_argument("--seed", type=int, default=0, help="seed for the bot's choices (0)")

    analyse = commands.add_parser("analyse", help="the value of every legal move in a position")
    analyse.add_argument("position", help="the position, e.g. X.O/.X./...")
    _add_shape_options(analyse, size=False)

    selfplay = commands.add_parser("selfplay", help="play games between two players")
    selfplay.add_argument("--x", default="perfect", metavar="PLAYER", help="X: level or strategy")
    selfplay.add_argument("--o", default="random", metavar="PLAYER", help="O: level or strategy")
    selfplay.add_argument("--games", type=int, default=100, help="number of games (100)")
    _add_shape_options(selfplay)
    selfplay.add_argument("--seed", type=int, default=0, help="seed (0)")

    book = commands.add_parser(
        "book", help="rebuild impossible's book for a board from the exact solver"
    )
    _add_shape_options(book)
    add_book_options(book)

    prove = commands.add_parser(
        "prove", help="check impossible's every move in every position it reaches"
    )
    _add_shape_options(prove)
    add_prove_options(prove)
    return parser


def main(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 bad input data, 2 bad usage)."""
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    stderr = sys.stderr if stderr is None else stderr
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command in ("play", "selfplay"):
            _new_board(args)  # reject a bad size or k before anything else
        if getattr(args, "games", 0) < 0:
            parser.error("--games must not be negative")
        if args.command == "play":
            return _play(args, stdin, stdout)
        if args.command == "move":
            return _move(args, stdin, stdout, stderr)
        if args.command == "analyse":
            return _analyse(args, stdout, stderr)
        if args.command == "book":
            return run_book(args, stdout)
        if args.command == "prove":
            return run_prove(args, stdout)
        return _selfplay(args, stdout)
    except (UnknownLevelError, UnknownStrategyError) as error:
        parser.error(str(error))
    except EngineError as error:
        parser.error(str(error))
    except KeyboardInterrupt:
        stdout.write("\n")
        return 130
    except BrokenPipeError:
        # The reader went away (``... | head``): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        if stdout is sys.stdout:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 1
    return 0
