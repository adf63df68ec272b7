"""Sharing a judge is an offer: the researcher it is offered to sees and uses nothing of it
(judge, endpoint, choices, API, command line) until they accept, and may decline it. Only they
accept or decline. A judge named like a colleague's and offered to them cannot break their
generation or take their texts (docs/judging.md, "Sharing")."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.authtoken.models import Token

from apps.corpus.forms import GenerationForm
from apps.corpus.models import Dataset, GenerationJob
from apps.endpoints.selectors import endpoints_for_user
from apps.judging.audit_forms import AuditForm
from apps.judging.forms import JudgeRunForm
from apps.judging.models import Judge, JudgeShare
from apps.judging.search_forms import SearchForm
from apps.judging.selectors import judges_for_user
from tests.factories import DatasetFactory, SourceItemFactory, UserFactory, llm_judge_save

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", role="researcher")


@pytest.fixture
def bob(db):
    return UserFactory(username="bob", role="researcher")


def api_as(api_client, user):
    token, _ = Token.objects.get_or_create(user=user)
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return api_client


def judge_of(owner, name="gpt judge", host="127.0.0.1:9", shared_with=()) -> Judge:
    return llm_judge_save(
        user=owner,
        name=name,
        base_url=f"http://{host}/v1",
        model=f"{owner.username}-model",
        shared_with=list(shared_with),
    )


def choice_labels(user) -> dict[str, list[str]]:
    """The labels of every choice list offering judges or endpoints, as the user gets them."""
    dataset = Dataset.objects.filter(owner=user)
    run = JudgeRunForm(user=user)
    search = SearchForm(user=user)
    audit = AuditForm(user=user)
    generation = GenerationForm(user=user, datasets=dataset)
    return {
        "run judge": [label for _, label in run.fields["judge"].choices],
        "search victim": [label for _, label in search.fields["victim"].choices],
        "search gold": [label for _, label in search.fields["gold"].choices],
        "search generator": [label for _, label in search.fields["generator"].choices],
        "audit judges": [audit.fields[name].label for name in audit.judge_fields],
        "audit gold": [label for _, label in audit.fields["gold_judge"].choices],
        "audit generator": [label for _, label in audit.fields["generator"].choices],
        "generation generator": [label for _, label in generation.fields["generator"].choices],
    }


def test_an_offer_shows_the_recipient_nothing_until_accepted_then_the_judge_and_its_owner(
    alice, bob, client, api_client
):
    judge = judge_of(alice, name="alice's judge", shared_with=[bob])
    assert JudgeShare.objects.get().state == "offered"
    assert not judges_for_user(bob).filter(pk=judge.pk).exists()
    assert not endpoints_for_user(bob).filter(pk=judge.endpoint_id).exists()
    assert not any("alice" in label for labels in choice_labels(bob).values() for label in labels)
    api = api_as(api_client, bob)
    assert api.get(f"/api/v1/judges/{judge.pk}/").status_code == 404
    assert judge.pk not in [j["id"] for j in api.get("/api/v1/judges/").json()["results"]]
    offers = api.get("/api/v1/judge-offers/").json()["results"]
    assert [(o["judge_name"], o["owner"], o["host"], o["model"]) for o in offers] == [
        ("alice's judge", "alice", "127.0.0.1", "alice-model")
    ]
    client.force_login(bob)
    page = client.get("/judging/judges/").content.decode()
    offered, listed = page.split('id="judges"')
    assert "alice&#x27;s judge" in offered and "127.0.0.1" in offered and "Accept" in offered
    assert "alice&#x27;s judge" not in listed

    accepted = api.post(f"/api/v1/judge-offers/{offers[0]['id']}/accept/")
    assert accepted.status_code == 200 and accepted.json()["owner"] == "alice"
    assert api.get(f"/api/v1/judges/{judge.pk}/").json()["shares"] == [
        {"username": "bob", "state": "accepted"}
    ]
    assert api.get("/api/v1/judge-offers/").json()["results"] == []
    assert endpoints_for_user(bob).filter(pk=judge.endpoint_id).exists()
    labels = choice_labels(bob)
    for name in ("run judge", "search victim", "search gold", "audit judges", "audit gold"):
        assert "alice/alice's judge" in labels[name], name
    for name in ("search generator", "audit generator", "generation generator"):
        assert "alice/alice's judge" in labels[name], name
    listed = client.get("/judging/judges/").content.decode()
    assert "shared by alice, read-only" in listed and 'id="offers"' not in listed


def test_the_owner_sees_each_share_offered_or_accepted(alice, bob, client):
    carol = UserFactory(username="carol", role="researcher")
    judge = judge_of(alice, shared_with=[bob, carol])
    share = JudgeShare.objects.get(user=bob)
    client.force_login(bob)
    assert client.post(f"/judging/judges/offers/{share.pk}/accept/").status_code == 302
    client.force_login(alice)
    page = client.get("/judging/judges/").content.decode()
    assert "bob (accepted), carol (offered)" in page
    assert [s.state for s in judge.shares.order_by("user__username")] == ["accepted", "offered"]
    assert list(judge.endpoint.shared_with.all()) == [bob]  # the endpoint: accepted only


def test_declining_removes_the_offer(alice, bob, client, api_client):
    judge = judge_of(alice, shared_with=[bob])
    client.force_login(bob)
    share = JudgeShare.objects.get()
    declined = client.post(f"/judging/judges/offers/{share.pk}/decline/", follow=True)
    assert "Declined gpt judge, offered by alice" in declined.content.decode()
    assert not JudgeShare.objects.exists()
    assert not judges_for_user(bob).filter(pk=judge.pk).exists()
    assert list(Judge.objects.get(pk=judge.pk).endpoint.shared_with.all()) == []
    judge_of(alice, name="second", shared_with=[bob])
    api = api_as(api_client, bob)
    offer = api.get("/api/v1/judge-offers/").json()["results"][0]
    assert api.post(f"/api/v1/judge-offers/{offer['id']}/decline/").status_code == 204
    assert not JudgeShare.objects.exists() and api.get("/api/v1/judge-offers/").json()["count"] == 0


def test_only_the_recipient_accepts_or_declines(alice, bob, client, api_client):
    carol = UserFactory(username="carol", role="researcher")
    judge_of(alice, shared_with=[bob])
    share = JudgeShare.objects.get()
    for someone in (carol, alice):  # another researcher, and the owner herself
        client.force_login(someone)
        for action in ("accept", "decline"):
            assert client.post(f"/judging/judges/offers/{share.pk}/{action}/").status_code == 404
            api = api_as(api_client, someone)
            assert api.post(f"/api/v1/judge-offers/{share.pk}/{action}/").status_code == 404
        assert api.get(f"/api/v1/judge-offers/{share.pk}/").status_code == 404
    share.refresh_from_db()
    assert share.accepted_at is None
    client.force_login(bob)
    assert client.get(f"/judging/judges/offers/{share.pk}/accept/").status_code == 405  # POST


def test_a_twin_offered_to_a_colleague_does_not_take_their_generation(
    alice, bob, api_client, catalog
):
    """Bob names a judge like Alice's and offers it to her: her generation still finds her own
    endpoint, before and after she accepts; "bob/gpt judge" is how she would pick his."""
    own = judge_of(alice, host="127.0.0.1:9")
    twin = judge_of(bob, host="bob-server.invalid", shared_with=[alice])
    dataset = DatasetFactory(owner=alice)
    SourceItemFactory(dataset=dataset)
    body = {"dataset": dataset.pk, "kinds": ["negation"], "generator": "gpt judge"}
    api = api_as(api_client, alice)
    made = api.post("/api/v1/generation-jobs/", body, format="json")
    assert made.status_code == 201, made.json()
    assert GenerationJob.objects.get(pk=made.json()["id"]).generator == own.endpoint
    offer = api.get("/api/v1/judge-offers/").json()["results"][0]
    assert offer["host"] == "bob-server.invalid" and offer["owner"] == "bob"
    api.post(f"/api/v1/judge-offers/{offer['id']}/accept/")
    again = api.post("/api/v1/generation-jobs/", body, format="json")
    assert again.status_code == 201, again.json()
    assert GenerationJob.objects.get(pk=again.json()["id"]).generator == own.endpoint
    theirs = api.post(
        "/api/v1/generation-jobs/", body | {"generator": "bob/gpt judge"}, format="json"
    )
    assert theirs.status_code == 201, theirs.json()
    assert GenerationJob.objects.get(pk=theirs.json()["id"]).generator == twin.endpoint


def test_two_accepted_twins_name_their_owners(alice, bob, api_client, catalog):
    carol = UserFactory(username="carol", role="researcher")
    judge_of(alice, shared_with=[carol])
    judge_of(bob, shared_with=[carol])
    dataset = DatasetFactory(owner=carol)
    SourceItemFactory(dataset=dataset)
    body = {"dataset": dataset.pk, "kinds": ["negation"], "generator": "gpt judge"}
    api = api_as(api_client, carol)
    offered = api.post("/api/v1/generation-jobs/", body, format="json")
    assert offered.status_code == 400  # neither accepted: no such endpoint
    for share in JudgeShare.objects.all():
        api.post(f"/api/v1/judge-offers/{share.pk}/accept/")
    refused = api.post("/api/v1/generation-jobs/", body, format="json")
    assert refused.status_code == 400
    assert refused.json()["generator"] == [
        "Several endpoints you can use are named gpt judge: alice, bob. Write owner/name to "
        "choose one, e.g. alice/gpt judge."
    ]
    chosen = api.post("/api/v1/generation-jobs/", body | {"generator": "alice/gpt judge"}, "json")
    assert chosen.status_code == 201, chosen.json()


def test_the_command_line_refuses_a_judge_only_offered(alice, bob):
    judge = judge_of(alice, shared_with=[bob])
    dataset = DatasetFactory(owner=bob)
    with pytest.raises(CommandError, match=f"no judge '{judge.pk}'; yours to use") as error:
        call_command(
            "judge_audit", "--owner", "bob", "--dataset", str(dataset.pk), "--judge", str(judge.pk)
        )
    assert f"{judge.pk} (" not in str(error.value).split("yours to use")[1]  # not listed


def test_a_name_cannot_pass_for_a_colleagues_and_no_two_choices_read_alike(alice, bob, api_client):
    """A name holds no "/" (the owner/name form picks a colleague's judge); a judge of one's
    own named like an accepted colleague's is told apart by its label."""
    api = api_as(api_client, bob)
    body = {"name": "alice/gpt judge", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    refused = api.post("/api/v1/judges/", body, format="json")
    assert refused.status_code == 400 and "without '/'" in refused.json()["name"][0]
    judge_of(bob, name="squat-me")
    judge_of(alice, name="squat-me", shared_with=[bob])
    offer = api.get("/api/v1/judge-offers/").json()["results"][0]
    assert api.post(f"/api/v1/judge-offers/{offer['id']}/accept/").status_code == 200
    for field, labels in choice_labels(bob).items():
        assert len(labels) == len(set(labels)), field
        assert "squat-me" in labels and "alice/squat-me" in labels, field


def test_an_offer_does_not_block_the_recipients_own_name(alice, bob):
    """Before, a judge shared with you took its name among yours; an offer takes nothing."""
    judge_of(alice, shared_with=[bob])
    mine = judge_of(bob)
    assert (mine.name, mine.created_by) == ("gpt judge", bob)
