"""What a figure means, declared once (docs/figures.md): its name, which way is better, its
formula in words, its unit, the population its N counts and how its interval is made.

The pages, the card, judges side by side, the reports' column headers, the downloads and
``docs/figures.md`` all read a figure's meaning from here; a test renders every page and
download and checks each label against its definition and each value's sign against a
scripted judge. A figure with a verdict also declares its threshold (the default a study may
change), the words for either side of it, and the value a perfect judge would reach.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Better = Literal["higher", "lower", "near 0", "neither"]


@dataclass(frozen=True)
class Definition:
    key: str
    #: The label people read: plain words, the direction of a difference spelt out.
    name: str
    better: Better
    #: How the value is computed, in words.
    formula: str
    #: What the value is measured in.
    unit: str
    #: What one unit of N is, and which units count.
    population: str
    #: How the 95% interval is made, or why there is none.
    interval: str
    #: The verdict's threshold (in the value's unit); None: the figure gets no verdict.
    threshold: float | None = None
    #: Verdict words on the good and the bad side of the threshold.
    good: str = ""
    bad: str = ""
    #: What a perfect judge scores on every unit (for the power check); None: not defined.
    perfect: float | None = None
    #: The glossary terms the name uses (apps/analysis/glossary.py).
    terms: tuple[str, ...] = ()

    @property
    def direction(self) -> str:
        """The direction in words, as the pages show it."""
        return {
            "higher": "higher is better",
            "lower": "lower is better",
            "near 0": "near 0 is better",
            "neither": "no better direction",
        }[self.better]

    def side(self, word: str) -> str:
        """ "good" or "bad": the side of the threshold a verdict word names; "" for a word
        that names neither (unstable, too few texts to tell, not measured, no result)."""
        if word and word == self.good:
            return "good"
        return "bad" if word and word == self.bad else ""

    def passes(self, low: float, high: float, threshold: float) -> bool | None:
        """True when the whole interval is on the good side of ``threshold``, False when it
        is all on the bad side, None when it spans it."""
        if self.better == "higher":
            return True if low >= threshold else (False if high < threshold else None)
        return True if high <= threshold else (False if low > threshold else None)


_REGISTRY: dict[str, Definition] = {}
_SECTIONS: dict[str, str] = {}


def register(*definitions: Definition, section: str = "Other figures") -> None:
    """Declare figures; ``section`` is the heading they are listed under in docs/figures.md."""
    for definition in definitions:
        if definition.key in _REGISTRY:
            raise ValueError(f"figure {definition.key!r} is defined twice")
        _REGISTRY[definition.key] = definition
        _SECTIONS[definition.key] = section


def registry() -> dict[str, Definition]:
    return _REGISTRY


def section_of(key: str) -> str:
    return _SECTIONS[key]
