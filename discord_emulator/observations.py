"""What a bench may watch of the emulator's own work, without reaching into it: typed
observations of the way an interaction takes, told to ``Emulator.observers`` as they happen.

A click's time splits at these points: the INTERACTION_CREATE frame goes to the bot's socket
(:class:`FrameWritten`), the bot's callback request reaches the REST handler
(:class:`RequestArrived`), the emulator applies the callback (:class:`InteractionAcknowledged`)
or the deadline passes (:class:`InteractionFailed`). Each carries ``at``, the
``time.perf_counter()`` of that moment: wall time, as the emulator's clock is the one tests
move. An observer is called synchronously, in the emulator's event loop, so it should be
quick; with no observer, no observation is made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FrameWritten",
    "InteractionAcknowledged",
    "InteractionFailed",
    "Observation",
    "Observer",
    "RequestArrived",
    "tell",
]


@dataclass(frozen=True, slots=True)
class FrameWritten:
    """The gateway encoded ``payload`` (a whole frame: ``op``, ``t``, ``d``...) and hands it
    to a session's socket now."""

    payload: dict[str, Any]
    at: float


@dataclass(frozen=True, slots=True)
class RequestArrived:
    """A request reached the REST handler, before its body is read; ``path`` as requested
    (``/api/v10/interactions/{id}/{token}/callback``)."""

    method: str
    path: str
    at: float


@dataclass(frozen=True, slots=True)
class InteractionAcknowledged:
    """The bot's valid callback for interaction ``interaction_id`` was applied (its handle,
    ``emu.interactions[interaction_id]``, holds the answer)."""

    interaction_id: int
    at: float


@dataclass(frozen=True, slots=True)
class InteractionFailed:
    """Interaction ``interaction_id`` got no valid callback in time: the user sees "This
    interaction failed"."""

    interaction_id: int
    at: float


Observation = FrameWritten | RequestArrived | InteractionAcknowledged | InteractionFailed
"""Every kind of observation."""

Observer = Callable[[Observation], None]


def tell(observers: Sequence[Observer], observation: Observation) -> None:
    """Call each of ``observers`` with ``observation`` (callers check ``observers`` first,
    so that nothing is built for no one)."""
    for observer in observers:
        observer(observation)
