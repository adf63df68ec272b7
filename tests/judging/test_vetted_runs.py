"""Judge runs take vetted perturbations by default (a visible choice on the form and the API);
a dataset validated by its publisher runs without re-vetting."""

import pytest
from rest_framework.authtoken.models import Token

from apps.annotation.models import StudyPerturbation
from apps.corpus.models import Perturbation
from apps.judging.models import Judge, JudgeCall
from tests.judging.conftest import new_run, work

pytestmark = pytest.mark.django_db


def _judged(run) -> set[int]:
    return set(
        JudgeCall.objects.filter(run=run, perturbation__isnull=False).values_list(
            "perturbation_id", flat=True
        )
    )


def test_a_run_takes_only_perturbations_vetted_valid_or_score_invariant(demo):
    plan = StudyPerturbation.objects.filter(study=demo).order_by("perturbation_id")
    valid, invariant, invalid = (p.perturbation_id for p in plan[:3])
    StudyPerturbation.objects.filter(perturbation_id=valid).update(verdict="valid")
    StudyPerturbation.objects.filter(perturbation_id=invariant).update(verdict="score-invariant")
    StudyPerturbation.objects.filter(perturbation_id=invalid).update(verdict="invalid")
    bleu = Judge.objects.get(name="BLEU")
    run = work(new_run(demo, bleu, vetted_only=True))
    assert _judged(run) == {valid, invariant}
    assert run.total == 6 + 2  # the originals and the two vetted perturbations
    (left,) = [p for p in run.problems if "not vetted" in p["reason"]]
    assert left["count"] == 14 - 2
    everything = work(new_run(demo, bleu, vetted_only=False))
    assert len(_judged(everything)) == 14 and everything.problems == []


def test_a_dataset_validated_by_its_publisher_runs_without_vetting(demo, client):
    dataset = demo.datasets.get()
    client.force_login(demo.owner)
    page = client.get(f"/datasets/{dataset.pk}/").content.decode()
    assert "Already validated by its publisher" in page
    response = client.post(f"/datasets/{dataset.pk}/validated/", {"validated": "on"})
    assert response.status_code == 302
    dataset.refresh_from_db()
    assert dataset.publisher_validated
    run = work(new_run(demo, Judge.objects.get(name="BLEU"), vetted_only=True))
    assert _judged(run) == set(
        Perturbation.objects.filter(item__dataset=dataset).values_list("id", flat=True)
    )
    client.post(f"/datasets/{dataset.pk}/validated/", {})
    dataset.refresh_from_db()
    assert not dataset.publisher_validated


def test_the_api_marks_a_dataset_validated(api_client, demo, annotator):
    dataset = demo.datasets.get()
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=demo.owner)}")
    url = f"/api/v1/datasets/{dataset.pk}/publisher-validated/"
    response = api_client.post(url, {"publisher_validated": True}, format="json")
    assert response.status_code == 200 and response.json()["publisher_validated"] is True
    assert api_client.get(f"/api/v1/datasets/{dataset.pk}/").json()["publisher_validated"]
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=annotator)}")
    assert api_client.post(url, {"publisher_validated": False}, format="json").status_code in (
        403,
        404,
    )


def test_the_run_form_offers_the_choice_with_vetted_first(client, demo):
    client.force_login(demo.owner)
    page = client.get("/judging/runs/new/").content.decode()
    assert 'type="radio" name="vetted_only" value="true"' in page
    assert "All selected perturbations, vetted or not" in page
    checked = page.split('value="true"')[1].split(">")[0]
    assert "checked" in checked
