"""Challenges' refusals as pure functions: what a member is told when a challenge cannot
be made yet (a cooldown, a challenge of theirs still pending or not shown yet)."""

from __future__ import annotations

from bot.errors import ChallengeCooldown, ChallengePending
from bot.i18n import N_
from bot.models import Challenge
from bot.refs import Member, Moment, Place

__all__ = ["cooldown_refusal", "pending_refusal", "unshown_refusal"]


def cooldown_refusal(
    opponent_id: int, until: float, *, declined: bool = False
) -> ChallengeCooldown:
    """The refusal of a challenge to a member challenged within the cooldown, or (with
    ``declined``) who declined the challenger's last challenge within the server's wait
    after a decline (``DECLINE_COOLDOWN``, kept in the same cooldown)."""
    if declined:
        return ChallengeCooldown(
            N_(
                "{member} declined your last challenge; you can challenge them again {when}.",
                member=Member(opponent_id),
                when=Moment(until),
            )
        )
    return ChallengeCooldown(
        N_(
            "You challenged {member} a moment ago; you can challenge them again {when}.",
            member=Member(opponent_id),
            when=Moment(until),
        )
    )


def pending_refusal(pending: Challenge | None, now: float) -> ChallengePending:
    """The refusal of a second pending challenge, linking the first."""
    if pending is not None and pending.message_id is None and pending.expires_at > now:
        return unshown_refusal(pending)
    if pending is None or pending.expires_at <= now:
        return ChallengePending(
            N_("Your last challenge has just ended; try again in a few seconds.")
        )
    return ChallengePending(
        N_(
            "You already have a challenge waiting for an answer: {link}. Withdraw it with its"
            " Withdraw button, or wait until it expires {when}.",
            link=Place(pending.guild_id, pending.channel_id, pending.message_id),
            when=Moment(pending.expires_at),
        )
    )


def unshown_refusal(pending: Challenge) -> ChallengePending:
    """The refusal while the challenger's last challenge has no message: being posted,
    or never shown (then it lapses at its short expiry)."""
    return ChallengePending(
        N_(
            "Your last challenge hasn't appeared yet; if it doesn't, you can challenge again"
            " {when}.",
            when=Moment(pending.expires_at),
        )
    )
