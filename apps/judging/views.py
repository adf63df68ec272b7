"""Judging pages (researchers only): runs with live progress, judges, strategy versions.

Each object is found through the judging selectors: ``*_for_user`` to read it, ``*_owned_by``
to change it (see apps.accounts.permissions)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Prefetch
from django.forms import BaseForm
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import IsResearcher, allow
from apps.accounts.requests import AuthedRequest
from apps.endpoints.selectors import granted_key_variables
from apps.judging import selectors, services
from apps.judging.exporting import EXPORTS
from apps.judging.forms import JudgeRunForm
from apps.judging.import_forms import JudgeImportForm
from apps.judging.importing import ImportRefused
from apps.judging.judge_forms import SERVERS, JudgeForm
from apps.judging.models import JudgeRun, JudgeShare, RunStatus, SearchJudge, Strategy
from apps.judging.prompt_template import PLACEHOLDERS
from apps.judging.services import STRATEGY_FIELDS
from apps.judging.services.run_start import needs_estimate
from apps.judging.strategy_forms import StrategyForm


def _run(request: AuthedRequest, pk: int) -> JudgeRun:
    """The run, or 404 if this user may not see it (guessing an id reveals nothing)."""
    return get_object_or_404(selectors.runs_for_user(request.user), pk=pk)


def _errors_to_form(form: BaseForm, error: ValidationError) -> None:
    for field, problems in error.message_dict.items():
        form.add_error(field if field in form.fields else None, problems)


# -- runs --------------------------------------------------------------------------------------


@allow(IsResearcher)
def run_list(request: AuthedRequest) -> HttpResponse:
    runs = selectors.runs_for_user(request.user)[:200]
    return render(request, "judging/run_list.html", {"runs": runs})


@allow(IsResearcher)
def run_new(request: AuthedRequest) -> HttpResponse:
    form = JudgeRunForm(request.POST or None, user=request.user, initial=request.GET.dict())
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:  # an LLM judge's run waits for its estimate to be seen (run_start)
            run = services.judge_run_create(
                user=request.user, start=data["judge"].is_metric, **data
            )
        except ValidationError as error:
            _errors_to_form(form, error)
        else:
            return redirect("judging-run-detail", pk=run.pk)
    return render(request, "judging/run_new.html", {"form": form})


@allow(IsResearcher)
@require_POST
def run_start(request: AuthedRequest, pk: int) -> HttpResponse:
    """Start a run after its estimate (confirmed when above the study's limit); or, for one
    that would measure nothing for want of vetted perturbations, record it again over all."""
    run = _run(request, pk)
    if request.POST.get("vetted_only") == "false":
        again = services.judge_run_rerun(run=run, user=request.user, start=False, vetted_only=False)
        return redirect("judging-run-detail", pk=again.pk)
    try:
        services.judge_run_confirm(
            run=run,
            confirmed=request.POST.get("confirm") == "1",
            batch=request.POST.get("mode") == "batch",
            live_fallback=request.POST.get("live_fallback") == "1",
        )
    except ValidationError as error:
        context = _run_context(run) | {"start_errors": error.messages}
        return render(request, "judging/run_detail.html", context, status=400)
    return redirect("judging-run-detail", pk=run.pk)


def _run_context(run: JudgeRun) -> dict[str, Any]:
    context: dict[str, Any] = {"run": run, "progress": selectors.run_progress(run)}
    context["part_of"] = SearchJudge.objects.filter(run=run).select_related("search").first()
    waiting = run.status == RunStatus.PENDING and not context["part_of"]
    if needs_estimate(run) and (waiting or (run.planned and run.total == 0)):
        context["estimate"] = services.judge_run_estimate(run)  # (or why it measured nothing)
        run.refresh_from_db()  # planned by it
    if run.batch_mode:
        context["batches"] = selectors.run_batches(run)
    if run.finished or run.failed:
        context["failures"] = selectors.run_failures(run)
    if run.finished:
        context["scores"] = selectors.run_scores(run)
    return context


@allow(IsResearcher)
def run_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    run = _run(request, pk)
    template = "judging/run_detail.html"
    if request.htmx:
        template += "#progress"
    return render(request, template, _run_context(run))


@allow(IsResearcher)
@require_POST
def run_cancel(request: AuthedRequest, pk: int) -> HttpResponse:
    run = services.judge_run_cancel(run=_run(request, pk))
    messages.info(request, f"Run {run.pk} cancelled; calls not made yet can be resumed.")
    return redirect("judging-run-detail", pk=run.pk)


@allow(IsResearcher)
@require_POST
def run_resume(request: AuthedRequest, pk: int) -> HttpResponse:
    run = _run(request, pk)
    retry_failed = request.POST.get("retry_failed") == "1"
    services.judge_run_resume(run=run, retry_failed=retry_failed)
    return redirect("judging-run-detail", pk=run.pk)


@allow(IsResearcher)
@require_POST
def run_rerun(request: AuthedRequest, pk: int) -> HttpResponse:
    run = _run(request, pk)
    again = services.judge_run_rerun(run=run, user=request.user, start=not needs_estimate(run))
    return redirect("judging-run-detail", pk=again.pk)


@allow(IsResearcher)
@require_GET
def run_export(request: AuthedRequest, pk: int, file_format: str) -> StreamingHttpResponse:
    run = _run(request, pk)
    if file_format not in EXPORTS:
        raise Http404("unknown format")
    writer, content_type = EXPORTS[file_format]
    response = StreamingHttpResponse(writer(run), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="judge-run-{run.pk}.{file_format}"'
    return response


# -- judges ------------------------------------------------------------------------------------


@allow(IsResearcher)
def judge_list(request: AuthedRequest) -> HttpResponse:
    """The judges this researcher can use (with, on their own, whom each is shared with and
    whether they accepted), and the judges offered to them, to accept or decline."""
    judges = (
        selectors.judges_for_user(request.user)
        .select_related("endpoint", "created_by")
        .prefetch_related(Prefetch("shares", JudgeShare.objects.select_related("user")))
    )
    mine = set(selectors.judges_owned_by(request.user).values_list("pk", flat=True))
    offers = selectors.judge_offers_for(request.user)
    context = {"judges": judges, "mine": mine, "offers": offers}
    return render(request, "judging/judge_list.html", context)


@allow(IsResearcher)
@require_POST
def judge_share_accept(request: AuthedRequest, pk: int) -> HttpResponse:
    """Accept a judge offered to you (404 for anyone else's offer)."""
    share = get_object_or_404(selectors.judge_offers_for(request.user), pk=pk)
    services.judge_share_accept(share=share, user=request.user)
    owner = share.judge.created_by
    messages.success(request, f"You can now use {share.judge.name}, shared by {owner}.")
    return redirect("judging-judges")


@allow(IsResearcher)
@require_POST
def judge_share_decline(request: AuthedRequest, pk: int) -> HttpResponse:
    """Decline a judge offered to you: the offer is gone (404 for anyone else's offer)."""
    share = get_object_or_404(selectors.judge_offers_for(request.user), pk=pk)
    name, owner = share.judge.name, share.judge.created_by
    services.judge_share_decline(share=share, user=request.user)
    messages.info(request, f"Declined {name}, offered by {owner}.")
    return redirect("judging-judges")


@allow(IsResearcher)
def judge_edit(request: AuthedRequest, pk: int | None = None) -> HttpResponse:
    judge = get_object_or_404(selectors.judges_owned_by(request.user), pk=pk) if pk else None
    granted = granted_key_variables(request.user)
    form = JudgeForm(request.POST or None, instance=judge, granted=granted, user=request.user)
    context: dict[str, Any] = {"form": form, "judge": judge, "servers": SERVERS}
    if request.method == "POST" and "test" in request.POST:
        context["test"] = _connection_test(request, form)
        return render(request, "judging/judge_form.html", context)
    if request.method == "POST" and form.is_valid():
        try:
            services.judge_save(
                judge=form.instance,
                user=request.user,
                shared_with=form.cleaned_data.get("shared_with"),
                endpoint=form.endpoint_settings(),
            )
        except ValidationError as error:
            _errors_to_form(form, error)
        else:
            return redirect("judging-judges")
    return render(request, "judging/judge_form.html", context)


@allow(IsResearcher)
def judge_import(request: AuthedRequest) -> HttpResponse:
    """Upload a promptfoo config or an Inspect AI scorer description, see what each of its
    fields maps to and the prompt it makes, then save (docs/import.md)."""
    form = JudgeImportForm(request.POST or None, request.FILES or None)
    template = "judging/judge_import.html"
    if request.method != "POST":
        return render(request, template, {"form": form})
    if not form.is_valid():
        return render(request, template, {"form": form}, status=400)
    data, filename = form.cleaned_data["data"], form.cleaned_data["filename"]
    given = {"owner": request.user, "data": data, "filename": filename}
    try:
        if "save" in request.POST:
            judges = services.judge_import(**given)
            names = ", ".join(judge.name for judge in judges)
            messages.success(request, f"Imported {names}, each with its endpoint and strategy.")
            return redirect("judging-judges")
        preview = services.judge_import_preview(**given)
    except ImportRefused as refused:
        context = {"form": form, "problems": refused.problems, "filename": filename}
        return render(request, template, context, status=400)
    save = JudgeImportForm(initial={"document": data.decode(), "filename": filename})
    return render(request, template, {"form": form, "preview": preview, "save": save})


def _connection_test(request: AuthedRequest, form: JudgeForm) -> Any:
    """One call with the endpoint as entered (nothing saved); None when it cannot be made
    (the form then says why, field by field)."""
    form.is_valid()
    form.drop_judge_errors()
    if form.errors:
        return None
    strategy = form.cleaned_data.get("test_strategy")
    if strategy is None:
        form.add_error("test_strategy", "choose a strategy to test with")
        return None
    try:
        return services.judge_connection_test(
            user=request.user, settings=form.endpoint_settings(), strategy=strategy
        )
    except ValidationError as error:
        _errors_to_form(form, error)
        return None


# -- strategies --------------------------------------------------------------------------------


@allow(IsResearcher)
def strategy_list(request: AuthedRequest) -> HttpResponse:
    strategies = selectors.strategies_for_user(request.user).order_by("family", "slug")
    return render(request, "judging/strategy_list.html", {"strategies": strategies})


@allow(IsResearcher)
def strategy_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    strategy = get_object_or_404(selectors.strategies_for_user(request.user, latest=False), pk=pk)
    versions = Strategy.objects.filter(slug=strategy.slug).order_by("-version")
    mine = selectors.strategies_owned_by(request.user).filter(pk=pk).exists()
    context = {"strategy": strategy, "versions": versions, "mine": mine}
    return render(request, "judging/strategy_detail.html", context)


@allow(IsResearcher)
def strategy_edit(request: AuthedRequest, pk: int | None = None) -> HttpResponse:
    """New strategy (no pk), or a new version of strategy ``pk``."""
    base = None
    if pk is not None:
        base = get_object_or_404(selectors.strategies_owned_by(request.user), pk=pk)
    form = StrategyForm(request.POST or None, instance=base, revising=base is not None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        fields = {name: data[name] for name in STRATEGY_FIELDS}
        try:
            if base is None:
                saved = services.strategy_create(
                    slug=data["slug"], user=request.user, note=data["note"], **fields
                )
            else:
                base.refresh_from_db()  # the form wrote into the instance; keep it unchanged
                saved = services.strategy_revise(
                    strategy=base, user=request.user, note=data["note"], **fields
                )
        except ValidationError as error:
            _errors_to_form(form, error)
        else:
            return redirect("judging-strategy-detail", pk=saved.pk)
    context = {"form": form, "base": base, "placeholders": PLACEHOLDERS.items()}
    return render(request, "judging/strategy_form.html", context)
