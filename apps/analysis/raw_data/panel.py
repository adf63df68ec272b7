"""A study's recruited participants as raw data (docs/annotation.md, "Recruiting a panel"):
one row per participant, with the review page's figures (apps/analysis/panel_review.py);
`annotator` is their account name in the other tables."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from apps.analysis.panel_review import panel_figures
from apps.annotation.models import Study

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
    "agreement",
    "agreement_units",
    "active_seconds",
    "median_item_seconds",
    "item_seconds",
    "decision",
    "reason",
]


def participant_rows(study: Study) -> Iterator[dict[str, Any]]:
    for f in panel_figures(study).participants:
        p, controls, time = f.participant, f.controls, f.time
        median = None if time is None else time.per_item.value
        yield {
            "participant_id": p.external_id,
            "platform": p.platform,
            "annotator": p.user.username,
            "group": None if p.group is None else p.group + 1,
            "status": p.status,
            "joined_at": p.joined_at.isoformat(),
            "finished_at": p.finished_at.isoformat() if p.finished_at else None,
            "answered": f.row.answered,
            "controls_right": controls.right if controls else 0,
            "controls_answered": controls.n if controls else 0,
            "agreement": None if f.agreement is None else round(f.agreement[0], 4),
            "agreement_units": None if f.agreement is None else f.agreement[1],
            "active_seconds": None if time is None else round(time.total_seconds, 1),
            "median_item_seconds": None if median is None or math.isnan(median) else median,
            "item_seconds": [round(s, 1) for s in f.seconds],
            "decision": p.decision,
            "reason": p.reason,
        }
