"""How fast the exact solver and the ``perfect`` strategy are, next to a naive minimax,
and what ``impossible`` costs a move on 4x4 k=4, 5x5 k=4 and 5x5 k=5.

Run as ``python -m bench.engine``; every figure below is measured in the same run (about
a minute; ``--impossible-only`` skips the rest, ``--impossible-only 5x5k4`` measures one
board, ``--reviews-only`` measures the post-game reviews alone). Times are wall-clock on
whatever machine runs it, except ``impossible``'s and the reviews', which are CPU
seconds (``impossible``'s in a fresh process per board, its start-up reported apart), so
the ratios are the figures to compare between machines.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from typing import TypeVar

from engine import solver, table3
from engine.board import Board

# -- the seed tutorials' minimax: a list board, no pruning, no memory ---------------------

_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def naive_first_move(cells: list[str]) -> tuple[int, int]:
    """Best move for X on a 3x3 list board by plain minimax, and the nodes it visited."""
    nodes = 0

    def winner(board: list[str]) -> str | None:
        for a, b, c in _LINES:
            if board[a] != " " and board[a] == board[b] == board[c]:
                return board[a]
        return None

    def minimax(board: list[str], player: str, depth: int) -> int:
        nonlocal nodes
        nodes += 1
        won = winner(board)
        if won is not None:
            return 10 - depth if won == "X" else depth - 10
        if " " not in board:
            return 0
        scores = []
        for i in range(9):
            if board[i] == " ":
                board[i] = player
                scores.append(minimax(board, "O" if player == "X" else "X", depth + 1))
                board[i] = " "
        return max(scores) if player == "X" else min(scores)

    nodes += 1  # the root
    best_cell, best_score = -1, -100
    for i in range(9):
        if cells[i] == " ":
            cells[i] = "X"
            score = minimax(cells, "O", 1)
            cells[i] = " "
            if score > best_score:
                best_cell, best_score = i, score
    return best_cell, nodes


# -- helpers ------------------------------------------------------------------------------

T = TypeVar("T")


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def per_call(fn: Callable[[], object], seconds: float = 0.5) -> float:
    """Mean seconds per call of a fast function, over about ``seconds``."""
    calls = 0
    start = time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return elapsed / calls


def cold() -> None:
    """Forget every solver cache, as in a fresh worker process."""
    solver.clear_caches()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.3f} ms" if seconds < 1 else f"{seconds:,.2f} s"


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs"


def all_positions(width: int, height: int, k: int) -> list[Board]:
    seen: dict[tuple[int, int], Board] = {}
    stack = [Board(width, height, k)]
    while stack:
        board = stack.pop()
        if board.is_over or (board.x_bits, board.o_bits) in seen:
            continue
        seen[(board.x_bits, board.o_bits)] = board
        stack.extend(board.play(c) for c in board.legal_moves())
    return list(seen.values())


def random_positions(shape: tuple[int, int, int], count: int, rng: random.Random) -> list[Board]:
    out = []
    while len(out) < count:
        board = Board(*shape)
        for _ in range(rng.randint(0, board.size - 1)):
            if board.is_over:
                break
            board = board.play(rng.choice(board.legal_moves()))
        if not board.is_over:
            out.append(board)
    return out


# -- impossible's moves, in a fresh process per board ------------------------------------

IMPOSSIBLE_GAMES = {(4, 4, 4): 60, (5, 5, 4): 24, (5, 5, 5): 16}


def impossible_child(shape: tuple[int, int, int], games: int, seed: int) -> None:
    """In a fresh process: CPU seconds of the imports and of every ``impossible`` move, as
    X and as O against random moves and ``hard`` (whose moves are timed too); prints JSON.
    A move is what the bot pays: ``instant_move``, and when that has no answer, the
    search ``choose_move`` makes at the level's own budget (counted as searched)."""
    from engine.levels import choose_move, instant_move

    startup = time.process_time()  # the process's CPU so far: interpreter and imports
    rng = random.Random(seed)
    times: list[float] = []
    sides: list[str] = []
    hard: list[float] = []
    searched = 0
    for game in range(games):
        bot = game % 2
        opponent = "random" if game % 4 < 2 else "hard"
        board = Board(*shape)
        while not board.is_over:
            began = time.process_time()
            if board.ply % 2 == bot:
                cell = instant_move(board, "impossible")
                if cell is None:
                    searched += 1
                    cell = choose_move(board, "impossible", rng)
                times.append(time.process_time() - began)
                sides.append("XO"[bot])
            elif opponent == "random":
                cell = rng.choice(board.legal_moves())
            else:
                cell = choose_move(board, opponent, rng)
                hard.append(time.process_time() - began)
            board = board.play(cell)
    out = {"startup": startup, "times": times, "sides": sides, "hard": hard}
    print(json.dumps(out | {"searched": searched}))


