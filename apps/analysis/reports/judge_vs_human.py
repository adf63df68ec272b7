"""Judge vs human (methods §5): ordinal alpha between each run and the imported human ratings,
human consistency, Pearson r per criterion description type (methods §1), judge consistency
across prompting techniques, and the misleading-cue match share per criterion.

Sentiment of justifications is TextBlob's polarity of each LLM judge reply (its lexicon ships
with the library; nothing is downloaded), averaged per strategy, criterion and text.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from apps.analysis.models import HumanRating
from apps.analysis.reports import description_types, prompting_strategies
from apps.analysis.reports.base import Report, Section, Table, rounded
from apps.analysis.reports.imported_agreement import agreement_cells, texts_matrix
from apps.analysis.reports.judge_data import RunScores, run_scores
from apps.analysis.reports.rater_quality import rater_section, rater_warnings
from apps.analysis.reports.sentiment import sentiment_section
from apps.analysis.stats.agreement import Level
from apps.analysis.stats.prompting import judge_human_alpha
from apps.annotation.models import Study
from apps.judging.models import JudgeRun

Unit = tuple[int, int | None]  # (item, perturbation or None)


def _run_label(run: JudgeRun) -> str:
    return f"{run.pk}: {run.judge.name} / {run.strategy.slug if run.strategy else 'metric'}"


def judge_means(run: JudgeRun, data: RunScores | None = None) -> dict[tuple[Unit, str], float]:
    """(text, aspect-or-metric slug) → the run's mean score there."""
    data = data or run_scores(run)
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
    scores = {run.pk: run_scores(run) for run in runs}
    means = {run.pk: judge_means(run, scores[run.pk]) for run in runs}
    report.sections.append(_judge_human(runs, means, humans))
    report.sections.append(_human_consistency(humans))
    report.warnings.extend(rater_warnings(humans))
    report.sections.append(rater_section(humans))
    for run in runs:
        described = description_types.section(_run_label(run), scores[run.pk], humans)
        if described is not None:
            report.sections.append(described)
    report.sections.append(prompting_strategies.consistency_section(runs, means))
    report.sections.append(prompting_strategies.misleading_section(runs, means))
    report.sections.append(sentiment_section(runs))
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
            ratings = [[texts[u].get(r, np.nan) for u in units] for r in raters]
            judge = [means[run.pk][(u, criterion)] for u in units]
            level: Level = "interval" if _wide(run) else "ordinal"
            rows.append(
                [
                    _run_label(run),
                    criterion,
                    rounded(judge_human_alpha(judge, ratings, level)),
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
    rows = [
        [criterion, *agreement_cells(texts_matrix(texts))]
        for criterion, texts in sorted(humans.items())
    ]
    return Section(
        "Human consistency",
        "Ordinal alpha among the human raters, with a bootstrap 95% interval over texts, and "
        "percent agreement (exact score match among rater pairs); texts rated by two or more.",
        tables=[
            Table(
                "human_alpha",
                [
                    "criterion",
                    "alpha",
                    "ci_low",
                    "ci_high",
                    "percent_agreement",
                    "n_texts",
                    "n_raters",
                ],
                rows,
            )
        ],
    )
