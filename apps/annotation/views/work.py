"""The work pages, one implementation for every type of work: the next unit, a given unit
(going back to change an answer), submit, skip, and the person's last answers.

A type's pages are a `WorkPage`: its `Work` (services/work.py), template (with a `#work`
partial that htmx swaps in, and a `#recent` one: the list of their last answers, loaded when
they open it), answer form and URL names; `WorkPage.urls()` routes them.
Every answer is the `#work` part of the page for htmx; without htmx, a redirect to the next
unit (or the whole page).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from apps.accounts.permissions import OpenToParticipants, allow, is_participant
from apps.accounts.requests import AuthedRequest
from apps.annotation.kinds import annotator_progress, work_types
from apps.annotation.models import Study, unit_of
from apps.annotation.permissions import does_work, study_access
from apps.annotation.selectors.work_counts import recent as recent_answers
from apps.annotation.services.controls import hand_out, put_back
from apps.annotation.services.work import Saved, Unit, Work, handed_item
from apps.annotation.views.responses import REFUSALS, bad_request, refused, saved_event

_PAGES: dict[str, WorkPage] = {}


def work_pages(study: Study, role: str | None) -> list[WorkPage]:
    """The pages of the work this role does in the study (what the study asks for)."""
    return [
        _PAGES[work.slug]
        for work in work_types(role)
        if work.slug in _PAGES and role is not None and work.setup.opted_in(study)
    ]


@dataclass(frozen=True)
class WorkPage:
    """A type of work's pages: `/studies/{id}/{prefix}/` (next), `.../{prefix}/{unit}`
    (one unit), `...{unit}{submit}/`, `...{unit}skip/` and `.../{prefix}/recent/`, named
    `{prefix}-next`, `-item`, `-submit`, `-skip` and `-recent`."""

    work: Work
    template: str
    form: type[forms.Form]
    prefix: str
    unit: str  # the unit in the URL: "<int:perturbation_pk>/"
    submit: str  # "verdict"
    home: str = ""  # where a submit without htmx goes (default: `{prefix}-next`)
    #: What a saved answer shows (default: the next unit).
    answered: Callable[[AuthedRequest, Study, Saved[Any]], HttpResponse] | None = None
    handed_out: bool = True  # False: no next/item/skip pages (the survey shows all at once)

    def __post_init__(self) -> None:
        _PAGES[self.work.slug] = self

    @property
    def start(self) -> str:
        """The URL name where this work starts (the study page's button)."""
        return self.home or f"{self.prefix}-next"

    @property
    def allowed(self) -> Callable[[Any], Any]:
        """Who may use these pages: the members with the work's role (404 for outsiders,
        403 for other roles), recruited participants among them."""
        return allow(does_work(self.work.role), OpenToParticipants)

    def urls(self) -> list[URLPattern]:
        base = f"studies/<int:pk>/{self.prefix}/"
        unit = base + self.unit
        page, allowed = {"page": self}, self.allowed
        submit = f"{unit}{self.submit}/"
        urls = [path(submit, allowed(work_submit), page, name=f"{self.prefix}-submit")]
        if self.handed_out:
            urls += [
                path(base, allowed(work_next), page, name=f"{self.prefix}-next"),
                path(unit, allowed(work_item), page, name=f"{self.prefix}-item"),
                path(f"{unit}skip/", allowed(work_skip), page, name=f"{self.prefix}-skip"),
                path(f"{base}recent/", allowed(work_recent), page, name=f"{self.prefix}-recent"),
            ]
        return urls

    def study(self, request: AuthedRequest, pk: int) -> Study:
        """The study (`allowed` has checked the user's part in it)."""
        return study_access(request, pk).study

    def next_page(self, request: AuthedRequest, study: Study) -> HttpResponse:
        slot = hand_out(self.work, study=study, person=request.user, page=True)
        if slot is None and is_participant(request.user):
            return participant_redirect(request, study, after=self.work.slug)
        if slot is None:
            return self.unit_page(request, study, None)
        item = handed_item(self.work, study=study, person=request.user, slot=slot)
        return self.unit_page(request, study, unit_of(slot, self.work.model.unit_fields), item)

    def unit_page(
        self, request: AuthedRequest, study: Study, unit: Unit | None, item: Any = None
    ) -> HttpResponse:
        """The page of a unit (`item`: what it shows, when the caller read it already)."""
        context: dict[str, object] = {"study": study, "work": self.work}
        if unit is None:
            context.update(item=None, progress=annotator_progress(study, request.user, fresh=True))
        else:
            if item is None:
                item = self.work.item(study=study, person=request.user, unit=unit)
            context.update(item=item, progress=item.progress, nav=self.nav(study, unit, item))
        template = f"{self.template}#work" if request.htmx else self.template
        return render(request, template, context)

    def nav(self, study: Study, unit: Unit, item: Any) -> dict[str, str | None]:
        """The URLs of "back" (the previous answer), "skip" (while the unit is held) and the
        list of the person's last answers (once they have any: one to go back to, or this
        unit, answered and not held)."""
        fields = self.work.model.unit_fields
        previous = item.previous
        back = [*unit_of(previous, fields).values()] if previous is not None else None
        answered = back is not None or not item.held
        return {
            "back": self._url("item", study, back) if back else None,
            "skip": self._url("skip", study, [*unit.values()]) if item.held else None,
            "recent": reverse(f"{self.prefix}-recent", args=[study.pk]) if answered else None,
        }

    def _url(self, page: str, study: Study, unit: list[Any]) -> str:
        return reverse(f"{self.prefix}-{page}", args=[study.pk, *unit])


def work_page_urls() -> list[URLPattern]:
    """The pages of every type of work (each made its `WorkPage` in its own module)."""
    return [url for page in _PAGES.values() for url in page.urls()]


def page_of(slug: str) -> WorkPage:
    """The pages of a type of work, by its slug."""
    return _PAGES[slug]


def participant_redirect(request: AuthedRequest, study: Study, after: str) -> HttpResponse:
    """A recruited participant with nothing more of one type of work goes to their start
    page (views/participants.py), which finds them the next type or shows their completion
    code (htmx: the whole page goes)."""
    url = f"{reverse('participant-home', args=[study.pk])}?after={after}"
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def work_next(request: AuthedRequest, pk: int, *, page: WorkPage) -> HttpResponse:
    """The person's current unit (claimed now if they hold none)."""
    return page.next_page(request, page.study(request, pk))


def work_item(request: AuthedRequest, pk: int, *, page: WorkPage, **unit: int) -> HttpResponse:
    """A given unit: one they hold, or one they answered and want to change ("back")."""
    study = page.study(request, pk)
    return page.unit_page(request, study, page.work.model.unit_from(unit))


@require_GET
def work_recent(request: AuthedRequest, pk: int, *, page: WorkPage) -> HttpResponse:
    """The person's last answers, each a link to change it (the page's list, as it opens)."""
    study = page.study(request, pk)
    recent = recent_answers(page.work, study=study, person=request.user)
    return render(request, f"{page.template}#recent", {"study": study, "recent": recent})


@require_POST
def work_submit(request: AuthedRequest, pk: int, *, page: WorkPage, **unit: int) -> HttpResponse:
    study = page.study(request, pk)
    form = page.form(request.POST)
    if not form.is_valid():
        return bad_request(form)
    answer = dict(form.cleaned_data)
    key, based_on = answer.pop("idempotency_key"), answer.pop("based_on", None)
    active_seconds = answer.pop("active_seconds", None)
    try:
        saved = page.work.submit(
            study=study,
            person=request.user,
            unit=page.work.model.unit_from({**unit, **answer}),
            answer=answer,
            idempotency_key=key,
            based_on=based_on,
            active_seconds=active_seconds,
        )
    except REFUSALS as exc:
        return refused(exc)
    if not request.htmx:
        return redirect(page.start, pk=study.pk)
    answered = page.answered or (lambda request, study, saved: page.next_page(request, study))
    response = answered(request, study, saved)
    return saved_event(response, f"Saved: {page.work.label(saved.judgement)}")


@require_POST
def work_skip(request: AuthedRequest, pk: int, *, page: WorkPage, **unit: int) -> HttpResponse:
    study = page.study(request, pk)
    put_back(page.work, study=study, person=request.user, unit=page.work.model.unit_from(unit))
    if not request.htmx:
        return redirect(f"{page.prefix}-next", pk=study.pk)
    return saved_event(page.next_page(request, study), page.work.skipped_message)
