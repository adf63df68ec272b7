"""A search's final texts as perturbations (kind "adversarial R+" / "adversarial R-"), so they
can be vetted, compared and judged like any other; the provenance is the whole trajectory.

Only AdvEval's texts become perturbations, and only when the best text is not R0 itself
(there is then nothing adversarial to show). When the search belongs to a study, the study
takes the dataset and the kind, and its annotation plan gains the new perturbations.
"""

from __future__ import annotations

from typing import Any

from apps.catalog.models import KindFamily, Method, PerturbationKind
from apps.corpus.models import Origin, Perturbation, PerturbationVersion
from apps.judging.models import (
    AdversarialSearch,
    Candidate,
    CandidateOrigin,
    SearchItem,
    SearchIteration,
)

KIND_SLUGS = {"R+": "adversarial-r-plus", "R-": "adversarial-r-minus"}
_KIND_DEFAULTS: dict[str, dict[str, Any]] = {
    "R+": {
        "name": "Adversarial R+",
        "description": "A good text an adversarial search found the victim judge scores low.",
    },
    "R-": {
        "name": "Adversarial R\u2212",
        "description": "A poor text an adversarial search found the victim judge scores high.",
    },
}


def adversarial_kind(direction: str) -> PerturbationKind:
    """The kind (shipped in the catalog; made here if the catalog was not loaded)."""
    kind, _ = PerturbationKind.objects.get_or_create(
        slug=KIND_SLUGS[direction],
        defaults={
            **_KIND_DEFAULTS[direction],
            "family": KindFamily.ADVERSARIAL,
            "method": Method.LLM,
            "source": "adveval",
        },
    )
    return kind


def trajectory_record(search_item: SearchItem) -> list[dict[str, Any]]:
    """Every iteration of the item: the generator's reply and every candidate's scores."""
    iterations = SearchIteration.objects.filter(search_item=search_item).order_by("number")
    candidates: dict[int, list[Candidate]] = {}
    for candidate in Candidate.objects.filter(search_item=search_item).order_by("index"):
        candidates.setdefault(candidate.iteration_id, []).append(candidate)
    return [
        {
            "iteration": it.number,
            "status": it.status,
            "generator": {
                "request_id": it.request_id,
                "cache_key": it.cache_key,
                "cached": it.cached,
                "parse_status": it.parse_status,
                "reply": it.raw_response,
                "error": it.error,
            },
            "candidates": [
                {
                    "index": c.index,
                    "text": c.text,
                    "origin": c.origin,
                    "s_gold": c.s_gold,
                    "s_victim": c.s_victim,
                    "s_fb": c.s_fb,
                    "unscored": c.unscored,
                    "duplicate": c.duplicate_of_id is not None,
                }
                for c in candidates.get(it.pk, [])
            ],
        }
        for it in iterations
    ]


def final_perturbation(search: AdversarialSearch, search_item: SearchItem) -> Perturbation | None:
    """The item's final text as a perturbation (made once; None when there is none)."""
    best = search_item.best
    if best is None or best.origin != CandidateOrigin.GENERATOR:
        return None
    kind = adversarial_kind(search.direction)
    external_id = f"adveval:search-{search.pk}"
    existing = Perturbation.objects.filter(
        item_id=search_item.item_id, kind=kind, external_id=external_id
    ).first()
    if existing is not None:
        return existing
    perturbation = Perturbation.objects.create(
        item_id=search_item.item_id,
        kind=kind,
        external_id=external_id,
        text=best.text,
        explanation=_explanation(search, search_item, best),
        origin=Origin.LLM,
        parameters=_parameters(search, search_item, best),
        generation={
            "search": search.pk,
            "generator": {
                "name": search.generator.name,
                "base_url": search.generator.base_url,
                "model": search.generator.model,
                "temperature": search.generator_temperature,
                "max_tokens": search.generator_max_tokens,
            },
            "trajectory": trajectory_record(search_item),
        },
    )
    PerturbationVersion.objects.create(perturbation=perturbation, number=1, text=best.text)
    return perturbation


def _explanation(search: AdversarialSearch, search_item: SearchItem, best: Candidate) -> str:
    victim = search.judges.get(role="victim").judge.name
    return (
        f"Adversarial search {search.pk} ({search.direction}) against {victim}: "
        f"S_gold {best.s_gold:.1f}, S_victim {best.s_victim:.1f}, S_fb {best.s_fb:.1f} after "
        f"{search_item.iterations} iteration(s), {search_item.victim_queries} victim queries "
        f"({search_item.get_stop_reason_display().lower()})."
    )


def _parameters(
    search: AdversarialSearch, search_item: SearchItem, best: Candidate
) -> dict[str, Any]:
    judges = list(search.judges.select_related("judge", "strategy"))
    item = search_item.item
    task = item.task or item.dataset.task
    criterion = search.criterion
    return {
        "search": search.pk,
        "criterion": criterion.key if criterion else "",
        # what annotators checking the gold label are shown (docs/adversarial.md)
        "criterion_text": criterion.render(task.text_name if task else "text") if criterion else "",
        "direction": search.direction,
        "alpha": search.alpha,
        "victim": next(j.judge.name for j in judges if j.role == "victim"),
        "gold": [j.judge.name for j in judges if j.role == "gold"],
        "s_gold": best.s_gold,
        "s_victim": best.s_victim,
        "s_fb": best.s_fb,
        "success": search_item.success,
        "stop_reason": search_item.stop_reason,
        "iterations": search_item.iterations,
        "victim_queries": search_item.victim_queries,
    }


def into_study(search: AdversarialSearch) -> None:
    """The study takes the dataset and the kind; its plan gains the new perturbations."""
    if search.study is None:
        return
    from apps.annotation.services.plan import study_plan_request

    search.study.datasets.add(search.dataset_id)
    search.study.kinds.add(adversarial_kind(search.direction))
    study_plan_request(study=search.study)
