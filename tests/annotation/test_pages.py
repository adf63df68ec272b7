"""Request-level tests of the annotation pages: status codes, roles, saving, query counts."""

import re
import uuid

import pytest
from django.urls import reverse

from apps.annotation.models import (
    Comparison,
    ComparisonSlot,
    ExpertVote,
    JudgementChange,
    Study,
    Vetting,
    VettingSlot,
)
from apps.annotation.selectors.shown import QUEUE_SHOWN_UP_TO
from apps.catalog.models import Metric
from apps.corpus.models import PerturbationVersion
from tests.annotation.factories import study_setup
from tests.annotation.recent import recent_links
from tests.annotation.work_calls import vetting_next
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def setup():
    return study_setup(perturbations=3, annotators=2, experts=1, aspects=2)


def url(study, tail=""):
    return f"/studies/{study.pk}/{tail}"


def verdict(key=None, value="valid", note=""):
    return {"verdict": value, "note": note, "idempotency_key": str(key or uuid.uuid4())}


@pytest.mark.parametrize(
    "tail", ["vet/", "vet/1/", "vet/recent/", "compare/", "compare/1/1/", "survey/", "progress/"]
)
def test_pages_need_a_login(client, setup, tail):
    response = client.get(url(setup.study, tail))
    assert response.status_code == 302 and "login" in response["Location"]


@pytest.mark.parametrize(
    ("who", "tail", "status"),
    [
        ("annotator", "vet/", 200),
        ("annotator", "compare/", 200),
        ("annotator", "vet/recent/", 200),
        ("annotator", "compare/recent/", 200),
        ("annotator", "survey/", 403),
        ("annotator", "progress/", 403),
        ("expert", "vet/", 403),
        ("expert", "compare/", 403),
        ("expert", "vet/recent/", 403),
        ("expert", "survey/", 200),
        ("expert", "progress/", 403),
        ("owner", "vet/", 403),
        ("owner", "survey/", 403),
        ("owner", "vet/recent/", 403),
        ("owner", "progress/", 200),
        ("outsider", "vet/", 404),
        ("outsider", "compare/", 404),
        ("outsider", "vet/recent/", 404),
        ("outsider", "survey/", 404),
        ("outsider", "progress/", 404),
    ],
)
def test_each_role_reaches_only_its_pages(client, setup, who, tail, status):
    users = {
        "annotator": setup.annotators[0],
        "expert": setup.experts[0],
        "owner": setup.study.owner,
        "outsider": UserFactory(username="outsider", role="researcher"),
    }
    client.force_login(users[who])
    assert client.get(url(setup.study, tail)).status_code == status


@pytest.mark.parametrize(
    "tail",
    ["vet/{p}/verdict/", "vet/{p}/skip/", "vet/{p}/edit/", "vet/{p}/preview/", "survey/vote/"],
)
def test_posts_are_refused_to_the_wrong_role(client, setup, tail):
    p = setup.perturbations[0].pk
    client.force_login(setup.study.owner)
    assert client.post(url(setup.study, tail.format(p=p)), {}).status_code == 403
    client.force_login(UserFactory(username="outsider"))
    assert client.post(url(setup.study, tail.format(p=p)), {}).status_code == 404


def test_vetting_page_shows_the_item_with_its_diff(client, setup):
    client.force_login(setup.annotators[0])
    response = client.get(url(setup.study, "vet/"))
    body = response.content.decode()
    assert response.status_code == 200
    assert '<ins class="diff-ins">not<span class="diff-ws"> </span></ins>' in body
    assert "Generator's explanation" in body and "Added &#x27;not&#x27;." in body
    assert "Negates one statement." in body  # the kind's description
    assert 'name="idempotency_key"' in body and 'data-key="1"' in body
    assert "The council met on Tuesday." in body  # the source
    assert VettingSlot.objects.filter(annotator=setup.annotators[0]).count() == 1


