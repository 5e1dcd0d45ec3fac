"""``/tictactoe-settings`` (moderators shape the bot for their server) and
``/tictactoe-preferences`` (a member turns their turn notifications, and challenges to
them, on or off in that server)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands
from discord.app_commands import locale_str
from discord.ext import commands

from bot.app import GameService
from bot.errors import PermissionDenied
from bot.games.servers import read_duration
from bot.i18n import N_, Duration, Message, Translator
from bot.models import GuildSettings
from bot.servers.preferences import choices_title, marked, on_off, preferences_view
from bot.tunables import (
    ABANDON_COOLDOWN,
    CHALLENGE_COOLDOWN,
    CHALLENGE_REACH,
    CHALLENGE_TIMEOUT,
    DECLINE_COOLDOWN,
    FIRST_MOVE_TIMEOUT,
    GAMES_PER_MEMBER,
    PING_GRACE,
    PING_GRACE_LONGEST,
    REVIEW_COOLDOWN,
    SERVER_GAMES,
    TURN_TIMEOUT,
    Tunable,
)
from bot.ui.gate import home, send_ephemeral, server_home, user_translator
from bot.ui.places import anywhere, server_only

SETTINGS = N_("tictactoe-settings")
"""This command, by its name in the reader's language (a catalog entry like every name)."""


def _range(setting: Tunable[int]) -> Any:
    """The option type for a count: whole numbers within its bounds (Discord's client
    enforces them; the service checks again, for anything else that reaches us)."""
    return app_commands.Range[int, int(setting.low), int(setting.high)]


if TYPE_CHECKING:  # a Range is its base type to a checker; these bounds are known at run time
    GamesPerMember = int
    ServerGames = int
    ChallengeReach = int
else:
    GamesPerMember = _range(GAMES_PER_MEMBER)
    ServerGames = _range(SERVER_GAMES)
    ChallengeReach = _range(CHALLENGE_REACH)
Time = app_commands.Range[str, 1, 20]
"""A length of time as typed: 90s, 5m, 1h30m, 1d (``bot.durations``)."""


def _seconds(value: float, t: Translator) -> str:
    """Seconds as typed, in ``t``'s units: 45 s, 5 min, 1 h 30 min, 1 d."""
    return t(Duration(value))


def settings_text(
    settings: GuildSettings, title: Message, t: Translator, before: GuildSettings | None = None
) -> str:
    """The settings as a moderator reads them, in ``t``'s language; with ``before`` (the
    settings a change replaced), each value that reads differently is ``marked``."""

    def shown(value: Callable[[GuildSettings], str]) -> str:
        now = value(settings)
        return now if before is None else marked(value(before), now)

    def channels(of: GuildSettings) -> str:
        return ", ".join(f"<#{c}>" for c in of.channels) or t(N_("every channel"))

    def grace(of: GuildSettings) -> str:
        if (grace := of[PING_GRACE]) is None:
            longest = _seconds(PING_GRACE_LONGEST, t)
            return t(N_("{time} (or a fifth of the turn clock if shorter)", time=longest))
        return _seconds(grace, t)

    def cooldown(seconds: float) -> str:
        return _seconds(seconds, t) if seconds else t(N_("none"))

    review = shown(lambda of: t(N_("offered")) if of.reviews else t(N_("not offered")))
    return "\n".join(
        [
            f"**{t(title)}**",
            t(N_("Games can be started in: {channels}", channels=shown(channels))),
            t(N_("Turn clock: {time}", time=shown(lambda of: _seconds(of[TURN_TIMEOUT], t)))),
            t(
                N_(
                    "Challenges expire after: {time}",
                    time=shown(lambda of: _seconds(of[CHALLENGE_TIMEOUT], t)),
                )
            ),
            t(N_("Live games per member: {n}", n=shown(lambda of: str(of[GAMES_PER_MEMBER])))),
            t(N_("Live games in the server: {n}", n=shown(lambda of: str(of[SERVER_GAMES])))),
            t(
                N_(
                    "Cooldown between challenges to the same member: {time}",
                    time=shown(lambda of: cooldown(of[CHALLENGE_COOLDOWN])),
                )
            ),
            t(N_("Review: {state}", state=review)),
            t(
                N_(
                    "Wait between one member's reviews: {time}",
                    time=shown(lambda of: cooldown(of[REVIEW_COOLDOWN])),
                )
            ),
            t(
                N_(
                    "Turn notifications: {state}",
                    state=shown(lambda of: on_off(of.turn_pings, t)),
                )
            )
            + " · "
            + t(N_("sent after {time} without a move", time=shown(grace))),
            t(
                N_(
                    "Different members one member may challenge in 10 minutes: {n}",
                    n=shown(lambda of: str(of[CHALLENGE_REACH])),
                )
            ),
            t(
                N_(
                    "First move of a game: within {time}, or it is aborted",
                    time=shown(lambda of: _seconds(of[FIRST_MOVE_TIMEOUT], t)),
                )
            ),
            t(
                N_(
                    "Wait after a declined challenge before challenging that member again: {time}",
                    time=shown(lambda of: cooldown(of[DECLINE_COOLDOWN])),
                )
            ),
            t(
                N_(
                    "Wait after leaving a game without a move: {time}",
                    time=shown(lambda of: cooldown(of[ABANDON_COOLDOWN])),
                )
            ),
            t(N_("-# Change any of these with the options of /{command}.", command=SETTINGS)),
        ]
    )


