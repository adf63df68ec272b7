"""Storing generated perturbations: a duplicate of a stored one is merged into it, not kept."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from django.db import transaction

from apps.corpus.models import Perturbation, PerturbationVersion


@dataclass
class Outcome:
    """What a generation job made so far (not yet stored), its counts and problems."""

    perturbations: list[Perturbation] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[dict[str, str]] = field(default_factory=list)

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1


@transaction.atomic
def perturbations_store(outcome: Outcome) -> None:
    """Store new perturbations; same id or same text as a stored one of that item and kind
    means a duplicate, merged into the stored one (counted, not created)."""
    batch, outcome.perturbations = outcome.perturbations, []
    if not batch:
        return
    existing = set(
        Perturbation.objects.filter(item_id__in={p.item_id for p in batch}).values_list(
            "item_id", "kind_id", "external_id"
        )
    )
    texts = {
        (i, k, hashlib.sha1(t.encode()).digest())
        for i, k, t in Perturbation.objects.filter(
            item_id__in={p.item_id for p in batch}
        ).values_list("item_id", "kind_id", "text")
    }
    new = []
    for p in batch:
        text_key = (p.item_id, p.kind_id, hashlib.sha1(p.text.encode()).digest())
        if (p.item_id, p.kind_id, p.external_id) in existing or text_key in texts:
            outcome.count("merged")
            continue
        texts.add(text_key)
        new.append(p)
    created = Perturbation.objects.bulk_create(new)
    PerturbationVersion.objects.bulk_create(
        PerturbationVersion(perturbation=p, number=1, text=p.text) for p in created
    )
    for p in created:
        outcome.count("created")
        if p.flags:
            outcome.count("flagged")
