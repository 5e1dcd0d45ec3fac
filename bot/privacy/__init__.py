"""A member's or a server's data on request: shown, then erased.

Modules:
- ``buttons``: The clicks on an erasure question's buttons, Erase and Cancel
  (``ids.Forget``, ``ids.ForgetCancel``, routed here by ``bot.ui.router``).
- ``cog``: ``/tictactoe-forget-me`` and ``/tictactoe-forget-server``: erasing data on
  request.
- ``queries``: Erasing a member's, or a whole server's, data on request.
- ``render``: The texts of erasure on request (``/tictactoe-forget-me``,
  ``/tictactoe-forget-server``): what would be erased, asked before, and what was, said
  after; in the asker's language.
- ``service``: A member's data on request: erasing their stats, ratings and history in a
  server, or, for members with Manage Server, everything the bot holds about the server.
- ``views``: An erasure's question as a message: its text, with Erase and Cancel.
"""
