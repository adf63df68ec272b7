"""Adversarial search pages (researchers; a search is its owner's): set up, the estimate
before it starts and Start, the live view of each item's trajectory with calls and cost so far,
cancel and resume (docs/adversarial.md)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from apps.accounts.permissions import IsResearcher, allow
from apps.accounts.requests import AuthedRequest
from apps.judging import search_selectors as selectors
from apps.judging import services
from apps.judging.models import AdversarialSearch, RunStatus
from apps.judging.search_forms import SearchForm
from apps.judging.services.search_start import audit_of, waits_for_start
from apps.judging.views import _errors_to_form


@allow(IsResearcher)
def search_list(request: AuthedRequest) -> HttpResponse:
    searches = selectors.searches_for_user(request.user)[:200]
    return render(request, "judging/search_list.html", {"searches": searches})


@allow(IsResearcher)
def search_new(request: AuthedRequest) -> HttpResponse:
    form = SearchForm(request.POST or None, user=request.user, initial=request.GET.dict())
    if request.method == "POST" and form.is_valid():
        try:  # recorded, not started: it waits for its estimate to be seen (search_start)
            search = services.adversarial_search_create(
                user=request.user, setup=form.setup(), start=False
            )
        except ValidationError as error:
            _errors_to_form(form, error)
        else:
            return redirect("judging-search-detail", pk=search.pk)
    return render(request, "judging/search_new.html", {"form": form})


def _context(search: AdversarialSearch, item_id: Any) -> dict[str, Any]:
    items = selectors.search_items(search)
    summaries = selectors.method_summaries(items)
    waiting = waits_for_start(search)
    return {
        "search": search,
        "audit": audit_of(search) if search.status == RunStatus.PENDING else None,
        "estimate": services.adversarial_search_estimate(search) if waiting else None,
        "costs": selectors.search_costs(search),
        "items": items,
        "summaries": summaries,
        "no_result": search.finished and bool(items) and not any(v.has_result for v in items),
        "generator": selectors.method_summary("adveval", items).tally,
        "trajectory": selectors.search_trajectory(search, item_id),
    }


@allow(IsResearcher)
def search_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    search = selectors.search_for_user(request.user, pk)
    template = "judging/search_detail.html"
    if request.htmx:
        template += "#live"
    return render(request, template, _context(search, request.GET.get("item")))


@allow(IsResearcher)
@require_POST
def search_start(request: AuthedRequest, pk: int) -> HttpResponse:
    """Start a search after its estimate (confirmed when above the study's limit)."""
    search = selectors.search_for_user(request.user, pk)
    try:
        services.adversarial_search_confirm(
            search=search, confirmed=request.POST.get("confirm") == "1"
        )
    except ValidationError as error:
        search.refresh_from_db()
        context = _context(search, None) | {"start_errors": error.messages}
        return render(request, "judging/search_detail.html", context, status=400)
    return redirect("judging-search-detail", pk=search.pk)


@allow(IsResearcher)
@require_POST
def search_cancel(request: AuthedRequest, pk: int) -> HttpResponse:
    search = services.adversarial_search_cancel(search=selectors.search_for_user(request.user, pk))
    messages.info(request, f"Search {search.pk} cancelled; resume it to continue from here.")
    return redirect("judging-search-detail", pk=search.pk)


@allow(IsResearcher)
@require_POST
def search_resume(request: AuthedRequest, pk: int) -> HttpResponse:
    search = selectors.search_for_user(request.user, pk)
    if waits_for_start(search):  # never started: it starts from its estimate
        messages.error(request, f"Search {search.pk} has not started: start it below.")
    else:
        services.adversarial_search_resume(search=search)
    return redirect("judging-search-detail", pk=search.pk)
