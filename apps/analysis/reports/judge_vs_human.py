"""Judge vs human (methods §5): ordinal alpha between each run and the human ratings, human
consistency, Pearson r per criterion description type (methods §1), judge consistency across
prompting techniques, and the misleading-cue match share per criterion; and the sections kinds
of work add to it (reports/sections.py).

Human ratings are the imported ones (released with a dataset) and those collected in the
study (direct assessment); each statistic is computed for each, side by side, labelled.

Sentiment of justifications is TextBlob's polarity of each LLM judge reply (its lexicon ships
with the library; nothing is downloaded), averaged per strategy, criterion and text.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from apps.analysis.controls import analysed
from apps.analysis.models import HumanRating
from apps.analysis.reports import description_types, prompting_strategies
from apps.analysis.reports.base import Report, Section, Table, rounded
from apps.analysis.reports.imported_agreement import (
    BOOTSTRAP,
    CELLS,
    N_WORDS,
    agreement_cells,
    no_figure_text,
    texts_matrix,
)
from apps.analysis.reports.judge_data import RunScores, run_scores
from apps.analysis.reports.rater_quality import rater_checks, rater_section, warnings_of
from apps.analysis.reports.sections import kind_sections
from apps.analysis.reports.sentiment import sentiment_section
from apps.analysis.stats.agreement import Level, alpha_with_ci
from apps.annotation.models import Assessment, Study
from apps.judging.models import JudgeRun

Unit = tuple[int, int | None]  # (item, perturbation or None)


def _run_label(run: JudgeRun) -> str:
    return f"{run.pk}: {run.judge.name} / {run.strategy.name if run.strategy else 'metric'}"


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


Ratings = dict[str, dict[Unit, dict[str, float]]]  # criterion -> text -> rater -> score
IMPORTED = "imported"
COLLECTED = "collected in this study"


def human_ratings(study: Study) -> Ratings:
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


def collected_ratings(study: Study) -> Ratings:
    """The study's own ratings (direct assessment): aspect slug -> text -> username -> score,
    shaped as the imported ones."""
    out: Ratings = defaultdict(lambda: defaultdict(dict))
    rows = analysed(Assessment, study).values_list(
        "unit__item_id",
        "unit__perturbation_id",
        "unit__criterion__aspect__slug",
        "annotator__username",
        "score",
    )
    for item, pert, aspect, rater, score in rows:
        out[aspect][(item, pert)][rater] = float(score)
    return out


def rating_sources(study: Study) -> list[tuple[str, Ratings]]:
    """(label, ratings) of each source of human ratings: imported first, then collected in
    the study when it has any."""
    sources = [(IMPORTED, human_ratings(study))]
    collected = collected_ratings(study)
    if collected:
        sources.append((COLLECTED, collected))
    return sources


def labelled(sources: list[tuple[str, Ratings]]) -> Ratings:
    """All sources in one mapping, collected criteria named "coherence (collected in this
    study)": for the rater checks, which look at each criterion of each source."""
    out: Ratings = {}
    for label, ratings in sources:
        for criterion, texts in ratings.items():
            out[criterion if label == IMPORTED else f"{criterion} ({label})"] = texts
    return out


def build(study: Study) -> Report:
    report = Report("judge-vs-human", "Judge vs human", study.name)
    runs = list(JudgeRun.objects.filter(study=study).select_related("judge", "strategy"))
    sources = rating_sources(study)
    scores = {run.pk: run_scores(run) for run in runs}
    means = {run.pk: judge_means(run, scores[run.pk]) for run in runs}
    checks = rater_checks(labelled(sources))
    report.warnings.extend(warnings_of(checks))
    report.sections.append(judge_human_section(runs, means, sources))
    for section in kind_sections("judge-vs-human"):  # each kind's, given what runs scored
        if (built := section(study, runs, means, _run_label)) is not None:
            report.sections.append(built)
    report.sections.append(_human_consistency(sources))
    report.sections.append(rater_section(checks))
    for run in runs:
        for label, humans in sources:
            origin = "" if label == IMPORTED else label
            described = description_types.section(
                _run_label(run), scores[run.pk], humans, origin=origin
            )
            if described is not None:
                report.sections.append(described)
    report.sections.append(prompting_strategies.consistency_section(runs, means))
    report.sections.append(prompting_strategies.misleading_section(runs, means))
    report.sections.append(sentiment_section(runs))
    report.notes.append(__doc__.split("\n\n")[1].replace("\n", " "))
    return report


JUDGE_HUMAN_COLUMNS = [
    "run",
    "criterion",
    "judge_human_alpha",
    "ci_low",
    "ci_high",
    "n_texts",
    "n_humans",
    "humans",
]


def judge_human_section(runs, means, sources) -> Section:
    rows = []
    for run in runs:
        for label, humans in sources:
            for criterion, texts in sorted(humans.items()):
                row = _alpha_row(run, means[run.pk], criterion, texts)
                if row is not None:
                    rows.append([*row, label])
    return Section(
        "Judge-human agreement",
        "Krippendorff's alpha with the judge as one more rater beside the humans "
        "(ordinal; interval on 0-100 scales), for the imported ratings and for those "
        "collected in this study (direct assessment), each on its own row (`humans`).",
        tables=[
            Table(
                "judge_human_alpha",
                JUDGE_HUMAN_COLUMNS,
                rows,
                "Alpha with a percentile bootstrap 95% interval resampling the texts "
                f"({BOOTSTRAP} resamples, seeded). N: texts the judge scored and at least one "
                "human rated (texts), and human raters of those texts (humans; the judge is "
                "one rater more).",
            )
        ],
    )


def _alpha_row(run, means, criterion, texts) -> list[object] | None:
    units = [u for u in texts if (u, criterion) in means]
    if len(units) < 2:
        return None
    raters = sorted({r for u in units for r in texts[u]})
    ratings = [[texts[u].get(r, np.nan) for u in units] for r in raters]
    judge = [means[(u, criterion)] for u in units]
    level: Level = "interval" if _wide(run) else "ordinal"
    result = alpha_with_ci([*ratings, judge], level, n_resamples=BOOTSTRAP)
    return [
        _run_label(run),
        criterion,
        rounded(result.value),
        rounded(result.ci_low),
        rounded(result.ci_high),
        result.n_units,
        len(raters),
    ]


def _wide(run: JudgeRun) -> bool:
    return bool(run.strategy and run.strategy.scale_max - run.strategy.scale_min > 10)


def _human_consistency(sources) -> Section:
    rows = [
        [criterion, label, *agreement_cells(texts_matrix(texts))]
        for label, humans in sources
        for criterion, texts in sorted(humans.items())
    ]
    missing = no_figure_text(
        [(f"{r[0]} ({r[1]})" if r[1] != IMPORTED else str(r[0]), r[2:]) for r in rows]
    )
    return Section(
        "Human consistency",
        "Ordinal alpha among the human raters, with a bootstrap 95% interval over texts, and "
        "percent agreement (exact score match among rater pairs); texts rated by two or more. "
        "Imported ratings and those collected in this study on their own rows (`humans`)."
        + missing,
        tables=[Table("human_alpha", ["criterion", "humans", *CELLS], rows, N_WORDS)],
    )
