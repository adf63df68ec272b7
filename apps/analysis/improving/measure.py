"""What a candidate's run shows on one half of the texts: its blind spots (kinds whose
errors it is proven to miss: the card's verdict on detection, kind by kind), its share of
errors missed, and its agreement with people where the study has ratings. Pure reads: the
statistics are the card's own (``cards.units``, ``cards.verdicts``, ``stats``)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Hashable
from typing import Any

import numpy as np

from apps.analysis.cards.lines import summarise
from apps.analysis.cards.units import BY_KEY, Units, expected_to_lower
from apps.analysis.cards.verdicts import decide, share_power
from apps.analysis.reports.base import rounded
from apps.analysis.reports.judge_data import RunScores, run_scores
from apps.analysis.reports.judge_vs_human import judge_means, rating_sources
from apps.analysis.selectors import verdict_thresholds
from apps.analysis.stats import fbi
from apps.analysis.stats.agreement import alpha_with_ci
from apps.analysis.stats.intervals import Estimate
from apps.judging.models import JudgeRun

DETECTION = BY_KEY["detection_failure"]


def failures_by_kind(data: RunScores, items: Collection[int]) -> dict[str, Units]:
    """Kind name → (perturbed text, criterion) → 1 when the text was not scored lower than its
    original (kinds that should lower the score, on ``items`` only)."""
    lowers = expected_to_lower(data)
    out: dict[str, Units] = defaultdict(dict)
    for (item, perturbation, dim), (kind, score) in data.perturbed.items():
        info = data.kinds[kind]
        if item not in items or info.score_invariant or not lowers(kind, dim):
            continue
        if (item, dim) in data.original:
            (failed,) = fbi.single_answer_failures([data.original[(item, dim)]], [score])
            out[info.name][(perturbation, dim)] = float(failed)
    return dict(out)


def figure(estimate: Estimate) -> dict[str, Any]:
    """An estimate as stored: value, interval, N (units) and texts."""
    return {
        "value": rounded(estimate.value),
        "ci_low": rounded(estimate.ci_low),
        "ci_high": rounded(estimate.ci_high),
        "n": estimate.n,
        "texts": estimate.clusters or estimate.n,
    }


def measure(run: JudgeRun, items: Collection[int], threshold: float) -> dict[str, Any]:
    """The run on ``items``: per kind, its share of errors missed with the verdict; the kinds
    it misses (blind spots); all kinds together; agreement with people."""
    data = run_scores(run)
    by_kind = failures_by_kind(data, items)
    kinds, blind = {}, []
    for name, units in sorted(by_kind.items()):
        estimate = summarise(DETECTION, units)
        definition = DETECTION.definition
        strength = share_power(definition, estimate.effective_n, threshold)
        word, why = decide(definition, estimate, threshold, strength)
        kinds[name] = figure(estimate) | {"verdict": word, "why": why}
        if word == definition.bad:
            blind.append(name)
    every = {k: v for units in by_kind.values() for k, v in units.items()}
    return {
        "kinds": kinds,
        "blind_spots": blind,
        "missed": figure(summarise(DETECTION, every)) if every else None,
        "agreement": agreement(run, data, items),
    }


def agreement(run: JudgeRun, data: RunScores, items: Collection[int]) -> dict[str, Any] | None:
    """Krippendorff's alpha with the judge as one more rater beside the people (ordinal),
    over the rated texts of ``items``, every criterion and source of ratings pooled; None
    when fewer than two such texts were rated."""
    if run.study is None:
        return None
    means = judge_means(run, data)
    ratings = {
        (label, unit, criterion): by_rater
        for label, source in rating_sources(run.study)
        for criterion, texts in source.items()
        for unit, by_rater in texts.items()
        if by_rater and (unit, criterion) in means and _item(unit) in items
    }
    keys = sorted(ratings, key=str)
    if len(keys) < 2:
        return None
    raters = sorted({rater for key in keys for rater in ratings[key]})
    matrix = [[ratings[key].get(rater, math.nan) for key in keys] for rater in raters]
    matrix.append([means[(unit, criterion)] for _, unit, criterion in keys])
    result = alpha_with_ci(np.array(matrix, dtype=float), "ordinal")
    return {
        "value": rounded(result.value),
        "ci_low": rounded(result.ci_low),
        "ci_high": rounded(result.ci_high),
        "n": result.n_units,
        "texts": len({unit for _, unit, _ in keys}),
    }


def _item(unit: Hashable) -> Hashable:
    return unit[0] if isinstance(unit, tuple) else unit


def threshold_of(run: JudgeRun) -> float:
    return verdict_thresholds(run.study)["detection_failure"]
