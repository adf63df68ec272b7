"""Imported human ratings shaped per text, for the human side of aspect confusion (§1), and
the correlation between aspects as a table and a heatmap that carry N and an interval."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np
from django.db.models import Avg

from apps.analysis.definitions.human import FISHER
from apps.analysis.models import HumanRating
from apps.analysis.reports import figures
from apps.analysis.reports.base import Figure, Table, rounded
from apps.analysis.stats.agreement import correlation_square, pairwise_correlations

Unit = tuple[int, int | None]


def human_aspect_scores(item_ids: list[int]) -> dict[tuple[int, int | None], dict[str, float]]:
    """(item, perturbation or None) → {aspect or criterion name: mean over raters}."""
    out: dict[tuple[int, int | None], dict[str, float]] = defaultdict(dict)
    rows = (
        HumanRating.objects.filter(item_id__in=item_ids)
        .values_list("item_id", "perturbation_id", "aspect__slug", "criterion_name")
        .annotate(mean=Avg("score"))
        .order_by()
    )
    for item, pert, aspect, name, mean in rows:
        out[(item, pert)][aspect or name.lower()] = mean
    return out


def _matrix(texts: Mapping[Unit, Mapping[str, float]], aspects: Sequence[str]) -> np.ndarray:
    return np.array(
        [[scores.get(a, np.nan) for a in aspects] for scores in texts.values()], dtype=float
    ).reshape(len(texts), len(aspects))


def aspect_correlation_table(
    name: str, texts: Mapping[Unit, Mapping[str, float]], aspects: Sequence[str], whose: str
) -> Table:
    """One row per pair of aspects: Pearson r of ``whose`` scores (e.g. "the humans' mean
    ratings") over the texts scored on both, its Fisher 95% interval and N."""
    pairs = pairwise_correlations(_matrix(texts, aspects))
    rows = [
        [aspects[i], aspects[j], rounded(r.value), rounded(r.ci_low), rounded(r.ci_high), r.n]
        for (i, j), r in pairs.items()
    ]
    return Table(
        f"correlation_{name}",
        ["aspect", "other_aspect", "aspect_r", "ci_low", "ci_high", "n_texts"],
        rows,
        f"Pearson r between {whose} on two aspects, over the texts scored on both. {FISHER}. "
        "N: those texts.",
    )


def aspect_correlation_figure(
    name: str,
    title: str,
    texts: Mapping[Unit, Mapping[str, float]],
    aspects: Sequence[str],
    whose: str,
) -> Figure:
    """The same correlations as a heatmap on the fixed [-1, 1] scale, N in each cell."""
    matrix = _matrix(texts, aspects)
    corr, counts = correlation_square(pairwise_correlations(matrix), matrix)
    return figures.heatmap(
        f"correlation_{name}",
        title,
        corr,
        list(aspects),
        list(aspects),
        scale="correlation",
        counts=counts,
        caption=f"A cell is Pearson r between {whose} on two aspects over the texts scored on "
        "both; N: those texts (in the cell when cells differ). The table gives each r's 95% "
        "interval (Fisher z).",
    )
