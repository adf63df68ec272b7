"""Recruiting a panel (docs/annotation.md, "Recruiting a panel"): the study's secret links,
participants arriving with their platform's id, signed in with no password, held to their
own work in their own study."""

from __future__ import annotations

import pytest

from apps.annotation.models import Panel, PanelLink, Participant, StudyMembership
from apps.annotation.services.panel import panel_link_open
from tests.annotation.factories import study_setup
from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db
PROLIFIC = "PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1e&STUDY_ID=S1&SESSION_ID=X9"


@pytest.fixture
def setup():
    setup = study_setup(perturbations=6, annotators=0, vetting_overlap=2)
    Panel.objects.create(study=setup.study, consent="We keep your answers for research.")
    setup.link = panel_link_open(study=setup.study)  # type: ignore[attr-defined]
    return setup


def join_url(link: PanelLink, query: str = PROLIFIC) -> str:
    return f"/join/{link.token}/?{query}"


def arrive(client, link: PanelLink, query: str = PROLIFIC, **extra):
    """Open the link and agree: the answer to the agreement."""
    return client.post(join_url(link, query), {"consent": "1"}, **extra)


def test_the_researcher_opens_a_link_and_sees_the_url_to_give_prolific(client, setup):
    study = setup.study
    client.force_login(study.owner)
    PanelLink.objects.all().delete()
    assert client.post(f"/studies/{study.pk}/panel/links/", {"group": ""}).status_code == 302
    link = PanelLink.objects.get(study=study)
    page = client.get(f"/studies/{study.pk}/panel/").content.decode()
    assert f"/join/{link.token}/" in page
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in page


def test_the_link_shows_consent_and_guidelines_then_starts_the_work(client, setup):
    shown = client.get(join_url(setup.link))
    assert shown.status_code == 200
    text = shown.content.decode()
    assert "We keep your answers for research." in text
    assert "Judge only the change the kind describes." in text  # the guidelines
    refused = client.post(join_url(setup.link), {})
    assert refused.status_code == 400 and "Tick the box" in refused.content.decode()
    assert not Participant.objects.exists()
    started = arrive(client, setup.link)
    assert started.status_code == 302
    work = client.get(started["Location"], follow=True)
    assert work.status_code == 200
    assert work.redirect_chain[-1][0] == f"/studies/{setup.study.pk}/vet/"
    assert b'id="work"' in work.content


def test_a_participant_is_an_identity_of_this_study_alone_with_no_password(client, setup):
    arrive(client, setup.link)
    participant = Participant.objects.get()
    user = participant.user
    assert user.role == "participant" and not user.has_usable_password()
    assert participant.platform == "prolific"
    assert participant.external_id == "5f1a2b3c4d5e6f7a8b9c0d1e"
    assert participant.platform_params == {"STUDY_ID": "S1", "SESSION_ID": "X9"}
    assert "5f1a2b3c" not in user.username  # their platform id is not their account name
    assert list(StudyMembership.objects.filter(user=user).values_list("study", "role")) == [
        (setup.study.pk, "annotator")
    ]


def test_coming_back_with_the_same_id_resumes_the_same_identity(client, setup):
    from django.test import Client

    arrive(client, setup.link)
    first = client.get(f"/studies/{setup.study.pk}/vet/")
    held = first.context["item"].perturbation.pk
    again = Client()  # another browser, the same participant id
    assert arrive(again, setup.link).status_code == 302
    assert Participant.objects.count() == 1
    resumed = again.get(f"/studies/{setup.study.pk}/vet/")
    assert resumed.context["item"].perturbation.pk == held  # where they left off
    other = Client()
    arrive(other, setup.link, "PROLIFIC_PID=aaaabbbbccccddddeeeeffff")
    assert Participant.objects.count() == 2


