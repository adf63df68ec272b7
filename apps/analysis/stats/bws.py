"""Best-worst scaling (BWS): scores by counting, split-half reliability, judges against the
scores (issue 38).

An **annotation** is one person's answer on one tuple: the texts shown (a tuple, usually of
4, from :func:`apps.annotation.models.best_worst.bws_tuples`), the one they picked as best, the one
they picked as worst, and who they are: a :class:`BwsAnnotation` or any ``(shown, best,
worst, annotator)`` tuple. The annotator is carried for callers; nothing here weighs by it.

- **Score** of a text (Orme 2009; Kiritchenko & Mohammad 2016): ``(best - worst) /
  appearances``, the times it was picked best less the times picked worst, over the times it
  was shown; from -1 (always worst) to 1 (always best). Texts never shown have no score.
  N of a score: its appearances. A single text's score gets no interval here: the figures
  that carry one are the reliability of all the scores and a judge's correlation with them.
- **Split-half reliability** (Kiritchenko & Mohammad 2017): see
  :func:`split_half_reliability`.
- **A judge against BWS**: Spearman's rho and Kendall's tau-b between the judge's scores and
  the BWS scores over the texts both have, with Fisher z intervals
  (:func:`apps.analysis.stats.agreement.spearman_with_ci`, ``kendall_with_ci``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy import stats

from apps.analysis.stats.agreement import kendall_with_ci, spearman_with_ci
from apps.analysis.stats.intervals import CONFIDENCE, RESAMPLES, SEED, Estimate

SPLITS = 100  # Kiritchenko & Mohammad average over 100 random splits

NO_ANNOTATIONS = "no annotations"
TOO_FEW = "fewer than 3 texts scored in both halves"
CONSTANT = "a half's scores never vary"


class BwsAnnotation(NamedTuple):
    shown: Sequence[Hashable]
    best: Hashable
    worst: Hashable
    annotator: Hashable


#: What the functions take: BwsAnnotation or any (shown, best, worst, annotator) tuple.
AnnotationRow = tuple[Sequence[Hashable], Hashable, Hashable, Hashable]


@dataclass(frozen=True)
class BwsScore:
    """A text's counts; ``score = (best - worst) / appearances``."""

    best: int
    worst: int
    appearances: int

    @property
    def score(self) -> float:
        return (self.best - self.worst) / self.appearances


def checked(annotations: Sequence[AnnotationRow]) -> list[BwsAnnotation]:
    """The annotations as :class:`BwsAnnotation`; ``ValueError`` naming the first bad one
    (its index): a text shown twice, a best or worst not shown, best and worst the same."""
    rows = []
    for number, row in enumerate(annotations):
        shown, best, worst, annotator = row
        seen = Counter(shown)
        twice = [text for text, count in seen.items() if count > 1]
        if twice:
            raise ValueError(f"annotation {number} shows {twice[0]!r} twice")
        for role, text in (("best", best), ("worst", worst)):
            if text not in seen:
                raise ValueError(f"annotation {number}: {role} {text!r} is not among those shown")
        if best == worst:
            raise ValueError(f"annotation {number}: best and worst are the same text {best!r}")
        rows.append(BwsAnnotation(tuple(shown), best, worst, annotator))
    return rows


def bws_scores(annotations: Sequence[AnnotationRow]) -> dict[Hashable, BwsScore]:
    """Every shown text's :class:`BwsScore`, over all the annotations (texts in the order
    first shown)."""
    shown: Counter[Hashable] = Counter()
    best: Counter[Hashable] = Counter()
    worst: Counter[Hashable] = Counter()
    for row in checked(annotations):
        shown.update(row.shown)
        best[row.best] += 1
        worst[row.worst] += 1
    return {text: BwsScore(best[text], worst[text], n) for text, n in shown.items()}


def spearman_brown(r: float) -> float:
    """The Spearman-Brown prophecy for data twice as large: ``2r / (1 + r)`` (NaN at -1)."""
    return 2 * r / (1 + r) if r > -1 else math.nan


