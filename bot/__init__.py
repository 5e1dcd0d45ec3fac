"""The Discord application: settings, storage, the game service, commands and views."""
