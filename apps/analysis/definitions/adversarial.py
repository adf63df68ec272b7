"""The figures of the adversarial search report (docs/adversarial.md, "The report"), and the
words for its other columns (``LABELS``).

R+ is a good text (the gold judge scores it high) the victim scores low; R− a poor text (the
gold judge scores it low) the victim scores high (methods §6). An item whose search scored no
candidate beyond R0 has no result: it is counted apart, never as a failed attack, so every
figure over items counts the items with a result.
"""

from __future__ import annotations

from apps.analysis.definitions.base import Definition, register

WITH_RESULT = (
    "searched items with a result: at least one candidate beyond R0 scored by both judges "
    "(or R0 itself at the target); items with no result are counted apart"
)
FINISHED = "searched items the search finished (done or failed), with a result or not"
ASR_FORMULA = (
    "Share of the items with a result whose final text (the candidate with the highest "
    "S_fb) is a successful attack: R+ (a good text the victim scores low) when S_gold > τ1 "
    "(70) and S_gold − S_victim > τ2 (40); R− (a poor text the victim scores high) when "
    "S_gold < τ1 (30) and S_victim − S_gold > τ2 (40); or the search's own thresholds."
)
WILSON_ITEMS = "Wilson 95% interval over the items with a result"
BOOTSTRAP = "percentile bootstrap over the items (1000 resamples, seeded)"
SCORE = "score on 0-100"

register(
    Definition(
        "asr",
        "Attack success rate",
        "lower",
        ASR_FORMULA + " AdvEval: the generator LLM wrote the candidates; the rule baseline: "
        "the product's rule-based perturbers did, under the same limits.",
        "share of items",
        WITH_RESULT,
        WILSON_ITEMS,
        terms=("AdvEval", "R+", "R−"),
    ),
    Definition(
        "s_gold_mean",
        "S_gold of the final texts: mean",
        "neither",
        "Mean over the items of the gold judge's score of the final text (each gold judge's "
        "mean over its samples, averaged over the gold judges).",
        SCORE,
        WITH_RESULT,
        BOOTSTRAP,
    ),
    Definition(
        "s_gold_median",
        "S_gold of the final texts: median",
        "neither",
        "Median over the items of the gold judge's score of the final text.",
        SCORE,
        WITH_RESULT,
        "none: the mean's interval is given",
    ),
    Definition(
        "s_victim_mean",
        "S_victim of the final texts: mean",
        "neither",
        "Mean over the items of the victim's score of the final text (its mean over its "
        "samples, its scale mapped onto 0-100).",
        SCORE,
        WITH_RESULT,
        BOOTSTRAP,
    ),
    Definition(
        "s_victim_median",
        "S_victim of the final texts: median",
        "neither",
        "Median over the items of the victim's score of the final text.",
        SCORE,
        WITH_RESULT,
        "none: the mean's interval is given",
    ),
    Definition(
        "iterations_mean",
        "Iterations per item",
        "neither",
        "Mean over the items of the iterations after R0 (generator rounds, or rule draws), "
        "those whose replies held no candidate included.",
        "iterations",
        FINISHED,
        BOOTSTRAP,
    ),
    Definition(
        "victim_queries_mean",
        "Victim queries per item",
        "neither",
        "Mean over the items of the victim's calls (a candidate costs the victim strategy's "
        "samples; R0 included).",
        "calls",
        FINISHED,
        BOOTSTRAP,
    ),
    Definition(
        "gold_queries_mean",
        "Gold queries per item",
        "neither",
        "Mean over the items of the gold judges' calls (each candidate costs every gold "
        "judge's samples; R0 included).",
        "calls",
        FINISHED,
        BOOTSTRAP,
    ),
    Definition(
        "gold_accuracy",
        "Gold validation: accuracy of the gold label (the annotators' majority agrees)",
        "higher",
        "Share of the final texts whose annotators' majority label (good or not good) equals "
        "the gold label (good when S_gold ≥ 50).",
        "share of texts",
        "final texts with a majority label (ties left out and counted)",
        "Wilson 95% interval over the texts",
    ),
    Definition(
        "gold_agreement",
        "Gold validation: annotator agreement (Krippendorff's alpha, nominal)",
        "higher",
        "Krippendorff's alpha of the annotators' good / not good labels of the final texts.",
        "alpha (1 perfect, 0 chance)",
        "final texts with two labels or more; the annotators who labelled them",
        "bootstrap 95% interval over the texts",
    ),
    section="The adversarial search report",
)

#: The report's other columns, in words (counts, names, texts).
LABELS = {
    "victim": "Victim judge",
    "direction": "Direction (R+ or R−)",
    "dataset": "Dataset",
    "method": "Method",
    "search": "Search",
    "item": "Item",
    "n_with_result": "N (items with a result)",
    "items_no_result": "Items with no result",
    "note": "Note",
    "n_items": "N (items)",
    "s_gold_ci_low": "S_gold mean: 95% interval, low",
    "s_gold_ci_high": "S_gold mean: 95% interval, high",
    "s_victim_ci_low": "S_victim mean: 95% interval, low",
    "s_victim_ci_high": "S_victim mean: 95% interval, high",
    "mean": "Mean",
    "items_with_result": "Items with a result",
    "items_failed": "Items stopped by a failed generator call",
    "stopped_at_target": "Stopped at the target",
    "stopped_at_iteration_limit": "Stopped at the iteration limit",
    "stopped_at_budget": "Stopped when the victim-query budget was spent",
    "stopped_out_of_candidates": "Stopped with no new candidate to try",
    "generator_replies": "Generator replies (format retries included)",
    "generator_unparsed": "Generator replies with no candidate",
    "ties": "Texts with a tied majority (left out)",
    "r0": "R0 (the original)",
    "final_text": "Final text",
    "diff_from_r0": "Changes from R0 ([-removed-] {+added+})",
    "s_gold": "S_gold",
    "s_victim": "S_victim",
    "success": "Successful attack",
}
