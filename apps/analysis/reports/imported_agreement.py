"""Agreement among human raters of texts (docs/analysis.md, `human-agreement`): ordinal
Krippendorff's alpha with a bootstrap 95% interval over texts, percent agreement (exact score
match among rater pairs) and N, per criterion, pooled and per dataset (and per source, for
imported ratings): for the imported ratings, and for those collected in the study (direct
assessment)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from apps.analysis.controls import analysed
from apps.analysis.models import HumanRating
from apps.analysis.reports.base import Section, Table, rounded
from apps.analysis.stats.agreement import (
    AGREEMENT_NEEDS,
    Level,
    alpha_with_ci,
    percent_agreement_with_ci,
    rating_counts,
)
from apps.annotation.models import Assessment, Study

BOOTSTRAP = 500
NO_SOURCE = "(no source)"
#: What agreement_cells returns, named for ratings of texts.
CELLS = [
    "human_alpha",
    "ci_low",
    "ci_high",
    "percent_agreement",
    "percent_ci_low",
    "percent_ci_high",
    "n_ratings",
    "n_texts",
    "n_raters",
    "n_texts_compared",
    "no_figure_because",
]
COLUMNS = ["criterion", "grouping", "group", *CELLS]
#: What N counts, for the captions of tables made of agreement_cells.
N_WORDS = (
    "N: ratings, texts rated, raters, and texts rated by two raters or more (the texts alpha "
    "and percent agreement compare; their intervals resample them)."
)
UNDEFINED_ALPHA = "one value throughout"

Texts = dict[tuple[int, int | None], dict[str, float]]


def agreement_cells(matrix: np.ndarray, level: Level = "ordinal") -> list[object]:
    """[alpha, ci_low, ci_high, percent agreement, its ci_low, its ci_high, ratings, units,
    raters, units rated twice or more, why there is no figure] of a raters x units matrix
    (NaN or None where a rater did not rate a unit). What exists is counted even when no
    agreement can be computed: 60 ratings by one annotator show as 60 ratings of 60 texts by
    1 rater, "one rater", never as 0 texts and 0 raters."""
    counts = rating_counts(matrix)
    if not counts.compared:
        figures: list[object] = [None] * 6
        why = counts.why_no_agreement
    else:
        result = alpha_with_ci(matrix, level, n_resamples=BOOTSTRAP)
        percent = percent_agreement_with_ci(matrix)
        figures = [
            rounded(result.value),
            rounded(result.ci_low),
            rounded(result.ci_high),
            rounded(percent.value),
            rounded(percent.ci_low),
            rounded(percent.ci_high),
        ]
        why = "" if figures[0] is not None else UNDEFINED_ALPHA
    return [*figures, counts.ratings, counts.units, counts.raters, counts.compared, why]


def no_figure_text(labelled: list[tuple[str, list[object]]]) -> str:
    """A sentence naming each (label, agreement_cells) without an agreement figure, with
    what exists and why; "" when every one has its figure."""
    lines = []
    for label, cells in labelled:
        ratings, texts, raters, compared, why = cells[6:11]
        if why == UNDEFINED_ALPHA:
            lines.append(
                f"{label}: alpha undefined, every rating of the {compared} texts rated twice "
                "is one value (no disagreement to expect)"
            )
        elif why:
            lines.append(
                f"{label}: {ratings} ratings of {texts} texts by {raters} "
                f"rater{'s' if raters != 1 else ''}, {why}"
            )
    if not lines:
        return ""
    return f" No agreement figure for {'; '.join(lines)}: {AGREEMENT_NEEDS}."


def texts_matrix(texts: Texts) -> np.ndarray:
    """text → rater → score as a raters x texts float matrix."""
    raters = sorted({r for scores in texts.values() for r in scores})
    return np.array([[texts[u].get(r, np.nan) for u in texts] for r in raters], dtype=float)


def imported_section(study: Study) -> Section:
    rows = HumanRating.objects.filter(item__dataset__studies=study).values_list(
        "item_id",
        "perturbation_id",
        "aspect__slug",
        "metric__slug",
        "criterion_name",
        "item__dataset__name",
        "source",
        "rater",
        "score",
    )
    groups: dict[tuple[str, str, str], Texts] = defaultdict(lambda: defaultdict(dict))
    for item, pert, aspect, metric, name, dataset, source, rater, score in rows:
        criterion = aspect or metric or name.lower()
        for grouping, group in (("all", "pooled"), ("dataset", dataset), ("source", source)):
            groups[(criterion, grouping, group or NO_SOURCE)][(item, pert)][rater] = score
    table_rows = _rows(groups)
    return Section(
        "Imported human ratings",
        "Ordinal Krippendorff's alpha among the raters of the imported ratings, with a "
        "bootstrap 95% interval over texts, and percent agreement (exact score match among "
        "rater pairs), per criterion: pooled, per dataset and per source." + _missing(table_rows)
        if table_rows
        else "This study's datasets have no imported human ratings.",
        tables=[Table("imported_agreement", COLUMNS, table_rows, N_WORDS)] if table_rows else [],
    )


def collected_section(study: Study) -> Section:
    """The same figures for the ratings collected in the study (direct assessment)."""
    rows = analysed(Assessment, study).values_list(
        "unit__item_id",
        "unit__perturbation_id",
        "unit__criterion__aspect__slug",
        "unit__item__dataset__name",
        "annotator__username",
        "score",
    )
    groups: dict[tuple[str, str, str], Texts] = defaultdict(lambda: defaultdict(dict))
    for item, pert, criterion, dataset, rater, score in rows:
        for grouping, group in (("all", "pooled"), ("dataset", dataset)):
            groups[(criterion, grouping, group)][(item, pert)][rater] = float(score)
    table_rows = _rows(groups)
    return Section(
        "Human ratings collected in this study",
        "Direct assessment by the study's annotators: ordinal alpha with its bootstrap 95% "
        "interval over texts, percent agreement and N, per criterion (aspect), pooled and per "
        "dataset, as for the imported ratings." + _missing(table_rows)
        if table_rows
        else "This study has collected no ratings (direct assessment) yet.",
        tables=[Table("collected_agreement", COLUMNS, table_rows, N_WORDS)] if table_rows else [],
    )


def _missing(table_rows: list[list[object]]) -> str:
    """The pooled rows without a figure, in words (per dataset or source would repeat)."""
    return no_figure_text([(str(r[0]), r[3:]) for r in table_rows if r[1] == "all"])


def _rows(groups: dict[tuple[str, str, str], Texts]) -> list[list[object]]:
    order = {"all": 0, "dataset": 1, "source": 2}
    return [
        [*key, *agreement_cells(texts_matrix(groups[key]))]
        for key in sorted(groups, key=lambda k: (k[0], order[k[1]], k[2]))
    ]
