"""The rules of play, apart from Discord: games, challenges, results, the bot's replies.

``GameService`` is what the Discord layer talks to; its ``challenges`` and ``stats``
attributes hold the challenge rules and the read-only views of results.
"""

from bot.service.config import ServiceConfig
from bot.service.games import TIME_RAN_OUT, GameService

__all__ = ["TIME_RAN_OUT", "GameService", "ServiceConfig"]
