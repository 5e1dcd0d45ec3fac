"""Every button's custom_id, written and read in one place: one small dataclass per kind.

``Cell(game=812, cell=4, move=3).format()`` is ``"ttt:cell:812:4:3"``, and
``parse("ttt:cell:812:4:3")`` gives that ``Cell`` back; ``parse`` gives None for an id
that is no kind's (an old version's, a forged one), which the router answers. Each kind's
``TEMPLATE`` and the field shapes in ``_FIELDS`` make its parser; its ``format`` writes the
same template, next to it (tests/bot/test_ids.py checks every kind both ways).

The wire format is fixed: boards posted by an older version stay on Discord, and their
buttons must keep working after an upgrade.

The ids are parsed here rather than by discord.py's ``DynamicItem`` (whose ``template`` is
the same idea): see docs/decisions.md#every-button-through-one-listener for why the bot
routes clicks from one listener.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

__all__ = [
    "CHALLENGES",
    "KINDS",
    "ME",
    "PINGS",
    "SERVER",
    "Accept",
    "Calloff",
    "CalloffAnswer",
    "Cell",
    "CustomId",
    "Decline",
    "Forfeit",
    "Forget",
    "ForgetCancel",
    "KeepPlaying",
    "LeaderboardPage",
    "OldQuit",
    "Over",
    "Preference",
    "Quit",
    "Rematch",
    "Review",
    "Taken",
    "ThreadBot",
    "ThreadChallenge",
    "Withdraw",
    "parse",
]

_ID = r"[1-9][0-9]{0,17}"  # database ids: positive, at most 18 digits
_USER = r"[1-9][0-9]{0,19}"  # Discord user ids (snowflakes): at most 20 digits
_FIELDS: dict[str, tuple[str, type[int] | type[str]]] = {
    "game": (_ID, int),
    "challenge": (_ID, int),
    "cell": (r"[0-9]{1,2}", int),
    "move": (r"[0-9]{1,2}", int),
    "page": (r"[0-9]{1,6}", int),
    "until": (r"[0-9]{1,12}", int),
    "user": (_USER, int),
    "scope": (r"me|server", str),
    "answer": (r"yes|no", str),
    "choice": (r"pings|challenges", str),
    "state": (r"on|off", str),
    "level": (r"[a-z]{1,16}", str),  # a level's name (the service checks it)
    "side": (r"[0-9]{1,2}", int),
    "k": (r"[0-9]{1,2}", int),  # 0: the board's usual win length
    "first": (r"[a-z]{1,16}", str),  # a ``First`` value (the service checks it)
}
"""What each field of a template may hold on the wire, and its Python type."""
_FIELD = re.compile(r"\{(\w+)\}")


class CustomId:
    """A kind of custom_id: subclasses are dataclasses whose fields fill ``TEMPLATE``."""

    __slots__ = ()
    TEMPLATE: ClassVar[str]
    PATTERN: ClassVar[re.Pattern[str]]  # made from TEMPLATE
    PREFIX: ClassVar[str]  # the template's text before its first field

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        parts = _FIELD.split(cls.TEMPLATE)  # literal, field, literal, field, ..., literal
        regex = "".join(
            re.escape(part) if i % 2 == 0 else f"(?P<{part}>{_FIELDS[part][0]})"
            for i, part in enumerate(parts)
        )
        cls.PATTERN = re.compile(regex)
        cls.PREFIX = parts[0]

    def format(self) -> str:
        """The custom_id to put on the button: ``TEMPLATE`` filled (each kind writes it as an
        f-string, see docs/decisions.md#custom-ids-written-as-f-strings; tests check
        they agree)."""
        raise NotImplementedError

    @classmethod
    def read(cls, custom_id: str) -> CustomId | None:
        """``custom_id`` as this kind, or None if it is not one (``parse`` tries every kind)."""
        match = cls.PATTERN.fullmatch(custom_id)
        if match is None:
            return None
        values = {name: _FIELDS[name][1](text) for name, text in match.groupdict().items()}
        return cls(**values)


# -- the board ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cell(CustomId):
    """An empty cell of a live board; the click counts only at move ``move``."""

    TEMPLATE = "ttt:cell:{game}:{cell}:{move}"
    game: int
    cell: int
    move: int

    def format(self) -> str:
        return f"ttt:cell:{self.game}:{self.cell}:{self.move}"


@dataclass(frozen=True, slots=True)
class Taken(CustomId):
    """A mark on a live board (its click changes nothing)."""

    TEMPLATE = "ttt:taken:{game}:{cell}"
    game: int
    cell: int

    def format(self) -> str:
        return f"ttt:taken:{self.game}:{self.cell}"


@dataclass(frozen=True, slots=True)
class Over(CustomId):
    """Any cell of a finished board (its click changes nothing)."""

    TEMPLATE = "ttt:over:{game}:{cell}"
    game: int
    cell: int

    def format(self) -> str:
        return f"ttt:over:{self.game}:{self.cell}"


@dataclass(frozen=True, slots=True)
class Forfeit(CustomId):
    """Forfeit on a live board: it asks first, privately (``Quit`` confirms)."""

    TEMPLATE = "ttt:forfeit:{game}"
    game: int

    def format(self) -> str:
        return f"ttt:forfeit:{self.game}"


@dataclass(frozen=True, slots=True)
class Rematch(CustomId):
    TEMPLATE = "ttt:rematch:{game}"
    game: int

    def format(self) -> str:
        return f"ttt:rematch:{self.game}"


@dataclass(frozen=True, slots=True)
class Review(CustomId):
    TEMPLATE = "ttt:review:{game}"
    game: int

    def format(self) -> str:
        return f"ttt:review:{self.game}"


# -- stopping a rated game ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Quit(CustomId):
    """Forfeit, confirmed in the private question that Forfeit or /tictactoe-stop asks:
    it holds at move ``move`` until ``until`` (Unix seconds) only."""

    TEMPLATE = "ttt:quit:{game}:{move}:{until}"
    game: int
    move: int
    until: int

    def format(self) -> str:
        return f"ttt:quit:{self.game}:{self.move}:{self.until}"


@dataclass(frozen=True, slots=True)
class OldQuit(CustomId):
    """An older version's Forfeit in the answer to /tictactoe-stop, without a move or an
    expiry: answered as expired, so that only a fresh question ends a game."""

    TEMPLATE = "ttt:quit:{game}"
    game: int

    def format(self) -> str:
        return f"ttt:quit:{self.game}"


@dataclass(frozen=True, slots=True)
class KeepPlaying(CustomId):
    """Cancel, in the question before a forfeit."""

    TEMPLATE = "ttt:keep:{game}"
    game: int

    def format(self) -> str:
        return f"ttt:keep:{self.game}"


@dataclass(frozen=True, slots=True)
class Calloff(CustomId):
    """Propose calling the game off, chosen in the ephemeral answer to /tictactoe-stop."""

    TEMPLATE = "ttt:calloff:{game}"
    game: int

    def format(self) -> str:
        return f"ttt:calloff:{self.game}"


@dataclass(frozen=True, slots=True)
class CalloffAnswer(CustomId):
    """The other player's answer to a proposal to call the game off."""

    TEMPLATE = "ttt:calloff-{answer}:{game}"
    answer: str  # "yes" or "no"
    game: int

    def format(self) -> str:
        return f"ttt:calloff-{self.answer}:{self.game}"

    @property
    def agree(self) -> bool:
        return self.answer == "yes"


