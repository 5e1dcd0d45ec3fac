"""The Discord application: a thin core (configuration, data types, errors, texts,
the database engines in ``db/``, the Discord part in ``ui/``) and one folder per
feature, put together by ``app`` (the service) and ``ui.client`` (the bot).

Modules:
- ``__main__``: ``python -m bot``: read the settings, open the database, run until SIGTERM
  or SIGINT.
- ``app``: The game service as the bot runs it: ``GameService``, the games feature's
  ``Games`` with every feature's service as a part (``challenges``, ``endings``,
  ``calloffs``, ``pings``, ``privacy``, ``reviews``, ``stats``, ``upkeep``, ...), which
  callers call directly; and what spans features: start-up, the sweep, rematches, closing.
- ``config``: The service's configuration, set from the bot's settings (``bot.settings``).
- ``durations``: Durations as people type them: ``90s``, ``5m``, ``1h30m``, ``1d``, or a
  plain number of seconds; read the same way by ``/tictactoe-settings`` and by the host's
  settings.
- ``errors``: Errors the game service raises for things a user did that cannot be done.
- ``i18n``: Texts in the reader's language: gettext catalogs, one per locale, read with
  Babel.
- ``launcher``: The bot as a child process (``python -m bot``) against an emulator: for
  tools only.
- ``models``: Plain data the game service hands to the Discord layer: frozen, no I/O.
- ``refs``: What a message points at: a member, a channel, a game's or challenge's message,
  a list of them, a command, a moment.
- ``settings``: The bot's settings, read once from the environment by the entry point.
- ``tunables``: Every number a host or a server may set: its name, host variable, default,
  bounds and (for a server's) the name moderators read.
- ``challenges/``: Challenges between members, rematches, games offered in a new thread, and
  ``/tictactoe``, which starts a game against the bot or a challenge.
- ``db/``: The database engines and the migrations runner: the core every feature's queries
  run on.
- ``games/``: Games: their rules, the bot's moves, endings, the board and its buttons; the
  feature every other feature may import.
- ``pings/``: Turn notifications, and proposals to call a rated game off.
- ``privacy/``: A member's or a server's data on request: shown, then erased.
- ``servers/``: ``/tictactoe-settings`` and ``/tictactoe-preferences``: a server's settings
  and a member's choices, as moderators and members change them (their rules and queries,
  which every feature reads, are the games feature's: ``bot.games.servers``).
- ``stats/``: Leaderboards, a member's stats, and reviews of ended games.
- ``ui/``: The core's Discord part: the client, admission, the click router, the outbox and
  every custom_id; each feature's commands and buttons plug into it.
- ``upkeep/``: Keeping the data right over years: outages, servers left, pruning.
"""
