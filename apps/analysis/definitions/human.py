"""The figures of the human side of the reports (docs/figures.md): agreement among people,
between a judge and people, people's verdicts on perturbations and experts' votes; shown by
the `human-agreement`, `judge-vs-human` and `expert-weights` reports and the rater checks.

``LABELS`` names the plain (non-figure) columns of those reports in words.
"""

from __future__ import annotations

from apps.analysis.definitions.base import Definition, register

ALPHA_INTERVAL = (
    "percentile bootstrap 95% interval resampling the units rated twice or more (500 "
    "resamples, seeded; raters fixed)"
)
FISHER = "Fisher z 95% interval: tanh(atanh r ± 1.96 / √(n − 3)); none below 4 texts"
ORDER_STATISTICS = (
    "distribution-free 95% interval between two order statistics (binomial); none below 6 values"
)
OVER_TEXTS = (
    "Wilson 95% interval counting each perturbed text once (several people's answers on one "
    "text are not independent evidence)"
)

register(
    # -- agreement among people ------------------------------------------------------------------
    Definition(
        "human_alpha",
        "Krippendorff's alpha among people",
        "higher",
        "1 − observed disagreement / disagreement expected by chance, over the units two "
        "people or more rated; ordinal distances for scores, nominal for verdicts, choices "
        "and votes. 1: perfect agreement, 0: chance, below 0: systematic disagreement. "
        "Undefined when every rating is the same value.",
        "alpha (−1 to 1)",
        "units (texts, perturbed texts, text × criterion pairs, kinds) rated by two people or "
        "more; the table also counts every rating, unit and rater there is",
        ALPHA_INTERVAL,
        terms=("Krippendorff's alpha",),
    ),
    Definition(
        "percent_agreement",
        "Percent agreement",
        "higher",
        "Per unit, the share of pairs of its raters who gave exactly the same answer; "
        "averaged over units, each unit weighing the same. Not corrected for chance.",
        "share of rater pairs",
        "units rated by two people or more",
        "percentile bootstrap 95% interval over those units (2000 resamples, seeded)",
    ),
    Definition(
        "cohen_kappa",
        "Cohen's kappa",
        "higher",
        "(observed share of identical answers − the share expected from each person's own "
        "mix of answers) / (1 − that expected share); only for exactly two people.",
        "kappa (−1 to 1)",
        "units both people answered",
        "percentile bootstrap 95% interval over those units (500 resamples, seeded)",
    ),
    # -- a judge against people --------------------------------------------------------------------
    Definition(
        "judge_human_alpha",
        "Krippendorff's alpha, judge as one more rater",
        "higher",
        "Alpha over the human ratings plus the judge's mean score of each text as one more "
        "rater (ordinal; interval on 0-100 scales), as Chaudhary et al. compute 'three human "
        "annotators and one LLM output'.",
        "alpha (−1 to 1)",
        "texts the judge scored and at least one person rated; raters: those people plus the judge",
        ALPHA_INTERVAL.replace("units rated twice or more", "texts"),
        terms=("Krippendorff's alpha",),
    ),
    Definition(
        "judge_human_r",
        "Pearson r, judge vs people's mean",
        "higher",
        "Pearson correlation between the judge's score of each text under one criterion "
        "description and the mean of the people's ratings of that text on the aspect "
        "(Hu et al. Tables 1 and 5).",
        "r (−1 to 1)",
        "texts scored by the judge under the description and rated by people",
        FISHER,
    ),
    Definition(
        "r_between_types",
        "Pearson r between description types",
        "neither",
        "Pearson correlation between the judge's scores of the same (text, aspect) under two "
        "description types of the criterion (Hu et al. Fig. 8): high means the wording of "
        "the description matters little.",
        "r (−1 to 1)",
        "(text, aspect) units scored under both description types",
        FISHER,
    ),
    # -- people's verdicts on perturbations ---------------------------------------------------
    Definition(
        "mean_consistency",
        "Mean annotation consistency",
        "higher",
        "Per (perturbed text, criterion) pair: the count of the most chosen of A/B/C divided "
        "by all its annotations (D, uncertain, counts in the denominator only); averaged "
        "over pairs. {A, A, C, D} → 2/4 = 0.5.",
        "share of annotations",
        "pairs (a perturbed text under one criterion) with at least one annotation",
        "cluster bootstrap 95% interval resampling the perturbed texts with all their pairs "
        "(2000 resamples, seeded), percentile",
    ),
    Definition(
        "match_rate_vote_all",
        "Match rate (all votes pooled)",
        "higher",
        "Share of (kind, aspect) cells whose human verdict, the plurality of all their "
        "annotations ('worse' = affected; 'same' or 'better' = not affected; 'uncertain' "
        "abstains), equals the impact the aspect tree expects. An undecided cell (a tie) "
        "counts as a miss.",
        "share of cells",
        "(kind, aspect) cells with at least one annotation, for one description type",
        "Wilson 95% interval over the cells",
    ),
    Definition(
        "match_rate_vote_vote",
        "Match rate (majority of per-text votes)",
        "higher",
        "As the match rate with all votes pooled, but a cell's verdict is the plurality of "
        "its perturbed texts' own verdicts (each the plurality of that text's annotators).",
        "share of cells",
        "(kind, aspect) cells with at least one annotation, for one description type",
        "Wilson 95% interval over the cells",
    ),
    Definition(
        "affected_share",
        "Share of votes saying worse",
        "neither",
        "In one (kind, aspect) cell: the votes 'worse' among the votes cast ('worse', "
        "'same', 'better'; 'uncertain' does not vote). Above 0.5 the pooled verdict is "
        "affected, below it not affected, at 0.5 undecided.",
        "share of votes",
        "votes on the cell's perturbed texts; the interval counts the texts",
        OVER_TEXTS,
    ),
    Definition(
        "valid_share",
        "Share valid",
        "neither",
        "Verdicts 'valid' (the perturbation does what its kind says and deserves a lower "
        "score) among every verdict on the kind's perturbed texts.",
        "share of verdicts",
        "vetting verdicts on the kind's perturbed texts; the interval counts the texts",
        OVER_TEXTS,
    ),
    Definition(
        "control_accuracy",
        "Accuracy on control items",
        "higher",
        "Share of an annotator's answers to control items (items with a known answer, mixed "
        "in unannounced) that match the known answer.",
        "share of answers",
        "the annotator's answers to control items",
        "Wilson 95% interval over the answers",
    ),
    # -- time on task (what a fair pay rate is set from) ----------------------------------------
    Definition(
        "item_seconds",
        "Median active time per unit",
        "neither",
        "Per unit a person answered, the seconds their page was visible with a key, click, "
        "touch or scroll in the last minute, summed over every save of their answer (a hidden "
        "tab or a minute without input does not count); the median over the units.",
        "seconds",
        "units answered with a timed save (control items included: they are work done); "
        "answers saved without a time (the API without active_seconds) are left out",
        ORDER_STATISTICS,
    ),
    Definition(
        "person_seconds",
        "Median active time per person",
        "neither",
        "Per person, the active seconds of all their timed units added up (as above); the "
        "median over the people.",
        "seconds",
        "people with at least one timed unit in the study",
        ORDER_STATISTICS,
    ),
    # -- experts' votes ------------------------------------------------------------------------
    Definition(
        "weight",
        "Expert weight (vote share)",
        "neither",
        "For one perturbation kind of a task: the experts who chose this metric as the most "
        "affected, divided by the experts who voted on the kind (the EW of D^EW).",
        "share of experts",
        "experts who voted on the kind",
        "Wilson 95% interval over those experts",
        terms=("D_EW",),
    ),
)

#: Plain columns of the human reports, in words (not figures: counts, names, notes).
LABELS = {
    "annotator": "Annotator",
    "excluded": "Left out of the reports",
    "experts": "Experts (N)",
    "flagged": "Below the threshold",
    "group": "Group",
    "human_verdict_vote_all": "Human verdict (all votes pooled)",
    "humans": "Human ratings",
    "invalid": "Invalid",
    "n_humans": "Human raters",
    "n_ratings": "Ratings",
    "n_raters": "Raters",
    "n_texts": "Texts",
    "n_texts_compared": "Texts rated twice or more",
    "n_units": "Units",
    "n_units_compared": "Units rated twice or more",
    "not-relevant": "Not relevant",
    "not-sure": "Not sure",
    "no_figure_because": "Why no figure",
    "other_aspect": "Other aspect",
    "other_type": "Other description type",
    "right": "Right",
    "score-invariant": "Score-invariant",
    "texts": "Perturbed texts",
    "valid": "Valid",
    "warning": "Warning",
    "who": "Who",
    "detail": "Detail",
}
