"""The bot in a Discord of its own, played from a browser: ``python -m playground``."""
