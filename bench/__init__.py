"""The benchmarks: run each from the repository's root as ``python -m bench.<name>``
(docs/benchmarks.md lists every command).

The bot as a process, driven through the emulator: ``peer`` (CPU per click beside
discord.py's example: ``peer_tables``, ``peer_report``, ``peer_bot``, ``peer_profile``),
``load`` (clicks at a rate: ``load_run``, ``load_players``, ``load_figures``, ``setups``)
and ``slow_games``, scenarios of ``harness``. In this process: ``engine``, ``service``,
``routing``, ``drawing``, ``churn``, ``erase``, ``to_postgres``, ``calibrate``. Shared:
``pg`` (the databases), ``procs`` (CPU time from /proc).
"""
