"""Errors the game service raises for things a user did that cannot be done.

Each carries a message written for the user who caused it (a ``bot.i18n.Message``, so
it can be shown in their language, naming members, channels and boards as ``bot.refs``
references); the Discord layer renders and translates it (``bot.ui.gate``) into an
ephemeral reply, and changes nothing. Anything that is not a
``GameError`` is a bug and gets a generic "something went wrong" plus a logged traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.i18n import N_, Message
from bot.refs import Command, Member, Moment, Place

if TYPE_CHECKING:
    from bot.models import Game

__all__ = [
    "AlreadyPlaying",
    "BotChallenge",
    "Busy",
    "CallOffUnavailable",
    "CellTaken",
    "ChallengeCooldown",
    "ChallengeExpired",
    "ChallengeNotFound",
    "ChallengePending",
    "ChallengesOff",
    "ChannelBusy",
    "ChannelNotAllowed",
    "ConfirmationExpired",
    "GameError",
    "GameInProgress",
    "GameNotFound",
    "GameOver",
    "GamesInTheWay",
    "InvalidCell",
    "InvalidSettings",
    "NotAPlayer",
    "NotChallenged",
    "NotChallenger",
    "NotYourConfirmation",
    "NotYourTurn",
    "PermissionDenied",
    "RatedStop",
    "RematchUnavailable",
    "ReviewCooldown",
    "ReviewsOff",
    "SelfChallenge",
    "StaleBoard",
    "StorageError",
    "TooManyGames",
]


class GameError(Exception):
    """Base of the errors a user can cause; ``str(error)`` is the message in English.
    A plain ``str`` message is shown as it is (not yet marked for translation)."""

    default_message: Message = N_("That can't be done.")

    def __init__(self, message: str | Message | None = None) -> None:
        if isinstance(message, str):
            message = Message(message)
        self.message = message or self.default_message
        super().__init__(str(self.message))


class GameNotFound(GameError):
    """No such game (or it belongs to another server)."""

    default_message = N_("That game doesn't exist any more.")


class NotAPlayer(GameError):
    """The user is not one of the game's players."""

    default_message = N_("This isn't your game. Start your own with /tictactoe.")


class NotYourTurn(GameError):
    """A player moved out of turn."""

    default_message = N_("It's not your turn.")


class GameOver(GameError):
    """The game has already ended; ``game`` is its final state when the error just ended it."""

    default_message = N_("This game is already over.")

    def __init__(self, message: str | Message | None = None, *, game: Game | None = None) -> None:
        super().__init__(message)
        self.game = game


class CellTaken(GameError):
    """The cell already holds a mark."""

    default_message = N_("That cell is already taken.")


class InvalidCell(GameError):
    """The cell does not exist on this board (a forged or malformed click)."""

    default_message = N_("That isn't a cell of this board.")


class StaleBoard(GameError):
    """The move number the player saw is not the game's current one."""

    default_message = N_("The board changed since you saw it; look again and make your move.")


class InvalidSettings(GameError):
    """Board size, win length, level or starting side out of range or inconsistent."""


class ChannelBusy(GameError):
    """The channel already has a game, or a pending challenge: ``place`` is its message
    (None: not known), ``game`` the live game (None: a challenge, or not known).
    ``may_stop``: the reader may end that game with /tictactoe-stop, so they are told."""

    def __init__(
        self, place: Place | None = None, *, game: Game | None = None, may_stop: bool = False
    ) -> None:
        stop = Command(N_("tictactoe-stop"))
        message: Message
        if place is None:
            message = N_("There's already a game in this channel.")
        elif game is None:
            message = N_("A challenge is waiting for an answer in this channel: {link}", link=place)
        elif may_stop:
            message = N_(
                "There's already a game in this channel: {link}\nWait for it to end, or stop it"
                " with /{command}.",
                link=place,
                command=stop,
            )
        else:
            message = N_("There's already a game in this channel: {link}", link=place)
        super().__init__(message)
        self.place = place
        self.game = game

    def for_stopper(self) -> ChannelBusy:
        """This refusal as told to a member who may stop the game in the way."""
        return ChannelBusy(self.place, game=self.game, may_stop=True)


