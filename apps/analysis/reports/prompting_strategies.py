"""Judge consistency across prompting techniques and the misleading cue (methods §5, Chaudhary
et al. Tables 2-3; docs/analysis.md).

Runs are grouped by their strategy's ``technique`` (a field of the strategy, not a guess from
its name). Per judge, the latest run of each of the four techniques (zero-shot, knowledge,
few-shot, chain of thought) is one rater; a misleading-cue run is paired with the latest
knowledge-prompt run of the same judge.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from apps.analysis.reports.base import Section, Table, rounded
from apps.analysis.stats.intervals import Estimate
from apps.analysis.stats.prompting import judge_consistency, match_share_estimate
from apps.judging.models import JudgeRun, Technique

FOUR = (
    Technique.ZERO_SHOT,
    Technique.KNOWLEDGE,
    Technique.FEW_SHOT,
    Technique.CHAIN_OF_THOUGHT,
)
BOOTSTRAP = 500
Unit = tuple[int, int | None]  # (item, perturbation or None)
Means = Mapping[int, Mapping[tuple[Unit, str], float]]  # run -> (unit, criterion) -> score


def latest_by_technique(runs: list[JudgeRun]) -> dict[int, dict[str, JudgeRun]]:
    """judge id -> technique -> the judge's latest run with that technique."""
    out: dict[int, dict[str, JudgeRun]] = defaultdict(dict)
    for run in sorted(runs, key=lambda r: r.pk):
        if run.strategy is not None and run.strategy.technique:
            out[run.judge_id][run.strategy.technique] = run
    return out


def _by_criterion(scores: Mapping[tuple[Unit, str], float]) -> dict[str, dict[Unit, float]]:
    out: dict[str, dict[Unit, float]] = defaultdict(dict)
    for (unit, criterion), value in scores.items():
        out[criterion][unit] = value
    return out


def consistency_section(runs: list[JudgeRun], means: Means) -> Section:
    rows = []
    for techniques in latest_by_technique(runs).values():
        present = [t for t in FOUR if t in techniques]
        chosen = [techniques[t] for t in present]
        if len(chosen) < 2:
            continue
        scores = [_by_criterion(means[r.pk]) for r in chosen]
        for criterion in sorted(set.intersection(*(set(s) for s in scores))):
            units = sorted(set.intersection(*(set(s[criterion]) for s in scores)), key=str)
            if len(units) < 2:
                continue
            by_technique: dict[str, list[float]] = {
                technique: [s[criterion][u] for u in units]
                for technique, s in zip(present, scores, strict=True)
            }
            alpha = judge_consistency(by_technique, n_resamples=BOOTSTRAP)
            rows.append(
                [
                    chosen[0].judge.name,
                    criterion,
                    ", ".join(Technique(r.strategy.technique).label for r in chosen if r.strategy),
                    rounded(alpha.value),
                    rounded(alpha.ci_low),
                    rounded(alpha.ci_high),
                    alpha.n_units,
                ]
            )
    return Section(
        "Judge consistency across prompting techniques",
        "Ordinal Krippendorff's alpha per criterion with each prompting technique of one judge "
        "as a rater (Chaudhary et al. Table 2, LLM consistency): the judge's latest run of "
        "each of zero-shot, knowledge, few-shot and chain of thought, over the texts all of "
        "them scored. Bootstrap 95% interval over texts; n: texts.",
        tables=[
            Table(
                "strategy_alpha",
                ["judge", "criterion", "techniques", "alpha", "ci_low", "ci_high", "n"],
                rows,
                "n: texts scored under every technique listed (the units of alpha).",
            )
        ],
    )


def misleading_section(runs: list[JudgeRun], means: Means) -> Section:
    rows = []
    for techniques in latest_by_technique(runs).values():
        knowledge = techniques.get(Technique.KNOWLEDGE)
        cues = [
            r
            for r in runs
            if r.strategy is not None
            and r.strategy.technique == Technique.MISLEADING_CUE
            and knowledge is not None
            and r.judge_id == knowledge.judge_id
        ]
        for cue in sorted(cues, key=lambda r: r.pk):
            assert knowledge is not None
            rows.extend(match_rows(cue, knowledge, means))
    return Section(
        "Misleading cue",
        "Per criterion, the share of texts whose score under the misleading-cue prompt equals "
        "the knowledge-prompt score of the same judge (Chaudhary et al. Table 3): high means "
        "the judge resisted the cue. The knowledge run is the judge's latest run of a "
        "knowledge-technique strategy. Wilson 95% interval over texts; n: texts scored by "
        "both.",
        tables=[
            Table(
                "misleading_match",
                [
                    "judge",
                    "misleading_run",
                    "knowledge_run",
                    "criterion",
                    "cue_resisted",
                    "ci_low",
                    "ci_high",
                    "n",
                ],
                rows,
                "n: texts scored under both prompts. In the 'all criteria' row a text scored "
                "on several criteria counts once (its share of criteria scored the same), so "
                "the interval is over texts, not text × criterion pairs.",
            )
        ],
    )


def match_rows(cue: JudgeRun, knowledge: JudgeRun, means: Means) -> list[list[object]]:
    """Per criterion scored under both prompts, then over all of them when there are several:
    [judge, cue run, knowledge run, criterion, share matching, ci_low, ci_high, n texts]."""
    cue_scores, plain_scores = _by_criterion(means[cue.pk]), _by_criterion(means[knowledge.pk])
    rows = []
    pooled_cue: list[float] = []
    pooled_plain: list[float] = []
    pooled_texts: list[Unit] = []
    for criterion in sorted(set(cue_scores) & set(plain_scores)):
        units = sorted(set(cue_scores[criterion]) & set(plain_scores[criterion]), key=str)
        if not units:
            continue
        a = [cue_scores[criterion][u] for u in units]
        b = [plain_scores[criterion][u] for u in units]
        pooled_cue += a
        pooled_plain += b
        pooled_texts += units
        rows.append(_match_row(cue, knowledge, criterion, match_share_estimate(a, b)))
    if len(rows) > 1:
        share = match_share_estimate(pooled_cue, pooled_plain, pooled_texts)
        rows.append(_match_row(cue, knowledge, "all criteria", share))
    return rows


def _match_row(cue, knowledge, criterion, share: Estimate) -> list[object]:
    return [
        cue.judge.name,
        cue.pk,
        knowledge.pk,
        criterion,
        rounded(share.value),
        rounded(share.ci_low),
        rounded(share.ci_high),
        share.effective_n,
    ]
