"""The kinds of human work a study may ask for, as the pages, reports and selectors know them:
each registers itself (`register`, from services/work.py's `Work` subclasses) and is found by
its slug; whether a study asks for one (`asks`). What a person sees of their work
(`AnnotatorProgress`) is here too, below the services, so that selectors can read it; the
counts themselves are selectors/work_counts.py's."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, TypeVar

from apps.annotation.models import Study
from apps.annotation.selectors.work_counts import Counted, Queue, queue


class Kind(Protocol):
    """What the registry knows of a kind of work (services/work.py's `Work`)."""

    slug: ClassVar[str]
    position: ClassVar[int]


W = TypeVar("W", bound=Kind)
#: Kinds are `Work` instances; typed as Any here, below the services that define them.
_TYPES: dict[str, Any] = {}


def register(work: W) -> W:
    """Make a type of work known to the plan, the progress pages and the study page."""
    _TYPES[work.slug] = work
    return work


def work_types(role: str | None = None) -> list[Any]:
    """Every registered type of work (of one role), in the order of the study's pipeline."""
    ordered = sorted(_TYPES.values(), key=lambda work: work.position)
    return [work for work in ordered if role is None or work.role == role]


def work_type(slug: str) -> Any:
    return _TYPES[slug]


def asks(work: Any, study: Study) -> bool:
    """Whether the study asks for this work (its `setup.opted_in`), asked once per study
    object: a page that asks it in several places (the progress page: figures, then
    agreement) makes one query, not one each."""
    asked = study.__dict__.setdefault("_work_opted_in", {})
    if work.slug not in asked:
        asked[work.slug] = work.setup.opted_in(study)
    return bool(asked[work.slug])


class AnnotatorProgress:
    """What a person sees of their work in a study: a `Queue` per type (``progress["vetting"]``,
    in templates ``progress.vetting``), each counted when first asked for."""

    def __init__(self, study: Study, person, *, fresh: bool = False) -> None:
        self.study, self.person, self.fresh = study, person, fresh
        self._queues: dict[str, Queue] = {}
        self._counted: dict[str, Counted] = {}

    def counted(self, slug: str, *, done: int, waiting: int = 0) -> None:
        """The person's counts of one type, read by the caller with what it shows (one
        statement for the page): not counted again."""
        self._counted[slug] = (done, waiting)

    def __getitem__(self, slug: str) -> Queue:
        if slug not in self._queues:
            work = work_type(slug)
            self._queues[slug] = queue(
                work,
                study=self.study,
                person=self.person,
                fresh=self.fresh,
                counted=self._counted.get(slug),
            )
        return self._queues[slug]


def annotator_progress(study: Study, person, *, fresh: bool = False) -> AnnotatorProgress:
    """A person's counts of every type of work (see `AnnotatorProgress`)."""
    return AnnotatorProgress(study, person, fresh=fresh)
