"""Sections a kind of work adds to a study report: its reports module
(``apps/analysis/reports/<slug>.py``, apps/analysis/kinds.py) registers each with
`section_register`, and the report calls every one registered for it, where its docstring says,
with what it says. A section function returns None when it has nothing to show for the study.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any, TypeVar

from apps.analysis.kinds import kind_modules

F = TypeVar("F", bound=Callable[..., Any])
#: Per report, its section functions by their module and name.
_SECTIONS: dict[str, dict[str, Callable[..., Any]]] = defaultdict(dict)


def section_register(report: str) -> Callable[[F], F]:
    """Decorate a function building a section of the report named `report` (its key in
    STUDY_REPORTS)."""

    def register(build: F) -> F:
        _SECTIONS[report][f"{build.__module__}.{build.__qualname__}"] = build
        return build

    return register


def kind_sections(report: str) -> list[Callable[..., Any]]:
    """The section functions registered for `report`, in the pipeline's order of kinds."""
    kind_modules("apps.analysis.reports")
    return list(_SECTIONS[report].values())


def section_names() -> list[str]:
    """Every registered section function by its module and name (part of report
    fingerprints: a kind added or taken away changes them)."""
    kind_modules("apps.analysis.reports")
    return sorted(f"{report}:{name}" for report, builds in _SECTIONS.items() for name in builds)
