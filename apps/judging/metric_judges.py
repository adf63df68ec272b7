"""Classic metric judges (offline): BLEU, chrF and ROUGE-L against the item's original.

The reference is always the original text, so an original judged by a metric judge gets its
self-score, the maximum 100; a perturbation scores lower the more it departs from the
original. Every metric is reported on 0-100: sentence BLEU and chrF as sacrebleu gives them,
ROUGE-L as the F-measure of rouge-score (stemmed) times 100. Scores are rounded to 4 decimals
(sacrebleu's self-BLEU is 100.00000000000004 in floating point).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: sacrebleu and rouge-score pull in nltk and scipy
    from rouge_score import rouge_scorer

SCALE = (0, 100)


@dataclass(frozen=True)
class MetricScore:
    score: float
    detail: str  # the library's own summary, kept as the call's raw response


def _clamped(value: float) -> float:
    return round(min(max(value, 0.0), 100.0), 4)


def bleu(text: str, reference: str) -> MetricScore:
    import sacrebleu

    result = sacrebleu.sentence_bleu(text, [reference])
    return MetricScore(_clamped(result.score), str(result))


def chrf(text: str, reference: str) -> MetricScore:
    import sacrebleu

    result = sacrebleu.sentence_chrf(text, [reference])
    return MetricScore(_clamped(result.score), str(result))


@cache
def _rouge() -> rouge_scorer.RougeScorer:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(text: str, reference: str) -> MetricScore:
    result = _rouge().score(reference, text)["rougeL"]
    detail = f"ROUGE-L P = {result.precision:.4f} R = {result.recall:.4f} F = {result.fmeasure:.4f}"
    return MetricScore(_clamped(100.0 * result.fmeasure), detail)


METRICS: dict[str, Callable[[str, str], MetricScore]] = {
    "bleu": bleu,
    "chrf": chrf,
    "rougeL": rouge_l,
}


def metric_score(metric: str, *, text: str, reference: str) -> MetricScore:
    try:
        return METRICS[metric](text, reference)
    except KeyError:
        raise KeyError(f"unknown metric {metric!r}; known: {sorted(METRICS)}") from None
