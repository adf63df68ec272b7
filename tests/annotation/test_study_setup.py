"""A researcher sets up a study in the browser and the API: create, edit, archive, people."""

import pytest
from django.conf import settings
from django.urls import reverse

from apps.annotation.models import Study, StudyMembership, Vetting
from tests.annotation.factories import study_setup
from tests.factories import (
    CriterionFactory,
    DatasetFactory,
    KindFactory,
    MembershipFactory,
    StudyFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def test_researcher_creates_a_study_from_the_page(client, researcher):
    dataset = DatasetFactory(owner=researcher, name="news")
    kind = KindFactory(slug="negation", name="Negation")
    criterion = CriterionFactory(key="coherence-default")
    client.force_login(researcher)
    page = client.get(reverse("study-new"))
    assert page.status_code == 200 and "Step 1 of 6: Data" in page.text
    kinds = client.post(reverse("study-new"), {"step": "0", "go": "1", "name": "Summaries"})
    assert "Step 2 of 6: Perturbation kinds" in kinds.text and "Negation" in kinds.text
    # A post without a step (a script) creates the study at once.
    response = client.post(
        reverse("study-new"),
        {
            "name": "Summaries 2026",
            "description": "Do judges notice?",
            "guidelines": "Look at the change only.",
            "datasets": [dataset.pk],
            "kinds": [kind.pk],
            "criteria": [criterion.pk],
            "vetting_overlap": 2,
            "comparison_groups": 1,
            "comparisons_need_vetting": "on",
            "lease_minutes": 20,
            "vetted_only_default": "on",
        },
    )
    study = Study.objects.get(name="Summaries 2026")
    assert response.status_code == 302 and response["Location"] == reverse(
        "study-members", args=[study.pk]
    )
    assert study.owner == researcher and study.slug == "summaries-2026"
    assert list(study.datasets.all()) == [dataset] and study.vetting_overlap == 2
    assert study.vetted_only_default and study.plan_built_at is not None


def test_study_form_offers_only_the_researchers_datasets(client, researcher):
    DatasetFactory(owner=researcher, name="my-news")
    DatasetFactory(owner=UserFactory(role="researcher"), name="their-news")
    client.force_login(researcher)
    page = client.get(reverse("study-new")).text
    assert "my-news" in page and "their-news" not in page


def test_owner_edits_and_archives_members_cannot(client, researcher):
    study = StudyFactory(owner=researcher, name="Old name")
    member = UserFactory(role="researcher")
    MembershipFactory(study=study, user=member, role="researcher")
    client.force_login(member)
    assert client.get(reverse("study-edit", args=[study.pk])).status_code == 403
    assert (
        client.post(reverse("study-archive", args=[study.pk]), {"archived": "1"}).status_code == 403
    )
    outsider = UserFactory(role="researcher")
    client.force_login(outsider)
    assert client.get(reverse("study-edit", args=[study.pk])).status_code == 404
    client.force_login(researcher)
    data = {"name": "New name", "vetting_overlap": 1, "comparison_groups": 1, "lease_minutes": 30}
    assert client.post(reverse("study-edit", args=[study.pk]), data).status_code == 302
    study.refresh_from_db()
    assert study.name == "New name"
    client.post(reverse("study-archive", args=[study.pk]), {"archived": "1"}, follow=True)
    assert "New name" not in client.get(reverse("home")).text
    assert "New name" in client.get(reverse("studies-archived")).text


def test_annotators_cannot_create_studies_and_see_a_page_saying_why(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("study-new"))
    assert response.status_code == 403
    assert "Only researchers create studies." in response.text
    assert "Back to your studies" in response.text


def test_members_added_by_username_change_role_and_leave_keeping_judgements(client, researcher):
    setup = study_setup(perturbations=2, annotators=1)
    study = setup.study
    study.owner = researcher
    study.save()
    ann = setup.annotators[0]
    Vetting.objects.create(
        study=study, perturbation=setup.perturbations[0], annotator=ann, verdict="valid"
    )
    newcomer = UserFactory(username="bob")
    client.force_login(researcher)
    add = client.post(
        reverse("study-member-add", args=[study.pk]), {"username": "bob", "role": "expert"}
    )
    assert add.status_code == 302
    assert StudyMembership.objects.get(study=study, user=newcomer).role == "expert"
    unknown = client.post(
        reverse("study-member-add", args=[study.pk]), {"username": "nobody", "role": "expert"}
    )
    assert unknown.status_code == 400 and "No account is called" in unknown.text
    membership = StudyMembership.objects.get(study=study, user=ann)
    client.post(reverse("study-member-role", args=[study.pk, membership.pk]), {"role": "expert"})
    membership.refresh_from_db()
    assert membership.role == "expert"
    client.post(reverse("study-member-remove", args=[study.pk, membership.pk]))
    assert not StudyMembership.objects.filter(pk=membership.pk).exists()
    assert Vetting.objects.filter(study=study, annotator=ann).count() == 1


def test_accounts_from_a_list_of_names_show_passwords_once(client, researcher):
    study = StudyFactory(owner=researcher)
    client.force_login(researcher)
    response = client.post(
        reverse("study-members-create", args=[study.pk]),
        {"names": "username\nann1\nann2\n", "role": "annotator", "access": "password"},
    )
    assert response.status_code == 200 and "shown only once" in response.text
    assert "no-cache" in response["Cache-Control"]
    assert set(study.memberships.values_list("user__username", flat=True)) == {"ann1", "ann2"}
    password = response.context["accounts"][0]["password"]
    client.logout()
    signed_in = client.post(reverse("login"), {"username": "ann1", "password": password})
    assert signed_in.status_code == 302  # the login page accepts the generated password
    again = client.get(reverse("study-members", args=[study.pk]))
    assert again.status_code == 403


def test_invitation_link_works_once(client, researcher):
    study = StudyFactory(owner=researcher)
    client.force_login(researcher)
    upload = ("names.csv", b"name,email\ncarla,c@example.org\n")
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = client.post(
        reverse("study-members-create", args=[study.pk]),
        {"file": SimpleUploadedFile(*upload), "role": "expert", "access": "link"},
    )
    link = response.context["accounts"][0]["link"]
    path = link.split("testserver", 1)[1]
    client.logout()
    form = client.get(path, follow=True)
    assert "Choose a password for" in form.text
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "a-long-new-pass-42", "new_password2": "a-long-new-pass-42"},
    )
    assert done.status_code == 302
    client.logout()
    assert "has been used" in client.get(path, follow=True).text


