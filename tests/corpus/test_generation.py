"""Rule-based generation: provenance, determinism, checks, merging, page, API and worker."""

import time

import pytest
from rest_framework.authtoken.models import Token

from apps.annotation.demo import demo_load
from apps.catalog.models import PerturbationKind
from apps.corpus.diff import diff_payload
from apps.corpus.generation.checks import output_flags
from apps.corpus.generation.jobs import generation_job_run
from apps.corpus.models import Dataset, GenerationJob, Perturbation
from tests.factories import DatasetFactory, SourceItemFactory

pytestmark = pytest.mark.django_db
RULE_KINDS = [
    "word-exchange",
    "sentence-deletion",
    "char-deletion-minor",
    "random-ending",
    "typos-major",
    "sentence-reordering-minor",
]


def _job(dataset, kinds, **options) -> GenerationJob:
    job = GenerationJob.objects.create(dataset=dataset, **options)
    job.kinds.set(PerturbationKind.objects.filter(slug__in=kinds))
    generation_job_run(job_id=job.pk)
    job.refresh_from_db()
    return job


def _generated(dataset):
    return Perturbation.objects.filter(item__dataset=dataset, origin="rule")


def test_rule_kinds_make_perturbations_with_provenance(catalog):
    demo_load()
    dataset = Dataset.objects.get(name="Demo news summaries")
    job = _job(dataset, RULE_KINDS, seed=7)
    assert job.status == "done" and job.total == job.done == 6 * len(RULE_KINDS)
    made = _generated(dataset)
    assert made.count() == job.counts["created"] > 0
    deletion = made.filter(kind__slug="char-deletion-minor").first()
    assert deletion.rule_name == "char_deletion" and deletion.seed is not None
    assert deletion.parameters["degree"] == "minor" and deletion.parameters["k"] >= 1
    assert deletion.versions.get().number == 1
    ending = made.filter(kind__slug="random-ending").first()
    assert ending.text != ending.item.original and "pool" not in ending.parameters
    # stored with its diff: the first annotator to see it pays nothing for it
    for perturbation in made.select_related("item"):
        assert perturbation.diff == diff_payload(perturbation.item.original, perturbation.text)


def test_generation_diffs_each_text_once(catalog, monkeypatch):
    """The diff stored with a text is the one its checks read: computed once, not twice."""
    from apps.corpus import diff
    from apps.corpus.generation import checks

    calls = []
    compute = diff.compute_diff

    def counted(original, text):
        calls.append(text)
        return compute(original, text)

    monkeypatch.setattr(diff, "compute_diff", counted)
    monkeypatch.setattr(checks, "compute_diff", counted)
    demo_load()
    calls.clear()
    job = _job(Dataset.objects.get(name="Demo news summaries"), RULE_KINDS, seed=7)
    assert job.counts["created"] > 0
    assert len(calls) == job.total - job.counts.get("not_applicable", 0)  # one per text made


def test_same_seed_gives_the_same_perturbations_and_rerun_creates_nothing(catalog):
    demo_load()
    dataset = Dataset.objects.get(name="Demo news summaries")
    first_job = _job(dataset, RULE_KINDS, seed=7)
    first = sorted(_generated(dataset).values_list("item_id", "kind_id", "text"))
    # an output identical to a hand-written demo perturbation of that kind is merged, not kept
    assert first_job.counts["created"] == len(first)
    again = _job(dataset, RULE_KINDS, seed=7)
    assert again.counts.get("created", 0) == 0
    assert again.counts["merged"] == first_job.counts["created"] + first_job.counts.get("merged", 0)
    assert sorted(_generated(dataset).values_list("item_id", "kind_id", "text")) == first


def test_a_kind_that_cannot_apply_is_reported_not_faked(catalog):
    dataset = DatasetFactory()
    SourceItemFactory(dataset=dataset, external_id="short", original="Only one sentence here.")
    job = _job(dataset, ["sentence-deletion", "sentence-exchange"])
    assert job.counts == {"not_applicable": 2}
    assert {p["item"] for p in job.problems} == {"short"}
    assert "sentence" in job.problems[0]["reason"]
    assert not _generated(dataset).exists()


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        ("", ["empty"]),
        ("The council voted to close the library in March.", ["unchanged"]),
        ("The council voted to clos the library in March.", []),
        ("Completely different words replacing every single one here.", ["too-large"]),
    ],
)
def test_checks_flag_empty_unchanged_and_too_large_outputs(catalog, text, flags):
    kind = PerturbationKind.objects.get(slug="spelling-mistake")  # character level
    assert output_flags("The council voted to close the library in March.", text, kind) == flags


