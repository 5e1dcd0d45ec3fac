"""What the bot tells players about its levels and boards, checked on every variant it offers.

Each level's description (``engine.levels``, shown as "level — description" where a
player picks it) is written out in ``CLAIMS`` with the claims it makes; each claim is a
check against the engine, run on every board size and win length that ``/tictactoe``
accepts. A description changed without its checks fails the first test. The board's
warning on variants the first player wins by force (``bot.games.first_player``) appears on
exactly those variants, and names the right first player. The exhaustive proofs of
``impossible`` are ``python -m engine prove`` (``tests/engine/test_book.py``, slow); here
samples keep it to seconds.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest
from discord.app_commands import TranslationContextLocation as Where

from bot import i18n
from bot.app import GameService
from bot.challenges.cog import SIZES
from bot.errors import InvalidSettings
from bot.games.first_player import first_player_warning
from bot.games.render import game_text
from bot.games.rules import validate_options
from bot.i18n import translator
from bot.models import First, Game, GameStatus
from bot.ui.commands_i18n import CommandTranslator
from engine.board import Board, Mark
from engine.levels import LEVELS, choose_move, get_level, level_strategy, levels
from engine.solver import LOSS, Perfect, move_results
from engine.strategies import Strategy, play_game, random_move, threat_cells
from engine.values import is_fair
from tests.bot.samples import ALICE, BOB, game
from tests.bot.test_command_i18n import slash_commands

Variant = tuple[int, int, int]


def offered_variants() -> list[Variant]:
    """Every (width, height, k) that ``/tictactoe`` accepts: its sizes, and each win
    length its option allows that the rules accept on that size."""
    (command,) = [c for c in slash_commands() if c.name == "tictactoe"]
    option = {p.name: p for p in command.parameters}["win_length"]
    found = []
    for side in SIZES.values():
        for k in range(int(option.min_value), int(option.max_value) + 1):
            try:
                validate_options(side, side, k)
            except InvalidSettings:  # a length the rules refuse on this size
                continue
            found.append((side, side, k))
    return found


VARIANTS = offered_variants()
WON = [variant for variant in VARIANTS if not is_fair(*variant)]
"""The variants whose first player can force a win (engine.values)."""
HELD = [variant for variant in VARIANTS if is_fair(*variant)]


def test_the_variants_are_the_ones_the_texts_name() -> None:
    """The help and README name the won variants in words: three in a row on 4x4 and 5x5."""
    assert VARIANTS == [(3, 3, 3), (4, 4, 3), (4, 4, 4), (5, 5, 3), (5, 5, 4), (5, 5, 5)]
    assert WON == [(4, 4, 3), (5, 5, 3)]


# -- the claims, one check each; ``level`` and a variant in, an AssertionError if false


def _wins_available(width: int, height: int, k: int) -> Board:
    """X to move with a win in one move; O threatens one too (so winning beats blocking)."""
    rows = ["X" * (k - 1) + "." * (width - k + 1), "O" * (k - 1) + "." * (width - k + 1)]
    rows += ["." * width] * (height - 2)
    return Board.from_text("/".join(rows), k=k)


def _threat(width: int, height: int, k: int) -> Board:
    """X to move, with no win of its own; O threatens to complete a line at one cell,
    and (where the solver says so at once) the block holds what missing it loses."""
    own = range(k - 1)  # O's line: the top row's first k - 1 cells
    apart = range(k, width * height)  # X's stones: anywhere but O's line and its end
    for cells in itertools.combinations(apart, k - 1):
        board = Board(width, height, k)
        for x, o in zip(cells, own, strict=True):
            board = board.play(x).play(o)
        blocks = threat_cells(board, mover=False)
        if threat_cells(board) or len(blocks) != 1:
            continue
        if width * height > 16 or move_results(board)[blocks[0]] != LOSS:  # it matters
            return board
    raise AssertionError(f"no threat position on {width}x{height} k={k}")


def takes_one_move_wins(level: str, variant: Variant) -> None:
    board = _wins_available(*variant)
    wins = set(threat_cells(board))
    assert wins and threat_cells(board, mover=False)
    for seed in range(20):
        assert choose_move(board, level, random.Random(seed)) in wins


def _block_rate(level: str, variant: Variant) -> float:
    """How often ``level`` blocks a threat, in a seeded sample; the level's own chance of
    blocking (``Rates.block``) is what the engine promises, so both are asserted."""
    board = _threat(*variant)
    blocks = set(threat_cells(board, mover=False))
    assert len(blocks) == 1 and not threat_cells(board), board
    seeds = range(200 if board.size <= 16 else 40)
    blocked = sum(choose_move(board, level, random.Random(seed)) in blocks for seed in seeds)
    return blocked / len(seeds)


def plays_loosely(level: str, variant: Variant) -> None:
    """At least every other move is a random cell, wherever nothing wins or must be blocked."""
    assert get_level(level).rates(Board(*variant)).random >= 0.5


def misses_many_threats(level: str, variant: Variant) -> None:
    assert get_level(level).rates(Board(*variant)).block <= 0.5
    assert _block_rate(level, variant) <= 0.75


def blocks_most_threats(level: str, variant: Variant) -> None:
    assert get_level(level).rates(Board(*variant)).block > 0.5
    assert _block_rate(level, variant) > 0.5


def lets_forks_through(level: str, variant: Variant) -> None:
    """It plays a random cell or a worse move now and then: a fork-stopping move is not sure."""
    rates = get_level(level).rates(Board(*variant))
    assert rates.random > 0 or rates.mistake > 0


def slips_now_and_then(level: str, variant: Variant) -> None:
    """Not perfect, but stronger than the level below: no rate or depth of it is worse."""
    policy = get_level(level)
    assert not policy.is_perfect
    lets_forks_through(level, variant)
    below = LEVELS[LEVELS.index(level) - 1]
    assert_at_least_as_strong(level, below, variant)


def assert_at_least_as_strong(level: str, below: str, variant: Variant) -> None:
    board = Board(*variant)
    upper, lower = get_level(level).rates(board), get_level(below).rates(board)
    assert upper.block >= lower.block and upper.random <= lower.random
    assert upper.random + upper.mistake <= lower.random + lower.mistake + 1e-9
    depth = (get_level(level).big_depth, get_level(below).big_depth)
    assert depth[0] is None or (depth[1] is not None and depth[0] >= depth[1])


def _opponents(variant: Variant) -> list[Strategy]:
    """Weak to strong; the exact ``perfect`` too where it answers at once (up to 4x4)."""
    found: list[Strategy] = [random_move, level_strategy("medium"), level_strategy("hard")]
    return [*found, Perfect()] if variant[0] * variant[1] <= 16 else found


def plays_perfectly(level: str, variant: Variant) -> None:
    """The engine's Perfect on every move (its book where it has one), never a chance."""
    assert get_level(level).is_perfect and get_level(level).rates(Board(*variant)).block == 1