# -- challenges and the leaderboard -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Accept(CustomId):
    TEMPLATE = "ttt:accept:{challenge}"
    challenge: int

    def format(self) -> str:
        return f"ttt:accept:{self.challenge}"


@dataclass(frozen=True, slots=True)
class Decline(CustomId):
    TEMPLATE = "ttt:decline:{challenge}"
    challenge: int

    def format(self) -> str:
        return f"ttt:decline:{self.challenge}"


@dataclass(frozen=True, slots=True)
class Withdraw(CustomId):
    TEMPLATE = "ttt:withdraw:{challenge}"
    challenge: int

    def format(self) -> str:
        return f"ttt:withdraw:{self.challenge}"


@dataclass(frozen=True, slots=True)
class LeaderboardPage(CustomId):
    """A leaderboard page (0 on a disabled Previous of page 1: read as page 1)."""

    TEMPLATE = "ttt:lb:{page}"
    page: int

    def format(self) -> str:
        return f"ttt:lb:{self.page}"


# -- a busy channel's offer: the same game in a new thread --------------------------------


@dataclass(frozen=True, slots=True)
class ThreadBot(CustomId):
    """Play the bot at ``level`` in a new thread of this channel (on ``side`` x ``side``,
    ``k`` in a row, ``first`` from the clicker's view). Shown to one member only (an
    ephemeral refusal), so it carries no user id: whoever clicks plays."""

    TEMPLATE = "ttt:thread-bot:{level}:{side}:{k}:{first}"
    level: str
    side: int
    k: int
    first: str

    def format(self) -> str:
        return f"ttt:thread-bot:{self.level}:{self.side}:{self.k}:{self.first}"


