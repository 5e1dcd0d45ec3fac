"""The slash commands, one extension per area; the buttons live in ``bot.ui``."""
