"""The core's Discord part: the client, admission, the click router, the outbox and
every custom_id; each feature's commands and buttons plug into it.

Modules:
- ``client``: The bot: start-up, command sync, the sweep, the button listener and an orderly
  close.
- ``commands_i18n``: Slash commands in each user's language: names, descriptions, options
  and choices.
- ``diagnostics``: Opt-in instrumentation for load tests, and the heap freeze after
  start-up.
- ``gate``: Admission and accounting for every interaction, in one place.
- ``health``: Channel health: what this process knows of the channels and messages it may
  not reach.
- ``ids``: Every button's custom_id, written and read in one place: one small dataclass per
  kind.
- ``outbox``: The one path of this process's own REST traffic: the calls nobody's click
  answers.
- ``refs``: The service's references (``bot.refs``) as Discord shows them: ``<@id>``
  mentions, ``<#id>`` channels, message links, command names in the reader's language and
  ``<t:…:R>`` timestamps (which each client shows in its own language and time zone).
- ``router``: Every click on the bot's buttons, routed by its custom_id from one
  ``on_interaction`` listener to the handler its feature registered for that kind
  (``Router.register``).
- ``shards``: Running a range of shards: what this process owns, and IDENTIFYs paced as
  Discord allows.
"""
