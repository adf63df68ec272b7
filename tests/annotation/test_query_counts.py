"""How many SQL statements "next item" and "submit" cost, for each type of work, through the
API and the pages (docs/annotation.md, "Speed"): the budgets below are what the work needs
now, so a change that adds a statement to every click fails here.

Counted as in production: the test's transaction turns each `atomic` block into a SAVEPOINT
and its RELEASE, which in production are the transaction's own BEGIN and COMMIT (not
statements the server sends), so they are left out. The pages' session is read from Redis
(config/settings.py, as wherever REDIS_URL is set): their authentication is one statement.
"""

from __future__ import annotations

import os
import re
import uuid
from contextlib import contextmanager

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from apps.annotation.models import (
    Assessment,
    Comparison,
    ComparisonSlot,
    ExpertVote,
    GoldCheck,
    Vetting,
)
from apps.annotation.services import study_plan_build
from apps.catalog.models import KindFamily, Metric, PerturbationKind
from apps.corpus.models import Perturbation
from tests.annotation.factories import study_setup

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db]
HTMX = {"HTTP_HX_REQUEST": "true"}

# (type of work, through) -> (next item, submit). Pages: "submit" answers with the next
# item's page (one round trip), so it includes a "next item".
BUDGET = {
    # Generated texts are stored with their diff (`with_diff`); an imported one costs one
    # statement more the first time it is shown (its diff is stored then). A page's
    # hand-out reads the page's item; a submit locks the plan row in its first statement.
    ("vetting", "api"): (4, 4),
    ("vetting", "pages"): (4, 6),
    # Comparison slots are owned: "next" needs no lock (3 through the API).
    ("comparison", "api"): (3, 4),
    ("comparison", "pages"): (4, 6),
    ("assessment", "api"): (4, 4),
    # A page's text is read with its hand-out.
    ("assessment", "pages"): (4, 6),
    ("gold_check", "api"): (4, 4),
    ("gold_check", "pages"): (4, 6),
    # The survey shows every card at once: no "next"; a vote's question (the survey asks
    # it; the task's metrics and the expert's other answers for the page) is read by the
    # save's first statement.
    ("survey", "api"): (0, 4),
    ("survey", "pages"): (0, 4),
}
# A retry (a key already saved) reads the first save back: a few statements more.
RETRY = 7
# The API's submit with `?next=true`: the submit's and the next item's, less the second
# authentication and study.
CHAINED = 6
# A page's list of the person's last answers, loaded when they open it: authentication, the
# study, the list.
RECENT_LIST = 3


