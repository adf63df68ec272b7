"""Report builders: each turns bulk-fetched study data into a Report (tables + figures)."""

from apps.analysis.reports import (
    adversarial,
    expert_weights,
    human_agreement,
    judge_reliability,
    judge_vs_human,
)

#: Study-level reports, by name. `judge-reliability` is per judge run (see RUN_REPORTS).
STUDY_REPORTS = {
    "human-agreement": human_agreement.build,
    "expert-weights": expert_weights.build,
    "judge-vs-human": judge_vs_human.build,
    "adversarial-search": adversarial.build,
}
RUN_REPORTS = {"judge-reliability": judge_reliability.build}
TITLES = {
    "human-agreement": "Human agreement",
    "expert-weights": "Expert weights",
    "judge-vs-human": "Judge vs human",
    "judge-reliability": "Judge reliability",
    "adversarial-search": "Adversarial search",
}
