"""The figures of best-worst scaling (SPEC §10; docs/figures.md): the counting score of each
text and the split-half reliability of those scores (the `human-agreement` report), and a judge's
rank correlation with them (`judge-vs-human`).

``LABELS`` names their tables' plain columns in words.
"""

from __future__ import annotations

from apps.analysis.definitions.base import Definition, register

SECTION = "Best-worst scaling: the human agreement and judge vs human reports"
RELIABILITY_POPULATION = (
    "texts shown in at least one best-worst answer under the criterion; the table also counts "
    "the answers, the annotators, and the fewest texts scored in both halves of a split"
)
RELIABILITY_INTERVAL = (
    "percentile bootstrap 95% interval: each random split also draws the texts scored in both "
    "halves with replacement (20 draws per split that counts, seeded), so it carries the "
    "split and the sampling of texts; beside it, the 2.5th and 97.5th percentiles of the "
    "per-split value (how much the figure hangs on the split, not sampling error)"
)
RANK_POPULATION = (
    "texts with a counting score under the criterion that the judge scored under a criterion "
    "of the same aspect (mean over samples)"
)

register(
    Definition(
        "counting_score",
        "Counting score (best − worst) / appearances",
        "neither",
        "For one text under one criterion: the times people picked it best, less the times "
        "they picked it worst, over the times it was shown (Orme 2009; Kiritchenko & Mohammad "
        "2016). From −1 (always worst) to 1 (always best); ties keep the order in which the "
        "texts were first shown.",
        "score (−1 to 1)",
        "the text's appearances: best-worst answers whose tuple showed it",
        "none for a single text: the split-half reliability tells how far the scores can be "
        "trusted",
    ),
    Definition(
        "split_half_reliability",
        "Split-half reliability (mean Spearman rho between halves)",
        "higher",
        "The answers are split at random into two halves (each tuple's answers divided between "
        "them), each half gives counting scores, and Spearman's rho compares the two over the "
        "texts scored in both; the mean over 100 seeded splits (Kiritchenko & Mohammad 2017). "
        "A split with fewer than 3 texts in both halves, or where a half's scores never vary, "
        "is left out (counted); with none left, no figure and the reason.",
        "rho (−1 to 1)",
        RELIABILITY_POPULATION,
        RELIABILITY_INTERVAL,
    ),
    Definition(
        "split_half_spearman_brown",
        "Split-half reliability, Spearman-Brown corrected",
        "higher",
        "2 rho / (1 + rho) of the split-half reliability rho: the reliability expected of "
        "scores from all the answers rather than half of them.",
        "rho (−1 to 1)",
        RELIABILITY_POPULATION,
        "the split-half reliability's intervals, each bound corrected the same way (the "
        "correction is monotone)",
    ),
    Definition(
        "judge_bws_spearman",
        "Spearman rho, judge vs counting scores",
        "higher",
        "Spearman's rank correlation (average ranks for ties) between the judge's score of each "
        "text and its counting score: 1 when the judge orders the texts as people's best and "
        "worst picks do. Undefined below 3 texts or when either side never varies.",
        "rho (−1 to 1)",
        RANK_POPULATION,
        "percentile bootstrap 95% interval over the texts (resampled in pairs, seeded; SPEC "
        "§10), with the Fisher z interval beside it (Bonett & Wright's standard error "
        "√((1 + rho²/2) / (n − 3)); none below 4 texts)",
    ),
    Definition(
        "judge_bws_kendall",
        "Kendall tau-b, judge vs counting scores",
        "higher",
        "Kendall's tau-b between the judge's score of each text and its counting score: "
        "without ties, the share of text pairs both order alike less the share they order "
        "oppositely; tau-b corrects for ties. Undefined below 3 texts or when either side "
        "never varies.",
        "tau (−1 to 1)",
        RANK_POPULATION,
        "Fisher z 95% interval with Fieller's standard error √(0.437 / (n − 4)); none below 5 "
        "texts",
    ),
    section=SECTION,
)

#: Plain columns of the best-worst tables, in words.
LABELS = {
    "appearances": "Appearances (N)",
    "best": "Picked best",
    "worst": "Picked worst",
    "n_answers": "Answers",
    "n_annotators": "Annotators",
    "n_texts_in_both": "Fewest texts in both halves",
    "splits": "Splits",
    "splits_left_out": "Splits left out",
    "split_low": "Over splits: 2.5th percentile",
    "split_high": "Over splits: 97.5th percentile",
    "sb_split_low": "Corrected, over splits: 2.5th percentile",
    "sb_split_high": "Corrected, over splits: 97.5th percentile",
    "fisher_ci_low": "Rho: Fisher z 95% interval, low",
    "fisher_ci_high": "Rho: Fisher z 95% interval, high",
}
