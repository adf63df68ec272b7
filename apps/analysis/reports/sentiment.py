"""Sentiment of judge justifications (methods §5): TextBlob's mean polarity of the LLM judges'
parsed replies per run, per criterion or metric, on originals vs perturbed texts, and its shift
under the misleading-cue prompt against the same judge's latest knowledge-prompt run, the run
the misleading-cue match share compares with (docs/analysis.md)."""

from __future__ import annotations

from collections import defaultdict

from apps.analysis.reports.base import Section, Table, rounded
from apps.analysis.reports.prompting_strategies import latest_by_technique
from apps.analysis.stats.intervals import Estimate
from apps.analysis.stats.sentiment import polarity_estimate, polarity_shift
from apps.judging.models import JudgeCall, JudgeRun, Technique

ORIGINAL, PERTURBED = "unperturbed", "perturbed"
Text = tuple[int, int | None]  # (item, perturbation or None)
Replies = dict[tuple[int, str, str], dict[Text, list[str]]]


def _strategy(run: JudgeRun) -> str:
    return run.strategy.name if run.strategy else "metric"


def is_misleading(run: JudgeRun) -> bool:
    return bool(run.strategy and run.strategy.technique == Technique.MISLEADING_CUE)


def replies(runs: list[JudgeRun]) -> Replies:
    """(run, criterion or metric, unperturbed|perturbed) → text → the LLM judge's parsed
    replies to it (an unparsed reply is never read: it may be an error page or a refusal)."""
    llm = [r.pk for r in runs if not r.judge.is_metric]
    rows = (
        JudgeCall.objects.filter(run_id__in=llm, parse_status="parsed")
        .exclude(raw_response="")
        .values_list(
            "run_id",
            "item_id",
            "perturbation_id",
            "criterion__aspect__slug",
            "metric__slug",
            "raw_response",
        )
    )
    out: Replies = defaultdict(lambda: defaultdict(list))
    for run, item, perturbation, aspect, metric, text in rows.iterator():
        text_kind = PERTURBED if perturbation else ORIGINAL
        out[(run, aspect or metric or "overall", text_kind)][(item, perturbation)].append(text)
    return out


STATED = ["mean_polarity", "ci_low", "ci_high", "n", "replies"]


def _stated(m: Estimate) -> list[float | int | None]:
    return [rounded(m.value), rounded(m.ci_low), rounded(m.ci_high), m.effective_n, m.n]


def sentiment_section(runs: list[JudgeRun]) -> Section:
    texts = replies(runs)
    by_run = {run.pk: run for run in runs}
    rows = [
        [
            by_run[run].judge.name,
            _strategy(by_run[run]),
            run,
            quality,
            text_kind,
            *_stated(polarity_estimate(found)),
        ]
        for (run, quality, text_kind), found in sorted(
            texts.items(), key=lambda kv: (by_run[kv[0][0]].judge.name, kv[0])
        )
    ]
    return Section(
        "Sentiment of justifications",
        "TextBlob's polarity (-1 negative to 1 positive) of the LLM judges' parsed replies "
        "(unparsed replies are left out), averaged per run, criterion or metric and text, "
        "with a bootstrap 95% interval over the texts (each resampled with all its replies).",
        tables=[
            Table(
                "sentiment",
                ["judge", "strategy", "run", "criterion", "text", *STATED],
                rows,
                "n: texts judged (each counts once in the interval); replies: the parsed "
                "replies to them (several criteria or samples give several).",
            ),
            _cue_table(runs, texts),
        ],
    )


def _cue_table(runs: list[JudgeRun], texts: Replies) -> Table:
    """The misleading-cue prompt against the latest knowledge-prompt run of the same judge,
    per criterion or metric, paired by text (the cue rates originals only)."""
    rows = []
    latest = latest_by_technique(runs)
    for cue in sorted(filter(is_misleading, runs), key=lambda r: r.pk):
        knowledge = latest.get(cue.judge_id, {}).get(Technique.KNOWLEDGE)
        if knowledge is None:
            continue
        for quality in sorted({q for run, q, _ in texts if run == cue.pk}):
            shift = polarity_shift(
                texts.get((cue.pk, quality, ORIGINAL), {}),
                texts.get((knowledge.pk, quality, ORIGINAL), {}),
            )
            rows.append(
                [
                    cue.judge.name,
                    quality,
                    knowledge.pk,
                    cue.pk,
                    rounded(shift.value),
                    rounded(shift.ci_low),
                    rounded(shift.ci_high),
                    shift.n,
                ]
            )
    return Table(
        "sentiment_misleading",
        [
            "judge",
            "criterion",
            "knowledge_run",
            "misleading_run",
            "sentiment_shift",
            "ci_low",
            "ci_high",
            "n",
        ],
        rows,
        "Mean polarity of the replies to the misleading-cue prompt (the knowledge prompt plus "
        "a false expert rating) minus that of the same judge's latest knowledge-prompt run "
        "(the run the misleading-cue match share compares with), paired by text: per text "
        "the mean of its parsed replies under each prompt. n: texts with a parsed reply "
        "under both; bootstrap 95% interval over them. Each prompt's own mean polarity, with "
        "its interval and N, is in the table above.",
    )
