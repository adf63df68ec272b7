"""Reads of a study's panel for its researchers (docs/annotation.md, "Recruiting a panel"):
its recruitment links with the URLs to give each platform."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count
from django.urls import reverse

from apps.annotation.models import PanelLink, Study

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