class AlreadyPlaying(GameError):
    """The challenged or challenging member is already busy in this channel."""

    @classmethod
    def in_game(cls, member: int, actor: int, place: Place) -> AlreadyPlaying:
        """``member`` plays the game at ``place`` (``actor``, who asked, is "you")."""
        if member == actor:
            return cls(N_("You are already playing a game in this channel: {link}", link=place))
        return cls(
            N_(
                "{member} is already playing a game in this channel: {link}",
                member=Member(member),
                link=place,
            )
        )


class SelfChallenge(GameError):
    """A member challenged themselves."""

    default_message = N_("You can't challenge yourself. Leave out the opponent to play me instead.")


class BotChallenge(GameError):
    """A member challenged a bot account other than this one."""

    default_message = N_("Bots can't accept challenges. Leave out the opponent to play me instead.")


class ChallengePending(GameError):
    """One of the two members already has a challenge waiting for an answer."""

    @classmethod
    def in_channel(cls, member: int, actor: int, place: Place) -> ChallengePending:
        """``member`` has the challenge at ``place`` waiting here (``actor`` is "you")."""
        if member == actor:
            return cls(
                N_(
                    "You already have a challenge waiting for an answer in this channel: {link}",
                    link=place,
                )
            )
        return cls(
            N_(
                "{member} already has a challenge waiting for an answer in this channel: {link}",
                member=Member(member),
                link=place,
            )
        )


class ChallengeNotFound(GameError):
    """No such challenge, or it was already answered."""

    default_message = N_("That challenge is no longer open.")


class ChallengeExpired(GameError):
    """The challenge ran out before it was answered."""

    default_message = N_("That challenge has expired.")


class NotChallenged(GameError):
    """Someone other than the challenged member tried to accept or decline."""

    default_message = N_("Only the challenged member can answer this challenge.")


class NotChallenger(GameError):
    """Someone other than the challenger tried to withdraw a challenge."""

    default_message = N_("Only the challenger can withdraw this challenge.")


class PermissionDenied(GameError):
    """The user may not do this (for example stop a game they are not in)."""

    default_message = N_("Only the players or a moderator (Manage Messages) can do that.")


class RematchUnavailable(GameError):
    """A rematch was asked for a game that cannot have one."""

    default_message = N_("A rematch isn't possible for this game.")


class GameInProgress(GameError):
    """A review was asked for a game that is still being played."""

    default_message = N_("That game is still being played; its review comes when it ends.")


class TooManyGames(GameError):
    """A limit on live games (per member or per server) leaves no room for another."""


class ChannelNotAllowed(GameError):
    """The server's moderators chose other channels for games."""


class ChallengesOff(GameError):
    """The challenged member turned challenges to them off in this server."""


class ChallengeCooldown(GameError):
    """The challenger challenged the same member too recently."""


class StartCooldown(GameError):
    """The member left their last game without a move too recently to start another."""


class RatedStop(GameError):
    """A player asked to stop a rated game both players have moved in: it would count as
    their loss, so they are asked first. ``game`` is the game as it stands; their answer
    holds at its move until ``until``."""

    def __init__(self, message: str | Message, *, game: Game, until: float) -> None:
        super().__init__(message)
        self.game = game
        self.until = until


class CallOffUnavailable(GameError):
    """A call-off proposal cannot be made, or answered (lapsed, not the other player)."""


class Busy(GameError):
    """The search pool's queue is full: nothing was done, the user may try again soon."""

    default_message = N_("I'm thinking about a lot of games right now; try again in a moment.")


class ReviewCooldown(GameError):
    """The member asked for a review that needs a search too soon after their last one."""

    def __init__(self, until: float) -> None:
        super().__init__(N_("You can ask for another review {when}.", when=Moment(until)))
        self.until = until


class ReviewsOff(GameError):
    """The server turned Review off."""

    default_message = N_("Reviews are turned off in this server.")


class GamesInTheWay(GameError):
    """An erasure was refused while games are being played (the message links them)."""


class NotYourConfirmation(GameError):
    """Someone clicked a confirmation that another member asked for."""

    default_message = N_("This confirmation isn't yours; nothing was changed.")


class ConfirmationExpired(GameError):
    """A confirmation button was clicked too long after it was shown."""

    default_message = N_(
        "This confirmation has expired; nothing was changed. Run the command again."
    )


class StorageError(Exception):
    """The database cannot be used (newer schema, failed migration); stops start-up."""
