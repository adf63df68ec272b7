"""The figures of a judge: the report card's lines, judges side by side and the judge
reliability report's columns (docs/figures.md)."""

from __future__ import annotations

from apps.analysis.definitions.base import Definition, register

TEXTS = "perturbed texts; each text counts once, however many criteria it was scored on"
SHARE_OVER_TEXTS = (
    "Wilson 95% interval over the texts (each text's share counts once, so criteria of one "
    "text do not pass for independent evidence)"
)
CLUSTER_BOOTSTRAP = "cluster bootstrap over source items (2000 resamples, seeded), percentile"
D_INTERVAL = (
    "none: D is a transformed p-value, its own measure of uncertainty; the verdict compares "
    "it with the D a perfect judge would reach on the same number of texts"
)

register(
    # -- detection: does the judge score a worse text lower? ------------------------------------
    Definition(
        "detection_failure",
        "Errors missed: perturbed text not scored lower than its original",
        "lower",
        "Share of perturbed texts (kinds that should lower the score) the judge scored the "
        "same as or higher than their original, on the same criterion (FBI single-answer "
        "failure rate). Only criteria the kind should lower count: on an aspect, the kind's "
        "target aspect and its ancestors (its expected impact); every metric.",
        "share of texts",
        TEXTS,
        SHARE_OVER_TEXTS,
        threshold=0.2,
        good="detects",
        bad="misses",
        perfect=0.0,
        terms=("FBI",),
    ),
    Definition(
        "reference_failure",
        "Errors missed with the original as reference: perturbed text still given the "
        "maximum score",
        "lower",
        "Share of perturbed texts (kinds that should lower the score) that still got the "
        "scale's maximum when the original was shown as the reference answer (FBI "
        "reference-guided failure rate), on the criteria the kind should lower. Needs no "
        "score of the original itself.",
        "share of texts",
        TEXTS,
        SHARE_OVER_TEXTS,
        threshold=0.2,
        good="detects",
        bad="misses",
        perfect=0.0,
        terms=("FBI",),
    ),
    Definition(
        "pairwise_failure",
        "Errors missed side by side: original not preferred in both orders",
        "lower",
        "Share of (original, perturbed) pairs, each judged twice with the order swapped, "
        "where the judge did not prefer the original both times (a tie counts as not "
        "preferring it).",
        "share of pairs",
        "pairs shown in both orders, both verdicts readable; each perturbed text once",
        SHARE_OVER_TEXTS,
        threshold=0.2,
        good="detects",
        bad="misses",
        perfect=0.0,
        terms=("FBI",),
    ),
    Definition(
        "position_flip",
        "Position bias: the preferred text changes when the order is swapped",
        "lower",
        "Share of pairs whose two verdicts (original first, then second) name different texts.",
        "share of pairs",
        "pairs shown in both orders, both verdicts readable; each perturbed text once",
        SHARE_OVER_TEXTS,
        threshold=0.2,
        good="order-stable",
        bad="order-biased",
        perfect=0.0,
    ),
    Definition(
        "invariant_success",
        "Harmless changes: score kept for score-invariant texts",
        "higher",
        "Share of texts of score-invariant kinds (changed, but deserving the same score) the "
        "judge scored exactly as their original.",
        "share of texts",
        "perturbed texts of score-invariant kinds; each text counts once",
        SHARE_OVER_TEXTS,
        threshold=0.8,
        good="keeps the score",
        bad="punishes harmless changes",
        perfect=1.0,
        terms=("score-invariant",),
    ),
    # -- discernment (DHP) ---------------------------------------------------------------------
    Definition(
        "discernment",
        "Discernment D over kinds (their mean; D ≥ 1 is significant at 0.05)",
        "higher",
        "Per kind: a one-sided Wilcoxon signed-rank test per metric that originals score "
        "higher than their perturbed texts, the metrics' p-values combined by Wilson's "
        "harmonic mean p (calibrated), D = log base 0.05 of that p.",
        "D",
        "kinds that should lower the score, each over its perturbed texts",
        D_INTERVAL,
        terms=("D", "DHP"),
    ),
    Definition(
        "D_min",
        "D_min: discernment of the worst kind",
        "higher",
        "The smallest D over the kinds that should lower the score.",
        "D",
        "kinds that should lower the score",
        D_INTERVAL,
        threshold=1.0,
        good="detects",
        bad="misses",
        terms=("D", "DHP"),
    ),
    Definition(
        "D_avg",
        "D_avg: mean discernment, levels weighed equally",
        "higher",
        "The mean D over kinds, each level (character, word, sentence) weighing the same and "
        "the kinds of a level sharing its weight.",
        "D",
        "kinds that should lower the score and have a level",
        D_INTERVAL,
        threshold=1.0,
        good="detects",
        bad="misses",
        terms=("D", "DHP"),
    ),
    Definition(
        "D_EW_min",
        "D_EW_min: the worst kind's discernment, metrics weighed by experts",
        "higher",
        "D_min with each kind's metrics weighed by the experts' votes (undefined without votes).",
        "D",
        "kinds with expert votes",
        D_INTERVAL,
        terms=("D_EW", "DHP"),
    ),
    Definition(
        "D_EW_avg",
        "D_EW_avg: mean discernment, metrics weighed by experts",
        "higher",
        "D_avg with each kind's metrics weighed by the experts' votes (undefined without votes).",
        "D",
        "kinds with expert votes and a level",
        D_INTERVAL,
        terms=("D_EW", "DHP"),
    ),
    Definition(
        "D_level",
        "Mean discernment of one level's kinds (the scope names the level)",
        "higher",
        "The mean D of the kinds of one level (character, word or sentence).",
        "D",
        "the level's kinds that should lower the score",
        "bootstrap over the level's kinds (2000 resamples, seeded), percentile",
        terms=("D",),
    ),
    Definition(
        "D",
        "Discernment D",
        "higher",
        "log base 0.05 of the kind's combined p (default: Wilson's harmonic mean p, "
        "calibrated); D ≥ 1 is significant at 0.05.",
        "D",
        "the kind's perturbed texts scored both ways (n) over M metrics",
        D_INTERVAL,
        terms=("D",),
    ),
    Definition(
        "D_EW",
        "Discernment D, metrics weighed by experts",
        "higher",
        "D with the metrics' p-values weighed by the experts' vote shares.",
        "D",
        "the kind's perturbed texts scored both ways (n) over the voted-for metrics",
        D_INTERVAL,
        terms=("D_EW",),
    ),
    Definition(
        "p",
        "Combined p (harmonic mean, calibrated)",
        "lower",
        "Wilson's weighted harmonic mean of the kind's per-metric Wilcoxon p-values, turned "
        "into a p-value by its Landau tail.",
        "p-value",
        "the kind's perturbed texts scored both ways (n) over M metrics",
        "none: a p-value",
        terms=("HMP",),
    ),
    # -- aspect-targeted deltas (Hu et al.) ------------------------------------------------------
    Definition(
        "delta",
        "Score drop (original − perturbed)",
        "neither",
        "Mean over items of the original's score minus the perturbed text's score, on one "
        "criterion: positive when the judge scored the perturbed text lower. S_T cells "
        "should be clearly positive, S_F cells near 0.",
        "score points on the judge's scale",
        "items whose original and perturbed text were both scored on the criterion",
        "bootstrap over the items (2000 resamples, seeded), percentile",
        terms=("S_T", "S_F"),
    ),
    Definition(
        "s_t_delta",
        "Score drop where the aspect is affected (S_T: original − perturbed)",
        "higher",
        "Mean of original minus perturbed score over the S_T cells (kind × aspect that the "
        "expected impact and the study's people both call affected) and their items.",
        "score points on the judge's scale",
        "S_T cell × item units; the interval counts the items",
        CLUSTER_BOOTSTRAP,
        threshold=0.0,
        good="detects",
        bad="misses",
        terms=("S_T",),
    ),
    Definition(
        "s_f_delta",
        "Score change where no aspect is affected (S_F: |original − perturbed|)",
        "lower",
        "Mean absolute difference of original and perturbed score over the S_F cells (kind "
        "× aspect that the expected impact and the study's people both call not affected).",
        "score points on the judge's scale",
        "S_F cell × item units; the interval counts the items",
        CLUSTER_BOOTSTRAP,
        threshold=0.5,
        good="keeps unaffected aspects",
        bad="punishes unaffected aspects",
        perfect=0.0,
        terms=("S_F",),
    ),
    Definition(
        "aspect_confusion",
        "Aspect confusion: judge's mean correlation between aspects minus people's",
        "lower",
        "Mean off-diagonal Pearson r between the judge's scores of different aspects over "
        "the same texts, minus the same for the people's scores. Above 0, the judge mixes "
        "aspects up more than people do.",
        "difference of correlations (−2 to 2)",
        "texts the judge scored on at least two aspects that people also rated",
        "bootstrap resampling the judge's and the people's texts independently (500, "
        "seeded), percentile",
        threshold=0.1,
        good="keeps aspects apart",
        bad="confuses aspects",
    ),
    # -- prompting ---------------------------------------------------------------------------------
    Definition(
        "cue_resisted",
        "Misleading cue: scores unchanged by a false expert rating",
        "higher",
        "Share of texts scored the same with the misleading cue (a false expert rating in the "
        "prompt) as by the same judge's knowledge prompt without it.",
        "share of texts",
        "texts × criteria scored under both prompts; each text counts once",
        SHARE_OVER_TEXTS,
        threshold=0.8,
        good="resists the cue",
        bad="follows the cue",
        perfect=1.0,
        terms=("misleading cue",),
    ),
    Definition(
        "sentiment_shift",
        "Sentiment shift of the justifications under the misleading cue",
        "neither",
        "Mean TextBlob polarity (−1 to 1) of the judge's readable replies with the misleading "
        "cue minus without it, paired by text and criterion.",
        "polarity difference (−2 to 2)",
        "texts with a readable reply under both prompts (each text's replies averaged)",
        "bootstrap over the texts (2000 resamples, seeded), percentile",
        terms=("misleading cue",),
    ),
    # -- people ------------------------------------------------------------------------------------
    Definition(
        "human_error",
        "Distance from the people's mean score (share of the scale)",
        "lower",
        "|judge's score − the mean human rating| divided by the judge's scale span (0: the "
        "people's mean; 1: the whole scale away), per text and criterion people rated.",
        "share of the scale",
        "texts × criteria rated by people and scored by the judge; each text counts once",
        CLUSTER_BOOTSTRAP.replace("source items", "texts"),
        threshold=0.25,
        good="close to people",
        bad="far from people",
        perfect=0.0,
    ),
    # -- adversarial search (AdvEval) --------------------------------------------------------------
    Definition(
        "attack_success_r_plus",
        "Attack success R+: good text the judge scores low",
        "lower",
        "Share of searched items whose final text the gold judge rates good (S_gold > τ1) "
        "while the judge under audit scores it more than τ2 lower (S_gold − S_victim > τ2).",
        "share of items",
        "items the search finished with at least one readable candidate",
        "Wilson 95% interval over the items",
        threshold=0.2,
        good="robust",
        bad="fooled",
        perfect=0.0,
        terms=("R+", "AdvEval"),
    ),
    Definition(
        "attack_success_r_minus",
        "Attack success R−: bad text the judge scores high",
        "lower",
        "Share of searched items whose final text the gold judge rates poor (S_gold < τ1) "
        "while the judge under audit scores it more than τ2 higher (S_victim − S_gold > τ2).",
        "share of items",
        "items the search finished with at least one readable candidate",
        "Wilson 95% interval over the items",
        threshold=0.2,
        good="robust",
        bad="fooled",
        perfect=0.0,
        terms=("R−", "AdvEval"),
    ),
    # -- the calls themselves ---------------------------------------------------------------------
    Definition(
        "unparsed",
        "Unreadable replies: calls whose reply could not be parsed",
        "lower",
        "Share of answered calls of the whole audit (the judge's, the adversarial search's "
        "generator and gold judge) whose reply held no readable score or candidate; such "
        "replies are kept raw and never scored.",
        "share of calls",
        "answered calls of every part of the audit",
        "Wilson 95% interval over the calls",
        threshold=0.05,
        good="readable",
        bad="often unreadable",
        perfect=0.0,
    ),
    Definition(
        "tokens",
        "Tokens paid for (prompt + completion)",
        "neither",
        "Prompt plus completion tokens of the audit's HTTP calls; calls answered by the cache "
        "cost none.",
        "tokens",
        "calls of the judge's runs",
        "none: a count",
    ),
    Definition(
        "cost_usd",
        "Cost (USD)",
        "lower",
        "Tokens times the judge's prices per token; tokens a batch answered at its batch "
        "price (none when the judge has no prices).",
        "US dollars",
        "calls of the judge's runs",
        "none: a sum",
    ),
    Definition(
        "latency",
        "Latency per HTTP call (seconds)",
        "lower",
        "Mean seconds from request to reply of the judge's HTTP calls; cached calls left out.",
        "seconds",
        "HTTP calls",
        "normal 95% interval: mean ± 1.96 sd / √n",
    ),
    section="A judge's figures: the report card, judges side by side, judge reliability",
)
