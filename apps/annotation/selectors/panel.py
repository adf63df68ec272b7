"""Reads of a study's panel (docs/annotation.md, "Recruiting a panel"): its recruitment links
with the URLs to give each platform; the attention check's failures; who it stopped."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count
from django.urls import reverse

from apps.annotation.kinds import work_type
from apps.annotation.models import ControlItem, ControlServe, PanelLink, Participant, Study

#: The query a platform fills in for each participant (Prolific's placeholders; MTurk adds
#: workerId, assignmentId and hitId itself to an external question's URL).
PROLIFIC_QUERY = "&".join(
    f"{name}={{{{%{name}%}}}}" for name in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
)


@dataclass(frozen=True)
class LinkRow:
    link: PanelLink
    url: str
    joined: int

    @property
    def prolific_url(self) -> str:
        return f"{self.url}?{PROLIFIC_QUERY}"

    @property
    def where(self) -> str:
        return "The whole study" if self.link.group is None else f"Group {self.link.group + 1}"


def panel_links(study: Study, site: str) -> list[LinkRow]:
    """The study's links (`site`: the server's address, for absolute URLs), each with the
    participants who joined through it."""
    links = PanelLink.objects.filter(study=study).annotate(joined=Count("participants"))
    return [
        LinkRow(link, site + reverse("panel-join", args=[link.token]), link.joined)
        for link in links.order_by("group")
    ]


def screen_failures(*, study: Study, person, first: int) -> int:
    """How many control items the person answered wrongly among their first `first` units
    of each type of work (a control's place in their queue: `ControlServe.position`)."""
    serves = ControlServe.objects.filter(
        study=study, annotator=person, answered_at__isnull=False, position__lt=first
    ).select_related("control")
    by_work: dict[str, dict[int, ControlItem]] = {}
    for serve in serves:
        by_work.setdefault(serve.work, {})[serve.control_id] = serve.control
    failed = 0
    for slug, controls in by_work.items():
        model = work_type(slug).model
        answers = model.answers.filter(
            study=study, control__in=list(controls), **{model.person_field: person}
        ).values_list("control_id", model.value_field)
        failed += sum(not controls[control].is_right(value) for control, value in answers)
    return failed


def screened_out_people(study: Study) -> set[int]:
    """The participants stopped by the attention check, whose answers no report counts
    unless the panel says to (`report_screened_out`): one query."""
    stopped = Participant.objects.filter(study=study, status=Participant.Status.SCREENED_OUT)
    left_out = stopped.exclude(study__panel__report_screened_out=True)
    return set(left_out.values_list("user_id", flat=True))
