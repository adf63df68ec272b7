"""Small things people noticed on the pages: fresh counts beside "Nothing left", the import
button only for researchers, the Generate page's kinds grouped."""

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.annotation.models import VettingSlot
from apps.annotation.selectors.progress import annotator_progress
from tests.annotation.factories import study_setup

pytestmark = pytest.mark.django_db


def test_nothing_left_to_vet_shows_counts_of_now_not_of_ten_seconds_ago(client):
    setup = study_setup(perturbations=2, annotators=1)
    annotator = setup.annotators[0]
    assert annotator_progress(setup.study, annotator)["vetting"].open == 2  # cached
    VettingSlot.objects.filter(study=setup.study).update(done_at=timezone.now())
    client.force_login(annotator)
    page = client.get(reverse("vet-next", args=[setup.study.pk])).text
    assert "Nothing left to vet" in page
    assert "0 of 2 vettings still open" in page


def test_the_open_count_moves_with_each_save_within_the_cache_interval(client):
    """The study's counts are shared for a few seconds; a person's own saves show at once."""
    import re
    import uuid

    setup = study_setup(perturbations=4, annotators=1)
    client.force_login(setup.annotators[0])
    page = f"/studies/{setup.study.pk}/vet/"
    response = client.get(page, HTTP_HX_REQUEST="true")
    shown = []
    for _ in range(3):
        shown.append(re.search(r"(\d+) of 4 vettings still open", response.content.decode())[1])
        item = response.context["item"]
        answer = {"verdict": "valid", "note": "", "idempotency_key": str(uuid.uuid4())}
        url = f"{page}{item.perturbation.pk}/verdict/"
        response = client.post(url, answer, HTTP_HX_REQUEST="true")
    shown.append(re.search(r"(\d+) of 4 vettings still open", response.content.decode())[1])
    assert shown == ["4", "3", "2", "1"]


def test_import_button_only_for_researchers(client, researcher, annotator):
    client.force_login(annotator)
    assert "Import items" not in client.get(reverse("dataset-list")).text
    client.force_login(researcher)
    assert "Import items" in client.get(reverse("dataset-list")).text


def test_generate_page_groups_kinds_by_family_and_method(client, researcher, catalog):
    client.force_login(researcher)
    page = client.get(reverse("generation-new")).text
    assert 'class="check-groups"' in page
    assert "FBI · LLM-written" in page and "Hierarchical (DHP) · Rule-based" in page
    assert page.index("Hierarchical (DHP) · Rule-based") < page.index("Random typos (minor)")


def test_generate_page_takes_the_study_from_the_link(client, researcher):
    setup = study_setup(perturbations=1, annotators=1)
    setup.study.owner = researcher
    setup.study.save()
    client.force_login(researcher)
    page = client.get(reverse("generation-new") + f"?study={setup.study.pk}")
    assert page.context["form"]["study"].value() == str(setup.study.pk)
    dataset = setup.study.datasets.order_by("pk").first()
    kinds = set(setup.study.kinds.values_list("pk", flat=True))
    assert dataset is not None and kinds  # the study's data and kinds come preselected
    assert page.context["form"]["dataset"].value() == dataset.pk
    assert set(page.context["form"]["kinds"].value()) == kinds


def test_a_finished_generation_ends_with_its_next_steps(client, researcher, catalog):
    from apps.catalog.models import PerturbationKind
    from apps.corpus.generation.jobs import generation_job_start
    from apps.corpus.models import GenerationJob, JobStatus

    setup = study_setup(perturbations=1, annotators=1)
    setup.study.owner = researcher
    setup.study.save()
    dataset = setup.study.datasets.order_by("pk").first()
    dataset.owner = researcher
    dataset.save()
    kind = PerturbationKind.objects.filter(method="rule").first()
    job = generation_job_start(
        user=researcher, dataset=dataset, kinds=[kind], deliver_to={"study": setup.study.pk},
        start=False,
    )  # fmt: skip
    GenerationJob.objects.filter(pk=job.pk).update(status=JobStatus.DONE)
    client.force_login(researcher)
    page = client.get(reverse("generation-detail", args=[job.pk])).text
    progress = reverse("study-progress", args=[setup.study.pk])
    assert f'href="{progress}">Vet them in {setup.study.name}</a>' in page
    assert f'href="/datasets/{dataset.pk}/">Open the dataset' in page
