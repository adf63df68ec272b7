"""Imported human ratings shaped per text, for the human side of aspect confusion (§1)."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Avg

from apps.analysis.models import HumanRating


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