def test_submit_saves_and_answers_the_next_item(client, setup):
    ann = setup.annotators[0]
    client.force_login(ann)
    first = vetting_next(study=setup.study, annotator=ann)
    response = client.post(
        url(setup.study, f"vet/{first.perturbation_id}/verdict/"), verdict(note="ok"), **HTMX
    )
    assert response.status_code == 200
    assert "judgement-saved" in response["HX-Trigger"]
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="work"')
    assert f"/vet/{first.perturbation_id}/" in body  # "back" leads to the one just saved
    vetting = Vetting.objects.get()
    assert (vetting.verdict, vetting.note, vetting.perturbation_id) == (
        "valid",
        "ok",
        first.perturbation_id,
    )


def test_a_stale_second_tab_does_not_overwrite_a_verdict(client, setup):
    ann = setup.annotators[0]
    client.force_login(ann)
    slot = vetting_next(study=setup.study, annotator=ann)
    page = url(setup.study, f"vet/{slot.perturbation_id}/")
    submit = url(setup.study, f"vet/{slot.perturbation_id}/verdict/")
    tab_one, tab_two = client.get(page).context["item"], client.get(page).context["item"]
    first = {**verdict(value="invalid"), "based_on": tab_one.based_on}
    assert client.post(submit, first, **HTMX).status_code == 200
    stale = client.post(submit, {**verdict(value="valid"), "based_on": tab_two.based_on}, **HTMX)
    assert stale.status_code == 409
    assert "another tab" in stale.content.decode() and "Invalid" in stale.content.decode()
    assert Vetting.objects.get().verdict == "invalid" and JudgementChange.objects.count() == 1
    fresh = client.get(page).context["item"]  # reloaded: the form knows the new version
    again = {**verdict(value="valid"), "based_on": fresh.based_on}
    assert client.post(submit, again, **HTMX).status_code == 200
    assert Vetting.objects.get().verdict == "valid"


def test_submit_without_htmx_redirects(client, setup):
    ann = setup.annotators[0]
    client.force_login(ann)
    slot = vetting_next(study=setup.study, annotator=ann)
    response = client.post(url(setup.study, f"vet/{slot.perturbation_id}/verdict/"), verdict())
    assert response.status_code == 302 and response["Location"].endswith("/vet/")


def test_double_click_saves_once(client, setup):
    ann = setup.annotators[0]
    client.force_login(ann)
    slot = vetting_next(study=setup.study, annotator=ann)
    data = verdict()
    for _ in range(2):
        response = client.post(
            url(setup.study, f"vet/{slot.perturbation_id}/verdict/"), data, **HTMX
        )
        assert response.status_code == 200
    assert Vetting.objects.count() == 1 and JudgementChange.objects.count() == 1


def test_bad_submits_are_refused(client, setup):
    a, b = setup.annotators
    slot = vetting_next(study=setup.study, annotator=a)
    vetting_next(study=setup.study, annotator=b)
    client.force_login(a)
    target = url(setup.study, f"vet/{slot.perturbation_id}/verdict/")
    assert client.post(target, {"verdict": "maybe"}).status_code == 400
    key = uuid.uuid4()
    assert client.post(target, verdict(key), **HTMX).status_code == 200
    client.force_login(b)
    assert client.post(target, verdict()).status_code == 403  # a's item
    own = VettingSlot.objects.get(annotator=b)
    reused = client.post(url(setup.study, f"vet/{own.perturbation_id}/verdict/"), verdict(key))
    assert reused.status_code == 409
    assert Vetting.objects.count() == 1


def test_back_shows_an_earlier_verdict_to_change(client, setup):
    ann = setup.annotators[0]
    client.force_login(ann)
    slot = vetting_next(study=setup.study, annotator=ann)
    client.post(url(setup.study, f"vet/{slot.perturbation_id}/verdict/"), verdict(), **HTMX)
    page = client.get(url(setup.study, f"vet/{slot.perturbation_id}/"), **HTMX)
    assert page.status_code == 200 and 'id="revisit"' in page.content.decode()
    assert 'value="valid" data-key="1" data-pick required checked' in page.content.decode()
    client.post(
        url(setup.study, f"vet/{slot.perturbation_id}/verdict/"), verdict(value="invalid"), **HTMX
    )
    assert Vetting.objects.get().verdict == "invalid"
    assert JudgementChange.objects.count() == 2
    other = setup.perturbations[2].pk
    if not VettingSlot.objects.filter(perturbation_id=other, annotator=ann).exists():
        assert client.get(url(setup.study, f"vet/{other}/")).status_code == 404


