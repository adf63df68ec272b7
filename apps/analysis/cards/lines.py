"""The lines of a report card (docs/cards.md): one per figure, each as
[key, figure, part, value, ci_low, ci_high, n, texts, note, evidence]: the figure's key and
name from its definition (apps/analysis/definitions), its value with the 95% interval, N
(the units its definition's population counts) and the texts the interval counts once each
(empty when every unit is independent)."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace
from decimal import Decimal

from django.db.models import Avg, Count, StdDev

from apps.analysis.cards.evidence import SubjectEvidence, calls_link, run_link, search_link
from apps.analysis.cards.units import (
    MEASURES,
    Measure,
    Units,
    cue_baseline,
    discernment_section,
    reply_source,
)
from apps.analysis.definitions import DEFINITIONS
from apps.analysis.reports.base import rounded
from apps.analysis.reports.human_scores import human_aspect_scores
from apps.analysis.reports.judge_reliability import aspect_matrix, judge_aspect_texts
from apps.analysis.stats.deltas import (
    aspect_confusion,
    aspect_correlation_matrix,
    mean_off_diagonal,
)
from apps.analysis.stats.intervals import (
    Estimate,
    clustered_mean,
    clustered_share,
    mean_interval,
)
from apps.analysis.stats.sentiment import polarity_shift
from apps.catalog.models import Level
from apps.judging.models import JudgeCall, JudgeRun
from apps.judging.models.audit import PartKind
from apps.judging.services.audits import SEARCH_DIRECTION

Line = list[object]
NO_INTERVAL = Estimate(math.nan, math.nan, math.nan, 0)
LINE_COLUMNS = [
    "key",
    "figure",
    "scope",
    "part",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "texts",
    "note",
    "evidence",
]


def _line(key: str, part: str, e: Estimate, note: str, link: str, scope: str = "") -> Line:
    """One line; ``scope``: what part of the data it covers when not all of it."""
    label = PartKind(part).label if part else "all parts"
    return [
        key,
        DEFINITIONS[key].name,
        scope,
        label,
        rounded(e.value),
        rounded(e.ci_low),
        rounded(e.ci_high),
        e.n,
        e.clusters or None,
        note,
        link,
    ]


def part_link(evidence: SubjectEvidence, part: str) -> str:
    run = evidence.run(part) if part else None
    if run is not None:
        return run_link(run)
    search = evidence.search() if part == PartKind.ADVERSARIAL else None
    return search_link(search) if search is not None else ""


def summarise(measure: Measure, values: Units) -> Estimate:
    """A measure's figure over its units: a share or a mean, its interval counting each text
    once (``Measure.cluster``)."""
    keys = list(values)
    data = [values[k] for k in keys]
    clusters = [measure.cluster(k) for k in keys]
    summary = clustered_share if measure.summary == "share" else clustered_mean
    estimate = summary(data, clusters)
    if estimate.clusters == estimate.n:  # one unit per text: nothing to count apart
        return replace(estimate, clusters=0)
    return estimate


def measure_note(evidence: SubjectEvidence, measure: Measure) -> str:
    """Why a measure has no unit: the part's state, else what its run left out."""
    note = evidence.missing(measure.part) if measure.part else ""
    if note:
        return note
    still = evidence.never_varies(measure.part) if measure.needs_variation else ""
    if still:
        return f"no data: {still}"
    left_out = evidence.left_out(measure.part) if measure.part else ""
    return "no data: " + measure.empty + (f" ({left_out})" if left_out else "")


def lines(evidence: SubjectEvidence, units: dict[str, Units]) -> list[Line]:
    rows = _discernment_lines(evidence, units["discernment"])
    for measure in MEASURES:
        if measure.key == "discernment":
            continue
        if _other_direction(evidence, measure.key):
            continue
        values = units[measure.key]
        link = part_link(evidence, measure.part)
        if not values:
            rows.append(
                _line(measure.key, measure.part, NO_INTERVAL, measure_note(evidence, measure), link)
            )
            continue
        note = evidence.missing(measure.part) if measure.part else ""
        rows.append(_line(measure.key, measure.part, summarise(measure, values), note, link))
        if measure.key == "unparsed":
            rows.extend(_by_source(measure, values))
    rows.extend(_confusion_lines(evidence))
    rows.append(_sentiment_line(evidence))
    rows.extend(_cost_lines(evidence))
    return rows


def _by_source(measure: Measure, values: Units) -> list[Line]:
    """Unreadable replies of each source (the judge, the generator, the gold judge), when
    there are several: a source that is always unreadable must not hide in the audit's share."""
    sources: dict[str, Units] = defaultdict(dict)
    for key, value in values.items():
        sources[reply_source(key)][key] = value
    if len(sources) < 2:
        return []
    return [
        _line(measure.key, "", summarise(measure, units), "", "", f"source: {source}")
        for source, units in sorted(sources.items())
    ]


def _other_direction(evidence: SubjectEvidence, key: str) -> bool:
    """An attack figure of the direction the audit's search did not take (or, with no
    search, would not have taken): the card has no line for it."""
    search = evidence.search()
    direction = search.direction if search is not None else SEARCH_DIRECTION
    wanted = {"R+": "attack_success_r_plus", "R-": "attack_success_r_minus"}[direction]
    return key.startswith("attack_success") and key != wanted