def test_a_participant_is_known_by_platform_and_platform_id(client, setup):
    """The same id given on another platform is someone else, who cannot take their place."""
    from django.test import Client

    arrive(client, setup.link)
    pid = "5f1a2b3c4d5e6f7a8b9c0d1e"
    for query in (f"participant={pid}", f"workerId={pid}&assignmentId=A1"):
        assert arrive(Client(), setup.link, query).status_code == 302
    platforms = Participant.objects.filter(external_id=pid).values_list("platform", flat=True)
    assert sorted(platforms) == ["mturk", "other", "prolific"]
    assert Participant.objects.values("user").distinct().count() == 3


def test_a_study_may_require_the_same_platform_session_to_resume(client, setup):
    from django.test import Client

    Panel.objects.filter(study=setup.study).update(same_session_required=True)
    arrive(client, setup.link)
    another_session = PROLIFIC.replace("SESSION_ID=X9", "SESSION_ID=Y7")
    refused = arrive(Client(), setup.link, another_session)
    assert refused.status_code == 403
    assert "same place on your platform" in refused.content.decode()
    assert arrive(Client(), setup.link).status_code == 302  # the same session resumes
    assert Participant.objects.count() == 1
    assert client.get(join_url(setup.link)).status_code == 302  # the first browser, at once
    page_owner = Client()
    page_owner.force_login(setup.study.owner)
    page = page_owner.get(f"/studies/{setup.study.pk}/panel/").content.decode()
    assert "Resume only in the same platform session" in page


@pytest.mark.parametrize(
    ("query", "platform", "external_id"),
    [
        ("workerId=A1B2C3&assignmentId=AS1&hitId=H1", "mturk", "A1B2C3"),
        ("participant=lab-07", "other", "lab-07"),
    ],
)
def test_mturk_and_generic_links(client, setup, query, platform, external_id):
    assert arrive(client, setup.link, query).status_code == 302
    participant = Participant.objects.get()
    assert (participant.platform, participant.external_id) == (platform, external_id)


@pytest.mark.parametrize("query", ["", "PROLIFIC_PID=<script>", "participant=%3Dcmd()"])
def test_a_link_without_a_usable_participant_id_says_so(client, setup, query):
    answer = client.get(join_url(setup.link, query))
    assert answer.status_code == 400
    assert b"participant id" in answer.content
    assert arrive(client, setup.link, query).status_code == 400
    assert not Participant.objects.exists()


def test_rotating_the_link_ends_the_old_secret(client, setup):
    study, old = setup.study, setup.link.token
    client.force_login(study.owner)
    client.post(f"/studies/{study.pk}/panel/links/{setup.link.pk}/rotate/")
    client.logout()
    assert client.get(f"/join/{old}/?{PROLIFIC}").status_code == 404
    setup.link.refresh_from_db()
    assert setup.link.token != old
    assert arrive(client, setup.link).status_code == 302


def test_a_closed_link_lets_nobody_new_in_but_those_in_come_back(client, setup):
    from django.test import Client

    study = setup.study
    arrive(client, setup.link)
    owner = Client()
    owner.force_login(study.owner)
    owner.post(f"/studies/{study.pk}/panel/links/{setup.link.pk}/close/")
    newcomer = Client()
    closed = arrive(newcomer, setup.link, "PROLIFIC_PID=bbbbccccddddeeeeffff0000")
    assert closed.status_code == 404 and b"closed" in closed.content
    back = Client()
    assert arrive(back, setup.link).status_code == 302


def test_creating_identities_is_limited_per_address(client, setup, settings):
    from django.test import Client

    settings.DISCERN_PANEL_JOINS_PER_HOUR = 2
    for n in range(2):
        assert arrive(Client(), setup.link, f"participant=p{n}").status_code == 302
    refused = arrive(Client(), setup.link, "participant=p2")
    assert refused.status_code == 429
    assert b"Too many sign-ups" in refused.content and refused["Retry-After"]
    assert Participant.objects.count() == 2
    assert arrive(Client(), setup.link, "participant=p0").status_code == 302  # coming back
    elsewhere = arrive(Client(), setup.link, "participant=p3", REMOTE_ADDR="10.0.0.9")
    assert elsewhere.status_code == 302


