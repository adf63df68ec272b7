"""The papers' terms a page uses, each with a one-line gloss and the section of
docs/methods.md (served at /docs/methods/) that explains it. Pages show a term with its gloss
on hover and a link (the ``glossed`` template filter, apps/analysis/templatetags)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify


@dataclass(frozen=True)
class Term:
    gloss: str
    #: The docs page and the heading (as written there) it links to.
    page: str
    heading: str

    @property
    def href(self) -> str:
        return f"/docs/{self.page}/#{slugify(self.heading)}"


HU = "1. Aspects, expected impact, score deltas and confusion (Hu et al.)"
FBI = "3. Vetting perturbations and FBI failure rates (FBI)"
DHP = "4. Hierarchical perturbation, discernment and expert weights (DHP)"
CUE = "5. Prompting strategies and the misleading cue (Chaudhary et al.)"
ADV = "6. Adversarial search (AdvEval)"
AGREEMENT = "8. Agreement"
VERDICTS = "The verdict"

TERMS: dict[str, Term] = {
    "FBI": Term(
        "Finding Blind Spots (Doddapaneni et al. 2024): does a judge score a deliberately "
        "worsened answer lower?",
        "methods",
        FBI,
    ),
    "DHP": Term(
        "DHP benchmark (Wang, Yuan et al. 2024): perturbations by level, tested per metric "
        "with a Wilcoxon test",
        "methods",
        DHP,
    ),
    "AdvEval": Term(
        "Adversarial search (Chen et al. 2024): an LLM writes texts on which the judge and a "
        "trusted gold judge disagree",
        "methods",
        ADV,
    ),
    "D_EW": Term(
        "Discernment with each metric weighed by the experts' votes on which metric the kind "
        "hurts most",
        "methods",
        DHP,
    ),
    "D": Term(
        "Discernment: log base 0.05 of the kind's combined p-value; D ≥ 1 means the judge "
        "scores perturbed texts significantly lower (at 0.05)",
        "methods",
        DHP,
    ),
    "S_T": Term(
        "Kind × aspect cells that the expected impact and the people both call affected: the "
        "score should drop",
        "methods",
        HU,
    ),
    "S_F": Term(
        "Kind × aspect cells that the expected impact and the people both call not affected: "
        "the score should stay",
        "methods",
        HU,
    ),
    "R+": Term(
        "An adversarial search for good texts (gold judge: high) that the judge scores low",
        "methods",
        ADV,
    ),
    "R−": Term(
        "An adversarial search for poor texts (gold judge: low) that the judge scores high",
        "methods",
        ADV,
    ),
    "HMP": Term(
        "Wilson's harmonic mean p-value: combines the metrics' p-values into one, calibrated "
        "so that 0.05 means 0.05",
        "methods",
        DHP,
    ),
    "score-invariant": Term(
        "A change that should not alter the score (e.g. rewording): a good judge keeps it",
        "methods",
        FBI,
    ),
    "misleading cue": Term(
        "A prompt that adds a false expert rating: a robust judge ignores it",
        "methods",
        CUE,
    ),
    "Krippendorff's alpha": Term(
        "Agreement corrected for chance: 1 perfect, 0 as by chance, below 0 worse than chance",
        "methods",
        AGREEMENT,
    ),
    "McNemar": Term(
        "A test of two judges on the same units: do the units only one of them got right "
        "lean one way?",
        "cards",
        "Judges side by side",
    ),
    "Holm": Term(
        "Holm's correction: p-values adjusted for testing many figures at once",
        "cards",
        "Judges side by side",
    ),
    "unstable": Term(
        "The figure's 95% interval spans the threshold: these data do not settle it",
        "cards",
        VERDICTS,
    ),
    "too few texts to tell": Term(
        "Even a perfect judge could not show the effect with this many texts",
        "cards",
        VERDICTS,
    ),
}

TERMS["R-"] = TERMS["R−"]  # the direction as stored ("R-") reads the same
# Longest terms first, each as a whole word (so "D" never matches inside "D_EW" or "DHP").
_PATTERN = re.compile(
    "|".join(rf"(?<![\w+−-]){re.escape(t)}(?![\w+−])" for t in sorted(TERMS, key=len, reverse=True))
)


def glossed(text: str, base: str = "") -> SafeString:
    """``text`` escaped, each glossary term in it wrapped in a link with its gloss as title;
    ``base`` (the server's address) makes the links absolute, for a downloaded file."""
    out: list[str] = []
    last = 0
    for match in _PATTERN.finditer(text):
        term = TERMS[match.group(0)]
        out.append(escape(text[last : match.start()]))
        out.append(
            f'<a class="term" href="{base}{term.href}" title="{escape(term.gloss)}">'
            f"{escape(match.group(0))}</a>"
        )
        last = match.end()
    out.append(escape(text[last:]))
    return mark_safe("".join(out))  # every part is escaped above
