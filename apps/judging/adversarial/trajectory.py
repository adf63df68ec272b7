"""The trajectory the generator is shown (docs/methods.md §6). Pure.

The best ``TRAJECTORY_SIZE`` scored candidates so far, by feedback score; shown in ascending
order, so the best comes last, just before the request for better ones. Unscored candidates
(a judge's reply could not be read) never enter it. Ties keep the earlier candidate ahead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

TRAJECTORY_SIZE: Final = 10


@dataclass(frozen=True)
class Step:
    """One scored candidate: ``order`` is when it was made (earlier is smaller)."""

    order: int
    text: str
    s_fb: float


def trajectory(candidates: Iterable[Step], size: int = TRAJECTORY_SIZE) -> list[Step]:
    """The ``size`` best candidates by S_fb (earlier first among equals), lowest first."""
    best = sorted(candidates, key=lambda step: (-step.s_fb, step.order))[:size]
    return best[::-1]


def best_step(candidates: Iterable[Step]) -> Step | None:
    """The highest S_fb (the earliest among equals), or None."""
    ranked = sorted(candidates, key=lambda step: (-step.s_fb, step.order))
    return ranked[0] if ranked else None
