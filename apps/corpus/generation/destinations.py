"""Where a generation job's perturbations may go besides their dataset: places that apps above
corpus own, registered by them, so that corpus never imports them.

Annotation registers "study": the perturbations join a study's vetting queue. A destination
gives the generation form and API one optional field (its ``name``), lists what a user may
choose there, and is handed the job's results when it is done; it may also set the limit of
model requests above which the job asks to be confirmed (for "study": the study's). The job
records the choice in ``GenerationJob.deliver_to`` ({name: id}); a choice whose destination is
gone (the study was deleted meanwhile) is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from apps.catalog.models import PerturbationKind


@dataclass(frozen=True)
class Destination:
    name: str  # the field of the generation form and API, and the key in ``deliver_to``
    help_text: str
    choices: Callable[[Any], QuerySet[Any]]  # what this user may choose
    deliver: Callable[..., None]  # (*, job, target, kinds): target is one of the choices
    # the target's own limit of HTTP requests above which a job asks to be confirmed (None: the
    # server's), for a destination that has one (a study's ``confirm_above_requests``)
    confirm_above: Callable[[Any], int | None] | None = None
    # the form's choices when it is opened for a target (a study's dataset and kinds), and
    # the target's page with its name (where the results wait: a study's progress)
    form_defaults: Callable[[Any], dict[str, Any]] | None = None
    page: Callable[[Any], tuple[str, str]] | None = None


_registered: dict[str, Destination] = {}


def destination_register(destination: Destination) -> None:
    """Called from the owning app's ``AppConfig.ready``."""
    _registered[destination.name] = destination


def destinations() -> list[Destination]:
    return list(_registered.values())


def destination_limit(job: Any) -> tuple[int | None, str]:
    """The first limit a destination of the job sets (see ``Destination.confirm_above``) and
    the destination's name; (None, "") when none does."""
    for name, target_id in (job.deliver_to or {}).items():
        destination = _registered.get(name)
        if destination is None or destination.confirm_above is None or job.created_by is None:
            continue
        target = destination.choices(job.created_by).filter(pk=target_id).first()
        if target is not None:
            return destination.confirm_above(target), name
    return None, ""


def _targets(user: Any, chosen: dict[str, Any]) -> list[tuple[Destination, Any]]:
    """The targets ``chosen`` ({name: id}) names that this user may choose."""
    found = []
    for name, target_id in chosen.items():
        destination = _registered.get(name)
        if destination is None or user is None or not str(target_id).isdigit():
            continue
        target = destination.choices(user).filter(pk=int(target_id)).first()
        if target is not None:
            found.append((destination, target))
    return found


def form_defaults(user: Any, query: dict[str, Any]) -> dict[str, Any]:
    """The generation form's initial choices when it is opened for a destination's target
    (``?study=3``: the study's first dataset and its kinds), with the query itself."""
    initial = dict(query)
    for destination, target in _targets(user, query):
        if destination.form_defaults is not None:
            initial = destination.form_defaults(target) | initial
    return initial


def result_pages(job: Any) -> list[tuple[str, str]]:
    """(label, url) of the pages where a job's results went (a study's progress)."""
    return [
        destination.page(target)
        for destination, target in _targets(job.created_by, job.deliver_to or {})
        if destination.page is not None
    ]


def results_deliver(job: Any, kinds: Sequence[PerturbationKind]) -> None:
    """Hand a finished job's results to each destination it names, if the job's creator may
    still choose it."""
    for name, target_id in (job.deliver_to or {}).items():
        destination = _registered.get(name)
        if destination is None or job.created_by is None:
            continue
        target = destination.choices(job.created_by).filter(pk=target_id).first()
        if target is not None:
            destination.deliver(job=job, target=target, kinds=kinds)
