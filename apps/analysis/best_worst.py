"""Best-worst scaling in the analysis (apps/analysis/kinds.py): its answers as the statistics
read them (SPEC §10, apps/analysis/stats/bws.py), for the Human agreement and Judge vs human
reports (apps/analysis/reports/best_worst.py), its raw-data tables and its stage of the study's
pipeline.

Per criterion, each answer is ``(texts shown, best, worst, annotator)`` with every text keyed as
judge scores are, ``(item id, perturbation id)``, ``None`` for the item's original
(`BestWorst.shown`). `text_names` gives the names people read for those keys: the item's
external id, "original" or the perturbation's id (its external id, else its number, as the other
downloads name it), and the perturbation's kind.

Imports no numpy: the raw-data downloads load with the URL conf (docs/deployment.md, Start-up).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from apps.analysis.pipeline import WorkStage, stage_register
from apps.analysis.raw_data import Table, table_register
from apps.analysis.raw_data.human import BASE_COLUMNS, SAVES, judgement_base
from apps.annotation.models import Study
from apps.annotation.models.best_worst import BestWorst, BestWorstSlot, BestWorstTuple
from apps.corpus.models import Perturbation, SourceItem

#: A text: (item id, perturbation id), None for the original.
Text = tuple[int, int | None]
#: What stands for the item's original where a text is named.
ORIGINAL = "original"
CHUNK = 2000


@dataclass
class CriterionAnswers:
    """The best-worst answers under one criterion."""

    key: str  # the criterion's key
    aspect: str  # its aspect's slug: what a judge's scores are matched by
    answers: list[tuple[list[Text], Text, Text, int]] = field(default_factory=list)

    @property
    def annotators(self) -> int:
        return len({row[3] for row in self.answers})


def answers_by_criterion(answers: QuerySet[BestWorst]) -> dict[str, CriterionAnswers]:
    """The answers grouped by criterion (in the catalogue's order of criteria), each group
    in the order the answers were given (what orders equal scores)."""
    rows = answers.select_related("unit__criterion__aspect").order_by(
        "unit__criterion__aspect__position",
        "unit__criterion__description_type",
        "unit__criterion__key",
        "id",
    )
    out: dict[str, CriterionAnswers] = {}
    for answer in rows.iterator(chunk_size=CHUNK):
        criterion = answer.unit.criterion
        group = out.get(criterion.key)
        if group is None:
            group = out[criterion.key] = CriterionAnswers(criterion.key, criterion.aspect.slug)
        shown, best, worst = answer.shown()
        group.answers.append((shown, best, worst, answer.annotator_id))
    return out


@dataclass(frozen=True)
class TextName:
    dataset: str
    item: str  # the item's external id
    text: Any  # ORIGINAL, or the perturbation's external id (its number when it has none)
    kind: str | None  # the perturbation's kind; None for the original


def text_names(texts: Iterable[Text]) -> dict[Text, TextName]:
    """How each text is named in tables and downloads (two queries per 2,000 texts). A
    perturbation deleted since it was shown keeps its number, with no kind."""
    texts = set(texts)
    items = {
        pk: (dataset, external)
        for pk, dataset, external in _rows(
            SourceItem.objects.all(),
            {item for item, _ in texts},
            ("id", "dataset__name", "external_id"),
        )
    }
    perturbed = {
        pk: (external or pk, kind)
        for pk, external, kind in _rows(
            Perturbation.objects.all(),
            {p for _, p in texts if p is not None},
            ("id", "external_id", "kind__slug"),
        )
    }
    out = {}
    for item, perturbation in texts:
        dataset, external = items.get(item, ("", str(item)))
        name, kind = (
            (ORIGINAL, None)
            if perturbation is None
            else perturbed.get(perturbation, (perturbation, None))
        )
        out[(item, perturbation)] = TextName(dataset, external, name, kind)
    return out


def _rows(rows: QuerySet[Any], pks: set[int], fields: tuple[str, ...]) -> Iterator[tuple[Any, ...]]:
    """`fields` of the rows with these ids, CHUNK ids a query (SQLite caps a query's
    parameters)."""
    ordered = sorted(pks)
    for start in range(0, len(ordered), CHUNK):
        yield from rows.filter(pk__in=ordered[start : start + CHUNK]).values_list(*fields)


# --- raw data ----------------------------------------------------------------------------

ANSWER_COLUMNS = [
    *BASE_COLUMNS,
    "dataset",
    "item",
    "tuple",
    "criterion",
    "aspect",
    "texts",
    "best",
    "worst",
    "best_text",
    "worst_text",
]

SCORE_COLUMNS = [
    "study",
    "criterion",
    "aspect",
    "dataset",
    "item",
    "text",
    "kind",
    "best",
    "worst",
    "appearances",
    "score",
]


def answer_rows(study: Study) -> Iterator[dict[str, Any]]:
    """Best-worst answers, one per annotator and tuple: the texts in the order shown
    ("original" or the perturbed text's id), and the best and the worst as places in that list
    (0 first) and as texts."""
    shown = BestWorstTuple.objects.filter(study=study).values_list("item_id", "texts")
    names = text_names((item, text) for item, texts in shown.iterator() for text in texts)
    rows = (
        BestWorst.objects.filter(study=study)
        .select_related("annotator", "unit__item__dataset", "unit__criterion__aspect")
        .annotate(**SAVES)
        .order_by("id")
    )
    for b in rows.iterator(chunk_size=CHUNK):
        unit = b.unit
        texts = [names[key].text for key in unit.text_keys()]
        yield {
            **judgement_base(BestWorst.judgement_kind, b, study, b.annotator),
            "dataset": unit.item.dataset.name,
            "item": unit.item.external_id,
            "tuple": unit.pk,
            "criterion": unit.criterion.key,
            "aspect": unit.criterion.aspect.slug,
            "texts": texts,
            "best": b.best,
            "worst": b.worst,
            "best_text": texts[b.best],
            "worst_text": texts[b.worst],
        }


def score_rows(study: Study) -> Iterator[dict[str, Any]]:
    """The counting score of every text a best-worst answer showed, per criterion, highest
    first, from every real answer (as the other tables, with the annotators a control
    threshold leaves out of the reports)."""
    from apps.analysis.reports.best_worst import counting_scores, ranked  # numpy: only here

    groups = answers_by_criterion(BestWorst.objects.filter(study=study))
    scored = {criterion: counting_scores(group) for criterion, group in groups.items()}
    names = text_names(text for scores in scored.values() for text in scores)
    for criterion, scores in scored.items():
        for text, score in ranked(scores):
            name = names[text]
            yield {
                "study": study.slug,
                "criterion": criterion,
                "aspect": groups[criterion].aspect,
                "dataset": name.dataset,
                "item": name.item,
                "text": name.text,
                "kind": name.kind,
                "best": score.best,
                "worst": score.worst,
                "appearances": score.appearances,
                "score": score.score,
            }


table_register(
    "best-worst",
    Table(
        "Best-worst answers",
        "Every best-worst answer: the texts of the tuple in the order shown, the best and the "
        "worst.",
        ANSWER_COLUMNS,
        answer_rows,
    ),
)
table_register(
    "best-worst-scores",
    Table(
        "Best-worst counting scores",
        "Every text a best-worst answer showed, per criterion: picked best, picked worst, "
        "appearances and its counting score.",
        SCORE_COLUMNS,
        score_rows,
    ),
)

# --- the study's pipeline ---------------------------------------------------------------

stage_register(WorkStage("best-worst", "Best-worst scaling", "best_worst_criteria", BestWorstSlot))
