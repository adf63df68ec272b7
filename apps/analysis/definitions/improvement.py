"""The figures of a judge's improvement (docs/improve.md): what the page, the API, the
command and the JSON download show of the current strategy against the recommended one."""

from __future__ import annotations

from apps.analysis.definitions.base import Definition, register

register(
    Definition(
        "blind_spots",
        "Blind spots: kinds whose errors the judge is proven to miss",
        "lower",
        "Kinds (that should lower the score) whose errors-missed verdict is 'misses': the "
        "whole 95% interval of the share of their texts not scored lower than the original "
        "lies above the threshold (0.2 by default).",
        "kinds",
        "kinds of perturbation with texts on that half (training or held out)",
        "none: a count; each kind's share has its Wilson interval over its texts",
    ),
    Definition(
        "missed_held_out",
        "Errors missed on the held-out texts: perturbed text not scored lower than its original",
        "lower",
        "Share of the held-out perturbed texts (kinds that should lower the score) scored "
        "not lower than their original, each text's criteria averaged into one value; for "
        "the current strategy and for the candidate.",
        "share of texts",
        "perturbed texts of the held-out source items (never tried on, never shown as an example)",
        "Wilson 95% interval over the texts",
    ),
    Definition(
        "missed_reduction",
        "Fewer errors missed: current strategy minus candidate, on the held-out texts",
        "higher",
        "The current strategy's share of held-out texts missed minus the candidate's, "
        "text by text; tested with McNemar's exact test on the texts only one of them missed "
        "(a paired bootstrap when some texts were missed on only part of their criteria). "
        "The candidate is recommended when this is above 0 with p below 0.05 and agreement "
        "with people is not lost.",
        "share of texts",
        "perturbed texts of the held-out source items both strategies scored",
        "paired percentile bootstrap over the texts (2000 resamples, seeded)",
    ),
    Definition(
        "agreement_held_out",
        "Agreement with people on the held-out texts: Krippendorff's alpha, judge as one more "
        "rater",
        "higher",
        "Ordinal Krippendorff's alpha of the people's ratings with the judge's scores as one "
        "more rater, over the held-out texts people rated, every criterion pooled; for the "
        "current strategy and for the candidate. Lost when the candidate's whole interval "
        "lies below the current strategy's value.",
        "alpha",
        "rated texts of the held-out source items",
        "percentile bootstrap over the texts (1000 resamples, seeded)",
    ),
    section="A judge's improvement: the current strategy against the candidate",
)