def test_skip_puts_the_item_back(client, setup):
    ann = setup.annotators[0]
    client.force_login(ann)
    slot = vetting_next(study=setup.study, annotator=ann)
    response = client.post(url(setup.study, f"vet/{slot.perturbation_id}/skip/"), **HTMX)
    assert response.status_code == 200
    assert VettingSlot.objects.get(pk=slot.pk).annotator is None
    assert VettingSlot.objects.get(annotator=ann).perturbation_id != slot.perturbation_id


def test_edit_saves_a_version_and_preview_saves_nothing(client, setup):
    ann = setup.annotators[0]
    client.force_login(ann)
    slot = vetting_next(study=setup.study, annotator=ann)
    base = url(setup.study, f"vet/{slot.perturbation_id}/")
    text = "The council voted not to close the big library in March."
    preview = client.post(f"{base}preview/", {"text": text}, **HTMX)
    assert (
        preview.status_code == 200
        and '<ins class="diff-ins">big<span class="diff-ws"> </span></ins>' in preview.text
    )
    assert "preview, not saved" in preview.text
    assert not PerturbationVersion.objects.exists()
    saved = client.post(f"{base}edit/", {"text": text, "note": "kept the negation"}, **HTMX)
    assert saved.status_code == 200 and "version 2, edited by you" in saved.text
    assert PerturbationVersion.objects.get(number=2).author == ann
    assert client.post(f"{base}edit/", {"text": ""}).status_code == 400


def test_vetting_page_when_no_work_is_left(client):
    setup = study_setup(perturbations=0, annotators=1)
    client.force_login(setup.annotators[0])
    response = client.get(url(setup.study, "vet/"))
    assert response.status_code == 200 and 'id="no-work"' in response.text


def test_comparison_pages(client):
    setup = study_setup(perturbations=2, annotators=1, aspects=2, comparisons_need_vetting=False)
    client.force_login(setup.annotators[0])
    page = client.get(url(setup.study, "compare/"))
    assert page.status_code == 200
    body = page.content.decode()
    assert "How good the summary is" in body  # the criterion, with the task's text name
    assert body.count('data-key="a"') == 1 and 'name="original_first"' in body
    slot = setup.study.comparison_slots.order_by("position", "criterion_id").first()
    tail = f"compare/{slot.perturbation_id}/{slot.criterion_id}/"
    data = {"choice": "A", "original_first": "1", "idempotency_key": str(uuid.uuid4())}
    response = client.post(url(setup.study, tail + "choice/"), data, **HTMX)
    assert response.status_code == 200
    comparison = Comparison.objects.get()
    assert (comparison.choice, comparison.original_first, comparison.outcome) == (
        "A",
        True,
        "worse",
    )
    assert client.get(url(setup.study, tail), **HTMX).status_code == 200  # back to change it
    assert client.post(url(setup.study, tail + "choice/"), {"choice": "Z"}).status_code == 400
    nxt = setup.study.comparison_slots.filter(done_at__isnull=True).first()
    skip = client.post(url(setup.study, f"compare/{nxt.perturbation_id}/{nxt.criterion_id}/skip/"))
    assert skip.status_code == 302


def test_comparisons_of_others_are_not_shown(client):
    setup = study_setup(perturbations=1, annotators=2, aspects=2, comparisons_need_vetting=False)
    a, b = setup.annotators
    theirs = setup.study.comparison_slots.get(annotator=b)
    client.force_login(a)
    tail = f"compare/{theirs.perturbation_id}/{theirs.criterion_id}/"
    assert client.get(url(setup.study, tail)).status_code == 404
    data = {"choice": "A", "original_first": "1", "idempotency_key": str(uuid.uuid4())}
    assert client.post(url(setup.study, tail + "choice/"), data).status_code == 403