def _quantiles(times: list[float]) -> tuple[float, float, float]:
    """p50, p99 and the maximum of ``times``."""
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return ordered[len(ordered) // 2], p99, ordered[-1]


def impossible_section(rng: random.Random, only: list[str] | None = None) -> None:
    print("\nimpossible on the book's boards: CPU per move, a fresh process per board")
    empty = Board(5, 5, 4)
    cold()
    baseline = time.process_time()
    solver.Perfect(budget=1.5).search(empty.play(12), rng)
    baseline = time.process_time() - baseline
    print(f"  baseline: the 1.5 s search impossible made before its book: {ms(baseline)} CPU")
    for shape, games in IMPOSSIBLE_GAMES.items():
        if only and f"{shape[0]}x{shape[1]}k{shape[2]}" not in only:
            continue
        args = [sys.executable, "-m", "bench.engine", "--impossible-child", *map(str, shape)]
        args.append(str(games))
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        result = json.loads(out)
        p50, p99, top = _quantiles(result["times"])
        print(
            f"  {shape[0]}x{shape[1]} k={shape[2]}: start-up (interpreter, imports) "
            f"{ms(result['startup'])}; {len(result['times']):,} moves, {result['searched']} "
            f"searched: first {ms(result['times'][0])}, p50 {ms(p50)}, p99 {ms(p99)}, "
            f"max {ms(top)} (p99 {baseline / p99:,.0f}x under the baseline)"
        )
        for side in "XO":
            mine = [t for t, s in zip(result["times"], result["sides"], strict=True) if s == side]
            p50, p99, top = _quantiles(mine)
            print(f"    as {side}: {len(mine):,} moves, p50 {ms(p50)}, p99 {ms(p99)}, ", end="")
            print(f"max {ms(top)}")
        if result["hard"] and shape[0] * shape[1] > 16:
            p50, p99, top = _quantiles(result["hard"])
            print(
                f"    hard, its opponent: {len(result['hard']):,} moves, p50 {ms(p50)}, "
                f"p99 {ms(p99)}, max {ms(top)}"
            )


# -- post-game reviews on 5x5 -------------------------------------------------------------

REVIEW_GAMES = (("hard", "impossible"), ("easy", "hard"), ("medium", "medium"), ("random", "hard"))
"""Who plays X and O in the reviewed games, each pairing three times per board."""


def review_games(shape: tuple[int, int, int], rng: random.Random) -> list[list[int]]:
    """Finished games between the levels of REVIEW_GAMES (``random``: any legal cell)."""
    from engine.levels import choose_move

    games = []
    for x_level, o_level in REVIEW_GAMES * 3:
        board, moves = Board(*shape), []
        while not board.is_over:
            level = x_level if board.ply % 2 == 0 else o_level
            if level == "random":
                cell = rng.choice(board.legal_moves())
            else:
                cell = choose_move(board, level, rng, budget=0.2)
            moves.append(cell)
            board = board.play(cell)
        games.append(moves)
    return games


def old_review(moves: list[int], shape: tuple[int, int, int]) -> int:
    """The baseline: the review before issue 34, which solved every position exactly
    (with distances) from the last back, 300,000 nodes in all, on the shared solver.
    Returns how many positions it solved."""
    boards = [Board(*shape)]
    for cell in moves:
        boards.append(boards[-1].play(cell))
    budget, solved = 300_000, 0
    for board in reversed(boards):
        if budget <= 0 and not board.is_over:
            break
        try:
            _, used = solver.solve_counted(board, max_nodes=budget)
        except solver.UnsolvableError:
            break
        solved += 1
        budget -= used
    return solved


def reviews_section(rng: random.Random) -> None:
    from engine.reviewing import review

    print("\nreviews of finished 5x5 games: CPU per review (target: about 1 s at most)")
    for shape in ((5, 5, 4), (5, 5, 5)):
        games = review_games(shape, rng)
        cold()
        began = time.process_time()
        old = [old_review(moves, shape) for moves in games]
        baseline = (time.process_time() - began) / len(games)
        times, settled, moves_in_all, named = [], 0, 0, 0
        for moves in games:
            began = time.process_time()
            found = review(moves, *shape)
            times.append(time.process_time() - began)
            settled += sum(found.settled(i) for i in range(len(moves)))
            moves_in_all += len(moves)
            named += found.decider is not None or found.complete
        p50, _, top = _quantiles(times)
        mean = sum(times) / len(times)
        old_settled = sum(max(0, n - 1) for n in old)
        old_named = sum(n == len(moves) + 1 for n, moves in zip(old, games, strict=True))
        print(
            f"  {shape[0]}x{shape[1]} k={shape[2]}, {len(games)} games: mean {ms(mean)}, "
            f"p50 {ms(p50)}, max {ms(top)}; baseline (the old review, same games) "
            f"{ms(baseline)}: the new one takes {mean / baseline:,.2f}x its CPU"
        )
        print(
            f"    moves settled {settled}/{moves_in_all} (old: {old_settled}); a verdict "
            f"(a deciding move, or none in a fully settled game) in {named}/{len(games)} "
            f"(old: {old_named})"
        )


# -- the benchmark --------------------------------------------------------------------------


def main() -> None:
    if sys.argv[1:2] == ["--impossible-child"]:
        width, height, k, games = map(int, sys.argv[2:6])
        impossible_child((width, height, k), games, 7)
        return
    if sys.argv[1:2] in (["-h"], ["--help"]):
        usage = "python -m bench.engine [--impossible-only [BOARD ...] | --reviews-only]"
        print(f"usage: {usage}\n\n{__doc__}")
        return
    if sys.argv[1:] and sys.argv[1] not in ("--impossible-only", "--reviews-only"):
        raise SystemExit(f"bench.engine: unknown argument {sys.argv[1]!r} (try --help)")
    rng = random.Random(2024)
    if sys.argv[1:2] == ["--impossible-only"]:
        impossible_section(rng, sys.argv[2:])  # optionally boards such as 5x5k4
        return
    if sys.argv[1:2] == ["--reviews-only"]:
        reviews_section(rng)
        return
    print("engine benchmark (pure Python; wall-clock times, same run)\n")

    print("3x3, first move on the empty board")
    naive_time, (naive_cell, naive_nodes) = timed(lambda: naive_first_move([" "] * 9))
    print(f"  naive minimax (list board, no pruning): {naive_nodes:,} nodes, {ms(naive_time)}")
    cold()
    perfect = solver.Perfect()
    empty = Board()
    build_time, _ = timed(table3._table3)
    first_time, first = timed(lambda: perfect.search(empty, rng))
    warm = per_call(lambda: perfect.search(empty, rng))
    positions = len(table3._table3()[0])
    print(
        f"  perfect, cold (builds the table of all {positions:,} positions): "
        f"{ms(build_time + first_time)} -> {naive_time / (build_time + first_time):,.0f}x faster"
    )
    print(
        f"  perfect, table built: {us(warm)} per move, {first.nodes} node (a lookup) "
        f"-> {naive_time / warm:,.0f}x faster than naive"
    )

    print("\n3x3, perfect over every unfinished position, table built")
    boards = all_positions(3, 3, 3)
    sample = [rng.choice(boards) for _ in range(20_000)]
    elapsed, _ = timed(lambda: [perfect(b, rng) for b in sample])
    print(
        f"  {len(sample):,} moves from {len(boards):,} positions: "
        f"{len(sample) / elapsed:,.0f} moves/s"
    )

    print("\n4x4, k=4, solved from the empty board")
    cold()
    board = Board(4, 4, 4)
    elapsed, (score, nodes) = timed(lambda: solver.solve_counted(board))
    print(f"  cold cache: value {score} (draw), {nodes:,} nodes, {ms(elapsed)} (target <= 300 ms)")
    again, _ = timed(lambda: solver.solve_counted(board))
    print(f"  again, cache warm: {ms(again)} ({elapsed / again:,.0f}x faster)")
    elapsed, result = timed(lambda: perfect.search(board, rng))
    print(
        f"  perfect's first move (optimal moves plus the opponent's chances to err): "
        f"{ms(elapsed)}, {result.nodes:,} nodes"
    )

    print("\n4x4, k=4, perfect over random positions")
    cold()
    sample = random_positions((4, 4, 4), 300, rng)
    elapsed, _ = timed(lambda: [perfect(b, rng) for b in sample])
    print(
        f"  {len(sample)} positions, caches cold at the start: {len(sample) / elapsed:,.0f} moves/s"
    )
    elapsed, _ = timed(lambda: [perfect(b, rng) for b in sample])
    print(f"  the same positions again, caches warm: {len(sample) / elapsed:,.0f} moves/s")

    print("\n5x5, k=4, iterative deepening for 1 s (target: depth >= 8)")
    for moves in ((), (12, 6, 8, 16)):
        board = Board.from_moves(moves, 5, 5, 4)
        elapsed, result = timed(lambda board=board: solver.deepen(board, 1.0, rng))
        r = result
        where = "empty board" if not moves else f"after moves {[m + 1 for m in moves]}"
        print(
            f"  {where}: depth {r.depth} in {ms(elapsed)}, {r.nodes:,} nodes "
            f"({r.nodes / elapsed:,.0f} nodes/s), cell {r.cell + 1}, proven {r.proven}"
        )

    impossible_section(rng)
    reviews_section(rng)
    print("\nnaive minimax's first move was cell", naive_cell + 1)


if __name__ == "__main__":
    main()
