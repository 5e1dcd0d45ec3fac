"""Every kind of custom_id (``bot.ui.ids``) is written and read back the same, in the
wire format boards already on Discord carry: a board posted before an upgrade keeps
working after it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import cast

import pytest

from bot.app import GameService
from bot.games.boards import Boards
from bot.games.queries import Store
from bot.pings.notices import Notices
from bot.ui import ids
from bot.ui.client import route_clicks
from bot.ui.gate import Gate
from bot.ui.router import Router

WIRE: dict[str, ids.CustomId] = {
    "ttt:cell:812:4:3": ids.Cell(game=812, cell=4, move=3),
    "ttt:taken:812:4": ids.Taken(game=812, cell=4),
    "ttt:over:812:24": ids.Over(game=812, cell=24),
    "ttt:forfeit:812": ids.Forfeit(game=812),
    "ttt:rematch:812": ids.Rematch(game=812),
    "ttt:review:812": ids.Review(game=812),
    "ttt:quit:812:2:1764320000": ids.Quit(game=812, move=2, until=1764320000),
    "ttt:quit:812": ids.OldQuit(game=812),
    "ttt:keep:812": ids.KeepPlaying(game=812),
    "ttt:calloff:812": ids.Calloff(game=812),
    "ttt:calloff-yes:812": ids.CalloffAnswer(answer="yes", game=812),
    "ttt:calloff-no:812": ids.CalloffAnswer(answer="no", game=812),
    "ttt:accept:77": ids.Accept(challenge=77),
    "ttt:decline:77": ids.Decline(challenge=77),
    "ttt:withdraw:77": ids.Withdraw(challenge=77),
    "ttt:lb:0": ids.LeaderboardPage(page=0),
    "ttt:lb:3": ids.LeaderboardPage(page=3),
    "ttt:forget:me:123456789012345678": ids.Forget(scope="me", user=123456789012345678),
    "ttt:forget:server:5": ids.Forget(scope="server", user=5),
    "ttt:forget-cancel:5": ids.ForgetCancel(user=5),
    "ttt:pref:pings:off:5": ids.Preference(choice="pings", state="off", user=5),
    "ttt:pref:challenges:on:123456789012345678": ids.Preference(
        choice="challenges", state="on", user=123456789012345678
    ),
    "ttt:thread-bot:hard:4:0:random": ids.ThreadBot(level="hard", side=4, k=0, first="random"),
    "ttt:thread-vs:5:3:3:me": ids.ThreadChallenge(user=5, side=3, k=3, first="me"),
}
"""The ids as the bot has always drawn them (the playground's pilot and the e2e tests
click them by these shapes), and what each means."""

LARGEST: dict[type[ids.CustomId], ids.CustomId] = {
    ids.Cell: ids.Cell(10**18 - 1, 24, 25),
    ids.Forget: ids.Forget("server", 10**20 - 1),
    ids.Quit: ids.Quit(10**18 - 1, 25, 10**12 - 1),
    ids.Preference: ids.Preference("challenges", "off", 10**20 - 1),
    ids.ThreadBot: ids.ThreadBot("a" * 16, 99, 99, "b" * 16),
    ids.ThreadChallenge: ids.ThreadChallenge(10**20 - 1, 99, 99, "b" * 16),
}


def test_every_kind_is_pinned_to_its_wire_format() -> None:
    assert {type(custom_id) for custom_id in WIRE.values()} == set(ids.KINDS)


@pytest.mark.parametrize("wire", WIRE)
def test_ids_round_trip(wire: str) -> None:
    custom_id = WIRE[wire]
    assert ids.parse(wire) == custom_id
    assert custom_id.format() == wire
    # format writes the template the parser is made from
    assert type(custom_id).TEMPLATE.format(**dataclasses.asdict(custom_id)) == wire


@pytest.mark.parametrize("wire", WIRE)
def test_each_id_is_one_kind_only(wire: str) -> None:
    """``parse`` takes the first kind that fits: no other may fit too."""
    assert [kind for kind in ids.KINDS if kind.read(wire) is not None] == [type(WIRE[wire])]


def test_the_largest_ids_fit_discords_limit() -> None:
    for custom_id in LARGEST.values():
        assert len(custom_id.format()) <= 100
        assert ids.parse(custom_id.format()) == custom_id


@pytest.mark.parametrize(
    "custom_id",
    [
        None,
        42,
        "",
        "ttt:",
        "ttt:nonsense:1",
        "ttt:cell:0:1:2",
        "ttt:cell:1:100:2",
        "ttt:cell:1:1:1\n",
        "ttt:cell:1:1:1:1",
        "xttt:cell:1:1:1",
        "ttt:cell:1234567890123456789:1:1",
        "ttt:taken:1:1:1",
        "ttt:calloff-maybe:1",
        "ttt:forget:everyone:1",
        "ttt:forget-cancel:012",
        "ttt:pref:pings:maybe:5",
        "ttt:pref:ratings:on:5",
        "ttt:pref:pings:on",
        "ttt:lb:1234567",
        "ttt:lb:-1",
        "ttt:accept:1 ",
        "TTT:accept:1",
    ],
)
def test_malformed_ids_are_no_kind(custom_id: object) -> None:
    assert ids.parse(custom_id) is None


async def test_each_kind_is_routed_once_by_its_feature(tmp_path: Path) -> None:
    """Every kind of custom_id is routed (so old boards' buttons keep working), each by
    the one feature that registered it."""
    store = await Store.open(tmp_path / "bot.db")
    try:
        router = Router(Gate())
        route_clicks(router, GameService(store), cast(Boards, None), cast(Notices, None))
        assert router.kinds == frozenset(ids.KINDS)
        with pytest.raises(ValueError, match="routed already"):
            router.register(ids.Cell, router.handle)
    finally:
        await store.close()
