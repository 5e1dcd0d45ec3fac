"""Challenges between members, rematches, games offered in a new thread, and
``/tictactoe``, which starts a game against the bot or a challenge.

Modules:
- ``buttons``: The clicks on a challenge's buttons: Accept (its message becomes the board),
  Decline and Withdraw; and Rematch on a finished board, which challenges the other player
  again (or accepts their rematch, or starts a new game against the bot).
- ``cog``: ``/tictactoe`` (a game against the bot, or a challenge) and the member menu's
  "Challenge to tic-tac-toe" (the same challenge with the default options).
- ``queries``: The challenges' queries: a challenge stored, answered, accepted (its game
  inserted in the same transaction) or expired, each guarded in its SQL (pending and
  unexpired), so two answers, or an answer and the expiry sweep, never both land.
- ``rematches``: A finished game between members played again: Rematch pressed by one
  player, or both.
- ``rules``: Challenges' refusals as pure functions: what a member is told when a challenge
  cannot be made yet (a cooldown, a challenge of theirs still pending or not shown yet).
- ``service``: Challenges between members: who may create, accept, decline or withdraw one.
- ``thread_offer``: A busy channel's refusal, and the new thread it offers for the same
  game.
- ``threads``: A game to start in a new thread, vetted before the thread is opened: the bot
  opens a thread (for a busy channel's refusal) only for a game that can start there.
"""
