"""The rules of play, apart from Discord: games, challenges, results, the bot's replies.

``GameService`` is what the Discord layer talks to: its own methods and ``UseCases``',
one per thing a member does or Discord reports. Its parts (``challenges``, ``endings``,
``pings``, ...) hold the rules, for the service's own tests and benches. The Discord
layer imports this package only, never its modules: what it needs of them is here
(``Store`` too, which the bot takes from the entry point only to hand it to
``GameService``).
"""

from bot.service.config import ServiceConfig
from bot.service.games import TIME_RAN_OUT, GameService, Moved, Rematched
from bot.service.guilds import read_duration
from bot.service.pings import GRACE, Due, Ping, Recorded
from bot.service.privacy import CONFIRM_SECONDS
from bot.service.rules import is_abort, is_rated, loses_rating, rated_variant
from bot.service.uses import Choices
from bot.store import Store

__all__ = [
    "CONFIRM_SECONDS",
    "GRACE",
    "TIME_RAN_OUT",
    "Choices",
    "Due",
    "GameService",
    "Moved",
    "Ping",
    "Recorded",
    "Rematched",
    "ServiceConfig",
    "Store",
    "is_abort",
    "is_rated",
    "loses_rating",
    "rated_variant",
    "read_duration",
]