@dataclass(frozen=True)
class SplitHalfReliability:
    """Split-half reliability of BWS scores; see :func:`split_half_reliability`."""

    #: Mean over the splits of Spearman's rho between the two halves' scores.
    value: float
    #: ``2 value / (1 + value)``: the reliability of scores from all the annotations.
    spearman_brown: float
    #: Percentile interval of the per-split rho: how much the figure hangs on the split.
    split_low: float
    split_high: float
    #: Percentile interval over splits and texts drawn with replacement: sampling uncertainty.
    ci_low: float
    ci_high: float
    n_texts: int  # texts shown at least once
    n_compared: int  # fewest texts scored in both halves over the splits that count
    n_annotations: int
    splits: int
    undefined_splits: int  # splits left out: fewer than 3 texts in both halves, or constant
    confidence: float
    reason: str = ""  # why the value is NaN ("" when it is not)
    per_split: tuple[float, ...] = field(default=(), repr=False)

    @property
    def spearman_brown_split(self) -> tuple[float, float]:
        """The split interval, Spearman-Brown corrected (the correction is monotone)."""
        return spearman_brown(self.split_low), spearman_brown(self.split_high)

    @property
    def spearman_brown_ci(self) -> tuple[float, float]:
        """The sampling interval, Spearman-Brown corrected."""
        return spearman_brown(self.ci_low), spearman_brown(self.ci_high)