def test_api_starts_a_job_that_the_worker_finishes(api_client, researcher, catalog):
    pytest.importorskip("workers.tasks.generation")
    dataset = DatasetFactory(owner=researcher)
    SourceItemFactory(
        dataset=dataset, original="First sentence here. Second one follows. A third closes it."
    )
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher)}")
    response = api_client.post(
        "/api/v1/generation-jobs/",
        {"dataset": dataset.pk, "kinds": ["sentence-exchange", "word-exchange"], "seed": 3},
        format="json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "pending"
    other = DatasetFactory()
    refused = api_client.post(
        "/api/v1/generation-jobs/", {"dataset": other.pk, "kinds": ["word-exchange"]}, format="json"
    )
    assert refused.status_code == 400 and "dataset" in refused.json()


def test_generation_page_is_for_researchers(client, annotator, researcher, catalog):
    client.force_login(annotator)
    assert client.get("/generate/").status_code == 403
    client.force_login(researcher)
    page = client.get("/generate/")
    assert page.status_code == 200 and b"Word exchange" in page.content


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_worker_runs_a_generation_started_from_the_page(celery_worker, client, researcher, catalog):
    dataset = DatasetFactory(owner=researcher)
    for i in range(5):
        SourceItemFactory(
            dataset=dataset, original=f"Item {i} opens here. It goes on a bit. And then it ends."
        )
    kind = PerturbationKind.objects.get(slug="sentence-exchange")
    client.force_login(researcher)
    response = client.post(
        "/generate/",
        {
            "dataset": dataset.pk,
            "kinds": [kind.pk],
            "seed": 1,
            "temperature": 0.7,
            "max_tokens": 512,
        },
    )
    assert response.status_code == 302
    job = GenerationJob.objects.get()
    deadline = time.monotonic() + 60
    while not job.finished:
        assert time.monotonic() < deadline, "the worker did not finish the generation"
        time.sleep(0.2)
        job.refresh_from_db()
    assert job.counts["created"] == 5 and job.done == job.total == 5
    page = client.get(f"/generate/{job.pk}/", HTTP_HX_REQUEST="true")
    assert b'<dd id="created">5</dd>' in page.content


def test_llm_kinds_need_a_generator(client, api_client, researcher, catalog):
    dataset = DatasetFactory(owner=researcher)
    negation = PerturbationKind.objects.get(slug="negation")
    client.force_login(researcher)
    page = client.post(
        "/generate/",
        {
            "dataset": dataset.pk,
            "kinds": [negation.pk],
            "seed": 0,
            "temperature": 0.7,
            "max_tokens": 512,
        },
    )
    assert page.status_code == 200 and b"need a generator endpoint" in page.content
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher)}")
    response = api_client.post(
        "/api/v1/generation-jobs/", {"dataset": dataset.pk, "kinds": ["negation"]}, format="json"
    )
    assert response.status_code == 400 and "generator" in response.json()
    assert not GenerationJob.objects.exists()


def test_chosen_items_only_and_results_enter_the_study_vetting_queue(client, researcher, catalog):
    from apps.annotation.models import StudyPerturbation, VettingSlot
    from tests.factories import StudyFactory

    dataset = DatasetFactory(owner=researcher)
    for n in range(3):
        SourceItemFactory(
            dataset=dataset,
            external_id=f"x{n}",
            original=f"Item {n} starts. It continues. It ends here.",
        )
    study = StudyFactory(owner=researcher)
    kind = PerturbationKind.objects.get(slug="sentence-exchange")
    client.force_login(researcher)
    refused = client.post(
        "/generate/",
        {
            "dataset": dataset.pk,
            "kinds": [kind.pk],
            "seed": 1,
            "temperature": 0.7,
            "max_tokens": 512,
            "items": "x0, nope",
        },
    )
    assert b"not in " in refused.content and b"nope" in refused.content
    response = client.post(
        "/generate/",
        {
            "dataset": dataset.pk,
            "kinds": [kind.pk],
            "seed": 1,
            "temperature": 0.7,
            "max_tokens": 512,
            "items": "x0\nx2",
            "study": study.pk,
        },
    )
    assert response.status_code == 302
    job = GenerationJob.objects.get()
    generation_job_run(job_id=job.pk)  # what the worker does
    made = Perturbation.objects.filter(origin="rule")
    assert sorted(made.values_list("item__external_id", flat=True)) == ["x0", "x2"]
    assert set(study.kinds.all()) == {kind} and dataset in study.datasets.all()
    queued = StudyPerturbation.objects.filter(study=study)
    assert set(queued.values_list("perturbation_id", flat=True)) == set(
        made.values_list("id", flat=True)
    )
    assert VettingSlot.objects.filter(study=study).count() == 2