def test_a_full_study_or_group_turns_newcomers_away(client, setup):
    from django.test import Client

    study = setup.study
    Panel.objects.filter(study=study).update(participants_total=1)
    assert arrive(Client(), setup.link, "participant=first").status_code == 302
    full = arrive(Client(), setup.link, "participant=second")
    assert full.status_code == 409 and b"This study is full" in full.content
    assert arrive(Client(), setup.link, "participant=first").status_code == 302  # back in
    study.comparison_groups = 2
    study.save()
    Panel.objects.filter(study=study).update(participants_total=None, participants_per_group=1)
    group = panel_link_open(study=study, group=1)
    assert arrive(Client(), group, "participant=g1").status_code == 302
    assert arrive(Client(), group, "participant=g2").status_code == 409
    assert Participant.objects.get(external_id="g1").group == 1


def test_a_participant_reaches_nothing_but_their_work(client, setup):
    study = setup.study
    other = StudyFactory()
    arrive(client, setup.link)
    assert client.get(f"/studies/{study.pk}/vet/").status_code == 200
    for path in (
        "/",
        f"/studies/{study.pk}/",
        f"/studies/{study.pk}/panel/",
        f"/studies/{study.pk}/progress/",
        f"/studies/{other.pk}/vet/",
        "/datasets/",
        "/catalog/",
    ):
        assert client.get(path).status_code in (403, 404), path
    assert client.get("/").content.count(b"Back to your study") == 1
    for path in ("/api/v1/studies/", f"/api/v1/studies/{study.pk}/vetting/next/"):
        assert client.get(path).status_code in (401, 403), path


def test_participant_ids_are_never_shown_to_other_participants(client, setup):
    from django.test import Client

    arrive(client, setup.link)
    other = Client()
    arrive(other, setup.link, "PROLIFIC_PID=ffffeeeeddddccccbbbbaaaa")
    for path in (f"/studies/{setup.study.pk}/vet/", f"/studies/{setup.study.pk}/vet/recent/"):
        assert b"5f1a2b3c4d5e6f7a8b9c0d1e" not in other.get(path, follow=True).content


def test_the_panel_settings_name_what_is_wrong(client, setup):
    study = setup.study
    client.force_login(study.owner)
    url = f"/studies/{study.pk}/panel/settings/"
    bad = client.post(url, {"screen_items": 5, "screen_failures": 5})
    assert bad.status_code == 400
    text = bad.content.decode()
    assert "Failed control items allowed: Allowing 5 failed control items" in text
    assert "Screen within the first: The study mixes in no control items" in text
    good = client.post(
        url,
        {
            "items_per_participant": 4,
            "completion_code": "C0DE",
            "completion_url": "https://app.prolific.com/submissions/complete?cc=C0DE",
            "screen_items": 0,
            "screen_failures": 0,
        },
    )
    assert good.status_code == 302
    panel = Panel.objects.get(study=study)
    assert (panel.items_per_participant, panel.completion_code) == (4, "C0DE")


def test_only_the_studys_researchers_manage_its_panel(client, setup):
    from tests.factories import MembershipFactory, UserFactory

    study = setup.study
    annotator = UserFactory(role="annotator")
    MembershipFactory(study=study, user=annotator, role="annotator")
    client.force_login(annotator)
    assert client.get(f"/studies/{study.pk}/panel/").status_code == 403
    assert client.post(f"/studies/{study.pk}/panel/links/{setup.link.pk}/close/").status_code == 403
    assert client.get(f"/studies/{study.pk}/participant/").status_code == 403
    setup.link.refresh_from_db()
    assert setup.link.open


def test_a_researcher_trying_the_link_is_told_it_signs_them_out(client, setup):
    client.force_login(setup.study.owner)
    assert b"starting signs you out" in client.get(join_url(setup.link)).content
