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

from apps.analysis.definitions import LABELS, definition

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
    "better": "Better",
    "criterion_or_metric": "Criterion or metric",
    "diff": "Change (removed, added)",
    "evidence": "Evidence",
    "figure": "Figure",
    "original_score": "Score of the original",
    "paradigm": "Paradigm",
    "part": "Part of the audit",
    "perturbed_score": "Score of the perturbed text",
    "population": "N counts",
    "reply": "The judge's reply",
    "scope": "Scope",
    "source": "Source",
    "text_link": "The texts",
    "texts": "Texts (each counted once)",
    "threshold": "Threshold",
    "verdict": "Verdict",
    "why": "Why",
    "first": "First",
    "second": "Second",
    "test": "Test",
    "difference": "Difference (first − second)",
    "p_value": "p-value",
    "p_holm": "p, Holm-adjusted",
    "p_bh": "p, Benjamini-Hochberg",
    "significant": "Significant",
    "worse": "Worse",
    "formula": "Formula",
    "interval": "Interval",
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
    if ": " in name:  # a subject's column in judges side by side: "careful: n" → "careful: N"
        subject, column = name.rsplit(": ", 1)
        return subject if column == "value" else f"{subject}: {column_label(column)}"
    found = definition(name)
    if found is not None:
        return found.name
    return COLUMN_LABELS.get(name) or LABELS.get(name) or _words(name)


def _words(name: str) -> str:
    words = name.replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else name


#: Columns of a p-value table that are not p-values.
NOT_P_VALUES = frozenset({"kind", "criterion_or_metric", "n", "M", "units", "texts"})


def is_p_value(column: str, table: str = "") -> bool:
    if table in P_VALUE_TABLES:
        return column not in NOT_P_VALUES
    return bool(_P_COLUMN.match(column))


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


#: Columns kept in the downloads for notebooks and tests but not shown to people.
HIDDEN_COLUMNS = frozenset({"key", "badness"})


def _merged(columns: list[str]) -> list[tuple[str, int, int | None, int | None]]:
    """Display columns as (name, value index, low index, high index): a column followed by
    its ``*ci_low`` and ``*ci_high`` becomes one, "value [low, high]"; an ``n`` followed by
    its ``texts`` one, "n (texts)" (high index None); hidden ones go."""
    out: list[tuple[str, int, int | None, int | None]] = []
    i = 0
    while i < len(columns):
        name = columns[i]
        bounds = columns[i + 1 : i + 3]
        if len(bounds) == 2 and bounds[0].endswith("ci_low") and bounds[1].endswith("ci_high"):
            out.append((name, i, i + 1, i + 2))
            i += 3
            continue
        following = columns[i + 1] if i + 1 < len(columns) else ""
        if name.removesuffix("n") + "texts" == following:  # "n" and "texts": "48 (16 texts)"
            out.append((name, i, i + 1, None))
            i += 2
            continue
        if name not in HIDDEN_COLUMNS:
            out.append((name, i, None, None))
        i += 1
    return out


def interval_text(value: Any, low: Any, high: Any, *, p_value: bool = False) -> str:
    """A figure with its 95% interval as shown: "0.12 [0.05, 0.21]"; the value alone when it
    has no interval; "—" when there is no value."""
    shown = format_value(value, p_value=p_value)
    if shown == "—" or format_value(low) == "—" or format_value(high) == "—":
        return shown
    return f"{shown} [{format_value(low)}, {format_value(high)}]"


def counted_text(n: Any, texts: Any) -> str:
    """N with the texts its interval counts, when they differ: "154 (14 texts)"."""
    shown = format_value(n)
    if texts in (None, "", 0) or texts == n:
        return shown
    return f"{shown} ({format_value(texts)} text{'' if texts == 1 else 's'})"


def table_display(table: Any) -> dict[str, Any]:
    """A report table ready for a template: labelled headers, each figure beside its 95%
    interval in one cell, machine-only columns left out, formatted cells."""
    merged = _merged(list(table.columns))
    headers, columns = [], []
    for name, _, low, high in merged:
        label = column_label(name)
        if low is not None:
            label += " [95% interval]" if high is not None else " (texts)"
        headers.append(label)
        columns.append(name)
    rows = []
    for row in table.rows:
        cells = []
        for name, at, low, high in merged:
            p = is_p_value(name, table.name)
            if low is None:
                cells.append(format_value(_get(row, at), p_value=p))
            elif high is None:
                cells.append(counted_text(_get(row, at), _get(row, low)))
            else:
                cells.append(
                    interval_text(_get(row, at), _get(row, low), _get(row, high), p_value=p)
                )
        rows.append(cells)
    return {
        "name": table.name,
        "caption": table.caption,
        "headers": headers,
        "columns": columns,
        "rows": rows,
    }


def _get(row: list[Any], at: int | None) -> Any:
    return row[at] if at is not None and at < len(row) else None
