"""The bot's database, SQLite or PostgreSQL: ``Store`` and the migrations it applies when
it opens.

Modules: ``store`` (the ``Store`` class: what each call reads and writes), ``sql`` (every
statement it runs, as constants), ``rows`` (column lists and row mapping), ``backend``
(what the store needs from an engine), ``sqlite`` (one aiosqlite connection, who may use it
when, and the transaction runner), ``postgres`` (an asyncpg pool), ``dialect`` (the
statements' placeholders as PostgreSQL takes them), ``migrate`` and ``pg_migrate``
(each engine's numbered files, in the top-level migrations/), ``shards`` (the servers a
process looks after), ``upkeep`` (liveness, servers left, pruning).
"""

from bot.models import StandingPing
from bot.store.calloffs import CallOff, CallOffStore
from bot.store.guilds import GuildStore
from bot.store.migrate import DEFAULT_MIGRATIONS_DIR, split_statements
from bot.store.pings import Claim, PingStore, TurnState
from bot.store.privacy import LiveGames, PrivacyStore
from bot.store.refusals import (
    CHALLENGE_ACTION,
    ChannelTaken,
    CoolingDown,
    LimitReached,
    PendingTaken,
    RematchTaken,
)
from bot.store.reviews import ReviewStore
from bot.store.store import ChannelView, Store
from bot.store.upkeep import Pruned, UpkeepStore

__all__ = [
    "CHALLENGE_ACTION",
    "DEFAULT_MIGRATIONS_DIR",
    "CallOff",
    "CallOffStore",
    "ChannelTaken",
    "ChannelView",
    "Claim",
    "CoolingDown",
    "GuildStore",
    "LimitReached",
    "LiveGames",
    "PendingTaken",
    "PingStore",
    "PrivacyStore",
    "Pruned",
    "RematchTaken",
    "ReviewStore",
    "StandingPing",
    "Store",
    "TurnState",
    "UpkeepStore",
    "split_statements",
]