def test_creating_accounts_is_all_or_nothing(client, researcher):
    study = StudyFactory(owner=researcher)
    UserFactory(username="taken")
    client.force_login(researcher)
    response = client.post(
        reverse("study-members-create", args=[study.pk]),
        {"names": "fresh\ntaken\nbad name", "role": "annotator", "access": "password"},
    )
    assert response.status_code == 400
    assert "already has an account" in response.text and "letters, digits" in response.text
    assert not study.memberships.exists()


@pytest.mark.parametrize("rows", [2, 12])
def test_list_pages_take_a_fixed_number_of_queries(
    client, researcher, rows, django_assert_max_num_queries
):
    for n in range(rows):
        study = StudyFactory(owner=researcher, name=f"S{n}")
        for _ in range(rows):
            MembershipFactory(study=study, user=UserFactory(), role="annotator")
    client.force_login(researcher)
    with django_assert_max_num_queries(3):  # session, user, studies with their counts
        assert client.get(reverse("home")).status_code == 200
    with django_assert_max_num_queries(4):
        assert client.get(reverse("study-members", args=[study.pk])).status_code == 200
    # the session is read from Redis on PostgreSQL's pass, from the database on SQLite's
    session = 0 if settings.SESSION_ENGINE.endswith("cached_db") else 1
    with django_assert_max_num_queries(11 + session):
        assert client.get(reverse("study-detail", args=[study.pk])).status_code == 200


