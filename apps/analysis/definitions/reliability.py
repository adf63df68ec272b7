"""The figures of the judge reliability report and of the prompting and sentiment sections
of the judge vs human report that ``judges`` does not define already (docs/analysis.md)."""

from __future__ import annotations

from apps.analysis.definitions.base import Definition, register
from apps.analysis.definitions.judges import D_INTERVAL, SHARE_OVER_TEXTS, TEXTS

register(
    Definition(
        "wilcoxon_p",
        "One-sided Wilcoxon p (originals scored higher)",
        "lower",
        "The one-sided Wilcoxon signed-rank test, on one kind and one criterion or metric, "
        "that the originals' scores exceed their perturbed texts' (all-zero differences give "
        "1); the discernment of the kind combines these over its metrics.",
        "p-value",
        "the kind's perturbed texts scored both ways on this criterion or metric",
        "none: a p-value (n pairs give at best 0.5^n)",
        terms=("D",),
    ),
    Definition(
        "fbi_rate",
        "Rate (a failure or a success, as the measure says)",
        "neither",
        "Per perturbed text, the share of its (criterion) scores or judgements that the "
        "measure counts; the rate is the mean over texts. Failures (kinds that should lower "
        "the score): lower is better; successes (score-invariant kinds): higher is better.",
        "share of texts",
        TEXTS,
        SHARE_OVER_TEXTS,
        terms=("FBI", "score-invariant"),
    ),
    Definition(
        "aspect_r",
        "Pearson r between the two aspects' scores",
        "neither",
        "Pearson correlation of the scores given on two aspects, over the texts scored on "
        "both: high for the judge but not for people means the judge confuses the aspects.",
        "correlation (−1 to 1)",
        "texts scored on both aspects",
        "Fisher z 95% interval: tanh(atanh(r) ± 1.96 / √(n − 3)); none below 4 texts",
    ),
    Definition(
        "mean_delta",
        "Mean score drop (original − perturbed) of the cells",
        "neither",
        "The mean over the cells (kind × criterion) of one class and description type of each "
        "cell's mean over its items of original minus perturbed score: S_T cells should be "
        "clearly positive, S_F cells near 0.",
        "score points on the judge's scale",
        "items (the cells' items pooled)",
        "bootstrap over the items (2000 resamples, seeded), percentile; every cell recomputed",
        terms=("S_T", "S_F"),
    ),
    Definition(
        "mean_polarity",
        "Mean sentiment polarity of the replies (−1 negative to 1 positive)",
        "neither",
        "TextBlob's polarity of each parsed reply of the judge, averaged over the replies; "
        "unparsed replies are left out.",
        "polarity (−1 to 1)",
        "texts judged; each text counts once in the interval, with all its replies",
        "cluster bootstrap over the texts (2000 resamples, seeded), percentile",
    ),
    Definition(
        "p_published",
        "Combined p as published (DHP: 1 / Σ 1/p)",
        "lower",
        "The DHP paper's combination of a kind's per-metric Wilcoxon p-values, 1 / Σ_j 1/p_j: "
        "M times smaller than the harmonic mean p for M metrics, so it overstates "
        "significance; kept to compare with the paper.",
        "p-value (not calibrated)",
        "the kind's perturbed texts scored both ways (n) over M metrics",
        "none: a p-value",
        terms=("DHP",),
    ),
    Definition(
        "D_published",
        "Discernment D as published (from 1 / Σ 1/p)",
        "higher",
        "log base 0.05 of the kind's p as published; a judge that never moves its score gets "
        "D > 0 with several metrics.",
        "D",
        "the kind's perturbed texts scored both ways (n) over M metrics",
        D_INTERVAL,
        terms=("D", "DHP"),
    ),
    Definition(
        "D_EW_published",
        "Discernment D as published, metrics weighed by experts",
        "higher",
        "log base 0.05 of 1 / Σ_j (EW_j / p_j), EW_j the experts' vote shares.",
        "D",
        "the kind's perturbed texts scored both ways (n) over the voted-for metrics",
        D_INTERVAL,
        terms=("D_EW", "DHP"),
    ),
    section="The judge reliability report's own columns",
)

#: Column names that are not figures, in words (for ``formatting.column_label``).
LABELS = {
    "units": "Units (scores or judgements behind the texts)",
    "other_aspect": "Other aspect",
    "knowledge_run": "Run without the cue (knowledge prompt)",
    "misleading_run": "Run with the misleading cue",
    "replies": "Replies",
    "M": "M (metrics combined)",
    "score_invariant": "Score-invariant kind",
    "text": "Text",
    "items": "Items",
    "strategy": "Strategy",
    "techniques": "Prompting techniques",
}
