"""Report builders: each turns bulk-fetched study data into a Report (tables + figures).

The registry names each report's module, imported when a report is first built: the builders
need numpy, scipy and matplotlib, which the pages listing reports do not (docs/deployment.md,
Start-up).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apps.analysis.reports.base import Report


def _builder(module: str) -> Callable[[Any], Report]:
    """The ``build`` function of ``apps.analysis.reports.<module>``, imported on first call."""

    def build(subject: Any) -> Report:
        report: Report = import_module(f"apps.analysis.reports.{module}").build(subject)
        return report

    build.__qualname__ = build.__name__ = f"{module}.build"
    return build


#: Study-level reports, by name. `judge-reliability` is per judge run (see RUN_REPORTS).
STUDY_REPORTS = {
    "human-agreement": _builder("human_agreement"),
    "expert-weights": _builder("expert_weights"),
    "judge-vs-human": _builder("judge_vs_human"),
    "adversarial-search": _builder("adversarial"),
}
RUN_REPORTS = {"judge-reliability": _builder("judge_reliability")}
TITLES = {
    "human-agreement": "Human agreement",
    "expert-weights": "Expert weights",
    "judge-vs-human": "Judge vs human",
    "judge-reliability": "Judge reliability",
    "adversarial-search": "Adversarial search",
}