def _discernment_lines(evidence: SubjectEvidence, per_kind: Units) -> list[Line]:
    part = PartKind.DISCERNMENT
    data = evidence.scores(part)
    link = part_link(evidence, part)
    if data is None or not data.perturbed:
        left_out = evidence.left_out(part)
        note = evidence.missing(part) or "no data: no perturbed text was scored" + (
            f" ({left_out})" if left_out else ""
        )
        return [_line(k, part, NO_INTERVAL, note, link) for k in ("D_min", "D_avg")]
    summary = discernment_section(evidence).tables[1]
    rows = []
    for statistic, value, _, kinds in summary.rows:
        weighted = "expert weights" if statistic.startswith("D_EW") else "without weights"
        note = f"over {kinds} kinds; no interval (a transformed p-value); {weighted}"
        if value is None:
            note = f"undefined ({weighted}: no expert votes, or a kind without data)"
        estimate = Estimate(value if value is not None else math.nan, math.nan, math.nan, kinds)
        rows.append(_line(statistic, part, estimate, note, link))
    levels: dict[str, list[float]] = defaultdict(list)
    level_of = {k.slug: k.level for k in data.kinds.values()}
    names = dict(Level.choices)
    for slug, d in per_kind.items():
        levels[level_of.get(str(slug), "") or "-"].append(d)
    for level, values in sorted(levels.items()):
        finite = [v for v in values if math.isfinite(v)]
        scope = f"{names.get(level, 'unlevelled').lower()} kinds"
        rows.append(_line("D_level", part, mean_interval(finite), "", link, scope))
    return rows


def _confusion_lines(evidence: SubjectEvidence) -> list[Line]:
    """Judge minus human mean off-diagonal correlation between aspects (over the aspects
    both scored): above 0, the judge mixes aspects up more than humans do."""
    part = PartKind.ASPECT_DELTAS
    data = evidence.scores(part)
    key = "aspect_confusion"
    link = part_link(evidence, part)
    if data is None:
        return [_line(key, part, NO_INTERVAL, evidence.missing(part), link)]
    items = list({i for i, _ in data.original} | {i for i, _, _ in data.perturbed})
    human = human_aspect_scores(items)
    h_aspects = {a for scores in human.values() for a in scores}
    rows = []
    for dtype, texts in sorted(judge_aspect_texts(data).items()):
        aspects = sorted({a for s in texts.values() for a in s} & h_aspects)
        if len(aspects) < 2:
            continue
        judge_scores, human_scores = aspect_matrix(texts, aspects), aspect_matrix(human, aspects)
        judge = mean_off_diagonal(aspect_correlation_matrix(judge_scores))
        people = mean_off_diagonal(aspect_correlation_matrix(human_scores))
        estimate = aspect_confusion(judge_scores, human_scores)
        note = f"judge {rounded(judge)}, people {rounded(people)}"
        rows.append(_line(key, part, estimate, note, link, f"{dtype} criteria"))
    if not rows:
        note = "no data: fewer than two aspects scored by both the judge and people"
        rows.append(_line(key, part, NO_INTERVAL, note, link))
    return rows


def _replies(run: JudgeRun) -> dict[tuple, list[str]]:
    """Each text's readable replies (unreadable ones say nothing of the judge's view)."""
    rows = JudgeCall.objects.filter(run=run, parse_status="parsed").exclude(raw_response="")
    out: dict[tuple, list[str]] = defaultdict(list)
    for item, perturbation, reply in rows.values_list(
        "item_id", "perturbation_id", "raw_response"
    ).iterator():
        out[(item, perturbation)].append(reply)
    return out


def _sentiment_line(evidence: SubjectEvidence) -> Line:
    """Mean shift of the replies' TextBlob polarity under the misleading cue, paired by text."""
    part, key = PartKind.MISLEADING_CUE, "sentiment_shift"
    cue, baseline = evidence.run(part), cue_baseline(evidence)
    if cue is None or baseline is None or cue.judge.is_metric:
        note = evidence.missing(part) or "no replies to read (a metric judge)"
        return _line(key, part, NO_INTERVAL, note, part_link(evidence, part))
    shift = polarity_shift(_replies(cue), _replies(baseline))
    return _line(key, part, shift, f"compared with run {baseline.pk}", calls_link(cue))


def _cost_note(cost: Decimal | None, batched: int) -> str:
    if cost is None:
        return "the judge has no prices"
    return f"{batched} run(s) at the batch price" if batched else ""


def _cost_lines(evidence: SubjectEvidence) -> list[Line]:
    runs = evidence.runs
    prompt = sum(r.prompt_tokens for r in runs)
    completion = sum(r.completion_tokens for r in runs)
    costs = [r.estimated_cost for r in runs]  # a batch's tokens at its batch price
    cost = None if None in costs else sum((c for c in costs if c is not None), Decimal(0))
    batched = sum(r.batch_mode for r in runs)
    calls = sum(r.done for r in runs)
    tokens = Estimate(float(prompt + completion), math.nan, math.nan, calls)
    price = Estimate(float(cost) if cost is not None else math.nan, math.nan, math.nan, calls)
    agg = JudgeCall.objects.filter(run__in=runs, cached=False, latency__isnull=False).aggregate(
        mean=Avg("latency"), sd=StdDev("latency"), n=Count("id")
    )
    n = agg["n"] or 0
    if n:
        half = 1.96 * (agg["sd"] or 0.0) / math.sqrt(n)
        latency = Estimate(agg["mean"], agg["mean"] - half, agg["mean"] + half, n)
    else:
        latency = NO_INTERVAL
    return [
        _line("tokens", "", tokens, f"{prompt} prompt, {completion} completion", ""),
        _line("cost_usd", "", price, _cost_note(cost, batched), ""),
        _line("latency", "", latency, "", ""),
    ]