@contextmanager
def statements(limit: int, what: str):
    with CaptureQueriesContext(connection) as captured:
        yield
    sent = [
        query["sql"]
        for query in captured.captured_queries
        if not query["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))
    ]
    listing = "\n".join(sql[:200] for sql in sent)
    print(f"{what}: {len(sent)} statements")
    if os.environ.get("SHOW_STATEMENTS"):
        print(listing)
    assert len(sent) <= limit, f"{what}: {len(sent)} statements, budget {limit}:\n{listing}"


def api_as(api_client, user):
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return api_client


def key() -> str:
    return str(uuid.uuid4())


def with_diffs(setup):
    """The study's texts stored with their diff, as generation stores them."""
    for perturbation in setup.perturbations:
        perturbation.with_diff(perturbation.item.original).save(update_fields=["diff"])
    return setup


def test_vetting_through_the_api(api_client):
    setup = with_diffs(study_setup(perturbations=6, annotators=2, aspects=2, vetting_overlap=3))
    api = api_as(api_client, setup.annotators[0])
    base = f"/api/v1/studies/{setup.study.pk}/"
    api.post(base + "vetting/next/")  # the first request of a process reads a few things once
    next_budget, submit_budget = BUDGET["vetting", "api"]
    for _ in range(2):
        with statements(next_budget, "vetting API next"):
            item = api.post(base + "vetting/next/").json()
        body = {"perturbation": item["perturbation"], "verdict": "valid", "idempotency_key": key()}
        with statements(submit_budget, "vetting API submit"):
            assert api.post(base + "vettings/", body, format="json").status_code == 201
        with statements(RETRY, "vetting API submit again"):  # a retry: saves nothing
            assert api.post(base + "vettings/", body, format="json").status_code == 200
    assert Vetting.objects.count() == 2


def test_vetting_submit_and_next_through_the_api(api_client):
    setup = with_diffs(study_setup(perturbations=6, annotators=2, aspects=2, vetting_overlap=3))
    api = api_as(api_client, setup.annotators[0])
    base = f"/api/v1/studies/{setup.study.pk}/"
    item = api.post(base + "vetting/next/").json()
    for _ in range(2):
        body = {"perturbation": item["perturbation"], "verdict": "valid", "idempotency_key": key()}
        with statements(CHAINED, "vetting API submit and next"):
            answer = api.post(base + "vettings/?next=true", body, format="json")
        assert answer.status_code == 201
        item = answer.json()["next"]
    assert Vetting.objects.count() == 2


def test_a_text_stored_without_its_diff_costs_one_statement_once(api_client):
    setup = study_setup(perturbations=6, annotators=2, aspects=2, vetting_overlap=3)
    api = api_as(api_client, setup.annotators[0])
    base = f"/api/v1/studies/{setup.study.pk}/"
    api.post(base + "vetting/next/")  # shown for the first time: its diff is stored
    next_budget, _ = BUDGET["vetting", "api"]
    # the item held is shown again: its diff was stored the first time
    with statements(next_budget, "vetting API next, shown before"):
        shown = api.post(base + "vetting/next/").json()
    assert [op["op"] for op in shown["diff"]] == ["equal", "insert", "equal"]
    body = {"perturbation": shown["perturbation"], "verdict": "valid", "idempotency_key": key()}
    assert api.post(base + "vettings/", body, format="json").status_code == 201
    with statements(next_budget + 1, "vetting API next, a text without its diff"):
        item = api.post(base + "vetting/next/").json()
    assert [op["op"] for op in item["diff"]] == ["equal", "insert", "equal"]
    assert Perturbation.objects.get(pk=item["perturbation"]).diff["ops"] == item["diff"]


def test_vetting_through_the_pages(client):
    setup = with_diffs(study_setup(perturbations=6, annotators=2, aspects=2, vetting_overlap=3))
    client.force_login(setup.annotators[1])
    page = f"/studies/{setup.study.pk}/vet/"
    client.get(page, **HTMX)
    next_budget, submit_budget = BUDGET["vetting", "pages"]
    with statements(next_budget, "vetting page next"):
        item = client.get(page, **HTMX).context["item"]
    vetted = []
    for _ in range(2):
        answer = {"verdict": "valid", "note": "", "idempotency_key": key()}
        vetted.insert(0, item.perturbation)
        with statements(submit_budget, "vetting page submit and next"):
            response = client.post(f"{page}{item.perturbation.pk}/verdict/", answer, **HTMX)
        assert response.status_code == 200 and response.context["item"] is not None
        item = response.context["item"]
        # "Back" leads to the verdict just given (its unit read with the item).
        assert item.previous.perturbation_id == vetted[0].pk
        assert f"/vet/{vetted[0].pk}/" in response.content.decode()
    # Their last verdicts, latest first, when they open the list (not with every item).
    with statements(RECENT_LIST, "vetting page's last verdicts"):
        listed = client.get(f"{page}recent/", **HTMX).content.decode()
    shown = re.findall(r">([^<>]+) #(\d+)</a>: Valid", listed)
    assert shown == [(p.kind.name, str(p.pk)) for p in vetted]
    assert Vetting.objects.count() == 2


def _comparison_answer(item) -> dict:
    return {"choice": "B", "original_first": item["original_first"], "idempotency_key": key()}


def test_comparison_through_the_api_and_the_pages(api_client, client):
    setup = study_setup(perturbations=4, annotators=1, aspects=2, comparisons_need_vetting=False)
    person = setup.annotators[0]
    api = api_as(api_client, person)
    base = f"/api/v1/studies/{setup.study.pk}/"
    api.post(base + "comparisons/next/")
    next_budget, submit_budget = BUDGET["comparison", "api"]
    with statements(next_budget, "comparison API next"):
        item = api.post(base + "comparisons/next/").json()
    body = {"perturbation": item["perturbation"], "criterion": item["criterion"]}
    with statements(submit_budget, "comparison API submit"):
        saved = api.post(base + "comparisons/", {**body, **_comparison_answer(item)}, "json")
    assert saved.status_code == 201
    client.force_login(person)
    page = f"/studies/{setup.study.pk}/compare/"
    next_budget, submit_budget = BUDGET["comparison", "pages"]
    with statements(next_budget, "comparison page next"):
        shown = client.get(page, **HTMX).context["item"]
    first = "1" if shown.original_first else "0"
    answer = {"choice": "A", "original_first": first, "idempotency_key": key()}
    target = f"{page}{shown.perturbation.pk}/{shown.criterion.pk}/choice/"
    with statements(submit_budget, "comparison page submit and next"):
        assert client.post(target, answer, **HTMX).status_code == 200
    assert Comparison.objects.count() == 2


def test_assessment_through_the_api_and_the_pages(api_client, client):
    setup = study_setup(perturbations=4, annotators=1, aspects=2, assess=True)
    person = setup.annotators[0]
    api = api_as(api_client, person)
    base = f"/api/v1/studies/{setup.study.pk}/"
    api.post(base + "assessments/next/")
    next_budget, submit_budget = BUDGET["assessment", "api"]
    with statements(next_budget, "assessment API next"):
        item = api.post(base + "assessments/next/").json()
    body = {"unit": item["unit"], "score": 1, "idempotency_key": key()}
    with statements(submit_budget, "assessment API submit"):
        assert api.post(base + "assessments/", body, format="json").status_code == 201
    client.force_login(person)
    page = f"/studies/{setup.study.pk}/assess/"
    client.get(page, **HTMX)  # the study's slot counts, then shared a few seconds (leases.py)
    next_budget, submit_budget = BUDGET["assessment", "pages"]
    with statements(next_budget, "assessment page next"):
        shown = client.get(page, **HTMX).context["item"]
    answer = {"score": 1, "idempotency_key": key(), "based_on": 0}
    with statements(submit_budget, "assessment page submit and next"):
        response = client.post(f"{page}{shown.unit.pk}/rating/", answer, **HTMX)
    assert response.status_code == 200
    # The next text, read with its hand-out: held (skip offered), and "back" to the rating
    # just saved, first in the list of their last ratings.
    after = response.context["item"]
    assert after.unit.pk != shown.unit.pk and after.held and after.assessment is None
    assert after.previous.unit_id == shown.unit.pk
    assert f"/assess/{shown.unit.pk}/" in response.content.decode()
    with statements(RECENT_LIST, "assessment page's last ratings"):
        listed = client.get(f"{page}recent/", **HTMX).content.decode()
    assert re.findall(r"text #(\d+),", listed)[:1] == [str(shown.unit.pk)]
    assert Assessment.objects.count() == 2


def test_gold_check_through_the_api_and_the_pages(api_client, client):
    setup = study_setup(perturbations=4, annotators=1, build=False)
    PerturbationKind.objects.filter(pk__in=[k.pk for k in setup.kinds]).update(
        family=KindFamily.ADVERSARIAL
    )
    study_plan_build(study=setup.study)
    person = setup.annotators[0]
    api = api_as(api_client, person)
    base = f"/api/v1/studies/{setup.study.pk}/"
    api.post(base + "gold-checks/next/")
    next_budget, submit_budget = BUDGET["gold_check", "api"]
    with statements(next_budget, "gold check API next"):
        item = api.post(base + "gold-checks/next/").json()
    body = {"perturbation": item["perturbation"], "good": True, "idempotency_key": key()}
    with statements(submit_budget, "gold check API submit"):
        assert api.post(base + "gold-checks/", body, format="json").status_code == 201
    client.force_login(person)
    page = f"/studies/{setup.study.pk}/gold-check/"
    client.get(page, **HTMX)  # the study's slot counts, then shared a few seconds (leases.py)
    next_budget, submit_budget = BUDGET["gold_check", "pages"]
    with statements(next_budget, "gold check page next"):
        shown = client.get(page, **HTMX).context["item"]
    answer = {"good": "1", "idempotency_key": key()}
    target = f"{page}{shown.perturbation.pk}/label/"
    with statements(submit_budget, "gold check page submit and next"):
        assert client.post(target, answer, **HTMX).status_code == 200
    assert GoldCheck.objects.count() == 2


def test_survey_votes_through_the_api_and_the_pages(api_client, client):
    setup = study_setup(perturbations=2, kinds=2, annotators=1, experts=1)
    expert = setup.experts[0]
    metric = Metric.objects.get(slug="fluency")
    api = api_as(api_client, expert)
    _, submit_budget = BUDGET["survey", "api"]
    body = {"kind": setup.kinds[0].pk, "metric": metric.pk, "idempotency_key": key()}
    with statements(submit_budget, "survey API vote"):
        voted = api.post(f"/api/v1/studies/{setup.study.pk}/expert-votes/", body, "json")
    assert voted.status_code == 201
    shown = voted.json()
    assert (shown["task"], shown["kind"], shown["metric"]) == (
        metric.task.slug,
        setup.kinds[0].slug,
        "fluency",
    )
    client.force_login(expert)
    _, submit_budget = BUDGET["survey", "pages"]
    data = {"kind": setup.kinds[1].pk, "metric": metric.pk, "idempotency_key": key()}
    with statements(submit_budget, "survey page vote"):
        response = client.post(f"/studies/{setup.study.pk}/survey/vote/", data, **HTMX)
    assert response.status_code == 200
    # The card answered (its metrics, the choice checked, marked saved) and the new count.
    card = response.content.decode()
    assert f'id="card-{metric.task_id}-{setup.kinds[1].pk}"' in card
    assert card.count('type="radio"') == metric.task.metrics.count()
    assert re.search(f'value="{metric.pk}" data-key="\\d+" data-pick required checked', card)
    assert "Saved</p>" in card and 'id="answered" hx-swap-oob="true">2<' in card
    # A changed vote, and that change sent again (the same key): the card shows the new
    # choice both times, the count stays, one vote per card.
    other = metric.task.metrics.exclude(pk=metric.pk).first()
    change = {**data, "metric": other.pk, "idempotency_key": key()}
    for _ in range(2):
        card = client.post(f"/studies/{setup.study.pk}/survey/vote/", change, **HTMX)
        shown = card.content.decode()
        assert re.search(f'value="{other.pk}" data-key="\\d+" data-pick required checked', shown)
        assert 'id="answered" hx-swap-oob="true">2<' in shown
    assert ExpertVote.objects.count() == 2
    assert ExpertVote.objects.get(kind=setup.kinds[1]).metric == other


def test_the_vetting_that_settles_a_text_costs_one_statement_more(api_client):
    """The third verdict on a text settles it: the plan row and the text's comparison slots
    follow in one statement (`comparable_refresh_one`), not one per step of the sync."""
    setup = study_setup(
        perturbations=1, annotators=3, aspects=2, vetting_overlap=3, comparison_groups=1
    )
    base = f"/api/v1/studies/{setup.study.pk}/"
    _, submit_budget = BUDGET["vetting", "api"]
    for n, annotator in enumerate(setup.annotators):
        api = api_as(api_client, annotator)
        item = api.post(base + "vetting/next/").json()
        body = {"perturbation": item["perturbation"], "verdict": "valid", "idempotency_key": key()}
        budget = submit_budget + (1 if n == 2 else 0)
        with statements(budget, f"vetting API submit {n + 1} of 3"):
            assert api.post(base + "vettings/", body, format="json").status_code == 201
    assert ComparisonSlot.objects.filter(study=setup.study).count() == 2  # 1 group x 2 criteria
