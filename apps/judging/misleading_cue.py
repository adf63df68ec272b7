"""The rating shown in the misleading-cue prompt (methods §5, Chaudhary et al. 2024).

The misleading-cue prompt claims a human expert gave the rating PR, chosen to contradict the
experts: ``m`` = the mode of r1..r3, or their maximum when all three differ;
``PR = hi if m <= hi / 2 else lo``. The threshold is ``hi / 2`` as in the paper, not the scale
midpoint ``(lo + hi) / 2``: on 1-5 it is 2.5 (midpoint 3), on 1-3 it is 1.5, so a middling 2
is "high" there and gets PR = 1. How much a judge resists the cue is measured in
``apps.analysis.stats.prompting``.
"""

from collections import Counter


def cue_anchor(r1: float, r2: float, r3: float) -> float:
    """``m`` of the PR rule: the mode of three ratings, or the maximum when all differ."""
    value, count = Counter((r1, r2, r3)).most_common(1)[0]
    return value if count > 1 else max(r1, r2, r3)


def misleading_rating(r1: float, r2: float, r3: float, lo: float, hi: float) -> float:
    """The perturbed rating PR shown in the misleading-cue prompt (see module)."""
    if not lo < hi:
        raise ValueError("the scale needs lo < hi")
    if any(not lo <= r <= hi for r in (r1, r2, r3)):
        raise ValueError("expert ratings must lie on the scale [lo, hi]")
    return hi if cue_anchor(r1, r2, r3) <= hi / 2 else lo
