"""The worst kinds of a report card (docs/cards.md): every kind's failure rate in each
paradigm, the worst first, and for the worst kinds one example each shown inline: the
source, the original and the perturbed text with the change marked, the judge's reply and
its scores."""

from __future__ import annotations

from collections import defaultdict

from apps.analysis.cards.evidence import SubjectEvidence, perturbation_link, run_link
from apps.analysis.cards.lines import summarise
from apps.analysis.cards.units import BY_KEY, Units, kinds_of_units
from apps.analysis.reports.adversarial import inline_diff
from apps.analysis.reports.base import Section, Table, rounded
from apps.analysis.reports.judge_data import KindInfo, kind_infos, pairwise_pairs
from apps.corpus.models import Perturbation
from apps.judging.models import JudgeCall
from apps.judging.models.audit import PartKind

#: How many of the worst kinds get an example.
EXAMPLES = 5
#: (figure, the part whose run holds its scores) of the worst-kinds table.
PARADIGMS = [
    ("detection_failure", PartKind.FBI_SINGLE),
    ("invariant_success", PartKind.FBI_SINGLE),
    ("reference_failure", PartKind.FBI_REFERENCE),
    ("pairwise_failure", PartKind.FBI_PAIRWISE),
]
KIND_COLUMNS = ["kind", "paradigm", "figure", "value", "ci_low", "ci_high", "n", "texts", "badness"]
EXAMPLE_COLUMNS = [
    "kind",
    "failure_rate",
    "ci_low",
    "ci_high",
    "texts",
    "criterion",
    "source",
    "diff",
    "original_score",
    "perturbed_score",
    "reply",
    "text_link",
    "evidence",
]


def _by_kind(evidence: SubjectEvidence, units: Units, part: str) -> dict[str, Units]:
    """A measure's units per kind name (units key on the perturbed text first)."""
    kinds = _pairwise_kinds(evidence) if part == PartKind.FBI_PAIRWISE else None
    kinds = kinds if kinds is not None else kinds_of_units(evidence, part)
    out: dict[str, Units] = defaultdict(dict)
    for key, value in units.items():
        kind = kinds.get(key[0]) if isinstance(key, tuple) else None
        if kind is not None:
            out[kind.name][key] = value
    return out


def _pairwise_kinds(evidence: SubjectEvidence) -> dict[int, KindInfo]:
    run = evidence.run(PartKind.FBI_PAIRWISE)
    if run is None:
        return {}
    pairs = pairwise_pairs(run)
    infos = kind_infos({kind for kind, _ in pairs})
    return {key[0]: infos[kind] for kind, key in pairs}


def worst_kinds(evidence: SubjectEvidence, units: dict[str, Units]) -> Section:
    rows = []
    for key, part in PARADIGMS:
        measure = BY_KEY[key]
        for name, values in _by_kind(evidence, units[key], part).items():
            e = summarise(measure, values)
            bad = 1 - e.value if measure.worse == "lower" else e.value
            rows.append(
                [
                    name,
                    PartKind(part).label,
                    measure.label,
                    rounded(e.value),
                    rounded(e.ci_low),
                    rounded(e.ci_high),
                    e.n,
                    e.clusters or None,
                    rounded(bad),
                ]
            )
    rows.sort(key=lambda r: (-float(r[-1] or 0), str(r[0])))
    return Section(
        "Worst kinds",
        "Each kind in each paradigm, the worst first: its failure rate (for score-invariant "
        "kinds, the share of scores kept, ranked by what it misses), with its 95% interval "
        "over the kind's texts and N.",
        tables=[Table("worst_kinds", KIND_COLUMNS, rows)],
    )


def worst_examples(evidence: SubjectEvidence, units: dict[str, Units]) -> Section:
    """The kinds that most often went unnoticed in single-answer scoring, one example each:
    the perturbed text scored highest relative to its original."""
    section = Section(
        "Worst kinds, with an example",
        f"Up to {EXAMPLES} kinds whose errors the judge most often missed (single answer), "
        "each with the perturbed text it scored highest relative to the original: the "
        "change is marked (removed, added), with the judge's reply on the perturbed text.",
    )
    data, run = evidence.scores(PartKind.FBI_SINGLE), evidence.run(PartKind.FBI_SINGLE)
    measure = BY_KEY["detection_failure"]
    if data is None or run is None:
        return section
    per_kind = _by_kind(evidence, units["detection_failure"], PartKind.FBI_SINGLE)
    ranked = sorted(
        ((summarise(measure, values), name, values) for name, values in per_kind.items()),
        key=lambda t: (-t[0].value, t[1]),
    )
    item_of = {(pert, dim): item for item, pert, dim in data.perturbed}

    def rise(key: tuple) -> float:
        item = item_of[key]
        return data.perturbed[(item, *key)][1] - data.original[(item, key[1])]

    chosen = []
    for estimate, name, values in ranked[:EXAMPLES]:
        if estimate.value <= 0:
            break
        missed = [key for key, failed in values.items() if failed and isinstance(key, tuple)]
        pert, dim = max(missed, key=lambda key: (rise(key), -key[0]))
        chosen.append((estimate, name, pert, dim))
    section.tables.append(Table("worst_kind_examples", EXAMPLE_COLUMNS, _rows(data, run, chosen)))
    return section


def _rows(data, run, chosen) -> list[list[object]]:
    texts = {
        p.pk: p
        for p in Perturbation.objects.filter(pk__in=[c[2] for c in chosen]).select_related("item")
    }
    rows = []
    for estimate, name, pert, dim in chosen:
        text = texts[pert]
        item = text.item_id
        reply = (
            JudgeCall.objects.filter(run=run, perturbation_id=pert, parse_status="parsed")
            .filter(**_dim_filter(dim))
            .order_by("sample_index")
            .values_list("raw_response", flat=True)
            .first()
        )
        rows.append(
            [
                name,
                rounded(estimate.value),
                rounded(estimate.ci_low),
                rounded(estimate.ci_high),
                estimate.clusters or estimate.n,
                data.dims[dim].shown,
                text.item.source,
                inline_diff(text.item.original, text.text),
                rounded(data.original[(item, dim)]),
                rounded(data.perturbed[(item, pert, dim)][1]),
                reply or "",
                perturbation_link(pert),
                run_link(run),
            ]
        )
    return rows


def _dim_filter(dim) -> dict[str, object]:
    kind, pk = dim
    if kind == "c":
        return {"criterion_id": pk}
    return {"metric_id": pk} if pk else {}
