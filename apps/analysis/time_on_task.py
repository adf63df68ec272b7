"""Time on task (docs/annotation.md, "Time on task"): what a fair pay rate is set from.

Per person: their total active time and the median per unit they answered, with its interval;
for the study: the median per unit over everyone's units, and the median of the people's
totals. The seconds come from apps/annotation/selectors/time_on_task.py; the figures are
defined in apps/analysis/definitions/human.py (`item_seconds`, `person_seconds`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from apps.annotation.models import Study
from apps.annotation.selectors.time_on_task import item_seconds

if TYPE_CHECKING:
    from apps.analysis.stats.intervals import Estimate


def duration(seconds: float) -> str:
    """Seconds as people read them: "2.5 s", "45 s", "3 min 05 s", "1 h 02 min"."""
    if math.isnan(seconds):
        return "—"
    if seconds < 9.95:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def shown(estimate: Estimate) -> str:
    """A median with its interval, as a duration: "12 s [9 s, 15 s]"; "[—]" when the values
    are too few for a 95% interval (fewer than 6); "—" when there are none."""
    if estimate.n == 0:
        return "—"
    low, high = estimate.ci_low, estimate.ci_high
    interval = "—" if math.isnan(low) else f"{duration(low)}, {duration(high)}"
    return f"{duration(estimate.value)} [{interval}]"


@dataclass(frozen=True)
class PersonTime:
    total_seconds: float
    #: The median seconds per unit; n: the units timed.
    per_item: Estimate

    @property
    def total_shown(self) -> str:
        return duration(self.total_seconds)

    @property
    def per_item_shown(self) -> str:
        return shown(self.per_item)

    def as_dict(self) -> dict[str, float | int | None]:
        timed = _fields(self.per_item, "item", "items_timed")
        return {"total_seconds": round(self.total_seconds, 1), **timed}


@dataclass(frozen=True)
class StudyTime:
    #: The median seconds per unit over every person's timed units.
    per_item: Estimate
    #: The median of the people's total seconds; n: people with a timed unit.
    per_person: Estimate
    people: dict[int, PersonTime]

    @property
    def per_item_shown(self) -> str:
        return shown(self.per_item)

    @property
    def per_person_shown(self) -> str:
        return shown(self.per_person)

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            **_fields(self.per_item, "item", "items_timed"),
            **_fields(self.per_person, "person", "people_timed"),
        }


def time_on_task(seconds: Mapping[int, Sequence[float]]) -> StudyTime:
    """The figures of {person: the active seconds of each unit they answered}."""
    from apps.analysis.stats.intervals import median_interval  # scipy: only here

    people = {
        person: PersonTime(float(sum(units)), median_interval(units))
        for person, units in seconds.items()
        if units
    }
    every = [s for units in seconds.values() for s in units]
    totals = [time.total_seconds for time in people.values()]
    return StudyTime(median_interval(every), median_interval(totals), people)


def study_time(study: Study) -> StudyTime:
    return time_on_task(item_seconds(study))


def _fields(estimate: Estimate, name: str, counted: str) -> dict[str, float | int | None]:
    """The median's fields in the API: `median_<name>_seconds`, its bounds, and its N."""

    def number(value: float) -> float | None:
        return None if math.isnan(value) else round(value, 1)

    return {
        f"median_{name}_seconds": number(estimate.value),
        f"median_{name}_seconds_ci_low": number(estimate.ci_low),
        f"median_{name}_seconds_ci_high": number(estimate.ci_high),
        counted: estimate.n,
    }
