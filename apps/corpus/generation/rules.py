"""Rule-based kinds: one item perturbed by one kind's rule, with its checks.

A perturbation's external id is derived from the rule, its derived seed and its parameters, so
running a job again (after a crash, say) creates nothing twice.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from apps.catalog.models import PerturbationKind
from apps.corpus.generation.checks import checked
from apps.corpus.generation.seeds import derived_seed
from apps.corpus.generation.storing import Outcome
from apps.corpus.models import Origin, Perturbation, SourceItem
from apps.corpus.perturbers import PerturbationNotApplicable, apply_rule, degrees_of


def rule_perturbation(
    job, item: SourceItem, kind: PerturbationKind, pool, outcome: Outcome
) -> None:
    """Add the kind's perturbation of the item to ``outcome`` (or why it does not apply)."""
    seed = derived_seed(job.seed, item.external_id, kind.slug)
    params: dict[str, Any] = dict(kind.parameters or {}) if job.use_kind_parameters else {}
    params.pop("max_edit_size", None)
    if kind.rule in ("random_ending", "random_answer"):
        params["pool"] = [text for pk, text in pool.items() if pk != item.pk]
    if kind.rule == "wrong_ending":
        params["wrong_ending"] = (item.metadata or {}).get("wrong_ending", "")
    degree = _degree(job, kind)
    try:
        result = apply_rule(kind.rule, item.original, seed=seed, degree=degree, **params)
    except PerturbationNotApplicable as exc:
        outcome.count("not_applicable")
        outcome.problems.append({"item": item.external_id, "kind": kind.slug, "reason": str(exc)})
        return
    recorded = {k: v for k, v in result.params.items() if k != "pool"}
    perturbation = Perturbation(
        item=item,
        kind=kind,
        external_id=_external_id(kind.rule, seed, recorded),
        text=result.text,
        origin=Origin.RULE,
        rule_name=kind.rule,
        parameters=recorded,
        seed=seed,
    )
    outcome.perturbations.append(checked(perturbation, kind))


def _degree(job, kind: PerturbationKind) -> str | None:
    if degrees_of(kind.rule) == (None,):
        return None
    return kind.degree or job.degree or "minor"


def _external_id(rule: str, seed: int, params: dict[str, Any]) -> str:
    digest = hashlib.sha1(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()
    return f"rule:{rule}:{seed}:{digest[:10]}"
