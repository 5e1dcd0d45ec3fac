"""Leaderboards, a member's stats, and reviews of ended games.

Modules:
- ``buttons``: The clicks that show what games recorded: Review on a finished board
  (privately), and the leaderboard's pages.
- ``cog``: ``/tictactoe-leaderboard`` and ``/tictactoe-stats``: read-only views of the
  server's results; nobody is pinged.
- ``queries``: The stats' queries: a leaderboard page and a member's row and records, read
  from the players and bot_records tables that a game's end writes (``bot.games.queries``).
- ``render``: The texts of what games recorded: a leaderboard page and a member's stats, in
  the reader's language (the server's for the channel, the asker's for a private answer).
- ``render_review``: A finished game's review as its reader sees it
  (``engine.analysis.Review``, drawn).
- ``review_queries``: Stored reviews of ended games (computed once), and the members' review
  cooldowns.
- ``reviews``: Reviews of ended games: computed once in the search pool, stored,
  rate-limited per member.
- ``service``: Leaderboards, a member's stats and history: read-only views of what games
  recorded.
- ``views``: The leaderboard as a message: one page, with its previous and next buttons.
"""
