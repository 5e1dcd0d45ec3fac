"""``/tictactoe-settings`` and ``/tictactoe-preferences``: a server's settings and a
member's choices, as moderators and members change them (their rules and queries,
which every feature reads, are the games feature's: ``bot.games.servers``).

Modules:
- ``cog``: ``/tictactoe-settings`` (moderators shape the bot for their server) and
  ``/tictactoe-preferences`` (a member turns their turn notifications, and challenges to
  them, on or off in that server).
- ``preferences``: A member's choices in a server, as ``/tictactoe-preferences`` answers
  them: each with a button beside it that switches it (``ids.Preference``), and the clicks
  on those buttons (routed here by ``bot.ui.router``).
"""
