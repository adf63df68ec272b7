"""Sentiment of judge justifications (methods §5): TextBlob's mean polarity of the LLM judges'
replies per strategy, per criterion or metric, on originals vs perturbed texts, and under the
misleading-cue prompt vs the knowledge prompt of the same judge (docs/analysis.md)."""

from __future__ import annotations

from collections import defaultdict

from apps.analysis.reports.base import Section, Table, rounded
from apps.analysis.stats.sentiment import MeanPolarity, mean_polarity
from apps.judging.models import JudgeCall, JudgeRun, Technique

ORIGINAL, PERTURBED = "unperturbed", "perturbed"


def _strategy(run: JudgeRun) -> str:
    return run.strategy.slug if run.strategy else "metric"


def is_misleading(run: JudgeRun) -> bool:
    return bool(run.strategy and run.strategy.technique == Technique.MISLEADING_CUE)


def is_knowledge(run: JudgeRun) -> bool:
    return bool(run.strategy and run.strategy.technique == Technique.KNOWLEDGE)


def replies(runs: list[JudgeRun]) -> dict[tuple[int, str, str], list[str]]:
    """(run, criterion or metric, unperturbed|perturbed) → the LLM judge's reply texts."""
    llm = [r.pk for r in runs if not r.judge.is_metric]
    rows = (
        JudgeCall.objects.filter(run_id__in=llm)
        .exclude(raw_response="")
        .values_list(
            "run_id", "perturbation_id", "criterion__aspect__slug", "metric__slug", "raw_response"
        )
    )
    out: dict[tuple[int, str, str], list[str]] = defaultdict(list)
    for run, perturbation, aspect, metric, text in rows.iterator():
        text_kind = PERTURBED if perturbation else ORIGINAL
        out[(run, aspect or metric or "-", text_kind)].append(text)
    return out


def sentiment_section(runs: list[JudgeRun]) -> Section:
    texts = replies(runs)
    means = {key: mean_polarity(values) for key, values in texts.items()}
    by_run = {run.pk: run for run in runs}
    rows = [
        [
            by_run[run].judge.name,
            _strategy(by_run[run]),
            quality,
            text_kind,
            *_stated(m),
        ]
        for (run, quality, text_kind), m in sorted(
            means.items(), key=lambda kv: (by_run[kv[0][0]].judge.name, kv[0])
        )
    ]
    return Section(
        "Sentiment of justifications",
        "TextBlob's polarity (-1 negative to 1 positive) of the LLM judges' replies, averaged "
        "per strategy, criterion or metric and text, with a bootstrap 95% interval over "
        "replies and n replies each.",
        tables=[
            Table(
                "sentiment",
                ["judge", "strategy", "criterion", "text", *STATED],
                rows,
            ),
            _cue_table(runs, texts),
        ],
    )


def _cue_table(runs: list[JudgeRun], texts) -> Table:
    """The misleading-cue prompt against the knowledge prompt of the same judge, per
    criterion or metric (the cue rates originals only)."""
    rows = []
    for cue in filter(is_misleading, runs):
        for knowledge in (r for r in runs if is_knowledge(r) and r.judge_id == cue.judge_id):
            for quality in sorted({q for run, q, _ in texts if run == cue.pk}):
                with_cue = mean_polarity(texts.get((cue.pk, quality, ORIGINAL), []))
                without = mean_polarity(texts.get((knowledge.pk, quality, ORIGINAL), []))
                rows.append(
                    [
                        cue.judge.name,
                        quality,
                        *_stated(without),
                        *_stated(with_cue),
                        rounded(with_cue.mean - without.mean),
                    ]
                )
    return Table(
        "sentiment_misleading",
        [
            "judge",
            "criterion",
            *(f"knowledge_{c}" for c in STATED),
            *(f"misleading_{c}" for c in STATED),
            "difference",
        ],
        rows,
        "Mean polarity of replies to the knowledge prompt and to the misleading-cue prompt "
        "(the knowledge prompt plus a false expert rating), on the same judge.",
    )


STATED = ["mean_polarity", "ci_low", "ci_high", "n"]


def _stated(m: MeanPolarity) -> list[float | int | None]:
    return [rounded(m.mean), rounded(m.ci_low), rounded(m.ci_high), m.n]