def test_survey_and_vote(client, setup):
    expert = setup.experts[0]
    client.force_login(expert)
    page = client.get(url(setup.study, "survey/"))
    assert page.status_code == 200 and "Quality issue 0." in page.text
    assert "coherence means ..." in page.text  # metric definitions
    metric = Metric.objects.get(slug="fluency")
    data = {"kind": setup.kinds[0].pk, "metric": metric.pk, "idempotency_key": str(uuid.uuid4())}
    response = client.post(url(setup.study, "survey/vote/"), data, **HTMX)
    assert response.status_code == 200 and 'class="card answered"' in response.text
    assert 'id="answered" hx-swap-oob="true">1<' in response.text
    assert ExpertVote.objects.get().metric == metric
    assert client.post(url(setup.study, "survey/vote/"), {"kind": "x"}).status_code == 400
    data["kind"], data["idempotency_key"] = 999_999, str(uuid.uuid4())
    assert client.post(url(setup.study, "survey/vote/"), data).status_code == 403


def test_progress_page_counts_in_few_queries(client, django_assert_max_num_queries):
    setup = study_setup(perturbations=4, kinds=3, annotators=6, experts=2, aspects=2)
    for annotator in setup.annotators:
        slot = vetting_next(study=setup.study, annotator=annotator)
        client.force_login(annotator)
        client.post(url(setup.study, f"vet/{slot.perturbation_id}/verdict/"), verdict())
    client.force_login(setup.study.owner)
    # One a kind of work (does the study ask for it), one for time on task, and one for the
    # recruited participants the attention check screened out (left out of the agreement).
    with django_assert_max_num_queries(33):
        page = client.get(url(setup.study, "progress/"))
    assert page.status_code == 200
    assert '<dd id="vetting-count">6</dd>' in page.text
    assert page.text.count("s-annotator-") >= 6
    with django_assert_max_num_queries(33):
        live = client.get(url(setup.study, "progress/"), **HTMX)
    assert live.text.lstrip().startswith('<div id="live"')


def test_settings_rebuild_the_plan(client, setup):
    client.force_login(setup.study.owner)
    data = {
        "vetting_overlap": 2,
        "comparison_groups": 1,
        "comparisons_need_vetting": "",
        "lease_minutes": 10,
        "guidelines": "Be careful.",
    }
    response = client.post(url(setup.study, "settings/"), data)
    assert response.status_code == 302
    study = Study.objects.get(pk=setup.study.pk)
    assert (study.vetting_overlap, study.comparisons_need_vetting) == (2, False)
    assert VettingSlot.objects.filter(study=study).count() == 6
    assert study.comparison_slots.count() == 3 * 2
    data["vetting_overlap"] = 0
    assert client.post(url(setup.study, "settings/"), data).status_code == 400
    assert client.post(url(setup.study, "plan/")).status_code == 302


def test_study_page_offers_each_role_its_work(client, setup):
    for user, link in [
        (setup.annotators[0], "/vet/"),
        (setup.experts[0], "/survey/"),
        (setup.study.owner, "/progress/"),
    ]:
        client.force_login(user)
        assert link in client.get(url(setup.study)).text


@pytest.mark.parametrize(
    "model",
    [
        "vetting",
        "comparison",
        "expertvote",
        "assessment",
        "judgementchange",
        "criterionassignment",
    ],
)
def test_admin_lists_judgements_read_only(client, setup, model):
    admin = UserFactory(username="boss", is_staff=True, is_superuser=True, role="researcher")
    client.force_login(admin)
    assert client.get(f"/admin/annotation/{model}/").status_code == 200
    assert client.get(f"/admin/annotation/{model}/add/").status_code == 403


def test_survey_and_vetting_pages_need_few_queries(client, django_assert_max_num_queries):
    setup = study_setup(perturbations=2, kinds=8, annotators=1, experts=1)
    client.force_login(setup.experts[0])
    with django_assert_max_num_queries(12):
        page = client.get(url(setup.study, "survey/"))
    assert page.text.count('class="card') == 8
    client.force_login(setup.annotators[0])
    client.get(url(setup.study, "vet/"))  # the first view stores the item's diff
    with django_assert_max_num_queries(20):
        assert client.get(url(setup.study, "vet/")).status_code == 200


