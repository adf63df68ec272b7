"""Nobody spends by surprise: an adversarial search set up on the page or the API shows its
estimate before it starts, and one above the study's limit starts only when confirmed
(docs/adversarial.md, "Before a search starts").

The estimate is the audit's (``audit_estimate.search_estimate``): a search's course depends on
the replies, so its figures are upper bounds from its limits, unless the same search already
ran to the end (it then replays from the cache). The limit is a judge run's
(``run_start.confirm_limit``). A search an audit made starts with its audit, not here.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from apps.judging.models import AdversarialSearch, AuditPart, JudgeAudit, RunStatus
from apps.judging.services.audit_estimate import search_estimate
from apps.judging.services.run_start import confirm_limit
from apps.judging.services.searches import adversarial_search_start


@dataclass(frozen=True)
class SearchEstimate:
    """What starting a search would send: calls, the cache's share, HTTP requests (at most,
    unless it replays), tokens and cost, per role (victim, gold, generator) and in all."""

    calls: int
    cached_calls: int
    http_calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal | None
    unpriced: list[str]
    basis: str
    upper_bound: bool
    limit: int
    roles: list[dict[str, Any]]

    @property
    def over_limit(self) -> bool:
        return self.http_calls > self.limit

    @property
    def models(self) -> str:
        """The models it would send requests to, in order."""
        names = [r["model"] or r["name"] for r in self.roles if r["http_calls"]]
        return ", ".join(dict.fromkeys(names))

    def as_dict(self) -> dict[str, Any]:
        fields = {name: getattr(self, name) for name in self.__dataclass_fields__}
        fields["cost"] = _shown(self.cost)
        fields["roles"] = [r | {"cost": _shown(r["cost"])} for r in self.roles]
        return fields | {"over_limit": self.over_limit}


def _shown(cost: Decimal | None) -> str | None:
    return None if cost is None else str(round(cost, 4))


def audit_of(search: AdversarialSearch) -> JudgeAudit | None:
    """The audit that made this search (it starts, cancels and resumes it), if any."""
    part = AuditPart.objects.filter(search=search).select_related("subject__audit").first()
    return part.subject.audit if part is not None else None


def waits_for_start(search: AdversarialSearch) -> bool:
    """Recorded and never started (nothing sent; cancelled before it started, too): it starts
    from its estimate. Starting sets its heartbeat, so a started search has one."""
    return (
        search.heartbeat_at is None
        and search.status in (RunStatus.PENDING, RunStatus.CANCELLED)
        and audit_of(search) is None
    )


def adversarial_search_estimate(search: AdversarialSearch) -> SearchEstimate:
    figures = search_estimate(search)
    roles = figures["roles"]
    costs = [r["cost"] for r in roles if r["cost"] is not None]
    return SearchEstimate(
        calls=figures["calls"],
        cached_calls=figures["cached_calls"],
        http_calls=figures["http_calls"],
        prompt_tokens=figures["prompt_tokens"],
        completion_tokens=figures["completion_tokens"],
        cost=sum(costs, Decimal(0)) if costs else None,
        unpriced=[f"{r['role']} {r['name']}" for r in roles if r["cost"] is None],
        basis=figures["search_source"],
        upper_bound=not figures["search_source"].startswith("replays"),
        limit=confirm_limit(search),
        roles=roles,
    )


@transaction.atomic
def adversarial_search_confirm(*, search: AdversarialSearch, confirmed: bool) -> AdversarialSearch:
    """Start a search after its estimate, as a search always starts
    (``adversarial_search_start``); refused when it is above the limit and not ``confirmed``,
    when it started already, or when an audit starts it."""
    audit = audit_of(search)
    if audit is not None:
        raise ValidationError(
            {"search": f"this search is part of audit {audit.pk}: it starts with its audit"}
        )
    search = AdversarialSearch.objects.select_for_update().get(pk=search.pk)
    if not waits_for_start(search):
        raise ValidationError(
            {"search": f"this search is {search.get_status_display().lower()} already"}
        )
    estimate = adversarial_search_estimate(search)
    if estimate.over_limit and not confirmed:
        up_to = "up to " if estimate.upper_bound else ""
        raise ValidationError(
            {
                "confirm": f"this search would send {up_to}{estimate.http_calls} requests to the "
                f"models, above the limit of {estimate.limit}: confirm to start it"
            }
        )
    return adversarial_search_start(search=search)
