"""Judge vs human (methods §5): ordinal alpha between each run and the imported human ratings,
human consistency, judge consistency across strategies, and the misleading-cue match share.

Mean sentiment polarity of justifications (§5) is not computed: it needs a sentiment model,
which cannot be downloaded here; the justifications are in each call's raw response.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from apps.analysis.models import HumanRating
from apps.analysis.reports.base import Report, Section, Table, rounded
from apps.analysis.reports.judge_data import run_scores
from apps.analysis.stats.agreement import krippendorff_alpha
from apps.analysis.stats.prompting import judge_consistency, match_share
from apps.analysis.stats.raters import constant_raters, identical_raters, under_rated_units
from apps.annotation.models import Study
from apps.judging.models import JudgeRun

Unit = tuple[int, int | None]  # (item, perturbation or None)


def _run_label(run: JudgeRun) -> str:
    return f"{run.pk}: {run.judge.name} / {run.strategy.slug if run.strategy else 'metric'}"


def judge_means(run: JudgeRun) -> dict[tuple[Unit, str], float]:
    """(text, aspect-or-metric slug) → the run's mean score there."""
    data = run_scores(run)
    out: dict[tuple[Unit, str], float] = {}
    for (item, dim), score in data.original.items():
        info = data.dims[dim]
        out[((item, None), info.aspect or info.label)] = score
    for (item, pert, dim), (_, score) in data.perturbed.items():
        info = data.dims[dim]
        out[((item, pert), info.aspect or info.label)] = score
    return out


def human_ratings(study: Study) -> dict[str, dict[Unit, dict[str, float]]]:
    """criterion (aspect or metric slug, else the file's name) → text → rater → score."""
    out: dict[str, dict[Unit, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    rows = HumanRating.objects.filter(item__dataset__studies=study).values_list(
        "item_id",
        "perturbation_id",
        "aspect__slug",
        "metric__slug",
        "criterion_name",
        "rater",
        "score",
    )
    for item, pert, aspect, metric, name, rater, score in rows:
        out[aspect or metric or name.lower()][(item, pert)][rater] = score
    return out


def build(study: Study) -> Report:
    report = Report("judge-vs-human", "Judge vs human", study.name)
    runs = list(JudgeRun.objects.filter(study=study).select_related("judge", "strategy"))
    humans = human_ratings(study)
    means = {run.pk: judge_means(run) for run in runs}
    report.sections.append(_judge_human(runs, means, humans))
    report.sections.append(_human_consistency(humans))
    report.sections.append(_rater_quality(humans))
    report.sections.append(_strategy_consistency(runs, means))
    report.sections.append(_misleading(runs, means))
    report.notes.append(__doc__.split("\n\n")[1].replace("\n", " "))
    return report


def _judge_human(runs, means, humans) -> Section:
    rows = []
    for run in runs:
        for criterion, texts in sorted(humans.items()):
            units = [u for u in texts if (u, criterion) in means[run.pk]]
            if len(units) < 2:
                continue
            raters = sorted({r for u in units for r in texts[u]})
            matrix = [[texts[u].get(r, np.nan) for u in units] for r in raters]
            matrix.append([means[run.pk][(u, criterion)] for u in units])
            rows.append(
                [
                    _run_label(run),
                    criterion,
                    rounded(krippendorff_alpha(matrix, "interval" if _wide(run) else "ordinal")),
                    len(units),
                    len(raters),
                ]
            )
    return Section(
        "Judge-human agreement",
        "Krippendorff's alpha with the judge as one more rater beside the humans "
        "(ordinal; interval on 0-100 scales).",
        tables=[
            Table("judge_human_alpha", ["run", "criterion", "alpha", "n_texts", "n_humans"], rows)
        ],
    )


def _wide(run: JudgeRun) -> bool:
    return bool(run.strategy and run.strategy.scale_max - run.strategy.scale_min > 10)


def _human_consistency(humans) -> Section:
    rows = []
    for criterion, texts in sorted(humans.items()):
        raters = sorted({r for scores in texts.values() for r in scores})
        matrix = [[texts[u].get(r, np.nan) for u in texts] for r in raters]
        rows.append(
            [criterion, rounded(krippendorff_alpha(matrix, "ordinal")), len(texts), len(raters)]
        )
    return Section(
        "Human consistency",
        "Ordinal alpha among the human raters.",
        tables=[Table("human_alpha", ["criterion", "alpha", "n_texts", "n_raters"], rows)],
    )


def _rater_quality(humans) -> Section:
    """Per criterion: raters identical to another on every shared text, raters who never
    vary, and texts with fewer raters than the design (taken as the most any text has)."""
    rows = []
    for criterion, texts in sorted(humans.items()):
        by_rater: dict[str, dict[Unit, float]] = defaultdict(dict)
        for unit, scores in texts.items():
            for rater, value in scores.items():
                by_rater[rater][unit] = value
        counts = [len(scores) for scores in texts.values()]
        design = max(counts, default=0)
        for pair in identical_raters(by_rater):
            rows.append(
                [
                    criterion,
                    "identical raters",
                    f"{pair.rater_a} = {pair.rater_b}",
                    pair.shared_units,
                ]
            )
        for rater in constant_raters(by_rater):
            rows.append([criterion, "never varies", rater, len(by_rater[rater])])
        thin = under_rated_units(by_rater, expected=design)
        if thin:
            rows.append(
                [
                    criterion,
                    f"texts with fewer than {design} raters",
                    f"{len(thin)} texts",
                    min(thin.values()),
                ]
            )
    return Section(
        "Rater quality",
        "Checks on the imported ratings: a rater identical to another on every "
        "shared text, a rater who never varies, texts rated by fewer raters than "
        "the best-covered text.",
        tables=[Table("rater_checks", ["criterion", "check", "who", "n"], rows)],
    )


def _strategy_consistency(runs, means) -> Section:
    by_judge = defaultdict(list)
    for run in runs:
        if run.strategy:
            by_judge[run.judge.name].append(run)
    rows = []
    for judge, judge_runs in sorted(by_judge.items()):
        if len(judge_runs) < 2:
            continue
        shared = set.intersection(*(set(means[r.pk]) for r in judge_runs))
        keys = sorted(shared, key=str)
        if len(keys) < 2:
            continue
        scores = {r.strategy.slug: [means[r.pk][k] for k in keys] for r in judge_runs}
        rows.append([judge, ", ".join(scores), rounded(judge_consistency(scores)), len(keys)])
    return Section(
        "Judge consistency across strategies",
        "Ordinal alpha with each strategy of one judge as a rater, over the texts "
        "and criteria every strategy scored.",
        tables=[Table("strategy_alpha", ["judge", "strategies", "alpha", "n"], rows)],
    )


def _misleading(runs, means) -> Section:
    rows = []
    for cue in (r for r in runs if r.strategy and "misleading" in r.strategy.slug):
        for knowledge in runs:
            if (
                knowledge.judge_id != cue.judge_id
                or not knowledge.strategy
                or "knowledge" not in knowledge.strategy.slug
            ):
                continue
            keys = sorted(set(means[cue.pk]) & set(means[knowledge.pk]), key=str)
            if keys:
                share = match_share(
                    [means[cue.pk][k] for k in keys], [means[knowledge.pk][k] for k in keys]
                )
                rows.append([cue.judge.name, rounded(share), len(keys)])
    return Section(
        "Misleading cue",
        "The share of scores under the misleading-cue prompt equal to the "
        "knowledge-prompt scores (methods §5).",
        tables=[Table("misleading_match", ["judge", "match_share", "n"], rows)],
    )