# --- API -------------------------------------------------------------------------------------


def test_api_creates_changes_and_archives_a_study(api_client, researcher):
    dataset = DatasetFactory(owner=researcher, name="news")
    KindFactory(slug="negation")
    api_client.force_authenticate(researcher)
    created = api_client.post(
        "/api/v1/studies/",
        {"name": "Via API", "datasets": ["news"], "kinds": ["negation"], "vetting_overlap": 2},
        format="json",
    )
    assert created.status_code == 201, created.data
    assert created.data["datasets"] == ["news"] and created.data["kinds"] == ["negation"]
    pk = created.data["id"]
    changed = api_client.patch(
        f"/api/v1/studies/{pk}/", {"lease_minutes": 10, "archived": True}, format="json"
    )
    assert changed.status_code == 200 and changed.data["lease_minutes"] == 10
    assert changed.data["archived_at"] is not None
    bad = api_client.patch(f"/api/v1/studies/{pk}/", {"vetting_overlap": 0}, format="json")
    assert bad.status_code == 400
    assert Study.objects.get(pk=pk).datasets.get() == dataset


def test_api_refuses_annotators_and_non_owners(api_client, annotator, researcher):
    api_client.force_authenticate(annotator)
    assert api_client.post("/api/v1/studies/", {"name": "x"}, format="json").status_code == 403
    study = StudyFactory(owner=researcher)
    MembershipFactory(study=study, user=annotator, role="annotator")
    patch = api_client.patch(f"/api/v1/studies/{study.pk}/", {"name": "y"}, format="json")
    assert patch.status_code == 403
    assert api_client.get(f"/api/v1/studies/{study.pk}/members/").status_code == 403


def test_api_members_add_create_change_remove(api_client, researcher):
    study = StudyFactory(owner=researcher)
    UserFactory(username="dana")
    api_client.force_authenticate(researcher)
    url = f"/api/v1/studies/{study.pk}/members/"
    added = api_client.post(url, {"username": "dana", "role": "expert"}, format="json")
    assert added.status_code == 201 and added.data["role"] == "expert"
    made = api_client.post(url, {"usernames": ["eve", "fay"], "access": "password"}, format="json")
    assert made.status_code == 200 and len(made.data) == 2 and made.data[0]["password"]
    listed = api_client.get(url).data
    assert {m["username"] for m in listed} == {"dana", "eve", "fay"}
    role = api_client.patch(f"{url}eve/", {"role": "researcher"}, format="json")
    assert role.status_code == 200 and role.data["role"] == "researcher"
    assert api_client.delete(f"{url}fay/").status_code == 204
    assert {m["username"] for m in api_client.get(url).data} == {"dana", "eve"}


def test_an_archived_study_hands_out_no_work(client, api_client):
    setup = study_setup(perturbations=2, annotators=1, aspects=1, comparisons_need_vetting=False)
    from apps.annotation.services.studies import study_archive

    study_archive(study=setup.study)
    annotator = setup.annotators[0]
    client.force_login(annotator)
    assert "Nothing left to vet" in client.get(reverse("vet-next", args=[setup.study.pk])).text
    assert (
        "Its researcher has archived"
        in client.get(reverse("study-detail", args=[setup.study.pk])).text
    )
    api_client.force_authenticate(annotator)
    url = f"/api/v1/studies/{setup.study.pk}/comparisons/next/"
    assert api_client.post(url).status_code == 204


def test_schema_documents_study_set_up_members_and_raw_data(api_client, researcher):
    api_client.force_authenticate(researcher)
    schema = api_client.get("/api/v1/schema/").content.decode()
    assert "operationId: studies_create" in schema
    assert "operationId: studies_partial_update" in schema
    assert "/api/v1/studies/{id}/members/{username}/" in schema
    assert "/api/v1/studies/{id}/data/{table}.{file_format}" in schema
    assert "judge-calls" in schema
