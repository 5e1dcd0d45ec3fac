"""Turn notifications, and proposals to call a rated game off.

Modules:
- ``buttons``: The clicks that call a rated game off: Call off on the board
  (``ids.Calloff``) asks the other player by a message that pings only them; its Agree and
  Play on (``ids.CalloffAnswer``) answer it.
- ``calloff_queries``: Proposals to call a rated game off (end it unrated), one per game at
  most.
- ``calloffs``: Calling a rated game off: one player proposes ending it unrated, the other
  agrees (it ends unrated, as a stop would: ``Endings.end``) or plays on.
- ``notices``: Turn notifications and the other messages nobody clicked for, sent through
  the outbox.
- ``queries``: Turn notifications: the one ping message each member game may have standing,
  the turns whose ping a channel refused, and members' choices about them.
- ``render``: The texts of the pings feature, in the game's language: the turn ping (or its
  reminder), and a proposal to call a game off, put to the other player, and what it becomes
  once answered.
- ``service``: Turn notifications in member games: who is pinged, when, and which ping
  outranks which.
- ``views``: The buttons of a proposal to call a game off: Agree and Play on, for the other
  player.
"""