@dataclass(frozen=True, slots=True)
class ThreadChallenge(CustomId):
    """Challenge ``user`` in a new thread of this channel (options as ``ThreadBot``)."""

    TEMPLATE = "ttt:thread-vs:{user}:{side}:{k}:{first}"
    user: int
    side: int
    k: int
    first: str

    def format(self) -> str:
        return f"ttt:thread-vs:{self.user}:{self.side}:{self.k}:{self.first}"


# -- erasure on request -------------------------------------------------------------------


ME, SERVER = "me", "server"
"""The scopes of an erasure: the asking member's data, or the whole server's."""


@dataclass(frozen=True, slots=True)
class Forget(CustomId):
    """Erase (``scope`` "me" or "server"), for the member ``user`` who asked."""

    TEMPLATE = "ttt:forget:{scope}:{user}"
    scope: str
    user: int

    def format(self) -> str:
        return f"ttt:forget:{self.scope}:{self.user}"


@dataclass(frozen=True, slots=True)
class ForgetCancel(CustomId):
    TEMPLATE = "ttt:forget-cancel:{user}"
    user: int

    def format(self) -> str:
        return f"ttt:forget-cancel:{self.user}"


# -- a member's preferences --------------------------------------------------------------


PINGS, CHALLENGES = "pings", "challenges"
"""The choices a member makes per server: turn notifications, and challenges to them."""


@dataclass(frozen=True, slots=True)
class Preference(CustomId):
    """Set the member ``user``'s ``choice`` ("pings": turn notifications, "challenges")
    to ``state`` ("on", "off") in the clicked message's server. The button says what it
    will do, so a click on an old copy of the message does that, never the opposite."""

    TEMPLATE = "ttt:pref:{choice}:{state}:{user}"
    choice: str
    state: str
    user: int

    def format(self) -> str:
        return f"ttt:pref:{self.choice}:{self.state}:{self.user}"

    @property
    def on(self) -> bool:
        return self.state == "on"


KINDS: tuple[type[CustomId], ...] = (
    Cell,
    Taken,
    Over,
    Forfeit,
    Rematch,
    Review,
    Quit,
    OldQuit,
    KeepPlaying,
    Calloff,
    CalloffAnswer,
    Accept,
    Decline,
    Withdraw,
    LeaderboardPage,
    ThreadBot,
    ThreadChallenge,
    Forget,
    ForgetCancel,
    Preference,
)
"""Every kind of custom_id the bot draws and answers."""


def parse(custom_id: object) -> CustomId | None:
    """The typed id ``custom_id`` is, or None if it is no kind's (matched whole)."""
    if not isinstance(custom_id, str) or not custom_id.startswith("ttt:"):
        return None
    for kind in KINDS:
        if custom_id.startswith(kind.PREFIX):
            parsed = kind.read(custom_id)
            if parsed is not None:
                return parsed
    return None
