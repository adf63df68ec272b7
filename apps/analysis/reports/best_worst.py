"""Best-worst scaling in the reports (SPEC §10; docs/analysis.md): per criterion, the counting
score of every text and the split-half reliability of those scores (Human agreement), and each
judge run's rank correlation with the counting scores (Judge vs human).

Answers are the study's real ones less the annotators its control threshold leaves out
(`analysed`); the statistics are apps/analysis/stats/bws.py. A study that neither asks for
best-worst scaling nor has answers gets no section.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import cast

from apps.analysis.best_worst import CriterionAnswers, Text, answers_by_criterion, text_names
from apps.analysis.controls import analysed
from apps.analysis.reports.base import Section, Table, rounded
from apps.analysis.reports.sections import section_register
from apps.analysis.stats.bws import (
    BwsScore,
    bws_rank_correlation,
    bws_scores,
    split_half_reliability,
)
from apps.analysis.stats.intervals import Estimate
from apps.annotation.models import Study
from apps.annotation.models.best_worst import BestWorst, scaled
from apps.judging.models import JudgeRun

TITLE = "Best-worst scaling"
NO_ANSWERS = "This study asks for best-worst scaling but has no best-worst answers yet."

RELIABILITY_COLUMNS = [
    "criterion",
    "n_texts",
    "n_answers",
    "n_annotators",
    "split_half_reliability",
    "ci_low",
    "ci_high",
    "split_low",
    "split_high",
    "split_half_spearman_brown",
    "sb_ci_low",
    "sb_ci_high",
    "sb_split_low",
    "sb_split_high",
    "n_texts_in_both",
    "splits",
    "splits_left_out",
    "no_figure_because",
]
RELIABILITY_CAPTION = (
    "Split-half reliability: the mean over seeded random splits of the answers into halves of "
    "Spearman's rho between the two halves' counting scores; beside it the Spearman-Brown "
    "corrected value, 2 rho / (1 + rho), the reliability of scores from all the answers. [95% "
    "interval]: percentile bootstrap over the splits and the texts (sampling uncertainty); "
    "'over splits': the 2.5th and 97.5th percentiles of the per-split rho (how much the figure "
    "hangs on the split). N: texts scored (texts), answers, annotators, and the fewest texts "
    "scored in both halves of a split that counts; splits left out had fewer than 3 texts in "
    "both halves or a half whose scores never vary."
)
SCORE_COLUMNS = [
    "criterion",
    "item",
    "text",
    "kind",
    "best",
    "worst",
    "appearances",
    "counting_score",
]
SCORE_CAPTION = (
    "Counting score of each text, (best − worst) / appearances, from −1 (always picked worst) "
    "to 1 (always best); per criterion, highest first, equal scores in the order the texts "
    "were first shown. Text: 'original' or the perturbed text's id, with its kind. N: the "
    "text's appearances (answers whose tuple showed it). A single text's score has no "
    "interval: the split-half reliability above says how far the scores can be trusted."
)


def study_answers(study: Study) -> dict[str, CriterionAnswers]:
    """The answers the reports count, by criterion key."""
    return answers_by_criterion(analysed(BestWorst, study))


def asks(study: Study) -> bool:
    return scaled(study).best_worst_criteria.exists()


def counting_scores(group: CriterionAnswers) -> dict[Text, BwsScore]:
    """Each text's counting score under the group's criterion (texts in the order first
    shown)."""
    return cast(dict[Text, BwsScore], bws_scores(group.answers))


def ranked(scores: dict[Text, BwsScore]) -> list[tuple[Text, BwsScore]]:
    """(text, score) highest score first; equal scores keep their order (first shown)."""
    return sorted(scores.items(), key=lambda kv: -kv[1].score)


@section_register("human-agreement")
def human_section(study: Study) -> Section | None:
    """The Human agreement report's section: split-half reliability per criterion and the
    counting scores of every text; None when the study neither asks for best-worst scaling
    nor has answers."""
    groups = study_answers(study)
    if not groups:
        return Section(TITLE, NO_ANSWERS) if asks(study) else None
    reliability, scores = [], []
    scored = {criterion: counting_scores(group) for criterion, group in groups.items()}
    names = text_names(t for s in scored.values() for t in s)
    for criterion, group in groups.items():
        reliability.append(_reliability_row(group))
        for text, score in ranked(scored[criterion]):
            name = names[text]
            scores.append(
                [
                    criterion,
                    name.item,
                    name.text,
                    name.kind,
                    score.best,
                    score.worst,
                    score.appearances,
                    rounded(score.score),
                ]
            )
    return Section(
        TITLE,
        "People picked the best and the worst text of tuples of one item's texts (its "
        "original and perturbed texts) under each criterion; each text's counting score "
        "follows, and how far those scores agree between random halves of the answers."
        + _missing(reliability),
        tables=[
            Table("bws_reliability", RELIABILITY_COLUMNS, reliability, RELIABILITY_CAPTION),
            Table("bws_scores", SCORE_COLUMNS, scores, SCORE_CAPTION),
        ],
    )


def _reliability_row(group: CriterionAnswers) -> list[object]:
    shr = split_half_reliability(group.answers)
    sb_split = shr.spearman_brown_split
    sb_ci = shr.spearman_brown_ci
    return [
        group.key,
        shr.n_texts,
        shr.n_annotations,
        group.annotators,
        rounded(shr.value),
        rounded(shr.ci_low),
        rounded(shr.ci_high),
        rounded(shr.split_low),
        rounded(shr.split_high),
        rounded(shr.spearman_brown),
        rounded(sb_ci[0]),
        rounded(sb_ci[1]),
        rounded(sb_split[0]),
        rounded(sb_split[1]),
        shr.n_compared,
        shr.splits,
        shr.undefined_splits,
        shr.reason,
    ]


def _missing(rows: list[list[object]]) -> str:
    lines = [
        f"{row[0]}: {row[2]} answers on {row[1]} texts, {row[-1]}"
        for row in rows
        if row[-1]  # no_figure_because
    ]
    return f" No split-half reliability for {'; '.join(lines)}." if lines else ""


JUDGE_COLUMNS = [
    "run",
    "criterion",
    "aspect",
    "judge_bws_spearman",
    "ci_low",
    "ci_high",
    "fisher_ci_low",
    "fisher_ci_high",
    "judge_bws_kendall",
    "kendall_ci_low",
    "kendall_ci_high",
    "n_texts",
    "no_figure_because",
]
JUDGE_CAPTION = (
    "Rank correlation between each run's score of a text (its mean over samples) and the "
    "text's counting score, over the texts both have; the run's scores under a criterion of "
    "the same aspect as the best-worst criterion (as for the ratings collected by direct "
    "assessment). Spearman's rho with its percentile bootstrap 95% interval over the texts "
    "and, beside it, its Fisher z interval (none below 4 texts); Kendall's tau-b with its "
    "Fisher z interval (none below 5 texts). N: those texts."
)
TOO_FEW = "fewer than 3 texts scored by both"
CONSTANT = "the judge's or the counting scores never vary"


@section_register("judge-vs-human")
def judge_section(
    study: Study,
    runs: list[JudgeRun],
    means: dict[int, dict[tuple[Text, str], float]],
    label: Callable[[JudgeRun], str],
) -> Section | None:
    """The Judge vs human report's section: each run against the counting scores of each
    criterion it scored texts of. `means` holds each run's (text, aspect) → mean score and
    `label` names a run, as that report has them; None when the study neither asks for
    best-worst scaling nor has answers."""
    groups = study_answers(study)
    if not groups:
        return Section(TITLE, NO_ANSWERS) if asks(study) else None
    scored = {criterion: bws_scores(group.answers) for criterion, group in groups.items()}
    rows = []
    for run in runs:
        for criterion, group in groups.items():
            judge: dict[Hashable, float] = {
                text: score
                for (text, aspect), score in means[run.pk].items()
                if aspect == group.aspect
            }
            scores = scored[criterion]
            if not any(text in judge for text in scores):
                continue
            both = bws_rank_correlation(judge, scores)
            rows.append(
                [
                    label(run),
                    criterion,
                    group.aspect,
                    *_cells(both.spearman),
                    *_cells(both.spearman_fisher)[1:],
                    *_cells(both.kendall),
                    both.spearman.n,
                    _why(both.spearman),
                ]
            )
    text = (
        "How each judge run orders the texts people scored by best-worst scaling, against "
        "their counting scores (see the Human agreement report)."
    )
    if not rows:
        text += (
            " No judge run has scored the texts best-worst scaling scored, under a criterion "
            f"of the same aspect ({', '.join(sorted({g.aspect for g in groups.values()}))})."
        )
    return Section(
        TITLE, text, tables=[Table("judge_bws", JUDGE_COLUMNS, rows, JUDGE_CAPTION)] if rows else []
    )


def _cells(estimate: Estimate) -> list[float | None]:
    return [rounded(estimate.value), rounded(estimate.ci_low), rounded(estimate.ci_high)]


def _why(estimate: Estimate) -> str:
    if rounded(estimate.value) is not None:
        return ""
    return TOO_FEW if estimate.n < 3 else CONSTANT