def test_a_long_comparison_queue_is_shown_as_1000_plus(client):
    """A person's waiting comparisons are counted up to 1000 on the work pages (counting
    thousands on every click cost more than the rest of the page); the researcher's progress
    page still counts them all."""
    setup = study_setup(perturbations=2, annotators=1, aspects=1, comparisons_need_vetting=False)
    person, study = setup.annotators[0], setup.study
    waiting = ComparisonSlot.objects.filter(study=study, annotator=person, done_at__isnull=True)
    client.force_login(person)
    page = client.get(f"/studies/{study.pk}/vet/", **HTMX).content.decode()
    assert f"{waiting.count()} comparisons</a> wait for you" in page  # exact below the cap
    ComparisonSlot.objects.bulk_create(
        ComparisonSlot(
            study=study,
            perturbation=setup.perturbations[0],
            criterion=setup.criteria[0],
            group=100 + n,
            position=10_000 + n,
            skipped=False,
            annotator=person,
        )
        for n in range(QUEUE_SHOWN_UP_TO + 1)
    )
    page = client.get(f"/studies/{study.pk}/vet/", **HTMX).content.decode()
    assert "1000+ comparisons</a> wait for you" in page
    page = client.get(f"/studies/{study.pk}/compare/", **HTMX).content.decode()
    assert "<strong>1000+</strong> more in your queue" in page
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/progress/").content.decode()
    assert f'<td class="num">{waiting.count()}</td>' in page


def test_the_recent_verdicts_link_to_their_items(client, setup):
    ann = setup.annotators[0]
    client.force_login(ann)
    answered = []
    for _ in range(2):
        slot = vetting_next(study=setup.study, annotator=ann)
        client.post(url(setup.study, f"vet/{slot.perturbation_id}/verdict/"), verdict(), **HTMX)
        answered.append(slot.perturbation_id)
    links = recent_links(client, client.get(url(setup.study, "vet/")).content.decode())
    assert links == [reverse("vet-item", args=[setup.study.pk, p]) for p in reversed(answered)]
    again = client.get(links[1], **HTMX).content.decode()
    assert 'id="revisit"' in again and f"/vet/{answered[0]}/verdict/" in again


def test_the_last_verdicts_are_loaded_when_opened_and_are_only_theirs(client):
    setup = study_setup(perturbations=6, annotators=2, aspects=1)
    first, second = setup.annotators
    client.force_login(first)
    page = client.get(url(setup.study, "vet/")).content.decode()
    assert 'class="recent"' not in page  # nothing answered yet: no list offered
    assert "None yet." in client.get(url(setup.study, "vet/recent/"), **HTMX).content.decode()
    mine = []
    for _ in range(2):
        slot = vetting_next(study=setup.study, annotator=first)
        data = verdict(value="invalid")
        client.post(url(setup.study, f"vet/{slot.perturbation_id}/verdict/"), data, **HTMX)
        mine.append(slot.perturbation_id)
    client.force_login(second)
    theirs = vetting_next(study=setup.study, annotator=second).perturbation_id
    client.post(url(setup.study, f"vet/{theirs}/verdict/"), verdict(), **HTMX)
    client.force_login(first)
    page = client.get(url(setup.study, "vet/"), **HTMX).content.decode()
    # The page offers the list, closed, and does not carry it: it is loaded when opened.
    assert "Your last verdicts" in page and ": Invalid</li>" not in page
    listed = client.get(url(setup.study, "vet/recent/"), **HTMX).content.decode()
    assert re.findall(r"#(\d+)</a>: Invalid", listed) == [str(p) for p in reversed(mine)]
    assert f"#{theirs}</a>" not in listed  # another annotator's verdict


def test_the_recent_choices_link_to_their_pairs(client):
    setup = study_setup(perturbations=2, annotators=1, aspects=2, comparisons_need_vetting=False)
    client.force_login(setup.annotators[0])
    answered = []
    for slot in setup.study.comparison_slots.order_by("position", "criterion_id")[:2]:
        tail = f"compare/{slot.perturbation_id}/{slot.criterion_id}/choice/"
        data = {"choice": "B", "original_first": "1", "idempotency_key": str(uuid.uuid4())}
        assert client.post(url(setup.study, tail), data, **HTMX).status_code == 200
        answered.append([slot.perturbation_id, slot.criterion_id])
    links = recent_links(client, client.get(url(setup.study, "compare/")).content.decode())
    expected = [reverse("compare-item", args=[setup.study.pk, *pair]) for pair in answered]
    assert links == expected[::-1]
