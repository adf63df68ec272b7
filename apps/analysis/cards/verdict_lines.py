"""The verdict table of a report card (docs/cards.md, "The verdict"): one line per figure
with a threshold, then error detection per aspect or ability, each as
[key, figure, scope, verdict, value, ci_low, ci_high, n, texts, threshold, why, evidence]."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping

from apps.analysis.cards.evidence import SubjectEvidence
from apps.analysis.cards.lines import LINE_COLUMNS, Line, summarise
from apps.analysis.cards.units import BY_KEY, Units, kind_results, kinds_of_units
from apps.analysis.cards.verdicts import (
    NO_RESULT,
    NOT_MEASURED,
    Power,
    decide,
    discernment_power,
    mean_power,
    share_power,
)
from apps.analysis.definitions import DEFINITIONS
from apps.analysis.reports.base import rounded
from apps.analysis.stats.intervals import Estimate
from apps.analysis.stats.power import best_d_summary
from apps.catalog.models import Aspect
from apps.judging.models.audit import PartKind

VERDICT_COLUMNS = [
    "key",
    "figure",
    "scope",
    "verdict",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "texts",
    "threshold",
    "why",
    "evidence",
]
#: The card's lines that get a verdict, in the order the verdict lists them.
JUDGED = [
    "detection_failure",
    "reference_failure",
    "pairwise_failure",
    "position_flip",
    "invariant_success",
    "D_min",
    "D_avg",
    "s_t_delta",
    "s_f_delta",
    "aspect_confusion",
    "cue_resisted",
    "human_error",
    "attack_success_r_plus",
    "attack_success_r_minus",
    "unparsed",
]
ALL = "all kinds"


def verdict_rows(
    evidence: SubjectEvidence,
    units: dict[str, Units],
    card_lines: list[Line],
    thresholds: Mapping[str, float],
) -> list[list[object]]:
    by_key: dict[str, list[Line]] = defaultdict(list)
    for line in card_lines:
        by_key[str(line[0])].append(line)
    rows = []
    for key in JUDGED:
        for line in by_key.get(key, []):
            scope = _scope(line)
            rows.append(_row(evidence, key, scope, line, units, thresholds[key]))
        if key == "detection_failure" and units[key]:
            rows.extend(_scoped(evidence, units[key], line_of(by_key, key), thresholds[key]))
    return rows


def line_of(by_key: dict[str, list[Line]], key: str) -> Line:
    return by_key[key][0]


def _scope(line: Line) -> str:
    return str(line[LINE_COLUMNS.index("scope")]) or ALL


def _estimate(line: Line) -> Estimate:
    """A card line's figure back as an Estimate (the line holds it rounded to 4 places)."""
    value, low, high = (_float(line[LINE_COLUMNS.index(c)]) for c in ("value", "ci_low", "ci_high"))
    n, texts = line[LINE_COLUMNS.index("n")], line[LINE_COLUMNS.index("texts")]
    return Estimate(value, low, high, int(n or 0), int(texts or 0))  # type: ignore[call-overload]


def _float(value: object) -> float:
    return math.nan if value is None else float(value)  # type: ignore[arg-type]


def _row(
    evidence: SubjectEvidence,
    key: str,
    scope: str,
    line: Line,
    units: dict[str, Units],
    threshold: float,
) -> list[object]:
    definition = DEFINITIONS[key]
    estimate = _estimate(line)
    part = part_of(key)
    word, why = _unmeasured(evidence, key, part, units, line)
    if not word:
        strength = _power(evidence, key, estimate, threshold)
        word, why = decide(definition, estimate, threshold, strength)
    return _out(key, definition.name, scope, word, estimate, threshold, why, line[-1])


def part_of(key: str) -> str:
    """The audit part (a PartKind value) a verdict line's figure comes from; "" for one
    drawn from every part (unreadable replies)."""
    if key in BY_KEY:
        return BY_KEY[key].part
    return PartKind.ASPECT_DELTAS if key == "aspect_confusion" else PartKind.DISCERNMENT


