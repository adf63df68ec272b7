"""A study's recruited participants as raw data (docs/annotation.md, "Recruiting a panel"):
one row per participant, with their time on task as the review page shows it; `annotator`
is their account name in the other tables."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from apps.annotation.models import Study
from apps.annotation.selectors.panel_review import panel_review

PARTICIPANT_COLUMNS = [
    "participant_id",
    "platform",
    "annotator",
    "group",
    "status",
    "joined_at",
    "finished_at",
    "answered",
    "controls_right",
    "controls_answered",
    "agreed",
    "compared",
    "active_seconds",
    "median_item_seconds",
    "item_seconds",
    "decision",
    "reason",
]


def participant_rows(study: Study) -> Iterator[dict[str, Any]]:
    for row in panel_review(study).rows:
        p = row.participant
        yield {
            "participant_id": p.external_id,
            "platform": p.platform,
            "annotator": p.user.username,
            "group": None if p.group is None else p.group + 1,
            "status": p.status,
            "joined_at": p.joined_at.isoformat(),
            "finished_at": p.finished_at.isoformat() if p.finished_at else None,
            "answered": row.answered,
            "controls_right": sum(row.controls),
            "controls_answered": len(row.controls),
            "agreed": row.agreed,
            "compared": row.compared,
            "active_seconds": round(row.total_seconds, 1),
            "median_item_seconds": row.median_seconds,
            "item_seconds": [round(s, 1) for s in row.seconds],
            "decision": p.decision,
            "reason": p.reason,
        }
