"""The Discord layer: the bot, its commands and buttons, and how its messages look.

It talks Discord and nothing else: every rule is asked of ``bot.service``.
"""