def split_half_reliability(
    annotations: Sequence[AnnotationRow],
    *,
    splits: int = SPLITS,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
) -> SplitHalfReliability:
    """Split-half reliability of BWS scores (Kiritchenko & Mohammad 2017).

    Each split deals the annotations into two halves: the tuples (a tuple being the set of
    texts shown) are taken in random order and each tuple's annotations in random order, and
    the annotations go to the halves alternately across the whole sequence. So a tuple
    annotated by several people has its annotations divided between the halves (one more in one
    half when odd), and when each tuple is annotated once the tuples themselves are divided;
    the halves never differ by more than one annotation. Each half gives BWS scores; rho is
    Spearman's correlation of the two over the texts scored in both. ``value`` is the mean
    over ``splits`` splits, ``spearman_brown`` its correction to the full data.

    Two intervals at ``confidence``, both percentile:

    - ``split_low``/``split_high``, of the per-split rho: the usual report of a split-half
      figure averaged over random splits (e.g. Parsons, Kruijt & Fox 2019). It shows how much
      the figure hangs on the split, not the sampling error: more texts or annotators do not
      have to narrow it.
    - ``ci_low``/``ci_high``: each split also draws the compared texts with replacement
      (``resamples`` draws in all, spread over the splits) and rho is recomputed on each draw,
      so the interval carries both the split and the sampling of texts, as a bootstrap of a
      correlation over its units does (Efron & Tibshirani 1993). Texts that shared a tuple
      are not quite independent, which this ignores.

    Degenerate cases: a split with fewer than 3 texts scored in both halves, or where a half's
    scores never vary, has no rho; it is left out and counted in ``undefined_splits``. When
    no split has one, every figure is NaN and ``reason`` says why.

    Cost: about 4 s for 20,000 annotations of 10,000 texts with the defaults, mostly the
    text resamples (``resamples`` sets how many).
    """
    if splits < 1:
        raise ValueError(f"split-half reliability needs at least one split, not {splits}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    rows = checked(annotations)
    index: dict[Hashable, int] = {}
    for row in rows:
        for text in row.shown:
            index.setdefault(text, len(index))
    tuples: dict[frozenset[Hashable], int] = {}
    group = np.array([tuples.setdefault(frozenset(r.shown), len(tuples)) for r in rows], int)
    data = _Annotations(
        slots=np.array([index[t] for r in rows for t in r.shown], dtype=np.int64),
        owner=np.repeat(np.arange(len(rows)), [len(r.shown) for r in rows]),
        best=np.array([index[r.best] for r in rows], dtype=np.int64),
        worst=np.array([index[r.worst] for r in rows], dtype=np.int64),
        texts=len(index),
    )
    rng = np.random.default_rng(seed)
    draws = max(1, math.ceil(resamples / splits))
    values: list[float] = []
    replicates: list[np.ndarray] = []
    compared: list[int] = []
    reasons: Counter[str] = Counter()
    for _ in range(splits if rows else 0):
        order = np.lexsort((rng.random(len(rows)), rng.permutation(len(tuples))[group]))
        first = np.zeros(len(rows), dtype=bool)
        first[order[::2]] = True
        xs, ys = data.scores(first), data.scores(~first)
        both = ~(np.isnan(xs) | np.isnan(ys))
        xs, ys = xs[both], ys[both]
        if xs.size < 3 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
            reasons[TOO_FEW if xs.size < 3 else CONSTANT] += 1
            continue
        values.append(float(stats.spearmanr(xs, ys).statistic))
        compared.append(int(xs.size))
        picks = rng.integers(0, xs.size, size=(draws, xs.size))
        replicates.append(_row_spearman(xs[picks], ys[picks]))
    nan = math.nan
    if not values:
        reason = reasons.most_common(1)[0][0] if reasons else NO_ANNOTATIONS
        return SplitHalfReliability(
            *(nan,) * 6, len(index), 0, len(rows), splits, splits, confidence, reason
        )
    tail = (1 - confidence) / 2 * 100
    split_low, split_high = np.percentile(values, [tail, 100 - tail])
    pooled = np.concatenate(replicates)
    pooled = pooled[~np.isnan(pooled)]
    ci_low, ci_high = np.percentile(pooled, [tail, 100 - tail]) if pooled.size else (nan, nan)
    mean = float(np.mean(values))
    return SplitHalfReliability(
        value=mean,
        spearman_brown=spearman_brown(mean),
        split_low=float(split_low),
        split_high=float(split_high),
        ci_low=float(ci_low),
        ci_high=float(ci_high),
        n_texts=len(index),
        n_compared=min(compared),
        n_annotations=len(rows),
        splits=splits,
        undefined_splits=splits - len(values),
        confidence=confidence,
        per_split=tuple(values),
    )


@dataclass(frozen=True)
class _Annotations:
    """Annotations as index arrays: every shown slot's text and annotation, best, worst."""

    slots: np.ndarray
    owner: np.ndarray
    best: np.ndarray
    worst: np.ndarray
    texts: int

    def scores(self, chosen: np.ndarray) -> np.ndarray:
        """BWS scores from the chosen annotations (a mask); NaN for a text not shown."""
        shown = np.bincount(self.slots[chosen[self.owner]], minlength=self.texts)
        net = np.bincount(self.best[chosen], minlength=self.texts) - np.bincount(
            self.worst[chosen], minlength=self.texts
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(shown > 0, net / shown, np.nan)


def _row_spearman(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row pair (average ranks for ties); NaN where a row is constant."""
    rx = stats.rankdata(xs, axis=1)
    ry = stats.rankdata(ys, axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    norm = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, (rx * ry).sum(axis=1) / norm, np.nan)


@dataclass(frozen=True)
class BwsRankCorrelation:
    """A judge against BWS scores, over the texts both have (N in each estimate).
    ``spearman`` carries SPEC §10's interval, a percentile bootstrap over the texts;
    ``spearman_fisher`` the same rho with its Fisher z interval, beside it."""

    spearman: Estimate
    spearman_fisher: Estimate
    kendall: Estimate


def bws_rank_correlation(
    judge_scores: Mapping[Hashable, float],
    bws: Mapping[Hashable, BwsScore],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> BwsRankCorrelation:
    """Spearman's rho and Kendall's tau-b between a judge's scores and the BWS scores, over
    the texts with a BWS score and a judge score that is not NaN, with N. Rho's interval is a
    seeded percentile bootstrap over the texts (resampled in pairs; resamples whose rho is
    undefined are left out); beside it, and for tau, the Fisher z interval (Bonett & Wright's
    standard error for rho, Fieller's for tau). Undefined (NaN) below three texts or when
    either side never varies."""
    common = [t for t in bws if t in judge_scores and not math.isnan(judge_scores[t])]
    judge = np.array([judge_scores[t] for t in common], dtype=np.float64)
    human = np.array([bws[t].score for t in common], dtype=np.float64)
    fisher = spearman_with_ci(judge, human, confidence)
    low = high = math.nan
    if not math.isnan(fisher.value):
        picks = np.random.default_rng(seed).integers(0, len(common), (resamples, len(common)))
        rhos = _row_spearman(judge[picks], human[picks])
        rhos = rhos[~np.isnan(rhos)]
        if rhos.size:
            tail = (1 - confidence) / 2 * 100
            low, high = (float(v) for v in np.percentile(rhos, [tail, 100 - tail]))
    spearman = Estimate(fisher.value, low, high, fisher.n)
    return BwsRankCorrelation(spearman, fisher, kendall_with_ci(judge, human, confidence))
