"""How report values and column names are shown to people (pages, the shareable HTML file).

The stored report, its CSV and its JSON keep the machine names (`match_rate_vote_all`) and
full precision for notebooks; only what a person reads goes through here. One function,
`format_value`, decides the precision of every number shown: p-values in scientific notation,
other fractions to three significant figures, counts as integers.
"""

from __future__ import annotations

import math
import re
from typing import Any

from apps.analysis.definitions import definition

#: Names of columns that are not figures, in words. A figure's column is named by its
#: definition (apps/analysis/definitions); a name in neither falls back to `_words`.
COLUMN_LABELS = {
    "ability": "Ability",
    "alpha": "Krippendorff's alpha",
    "annotations": "Annotations",
    "aspect": "Aspect",
    "cell": "Cell (S_T / S_F)",
    "cells": "Cells",
    "check": "Check",
    "ci_high": "95% interval, high",
    "ci_low": "95% interval, low",
    "cohen_kappa": "Cohen's kappa",
    "criterion": "Criterion",
    "description_type": "Description type",
    "detected_both": "Original chosen in both orders",
    "dimension": "Criterion or metric",
    "expected": "Expected impact",
    "failure_rate": "Failure rate",
    "group": "Group",
    "grouping": "Grouping (all, dataset, source)",
    "human_verdict_vote_all": "Human verdict (all votes pooled)",
    "judge": "Judge",
    "judgement": "Judgement",
    "kappa_ci_high": "Cohen's kappa: 95% interval, high",
    "kappa_ci_low": "Cohen's kappa: 95% interval, low",
    "kind": "Perturbation kind",
    "kinds": "Kinds",
    "level": "Level",
    "match_rate_vote_all": "Match rate (all votes pooled)",
    "match_rate_vote_vote": "Match rate (majority of per-group votes)",
    "match_share": "Share matching the cue",
    "matched_vote_all": "Matched (all votes pooled)",
    "matched_vote_vote": "Matched (majority of per-group votes)",
    "mean_consistency": "Mean consistency",
    "measure": "Measure",
    "metric": "Metric",
    "n": "N",
    "n_humans": "Human raters",
    "n_raters": "Raters",
    "n_texts": "Texts",
    "n_units": "Units",
    "not_original": "Share not choosing the original",
    "originals": "Originals",
    "pairs": "Pairs",
    "percent_agreement": "Percent agreement",
    "percent_ci_high": "Percent agreement: 95% interval, high",
    "percent_ci_low": "Percent agreement: 95% interval, low",
    "perturbed": "Perturbed texts",
    "rate": "Rate",
    "run": "Judge run",
    "score": "Score",
    "statistic": "Statistic",
    "strategies": "Strategies",
    "task": "Task",
    "total": "Total",
    "undecided_vote_all": "Undecided cells (all votes pooled)",
    "valid_share": "Share valid",
    "value": "Value",
    "votes": "Votes",
    "weight": "Weight",
    "who": "Who",
}
#: Tables whose every number is a p-value; and p-value columns of any table.
P_VALUE_TABLES = frozenset({"p_values"})
_P_COLUMN = re.compile(r"^(p|p_.*|.*_p|p-value.*)$")


def column_label(name: str) -> str:
    """A column's name in words: a figure's from its definition (`delta` → "Score drop
    (original − perturbed)"), others from COLUMN_LABELS (`ci_low` → "95% interval, low")."""
    found = definition(name)
    return found.name if found is not None else COLUMN_LABELS.get(name) or _words(name)


def _words(name: str) -> str:
    words = name.replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else name


def is_p_value(column: str, table: str = "") -> bool:
    return table in P_VALUE_TABLES or bool(_P_COLUMN.match(column))


def format_value(value: Any, *, p_value: bool = False) -> str:
    """A cell as shown: "—" for missing, integers as they are, p-values as 1.2e-05, other
    numbers to three significant figures (at most four decimals)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if p_value:
        return f"{value:.2e}"
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):d}" if abs(value) < 1e15 else f"{value:.3g}"
    if abs(value) >= 1000:
        return f"{value:,.1f}"
    if abs(value) < 1e-4:
        return f"{value:.2e}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.{max(0, 3 - _digits(value))}f}"


def _digits(value: float) -> int:
    return len(str(int(abs(value))))


def table_display(table: Any) -> dict[str, Any]:
    """A report table ready for a template: labelled headers and formatted cells."""
    p_columns = [is_p_value(c, table.name) for c in table.columns]
    rows = [
        [format_value(v, p_value=p) for v, p in zip(row, p_columns, strict=False)]
        for row in table.rows
    ]
    return {
        "name": table.name,
        "caption": table.caption,
        "headers": [column_label(c) for c in table.columns],
        "columns": table.columns,
        "rows": rows,
    }
