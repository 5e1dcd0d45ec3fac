"""The rules of play, apart from Discord: games, challenges, results, the bot's replies.

``GameService`` is what the Discord layer talks to: its own methods (games and the bot's
moves) and its parts (``challenges``, ``endings``, ``pings``, ``privacy``, ``reviews``,
``stats``, ``upkeep``, ...), each called directly. The Discord layer imports this package
only, never its modules: what it needs of them is here (``Store`` too, which the bot
takes from the entry point only to hand it to ``GameService``).
"""

from bot.models import Ping
from bot.service.app import GameService
from bot.service.config import ServiceConfig
from bot.service.endings import may_stop
from bot.service.games import TIME_RAN_OUT, Moved
from bot.service.guilds import Choices, read_duration
from bot.service.pings import GRACE, Due, Recorded
from bot.service.privacy import CONFIRM_SECONDS
from bot.service.rematches import Rematched
from bot.service.rules import is_abort, is_rated, loses_rating, rated_variant
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
    "may_stop",
    "rated_variant",
    "read_duration",
]
