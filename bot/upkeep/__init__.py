"""Keeping the data right over years: outages, servers left, pruning.

Modules:
- ``queries``: The long run: when the bot was last alive, servers it left, and pruning in
  batches.
- ``service``: Keeping the data right over years: outages, servers left, deleted messages,
  pruning.
"""