def _unmeasured(
    evidence: SubjectEvidence, key: str, part: str, units: dict[str, Units], line: Line
) -> tuple[str, str]:
    """("not measured" | "no result", why) when the figure has no value, else ("", ""): "no
    result" when the part's work produced nothing readable, "not measured" when the data
    hold nothing of this kind (or the part did not run)."""
    word, why = evidence.state(part) if part else ("", "")
    if word:
        return word, why
    if line[LINE_COLUMNS.index("value")] is not None:
        return "", ""
    note = str(line[LINE_COLUMNS.index("note")]).removeprefix("no data: ")
    return (
        (NO_RESULT, _no_result(evidence, part))
        if _nothing_read(evidence, part)
        else (
            NOT_MEASURED,
            note,
        )
    )


def _nothing_read(evidence: SubjectEvidence, part: str) -> bool:
    if part == PartKind.ADVERSARIAL:
        outcome = evidence.outcome()
        return outcome is not None and not outcome.has_result
    run = evidence.run(part) if part else None
    return run is not None and run.total > 0 and run.scored == 0


def _no_result(evidence: SubjectEvidence, part: str) -> str:
    outcome = evidence.outcome() if part == PartKind.ADVERSARIAL else None
    if outcome is not None:
        return outcome.no_result_reason.removeprefix("No result: ")
    run = evidence.run(part)
    assert run is not None
    return (
        f"none of the run's {run.total} calls gave a readable score ({run.failed} failed, "
        f"{run.unscored} unreadable)"
    )


def _power(
    evidence: SubjectEvidence, key: str, estimate: Estimate, threshold: float
) -> Power | None:
    definition = DEFINITIONS[key]
    if key in ("D_min", "D_avg"):
        return _d_power(evidence, key, threshold)
    if definition.unit.startswith("share"):
        return share_power(definition, estimate.effective_n, threshold)
    return mean_power(estimate.effective_n)


def _d_power(evidence: SubjectEvidence, key: str, threshold: float) -> Power | None:
    results = [r for r in kind_results(evidence) if not r.kind.score_invariant and r.usable()]
    if not results:
        return None
    kinds = {r.kind.slug: (r.n, len(r.usable())) for r in results}
    levels = {r.kind.slug: r.kind.level for r in results if r.kind.level in ("C", "W", "S")}
    lowest, mean = best_d_summary(kinds, levels)  # type: ignore[arg-type]
    reaches = lowest if key == "D_min" else mean
    fewest = min(n for n, _ in kinds.values())
    metrics = max(m for _, m in kinds.values())
    return discernment_power(reaches, threshold, fewest, metrics, len(kinds))


def _scoped(
    evidence: SubjectEvidence, units: Units, line: Line, threshold: float
) -> list[list[object]]:
    """Error detection per target aspect (or FBI ability, or level) of the kinds."""
    key = "detection_failure"
    measure, definition = BY_KEY[key], DEFINITIONS[key]
    groups = _groups(evidence, units)
    if len(groups) < 2:
        return []
    rows = []
    for scope, values in sorted(groups.items()):
        estimate = summarise(measure, values)
        word, why = decide(
            definition,
            estimate,
            threshold,
            share_power(definition, estimate.effective_n, threshold),
        )
        rows.append(_out(key, definition.name, scope, word, estimate, threshold, why, line[-1]))
    return rows


def _groups(evidence: SubjectEvidence, units: Units) -> dict[str, Units]:
    kinds = kinds_of_units(evidence, PartKind.FBI_SINGLE)
    aspects = dict(
        Aspect.objects.filter(pk__in={k.target_aspect_id for k in kinds.values()}).values_list(
            "pk", "name"
        )
    )
    levels = {"C": "character", "W": "word", "S": "sentence"}
    groups: dict[str, Units] = defaultdict(dict)
    for unit, value in units.items():
        kind = kinds.get(unit[0]) if isinstance(unit, tuple) else None
        if kind is None:
            continue
        if kind.target_aspect_id in aspects:
            scope = f"aspect: {aspects[kind.target_aspect_id]}"
        elif kind.ability:
            scope = f"ability: {kind.ability}"
        else:
            scope = f"level: {levels.get(kind.level, 'none')}"
        groups[scope][unit] = value
    return groups


def _out(
    key: str,
    figure: str,
    scope: str,
    word: str,
    e: Estimate,
    threshold: float,
    why: str,
    link: object,
) -> list[object]:
    return [
        key,
        figure,
        scope,
        word,
        rounded(e.value),
        rounded(e.ci_low),
        rounded(e.ci_high),
        e.n,
        e.clusters or None,
        threshold,
        why,
        link,
    ]
