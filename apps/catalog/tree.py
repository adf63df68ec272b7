"""The aspect tree in memory: one query, then expected impact for any number of kinds."""

from __future__ import annotations

from apps.catalog.models import Aspect


def lineage_slugs() -> dict[int, list[str]]:
    """aspect id → slugs of the aspect and its ancestors, nearest first."""
    rows = {
        pk: (slug, parent)
        for pk, slug, parent in Aspect.objects.values_list("id", "slug", "parent_id")
    }
    out: dict[int, list[str]] = {}
    for pk in rows:
        chain, node = [], pk
        while node is not None:
            slug, parent = rows[node]
            chain.append(slug)
            node = parent
        out[pk] = chain
    return out