class ServerSettings(commands.Cog):
    """Server settings and members' consent to challenges."""

    def __init__(self, service: GameService) -> None:
        self.service = service

    @app_commands.command(
        # TRANSLATORS: command name: lower case, no spaces, at most 32 characters
        name=locale_str("tictactoe-settings"),
        description=locale_str(
            "Show or change how tic-tac-toe works on this server (Manage Server)."
        ),
    )
    @server_only
    @app_commands.default_permissions(manage_guild=True)
    @app_commands.rename(
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        add_channel=locale_str("add_channel"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        remove_channel=locale_str("remove_channel"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        all_channels=locale_str("all_channels"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        turn_timeout=locale_str("turn_clock"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        challenge_timeout=locale_str("challenge_expiry"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        games_per_member=locale_str("games_per_member"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        server_games=locale_str("server_games"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        challenge_cooldown=locale_str("challenge_cooldown"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        reviews=locale_str("review"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        review_cooldown=locale_str("review_cooldown"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        turn_pings=locale_str("turn_notifications"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        ping_grace=locale_str("notify_after"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        challenge_reach=locale_str("challenge_reach"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        first_move_timeout=locale_str("first_move_clock"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        decline_cooldown=locale_str("decline_cooldown"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        abandon_cooldown=locale_str("abandon_cooldown"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        reset=locale_str("reset"),
    )
    @app_commands.describe(
        add_channel=locale_str(
            "Allow games in this channel (once any is listed, only listed ones)"
        ),
        remove_channel=locale_str("Stop allowing games in this channel"),
        all_channels=locale_str("Allow games in every channel again"),
        # The bounds are bot.tunables' (tests/bot/test_command_i18n.py checks).
        turn_timeout=locale_str("Time for each move, such as 90s, 5m, 1h30m or 1d (30s-1d)"),
        challenge_timeout=locale_str(
            "How long a challenge waits for an answer, such as 5m (15s-1h)"
        ),
        games_per_member=locale_str("Live games a member may be in at once"),
        server_games=locale_str("Live games the server may have at once"),
        challenge_cooldown=locale_str(
            "Wait before a member may challenge the same member again, such as 10m (0s-1h)"
        ),
        reviews=locale_str("Offer the Review button on finished games"),
        review_cooldown=locale_str("Wait between one member's reviews, such as 30s (0s-1h)"),
        turn_pings=locale_str("Ping players whose turn waits, unless they chose otherwise"),
        ping_grace=locale_str(
            "How long a turn may wait before its player is pinged, such as 2m (1s-1h)"
        ),
        # The numbers are bot.tunables.CHALLENGE_REACH's (test_command_i18n.py checks).
        challenge_reach=locale_str(
            "Different members one member may challenge in 10 minutes (1-20)"
        ),
        first_move_timeout=locale_str(
            "Time for a game's first move before it is aborted, such as 2m (30s-1h)"
        ),
        decline_cooldown=locale_str(
            "Wait after a declined challenge before the same challenge, such as 10m (0s-1d)"
        ),
        abandon_cooldown=locale_str(
            "Wait after leaving a game without a move before the next, such as 2m (0s-1h)"
        ),
        reset=locale_str("Return every setting to the bot's defaults first"),
    )
    async def tictactoe_settings(
        self,
        interaction: discord.Interaction,
        add_channel: discord.TextChannel | None = None,
        remove_channel: discord.TextChannel | None = None,
        all_channels: bool = False,
        # Each setting's parameter has its name in bot.tunables (SWITCHES for on/off), so
        # that what arrives is the service's change as it is; @rename gives the option's.
        turn_timeout: Time | None = None,
        challenge_timeout: Time | None = None,
        games_per_member: GamesPerMember | None = None,
        server_games: ServerGames | None = None,
        challenge_cooldown: Time | None = None,
        reviews: bool | None = None,
        review_cooldown: Time | None = None,
        turn_pings: bool | None = None,
        ping_grace: Time | None = None,
        challenge_reach: ChallengeReach | None = None,
        first_move_timeout: Time | None = None,
        decline_cooldown: Time | None = None,
        abandon_cooldown: Time | None = None,
        reset: bool = False,
    ) -> None:
        if not interaction.permissions.manage_guild:
            raise PermissionDenied(N_("Only members with Manage Server can change these settings."))
        given = dict(
            turn_timeout=turn_timeout,
            challenge_timeout=challenge_timeout,
            games_per_member=games_per_member,
            server_games=server_games,
            challenge_cooldown=challenge_cooldown,
            reviews=reviews,
            review_cooldown=review_cooldown,
            turn_pings=turn_pings,
            ping_grace=ping_grace,
            challenge_reach=challenge_reach,
            first_move_timeout=first_move_timeout,
            decline_cooldown=decline_cooldown,
            abandon_cooldown=abandon_cooldown,
        )
        # A length of time comes as typed (Time): 90s, 5m, 1h30m.
        changes: dict[str, Any] = {
            name: read_duration(name, value) if isinstance(value, str) else value
            for name, value in given.items()
            if value is not None
        }
        channels_changed = add_channel or remove_channel or all_channels
        if not (changes or channels_changed or reset):
            settings = await self.service.guilds.get(server_home(interaction))
            title = N_("Tic-tac-toe on this server")
            t = user_translator(interaction)
            await send_ephemeral(interaction, settings_text(settings, title, t))
            return
        change = await self.service.guilds.change(
            server_home(interaction),
            changes,
            allow_channel=add_channel.id if add_channel else None,
            remove_channel=remove_channel.id if remove_channel else None,
            all_channels=all_channels,
            reset=reset,
        )
        if change.changed:
            title = N_("Saved. The settings now:")
        else:
            title = N_("Nothing changed. The settings now:")
        t = user_translator(interaction)
        await send_ephemeral(interaction, settings_text(change.after, title, t, change.before))

    @app_commands.command(
        # TRANSLATORS: command name: lower case, no spaces, at most 32 characters
        name=locale_str("tictactoe-preferences"),
        description=locale_str(
            "Turn your turn notifications, and challenges to you, on or off on this server."
        ),
    )
    @anywhere
    @app_commands.rename(
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        turn_notifications=locale_str("turn_notifications"),
        # TRANSLATORS: option name: lower case, no spaces, at most 32 characters
        challenges=locale_str("challenges"),
    )
    @app_commands.describe(
        turn_notifications=locale_str("Whether I ping you when a game waits for your move"),
        challenges=locale_str("Whether members may challenge you here"),
    )
    async def tictactoe_preferences(
        self,
        interaction: discord.Interaction,
        turn_notifications: bool | None = None,
        challenges: bool | None = None,
    ) -> None:
        """Show the member's choices here, after changing those given, each with a button
        that switches it (``bot.servers.preferences``)."""
        guild, user = home(interaction), interaction.user.id
        change = await self.service.guilds.choices(
            guild, user, turn_pings=turn_notifications, challenges=challenges
        )
        asked = turn_notifications is not None or challenges is not None
        t = user_translator(interaction)
        await interaction.response.send_message(
            view=preferences_view(change, user, choices_title(change, asked), t),
            ephemeral=True,
            allowed_mentions=discord.AllowedMentions.none(),
        )