def never_loses_unless_the_first_player_can_force_a_win(level: str, variant: Variant) -> None:
    """On a variant that can be held it loses no game, as X or as O (a sample; the proofs
    walk every game). On a won variant it wins every game it starts, and can lose as O:
    the qualification is needed there, and only there."""
    bot, rng = level_strategy(level), random.Random(7)
    games = 6 if variant[0] * variant[1] > 9 else 30
    for opponent, _ in itertools.product(_opponents(variant), range(games)):
        if is_fair(*variant):
            assert play_game(bot, opponent, rng, Board(*variant)).winner is not Mark.O
            assert play_game(opponent, bot, rng, Board(*variant)).winner is not Mark.X
        else:
            assert play_game(bot, opponent, rng, Board(*variant)).winner is Mark.X
    if not is_fair(*variant):
        assert play_game(bot, bot, rng, Board(*variant)).winner is Mark.X
        if variant[0] * variant[1] <= 16:
            assert play_game(Perfect(), bot, rng, Board(*variant)).winner is Mark.X


Check = Callable[[str, Variant], None]
CLAIMS: dict[str, tuple[str, tuple[Check, ...]]] = {
    "easy": (
        "Plays loosely and misses many threats, but takes any one-move win.",
        (plays_loosely, misses_many_threats, takes_one_move_wins),
    ),
    "medium": (
        "Takes one-move wins, blocks most threats, but lets forks through.",
        (takes_one_move_wins, blocks_most_threats, lets_forks_through),
    ),
    "hard": (
        "Strong: blocks most threats, but slips now and then.",
        (blocks_most_threats, slips_now_and_then, takes_one_move_wins),
    ),
    "impossible": (
        "Perfect play: it never loses, unless the first player can force a win.",
        (
            plays_perfectly,
            never_loses_unless_the_first_player_can_force_a_win,
            takes_one_move_wins,
        ),
    ),
}
"""Each level's description and the checks of what it says."""


