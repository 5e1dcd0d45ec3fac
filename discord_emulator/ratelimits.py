"""Discord's REST rate limits: per-route buckets, the global limit, the invalid-request ban.

As Discord's "Rate Limits" topic describes them:

- Each route belongs to a bucket (``X-RateLimit-Bucket``, a hash that leaves out the top-level
  resource) and is counted per top-level resource: the channel, the guild, or the webhook
  (id and token). A bucket is a fixed window: it opens with its first request and lets
  ``limit`` requests through until it resets ``period`` seconds later.
- Every request with the bot token also counts toward the global limit of 50 a second,
  except interaction callbacks and the webhook-token routes that follow-ups and ``@original``
  edits use (no bot token there: the interaction's token is the key).
- 401, 403 and 429 answers (429s of scope ``shared`` excepted) are invalid requests. Past
  10,000 in 10 minutes Cloudflare refuses every request from the address for a while: a 429
  without ``Via`` and with a plain-text body, which discord.py raises at once.

Numbers Discord does not document (edits, webhooks, other routes) are set to the smallest
figures bots observe; all are fields of :class:`Limits`, so a test can change them.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["Admission", "BucketRule", "Limits", "RateLimiter", "Refusal"]


@dataclass(frozen=True)
class BucketRule:
    """``limit`` requests per ``period`` seconds, per top-level resource."""

    name: str
    limit: int
    period: float

    @property
    def hash(self) -> str:
        """The opaque ``X-RateLimit-Bucket`` value, the same for every resource."""
        return hashlib.blake2b(self.name.encode(), digest_size=16).hexdigest()


SEND_MESSAGE = BucketRule("POST /channels/{channel_id}/messages", 5, 5.0)
EDIT_MESSAGE = BucketRule("PATCH /channels/{channel_id}/messages/{message_id}", 5, 5.0)
DELETE_MESSAGE = BucketRule("DELETE /channels/{channel_id}/messages/{message_id}", 5, 1.0)
INTERACTION_CALLBACK = BucketRule("POST /interactions/{interaction_id}/{token}/callback", 5, 2.0)
WEBHOOK = BucketRule("/webhooks/{application_id}/{token}", 5, 2.0)

_CALLBACK_ROUTE = "/interactions/{interaction_id}/{token}/callback"
_WEBHOOK_PREFIX = "/webhooks/{application_id}/{token}"


def _default_rules() -> dict[str, BucketRule]:
    return {rule.name: rule for rule in (SEND_MESSAGE, EDIT_MESSAGE, DELETE_MESSAGE)}


@dataclass
class Limits:
    """What the emulator enforces. ``Limits(enabled=False)`` turns it all off (no headers,
    no 429s, no ban); tests must say why when they do.

    ``rules`` maps ``"METHOD /template"`` to its bucket; other routes get
    ``default_limit`` per ``default_period`` each, per top-level resource. Webhook-token
    routes share ``webhook`` per token, callbacks get ``callback`` per interaction.
    """

    enabled: bool = True
    global_limit: int = 50
    global_period: float = 1.0
    rules: dict[str, BucketRule] = field(default_factory=_default_rules)
    default_limit: int = 5
    default_period: float = 1.0
    webhook: BucketRule = WEBHOOK
    callback: BucketRule = INTERACTION_CALLBACK
    invalid_request_limit: int = 10_000
    invalid_request_window: float = 600.0
    ban_seconds: float = 3600.0

    @classmethod
    def off(cls) -> Limits:
        return cls(enabled=False)

    def rule_for(self, method: str, template: str) -> BucketRule:
        key = f"{method} {template}"
        if key in self.rules:
            return self.rules[key]
        if template == _CALLBACK_ROUTE:
            return self.callback
        if template.startswith(_WEBHOOK_PREFIX):
            return self.webhook
        return BucketRule(key, self.default_limit, self.default_period)


def is_exempt(template: str | None) -> bool:
    """Interaction callbacks and interaction webhooks do not count toward the global limit."""
    return template is not None and (
        template == _CALLBACK_ROUTE or template.startswith(_WEBHOOK_PREFIX)
    )


def _resource(params: Mapping[str, str]) -> str:
    """The top-level resource of a route: channel, guild, webhook (id + token), interaction."""
    for name in ("channel_id", "guild_id"):
        if name in params:
            return params[name]
    if "token" in params:
        owner = params.get("application_id") or params.get("interaction_id", "")
        return f"{owner}+{params['token']}"
    return ""


@dataclass
class _Window:
    resets_at: float
    used: int = 0


@dataclass(frozen=True)
class Refusal:
    """Why a request is answered 429 before it reaches its handler."""

    scope: str  # "user", "global" or "cloudflare"
    retry_after: float


@dataclass
class Admission:
    """The outcome of :meth:`RateLimiter.admit`: the headers for the answer, or a refusal."""

    headers: dict[str, str] = field(default_factory=dict)
    refusal: Refusal | None = None


def _seconds(value: float) -> str:
    """Seconds rounded up to the millisecond, so a client never wakes before the reset."""
    return f"{math.ceil(value * 1000) / 1000:.3f}"


class RateLimiter:
    """Buckets, the global limit and the invalid-request ban, plus the counts tests read.

    Times are on ``now`` (the emulator clock, so ``Emulator.advance`` also resets windows
    and ends bans); ``wall`` gives the epoch for ``X-RateLimit-Reset``.

    Counts: ``by_route`` and ``by_bucket`` (every request that reached the API, refused or
    not), ``global_requests`` (those charged to the global limit: REST outside interaction
    answers), ``exempt_requests``, ``sent_429`` by scope (``user``, ``global``, ``shared``,
    ``cloudflare``), ``invalid_requests`` (401/403/non-shared 429 answers, all time),
    ``bans``; :attr:`banned` and :meth:`invalid_in_window` give the current state.
    """

    def __init__(
        self, limits: Limits, *, now: Callable[[], float], wall: Callable[[], float]
    ) -> None:
        self.limits = limits
        self._now = now
        self._wall = wall
        self._windows: dict[tuple[str, str, str], _Window] = {}
        self._global: dict[str, _Window] = {}
        self._invalid: deque[float] = deque()
        self._banned_until: float | None = None
        self.reset_counts()

    def now(self) -> float:
        return self._now()

    def reset_counts(self) -> None:
        """Zero the counts (not the windows nor a ban in force), e.g. between bench phases."""
        self.by_route: Counter[str] = Counter()
        self.by_bucket: Counter[str] = Counter()
        self.sent_429: Counter[str] = Counter()
        self.global_requests = 0
        self.exempt_requests = 0
        self.invalid_requests = 0
        self.bans = 0

    def snapshot(self) -> dict[str, Any]:
        """The counts as plain data (for a bench's report or an assertion message)."""
        return {
            "by_route": dict(self.by_route),
            "by_bucket": dict(self.by_bucket),
            "sent_429": dict(self.sent_429),
            "global_requests": self.global_requests,
            "exempt_requests": self.exempt_requests,
            "invalid_requests": self.invalid_requests,
            "invalid_in_window": self.invalid_in_window(),
            "bans": self.bans,
            "banned": self.banned,
        }

    # -- the Cloudflare ban ------------------------------------------------------------------

    @property
    def banned(self) -> bool:
        return self.ban_remaining() > 0

    def ban_remaining(self) -> float:
        if self._banned_until is None:
            return 0.0
        left = self._banned_until - self._now()
        if left <= 0:
            self._banned_until = None
            return 0.0
        return left

    def invalid_in_window(self) -> int:
        self._forget_old_invalid(self._now())
        return len(self._invalid)

    def _forget_old_invalid(self, now: float) -> None:
        horizon = now - self.limits.invalid_request_window
        while self._invalid and self._invalid[0] <= horizon:
            self._invalid.popleft()

    def observe(self, status: int, scope: str | None) -> None:
        """Count an answer sent: its 429 scope, and whether it was an invalid request."""
        if status == 429 and scope is not None:
            self.sent_429[scope] += 1
        if scope == "cloudflare" or not self.limits.enabled:
            return
        if status in (401, 403) or (status == 429 and scope != "shared"):
            self.invalid_requests += 1
            now = self._now()
            self._forget_old_invalid(now)
            self._invalid.append(now)
            if len(self._invalid) >= self.limits.invalid_request_limit and not self.banned:
                self._banned_until = now + self.limits.ban_seconds
                self._invalid.clear()
                self.bans += 1

    # -- admission -----------------------------------------------------------------------------

    def admit(
        self, method: str, template: str | None, params: Mapping[str, str], auth: str | None
    ) -> Admission:
        """Charge a request to its bucket and the global limit, or refuse it.

        ``template`` is None for a request no route matched (it still counts globally).
        A request refused by the global limit uses nothing of its bucket.
        """
        limits = self.limits
        now = self._now()
        if limits.enabled and self.banned:
            return Admission(refusal=Refusal("cloudflare", self.ban_remaining()))
        rule = limits.rule_for(method, template) if template is not None else None
        if template is not None:
            self.by_route[f"{method} {template}"] += 1
        if rule is not None:
            self.by_bucket[rule.name] += 1
        if is_exempt(template):
            self.exempt_requests += 1
        else:
            self.global_requests += 1
        if not limits.enabled:
            return Admission()
        if not is_exempt(template):
            key = auth or "ip"
            window = self._global.get(key)
            if window is None or now >= window.resets_at:
                window = self._global[key] = _Window(now + limits.global_period)
            if window.used >= limits.global_limit:
                return Admission(refusal=Refusal("global", window.resets_at - now))
            window.used += 1
        if rule is None:
            return Admission()
        bucket_key = (auth or "ip", rule.name, _resource(params))
        bucket = self._windows.get(bucket_key)
        if bucket is None or now >= bucket.resets_at:
            bucket = self._windows[bucket_key] = _Window(now + rule.period)
        reset_after = bucket.resets_at - now
        refused = bucket.used >= rule.limit
        if not refused:
            bucket.used += 1
        headers = {
            "X-RateLimit-Limit": str(rule.limit),
            "X-RateLimit-Remaining": str(rule.limit - bucket.used),
            "X-RateLimit-Reset": _seconds(self._wall() + reset_after),
            "X-RateLimit-Reset-After": _seconds(reset_after),
            "X-RateLimit-Bucket": rule.hash,
        }
        return Admission(headers, Refusal("user", reset_after) if refused else None)


def with_rules(limits: Limits, *rules: BucketRule) -> Limits:
    """A copy of ``limits`` with ``rules`` (keyed by their names) added or replaced."""
    return replace(limits, rules={**limits.rules, **{rule.name: rule for rule in rules}})
