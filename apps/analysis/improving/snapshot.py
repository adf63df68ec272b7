"""An improvement as plain JSON: what the page shows, the API answers, the command and the
download write (docs/improve.md). Figures carry their definition's name (docs/figures.md)."""

from __future__ import annotations

from typing import Any

from apps.analysis.definitions import label
from apps.analysis.formatting import format_value, interval_text
from apps.judging.models import Improvement

FIGURES = ("blind_spots", "missed_held_out", "missed_reduction", "agreement_held_out")


def improvement_json(improvement: Improvement) -> dict[str, Any]:
    subject = improvement.subject
    return {
        "improvement": {
            "id": improvement.pk,
            "status": improvement.status,
            "stage": improvement.stage,
            "judge": subject.judge.name,
            "current_strategy": subject.strategy.slug if subject.strategy else None,
            "audit": subject.audit_id,
            "seed": improvement.seed,
            "train_items": improvement.train_items,
            "held_items": improvement.held_items,
            "budget_requests": improvement.budget_requests,
            "http_requests": improvement.http_requests(),
            "adopted_strategy": improvement.adopted.slug if improvement.adopted else None,
            "error": improvement.error,
        },
        "estimate": improvement.estimate,
        "candidates": [
            {
                "id": c.pk,
                "label": c.label,
                "origin": c.origin,
                "strategy": c.strategy.slug,
                "train_run": c.train_run_id,
                "held_run": c.held_run_id,
                "train": c.train,
                "held": c.held,
            }
            for c in improvement.candidates.select_related("strategy")
        ],
        "result": improvement.result,
        "figures": {key: label(key) for key in FIGURES},
    }


def _shown(figure: dict[str, Any] | None) -> str:
    """A stored figure as the page shows it: value, interval, N in texts."""
    if not figure or figure.get("value") is None:
        return "not measured"
    shown = interval_text(figure["value"], figure.get("ci_low"), figure.get("ci_high"))
    return f"{shown} (N = {figure.get('texts') or figure.get('n')} texts)"


def result_rows(result: dict[str, Any]) -> list[dict[str, str]]:
    """The before/after table of a confirmed comparison: one row per figure, its name from
    its definition (docs/figures.md)."""
    if "missed" not in result:
        return []
    missed, agreement = result["missed"], result.get("agreement") or {}
    test = missed["test"]
    difference = interval_text(test["difference"], test["ci_low"], test["ci_high"])
    p = format_value(test["p"], p_value=True)
    return [
        {
            "key": "missed_held_out",
            "figure": label("missed_held_out"),
            "before": _shown(missed["before"]),
            "after": _shown(missed["after"]),
        },
        {
            "key": "missed_reduction",
            "figure": label("missed_reduction"),
            "before": "",
            "after": f"{difference}; {test['test']}, p = {p} (N = {test['n']} texts)",
        },
        {
            "key": "agreement_held_out",
            "figure": label("agreement_held_out"),
            "before": _shown(agreement.get("before")),
            "after": _shown(agreement.get("after")),
        },
    ]


def page_rows(improvement: Improvement) -> dict[str, Any]:
    """What the improvement's page shows, formatted: the before/after rows, the kinds and the
    candidates on the training texts."""
    result = improvement.result or {}
    kinds = [
        {
            "kind": kind["kind"],
            "before": _verdict(kind["before"]),
            "after": _verdict(kind["after"]),
            "test": _test(kind["test"]),
        }
        for kind in result.get("kinds", [])
    ]
    every = list(improvement.candidates.all())
    candidates = [
        {
            "label": c.label,
            "winner": c.pk == result.get("winner"),
            "spots": ", ".join(c.train.get("blind_spots", [])) or "none"
            if "blind_spots" in c.train
            else c.train.get("not_measured", "not measured yet"),
            "missed": _shown(c.train.get("missed")),
            "agreement": _shown(c.train.get("agreement")),
        }
        for c in every
    ]
    held: dict[Any, dict[str, Any]] = {c.pk: c.held for c in every}
    current: dict[str, Any] = next((c.held for c in every if c.current), {})
    return {
        "rows": result_rows(result),
        "kinds": kinds,
        "candidates": candidates,
        "before_spots": current.get("blind_spots", []),
        "after_spots": held.get(result.get("winner"), {}).get("blind_spots", []),
    }


def _verdict(figure: dict[str, Any]) -> str:
    return f"{_shown(figure)}: {figure['verdict']}" if figure.get("verdict") else _shown(figure)


def _test(test: dict[str, Any]) -> str:
    if not test.get("n"):
        return "no text in common"
    return f"{test['test']}, p = {format_value(test['p'], p_value=True)} (N = {test['n']} texts)"
