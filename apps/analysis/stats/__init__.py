"""Statistics for Discern as pure functions over plain sequences and numpy arrays.

No Django and no ORM in here: report builders fetch data in bulk and call these. One concept
per module; a kind of work's own statistics are its module, which its docstring describes
(apps/analysis/kinds.py). The methods shared by every study, named after the sections of
docs/methods.md:

- ``agreement``    Krippendorff's alpha, percent agreement, Cohen's kappa, bootstrap CIs (§8)
- ``comparisons``  human pairwise comparisons: consistency, cell verdicts, match rate (§2)
- ``deltas``       score deltas, S_T / S_F cells, aspect confusion matrix (§1)
- ``fbi``          FBI judge metrics: single-answer, pairwise, reference-guided (§3)
- ``discernment``  Wilcoxon p, harmonic combination, discernment D, D_min, D_avg (§4)
- ``prompting``    misleading-cue rating, match share, judge consistency (§5)
- ``adversarial``  AdvEval feedback score and attack success (§6)
- ``intervals``    Wilson intervals of shares, bootstrap intervals of means (§8)
- ``raters``       rater quality: near-duplicates, straight-liners, alpha if removed (§9)
- ``sentiment``    TextBlob polarity of judge justifications (§5)
"""
