"""Pages: datasets, the import upload with its progress, exports.

Everyone logged in may open the reading pages: what they see is what the corpus selectors give
them (annotators and experts: nothing). Importing, generating and marking a dataset are for
researchers, into their own datasets."""

from typing import Any

from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from apps.accounts.permissions import IsAuthenticated, IsResearcher, allow
from apps.accounts.requests import AuthedRequest
from apps.corpus import selectors
from apps.corpus.api import EXPORTS, export_response
from apps.corpus.forms import GenerationForm, ImportForm
from apps.corpus.generation.destinations import form_defaults, result_pages
from apps.corpus.generation.estimate import (
    calls_a_model,
    generation_job_confirm,
    generation_job_estimate,
    needs_estimate,
)
from apps.corpus.generation.jobs import generation_job_start
from apps.corpus.importing.repeats import DROP, KEEP
from apps.corpus.models import GenerationJob
from apps.corpus.services import dataset_mark_validated, import_job_start


@allow(IsAuthenticated)
def dataset_list(request: AuthedRequest) -> HttpResponse:
    datasets = selectors.with_item_counts(selectors.datasets_for_user(request.user)).select_related(
        "task"
    )
    return render(request, "corpus/dataset_list.html", {"datasets": datasets})


@allow(IsAuthenticated)
def dataset_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    dataset = get_object_or_404(selectors.datasets_for_user(request.user), pk=pk)
    items = (
        dataset.items.select_related("task")
        .annotate(n_perturbations=Count("perturbations"))
        .order_by("id")
    )
    page = Paginator(items, 50).get_page(request.GET.get("page"))
    return render(request, "corpus/dataset_detail.html", {"dataset": dataset, "page": page})


@allow(IsResearcher, message="Only researchers change datasets.")
@require_POST
def dataset_validated(request: AuthedRequest, pk: int) -> HttpResponse:
    """Set whether the dataset's perturbations were already validated by their publisher."""
    dataset = get_object_or_404(selectors.datasets_owned_by(request.user), pk=pk)
    dataset_mark_validated(dataset=dataset, validated=request.POST.get("validated") == "on")
    return redirect("dataset-detail", pk=pk)


@allow(IsAuthenticated)
@require_GET
def dataset_export(request: AuthedRequest, pk: int, file_format: str) -> HttpResponseBase:
    dataset = get_object_or_404(selectors.datasets_for_user(request.user), pk=pk)
    if file_format not in EXPORTS:
        return HttpResponse(status=404)
    return export_response(dataset, file_format)


@allow(IsResearcher, message="Only researchers import data.")
def import_new(request: AuthedRequest) -> HttpResponse:
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        task = form.cleaned_data["task"]
        job = import_job_start(
            upload=form.cleaned_data["file"],
            dataset_name=form.cleaned_data["dataset"],
            file_format=form.cleaned_data["format"],
            task=task.slug if task else "",
            user=request.user,
            repeats=KEEP if form.cleaned_data["keep_repeats"] else DROP,
        )
        return redirect("import-detail", pk=job.pk)
    return render(request, "corpus/import_new.html", {"form": form})


@allow(IsAuthenticated)
def import_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(selectors.import_jobs_for_user(request.user), pk=pk)
    template = "corpus/import_detail.html"
    if request.htmx:
        template += "#progress"
    dataset = None  # where the next steps start, once it is done
    if job.status == job.Status.DONE and job.summary.get("dataset"):
        owned = selectors.datasets_owned_by(request.user)
        dataset = owned.filter(name=job.summary["dataset"]).first()
    return render(request, template, {"job": job, "dataset": dataset})


@allow(IsResearcher, message="Only researchers generate perturbations.")
def generation_new(request: AuthedRequest) -> HttpResponse:
    form = GenerationForm(
        request.POST or None,
        datasets=selectors.datasets_owned_by(request.user),
        user=request.user,
        initial=form_defaults(request.user, request.GET.dict()),  # ?study=: its data, kinds
    )
    if request.method == "POST" and form.is_valid():
        options = form.job_options()
        start = not calls_a_model(options["kinds"], options["generator"])  # else: its estimate
        job = generation_job_start(user=request.user, start=start, **options)
        return redirect("generation-detail", pk=job.pk)
    return render(request, "corpus/generation_new.html", {"form": form})


def _generation_context(job: GenerationJob) -> dict[str, Any]:
    context: dict[str, Any] = {"job": job, "result_pages": result_pages(job)}
    if needs_estimate(job):
        context["estimate"] = generation_job_estimate(job)
    return context


@allow(IsAuthenticated)
def generation_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(selectors.generation_jobs_for_user(request.user), pk=pk)
    template = "corpus/generation_detail.html"
    if request.htmx:
        template += "#progress"
    return render(request, template, _generation_context(job))


@allow(IsResearcher, message="Only researchers generate perturbations.")
@require_POST
def generation_start(request: AuthedRequest, pk: int) -> HttpResponse:
    """Start a job that calls a model after its estimate (confirmed when above the limit)."""
    job = get_object_or_404(selectors.generation_jobs_for_user(request.user), pk=pk)
    try:
        generation_job_confirm(job=job, confirmed=request.POST.get("confirm") == "1")
    except ValidationError as error:
        context = _generation_context(job) | {"start_errors": error.messages}
        return render(request, "corpus/generation_detail.html", context, status=400)
    return redirect("generation-detail", pk=job.pk)
