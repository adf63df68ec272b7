"""Datasets belong to a researcher: a name reaches only the importer's own dataset, and nothing
another researcher owns can be written to (imports, generations, ratings)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token

from apps.corpus.importing import ImportFailed, items_import
from apps.corpus.models import Dataset, GenerationJob, Perturbation, SourceItem
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
NAME = "Demo news summaries"
ALPHA = '{"id": "n1", "original": "Alpha\'s private text.", "source": "Alpha\'s source."}\n'
BETA = (
    '{"id": "n1", "original": "Beta\'s text.", "perturbations": '
    '[{"kind": "negation", "text": "Not beta\'s text."}]}\n'
)


@pytest.fixture
def alpha(catalog, tmp_path):
    owner = UserFactory(username="alpha", role="researcher")
    path = tmp_path / "alpha.jsonl"
    path.write_text(ALPHA)
    items_import(path=path, dataset_name=NAME, owner=owner)
    return owner


@pytest.fixture
def beta(db):
    return UserFactory(username="beta", role="researcher")


def _state(dataset: Dataset) -> list:
    items = SourceItem.objects.filter(dataset=dataset).values_list("external_id", "original")
    perturbations = Perturbation.objects.filter(item__dataset=dataset).count()
    return [sorted(items), perturbations]


def _api(api_client, user):
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user)}")
    return api_client


def test_importing_under_another_researchers_dataset_name_stays_in_your_own(
    alpha, beta, api_client
):
    theirs = Dataset.objects.get(name=NAME, owner=alpha)
    before = _state(theirs)
    upload = SimpleUploadedFile("beta.jsonl", BETA.encode())
    response = _api(api_client, beta).post(
        "/api/v1/imports/", {"file": upload, "dataset": NAME}, format="multipart"
    )
    assert response.status_code == 201, response.content
    assert _state(theirs) == before  # alpha's dataset is untouched
    mine = Dataset.objects.get(name=NAME, owner=beta)
    assert _state(mine) == [[("n1", "Beta's text.")], 1]
    # the same id holds other text in alpha's dataset: nothing of it reaches beta
    assert "Alpha" not in response.content.decode()
    listed = api_client.get("/api/v1/datasets/").json()["results"]
    assert [d["id"] for d in listed] == [mine.pk]


def test_the_import_page_also_writes_only_your_own_dataset(alpha, beta, client):
    theirs = Dataset.objects.get(name=NAME, owner=alpha)
    before = _state(theirs)
    client.force_login(beta)
    upload = SimpleUploadedFile("beta.jsonl", BETA.encode())
    response = client.post("/imports/new/", {"file": upload, "dataset": NAME})
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "Alpha" not in page
    assert _state(theirs) == before and Dataset.objects.filter(owner=beta).count() == 1


def test_your_own_name_finds_your_dataset_again(alpha, tmp_path):
    path = tmp_path / "more.jsonl"
    path.write_text('{"id": "n2", "original": "More."}\n')
    items_import(path=path, dataset_name=NAME, owner=alpha)
    assert Dataset.objects.filter(name=NAME).count() == 1
    assert Dataset.objects.get(name=NAME).items.count() == 2


def test_a_header_only_file_creates_no_dataset(catalog, beta, tmp_path, api_client):
    path = tmp_path / "empty.csv"
    path.write_text("id,original\n")
    with pytest.raises(ImportFailed) as failed:
        items_import(path=path, dataset_name="nothing", owner=beta)
    assert "empty.csv" in str(failed.value) and "no rows" in str(failed.value)
    upload = SimpleUploadedFile("empty.csv", b"id,original\n")
    response = _api(api_client, beta).post(
        "/api/v1/imports/", {"file": upload, "dataset": "nothing"}, format="multipart"
    )
    assert response.status_code == 400 and "no rows" in response.json()["errors"][0]
    assert not Dataset.objects.filter(name="nothing").exists()


def test_nobody_generates_in_another_researchers_dataset(alpha, beta, api_client, client):
    theirs = Dataset.objects.get(name=NAME, owner=alpha)
    api = _api(api_client, beta)
    body = {"dataset": theirs.pk, "kinds": ["negation"]}
    response = api.post("/api/v1/generation-jobs/", body, format="json")
    assert response.status_code == 400 and "dataset" in response.json()
    client.force_login(beta)
    page = client.post("/generate/", {"dataset": theirs.pk, "kinds": ["negation"], "seed": 0})
    assert page.status_code == 200 and not GenerationJob.objects.exists()


def test_nobody_imports_ratings_into_another_researchers_dataset(alpha, beta, api_client):
    theirs = Dataset.objects.get(name=NAME, owner=alpha)
    upload = SimpleUploadedFile("r.csv", b"id,rater,criterion,score\nn1,r,overall,3\n")
    response = _api(api_client, beta).post(
        f"/api/v1/datasets/{theirs.pk}/ratings/", {"file": upload}, format="multipart"
    )
    assert response.status_code == 404


def test_the_command_line_asks_whose_dataset_when_two_researchers_share_a_name(alpha, beta):
    from apps.corpus.importing.owner import OwnerNeeded, import_owner_resolve

    assert import_owner_resolve(username=None, dataset_name=NAME) == alpha
    Dataset.objects.create(name=NAME, owner=beta)
    with pytest.raises(OwnerNeeded, match="several researchers"):
        import_owner_resolve(username=None, dataset_name=NAME)
    assert import_owner_resolve(username="beta", dataset_name=NAME) == beta


def test_a_study_member_cannot_put_the_owners_dataset_in_a_study_of_their_own(
    alpha, beta, api_client
):
    from tests.factories import MembershipFactory, StudyFactory

    theirs = Dataset.objects.get(name=NAME, owner=alpha)
    study = StudyFactory(owner=alpha)
    study.datasets.add(theirs)
    MembershipFactory(study=study, user=beta, role="expert")  # beta may read alpha's dataset
    api_client.force_authenticate(beta)
    created = api_client.post("/api/v1/studies/", {"name": "b", "datasets": [NAME]}, "json")
    assert created.status_code == 400 and "datasets" in created.json()
    assert list(theirs.studies.all()) == [study]
