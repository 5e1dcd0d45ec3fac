"""Games: their rules, the bot's moves, endings, the board and its buttons; the
feature every other feature may import.

Modules:
- ``ai``: The bot's moves, computed in a pool of worker processes so searches never block
  the loop.
- ``boards``: The one place that sends a game's or a challenge's message, however it
  changes.
- ``buttons``: The clicks on a game's board: a cell, a mark, Forfeit (and the private
  question it asks: ``ids.Quit``, ``ids.KeepPlaying``).
- ``cog``: ``/tictactoe-stop``: a player or a moderator ends the game in this channel (a
  player of a rated game both have moved in is asked to forfeit or call it off instead).
- ``endings``: Ending a game before it is played out: forfeits and stops (calling a game
  off, which ends it too: ``bot.pings.calloffs``).
- ``first_player``: The board's warning on variants that the first player wins by force.
- ``help``: ``/tictactoe-help``: what each command does and how a game goes, for the reader
  alone.
- ``limits``: The limits on live games, as the database keeps them: server slots and member
  seats.
- ``locks``: Per-key asyncio locks (one game, one channel), dropped when nobody holds or
  waits.
- ``pool``: The search pool: worker processes for the bot's moves and reviews, fairly
  shared.
- ``queries``: The games' queries (``Store``): games (a game's end writes the players' rows
  and records, which ``bot.stats.queries`` reads), what a channel holds, and the meta table,
  on SQLite or PostgreSQL (``bot.db``); ``Store.open`` opens the database for the bot.
- ``ratings``: Elo ratings between members: pure arithmetic, no I/O.
- ``refusals``: Why the store refused a write: exceptions the service turns into answers for
  users.
- ``render``: Text the bot shows: pure functions of the service's data, no discord objects.
- ``render_end``: Texts about how a game ends beyond who won: the question before a forfeit,
  an abort, and the rating changes a finished board shows.
- ``reposts``: Deleted boards of live games: found by an edit before they matter, and a
  rated game's board posted again.
- ``replies``: The bot's replies: how each is made, decided once per owed move
  (``plan_reply``), and made (``BotReplies``).
- ``road``: A game's or challenge's message outside servers that added the bot, reached
  through its last interaction's token while it lives.
- ``rules``: The rules of play as pure functions: checking options, moving, ending, settling
  results.
- ``server_queries``: A server's settings, allowed channels, cooldowns and challenge
  consent, and the reads that tell whether a member's new game or challenge would be barred
  before it is tried.
- ``servers``: Per-server settings (within the bot's bounds), and members' consent to
  challenges.
- ``service``: Games: starting and playing them, the bot's replies, and settling overdue
  turns.
- ``settlement``: What a game's end changes besides its row: ratings, records, streaks (pure
  functions).
- ``sql``: Every statement the games' queries (``Store``) run, as module-level constants.
- ``token_queries``: The stored token of each game's or challenge's last interaction where
  the bot reaches it through interactions alone.
- ``views``: What the bot's messages look like: boards, challenges, the leaderboard, as
  discord.py views.
- ``walkaways``: Members who leave games without moving: a short wait before their next
  game.
- ``writes``: A game read for a change, and the guarded write of its next state: shared by
  everything that changes a game (a move, a forfeit, a stop, the sweep).
"""
