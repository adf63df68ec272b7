"""The new-study steps: one form (`StudyNewForm`) shown a section at a time.

Every post carries every field (the sections not shown travel as hidden inputs), so the steps
need no session and work without JavaScript; Back and Next post and re-render. Going forward
checks the sections up to the one shown; "create" checks them all and, when one is wrong,
shows the first wrong section with its errors. The edit page shows the same sections at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from django.forms import BoundField
from django.http import QueryDict

from apps.annotation.forms import StudyNewForm
from apps.annotation.kinds import work_types
from apps.annotation.selectors.plan_preview import PlanPreview, plan_preview
from apps.annotation.services.studies import SETUP_FIELDS


@dataclass(frozen=True)
class Section:
    slug: str
    title: str
    fields: tuple[str, ...]
    lead: str = ""


SECTIONS = (
    Section("data", "Data", ("name", "description", "guidelines", "datasets")),
    Section(
        "kinds",
        "Perturbation kinds",
        ("kinds",),
        "The changes annotators vet and compare: open a group to see its kinds.",
    ),
    Section(
        "criteria",
        "Criteria",
        ("criteria",),
        "The paper's design: annotators are split into groups (Comparison groups, under "
        "Human work; one by default); each group compares every pair under every chosen "
        "criterion once, and no annotator sees two descriptions of the same aspect.",
    ),
    Section(
        "work",
        "Human work",
        tuple(
            f
            for f in SETUP_FIELDS
            if f not in ("name", "description", "guidelines", "datasets", "kinds", "criteria")
        ),
    ),
)
PEOPLE = Section(
    "people",
    "People",
    ("annotators", "experts"),
    "Optional: existing accounts to add now. Once the study is made, its people page adds "
    "more and creates new accounts.",
)
REVIEW = Section("review", "Review", (), "Nothing is saved until you create the study.")
STEPS = (*SECTIONS, PEOPLE, REVIEW)


#: How many chosen kinds, criteria... the review names (then "and N more").
LISTED = 12


def _number(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


class StudySteps:
    """Where a researcher is in the new-study steps, and whether the study may be created.
    A post without `step` (a script, an old page) is a plain create."""

    def __init__(self, data: QueryDict | None, *, user, initial: dict[str, Any]) -> None:
        self.form = StudyNewForm(data, user=user, initial=initial)
        self.index = 0
        self.create = False
        if data is not None:
            self._go(data)

    def _go(self, data: QueryDict) -> None:
        last = len(STEPS) - 1
        shown = min(max(_number(data.get("step"), last), 0), last)
        go = data.get("go", "create" if "step" not in data else "next")
        target = {"next": shown + 1, "back": shown - 1, "create": last}.get(go, _number(go, shown))
        target = min(max(target, 0), last)
        self.form.is_valid()
        wrong = self._first_wrong()
        forward = target > shown or go == "create"
        if forward and wrong is not None and wrong <= max(shown, target - 1):
            target = wrong
        self.create = go == "create" and wrong is None
        self.index = target

    def _first_wrong(self) -> int | None:
        if self.form.non_field_errors():
            return len(STEPS) - 1
        for index, step in enumerate(STEPS):
            if any(name in self.form.errors for name in step.fields):
                return index
        return None

    # --- what the page shows ---------------------------------------------------------------

    @property
    def step(self) -> Section:
        return STEPS[self.index]

    @property
    def steps(self) -> tuple[Section, ...]:
        return STEPS

    @property
    def next_title(self) -> str:
        return STEPS[min(self.index + 1, len(STEPS) - 1)].title.lower()

    def review(self) -> list[tuple[int, Section, list[tuple[str, str]]]]:
        """What the review lists: each section (its step) with its choices in words."""
        return [(i, section, self.chosen(section)) for i, section in enumerate(STEPS[:-1])]

    def shown(self) -> list[BoundField]:
        return [self.form[name] for name in self.step.fields]

    def hidden(self) -> list[BoundField]:
        return [field for field in self.form if field.name not in self.step.fields]

    def chosen(self, section: Section) -> list[tuple[str, str]]:
        """What the review says of a section: each field's label and its value in words."""
        return [(str(self.form[name].label), self._words(name)) for name in section.fields]

    def _words(self, name: str) -> str:
        value = self.form.cleaned_data.get(name) if self.form.is_bound else None
        if value is None or value == "":
            return "—"
        if isinstance(value, bool):
            return "yes" if value else "no"
        field = self.form.fields[name]
        if hasattr(value, "model") or isinstance(value, list):
            words = [str(getattr(field.widget, "label_of", str)(obj)) for obj in value]
            more = f" and {len(words) - LISTED} more" if len(words) > LISTED else ""
            return ", ".join(words[:LISTED]) + more if words else "none"
        choices = dict(getattr(field, "choices", ()) or ())
        return str(choices.get(value, value))

    @cached_property
    def preview(self) -> PlanPreview | None:
        """The counts of the plan these choices make (None before the first post)."""
        if not self.form.is_bound:
            return None
        data = {k: v for k, v in self.form.cleaned_data.items() if v is not None}
        people = data.pop("annotators", None) or ()
        return study_preview(data, annotators=len(people))


def study_preview(choices: dict[str, Any], *, annotators: int) -> PlanPreview:
    """The counts of the plan these choices make (`plan_preview`), with the rows of the kinds of
    work that count their own (`Work.preview`)."""
    kinds = (work.setup.preview(choices) for work in work_types())
    return replace(
        plan_preview(**choices, annotators=annotators),
        kinds=tuple(kind for kind in kinds if kind is not None),
    )
