"""Pages: the catalog (kinds with expected impact, criteria) and the criteria upload."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from apps.accounts.permissions import IsAuthenticated, IsResearcher, allow
from apps.catalog.criteria_import import criteria_import_upload
from apps.catalog.models import Aspect, Criterion, PerturbationKind
from apps.catalog.tree import lineage_slugs
from apps.inputs.problems import ImportFailed


@allow(IsAuthenticated)
def catalog(request: HttpRequest) -> HttpResponse:
    lineage = lineage_slugs()
    kinds = PerturbationKind.objects.select_related("target_aspect", "task")
    rows = [
        (k, [] if k.score_invariant or not k.target_aspect_id else lineage[k.target_aspect_id])
        for k in kinds
    ]
    return render(
        request,
        "catalog/catalog.html",
        {
            "aspects": Aspect.objects.select_related("parent"),
            "kinds": rows,
            "criteria": Criterion.objects.select_related("aspect"),
        },
    )


@allow(IsResearcher, message="Only researchers import criteria.")
def criteria_import_page(request: HttpRequest) -> HttpResponse:
    errors: list[str] = []
    if request.method == "POST":
        upload = request.FILES.get("file")
        if upload is None:
            errors = ["Choose a file."]
        else:
            try:
                summary = criteria_import_upload(
                    upload=upload, source=request.POST.get("source", "")
                )
            except ImportFailed as exc:
                errors = exc.as_strings()
            else:
                messages.success(
                    request,
                    f"{summary.created} criteria imported, {summary.existing} were already there.",
                )
                return redirect("catalog")
    return render(request, "catalog/criteria_import.html", {"errors": errors})