def test_every_description_is_the_one_checked_here() -> None:
    assert {level.name: level.description for level in levels()} == {
        name: text for name, (text, _) in CLAIMS.items()
    }
    assert tuple(CLAIMS) == LEVELS  # weakest first, as the choices list them


@pytest.mark.parametrize(
    ("level", "check", "variant"),
    [
        (level, check, variant)
        for level, (_, checks) in CLAIMS.items()
        for check in checks
        for variant in VARIANTS
    ],
    ids=lambda value: getattr(value, "__name__", None) or str(value).replace(" ", ""),
)
def test_each_claim_holds_on_every_variant(level: str, check: Check, variant: Variant) -> None:
    check(level, variant)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_levels_get_stronger_in_their_order(variant: Variant) -> None:
    for below, level in itertools.pairwise(LEVELS):
        assert_at_least_as_strong(level, below, variant)


@pytest.mark.parametrize("level", LEVELS[:-1])
@pytest.mark.parametrize("variant", WON)
def test_the_other_levels_can_miss_a_forced_win(level: str, variant: Variant) -> None:
    """What the board says when they move first there: "at this level I can miss it"."""
    rng, perfect = random.Random(11), level_strategy("impossible")
    bot = level_strategy(level)
    results = [play_game(bot, perfect, rng, Board(*variant)).winner for _ in range(20)]
    assert any(winner is not Mark.X for winner in results)


def test_every_difficulty_choice_fits_uncut_in_every_language() -> None:
    """Discord's 100 characters hold "level — description" whole: nothing is cut off."""
    names = CommandTranslator()
    for name in sorted(i18n.available()):
        locale = name.replace("_", "-")
        catalog = translator(locale)
        for level in levels():
            label = f"{level.name} — {level.description}"
            shown = names.localize(label, locale, Where.choice_name) or label
            whole = f"{catalog.gettext(level.name)} — {catalog.gettext(level.description)}"
            assert shown == whole and len(shown) <= 100, (name, shown)


# -- the board's warning before the first move


def _live(variant: Variant, level: str | None, *, bot_first: bool) -> Game:
    """A game on ``variant`` before its first move (the bot's, if it moves first)."""
    width, height, k = variant
    base = game("en-US", level=level, moves=0)
    players: dict[str, Any] = {"x_id": ALICE, "o_id": None if level else BOB}
    if bot_first:
        players = {"x_id": None, "o_id": ALICE}
    return dataclasses.replace(base, width=width, height=height, k=k, **players)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_board_warns_on_exactly_the_won_variants(variant: Variant) -> None:
    t = translator("en-US")
    for level, bot_first in [(None, False), *itertools.product(LEVELS, (False, True))]:
        live = _live(variant, level, bot_first=bot_first)
        warning = first_player_warning(live, f"<@{ALICE}>")
        text = game_text(live, t)
        if is_fair(*variant):
            assert warning is None and "force a win" not in text
            continue
        assert warning is not None and t(warning) in text
        if not bot_first:
            assert f"<@{ALICE}> moves first" in t(warning)
        elif level is not None and get_level(level).is_perfect:
            assert "I will win" in t(warning)
        else:
            assert "I can miss it" in t(warning)
        over = dataclasses.replace(live, status=GameStatus.FINISHED)
        assert first_player_warning(over, f"<@{ALICE}>") is None


def test_the_board_names_the_member_who_moves_first() -> None:
    live = _live((4, 4, 3), "easy", bot_first=False)
    assert f"<@{ALICE}> moves first" in game_text(live, translator("en-US"))


async def test_a_game_the_bot_starts_on_a_won_variant_says_it_will_win(
    service: GameService,
) -> None:
    """Through the service, as the board is first posted: the bot has made its first move
    and the player has not moved yet."""
    game = await service.start_bot_game(
        1, 2, ALICE, level="impossible", width=4, height=4, k=3, first=First.OPPONENT
    )
    assert len(game.moves) == 1 and game.is_live
    text = game_text(game, translator("en-US"))
    assert "can always force a win: I move first and play perfectly, so I will win." in text
    while game.is_live:  # and it does
        cell = next(c for c in range(16) if game.board.cell(c) is None)
        game = (await service.move(game.id, ALICE, cell, game.move_no)).game
    assert game.winner_id is None and game.winner_mark is Mark.X
