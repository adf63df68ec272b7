"""The adversarial search pages and API: set up (bad input changes nothing), the live view,
cancel and resume; only the owner reaches a search."""

from __future__ import annotations

import pytest
from django.urls import reverse

from apps.judging.models import AdversarialSearch, Judge, JudgeRun
from apps.judging.services import adversarial_search_work
from apps.judging.services.searches import adversarial_search_start
from tests.factories import UserFactory, llm_judge_create
from tests.judging.conftest import strategy
from tests.judging.scripted_search import scripted_reply, scripted_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(demo, fake_openai_server):
    return scripted_world(demo, fake_openai_server, items=2)


def form_data(world, **changes):
    return {
        "dataset": world.dataset.pk,
        "direction": "R+",
        "generator": world.generator.pk,
        "victim": world.victim.pk,
        "victim_strategy": strategy("adveval-0-100").pk,
        "gold": [world.gold.pk],
        "gold_strategy": strategy("adveval-gold-0-100").pk,
        "criterion": world.criterion.pk,
        "criterion_in_prompt": "on",
        "alpha": 1,
        "target_score": 50,
        "max_iterations": 4,
        "query_budget": 300,
        "candidates_per_iteration": 2,
        "generator_temperature": 1,
        "tau2": 40,
        "label": "first search",
    } | changes


def test_a_researcher_sets_up_a_search_on_the_page(client, world):
    client.force_login(world.owner)
    page = client.get(reverse("judging-search-new"))
    assert page.status_code == 200
    assert page.context["form"].initial["gold_strategy"] == strategy("adveval-gold-0-100").pk
    response = client.post(reverse("judging-search-new"), form_data(world))
    search = AdversarialSearch.objects.get(label="first search")
    assert response.status_code == 302
    assert response["Location"] == reverse("judging-search-detail", args=[search.pk])
    # recorded, not started: its page shows the estimate and a Start button
    assert search.status == "pending" and search.items.count() == 2  # no rule baseline asked
    assert [j.role for j in search.judges.all()] == ["victim", "gold"]
    assert JudgeRun.objects.filter(search_judge__search=search).count() == 2
    assert "Start the search" in client.get(response["Location"]).content.decode()
    client.post(reverse("judging-search-start", args=[search.pk]))
    search.refresh_from_db()
    assert search.status == "running"
    assert {j.run.status for j in search.judges.all()} == {"running"}


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"gold": []}, "gold", "required"),
        ({"query_budget": 1}, "query_budget", "at least 2"),
        ({"criterion": ""}, "criterion", "choose a criterion"),
        ({"item_ids": "1, x"}, "item_ids", "whole numbers"),
        ({"item_ids": "999999"}, "item_ids", "no items"),
        ({"alpha": 0}, "alpha", "above 0"),
    ],
)
def test_bad_input_names_the_field_and_changes_nothing(client, world, changes, field, message):
    client.force_login(world.owner)
    response = client.post(reverse("judging-search-new"), form_data(world, **changes))
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert message in " ".join(errors.get(field, [])), errors
    assert not AdversarialSearch.objects.exists() and not JudgeRun.objects.exists()


def test_the_live_page_shows_each_items_trajectory_and_costs(
    client, world, django_assert_max_num_queries
):
    search = world.create(target_score=50)
    adversarial_search_start(search=search)
    adversarial_search_work(search_id=search.pk)
    client.force_login(world.owner)
    url = reverse("judging-search-detail", args=[search.pk])
    with django_assert_max_num_queries(12):
        page = client.get(url)
    html = page.content.decode()
    assert page.status_code == 200 and 'id="trajectory"' in html
    trajectory = page.context["trajectory"]
    assert [row.iteration for row in trajectory.rows] == [0, 1, 1, 2, 2, 3, 3]
    assert [row.best_so_far for row in trajectory.rows] == [-10, 10, 10, 30, 30, 50, 50]
    assert trajectory.rows[-1].candidate.s_gold == 90
    assert page.context["costs"].generator_calls == 6  # 3 iterations x 2 items
    assert page.context["costs"].http_requests == world.server.request_count
    second = page.context["items"][1]
    partial = client.get(url, {"item": second.pk}, HTTP_HX_REQUEST="true").content.decode()
    assert f"Trajectory of {second.item.item.external_id}" in partial
    assert "<h1>" not in partial and f"?item={second.pk}" in partial  # only the live part


def test_cancel_and_resume(client, world):
    search = world.create(start=True)
    client.force_login(world.owner)
    client.post(reverse("judging-search-cancel", args=[search.pk]))
    search.refresh_from_db()
    assert search.status == "cancelled"
    assert {j.run.status for j in search.judges.all()} == {"cancelled"}
    client.post(reverse("judging-search-resume", args=[search.pk]))
    search.refresh_from_db()
    assert search.status == "running"
    assert {j.run.status for j in search.judges.all()} == {"running"}


def test_a_search_is_its_owners_only(client, world):
    search = world.create()
    other = UserFactory(username="other", role="researcher")
    client.force_login(other)
    assert client.get(reverse("judging-search-detail", args=[search.pk])).status_code == 404
    assert client.post(reverse("judging-search-cancel", args=[search.pk])).status_code == 404
    assert client.get(reverse("judging-searches")).context["searches"].count() == 0
    client.force_login(UserFactory(username="ann2", role="annotator"))
    assert client.get(reverse("judging-searches")).status_code == 403
    search.refresh_from_db()
    assert search.status == "pending"


def api_body(world, **changes):
    return {
        "dataset": world.dataset.pk,
        "direction": "R+",
        "generator": world.generator.name,
        "victim": {"judge": world.victim.pk, "strategy": strategy("adveval-0-100").pk},
        "gold": [{"judge": world.gold.pk, "strategy": strategy("adveval-gold-0-100").pk}],
        "criterion": world.criterion.pk,
        "target_score": 50,
        "candidates_per_iteration": 2,
        "rule_baseline": False,
    } | changes


def test_the_api_sets_up_a_search_and_reads_its_trajectory(api_client, world):
    api_client.force_authenticate(world.owner)
    created = api_client.post("/api/v1/adversarial-searches/", api_body(world), format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["status"] == "running" and body["success_tau1"] == 70
    assert [j["role"] for j in body["judges"]] == ["victim", "gold"]
    adversarial_search_work(search_id=body["id"])
    items = api_client.get(f"/api/v1/adversarial-searches/{body['id']}/items/").json()
    assert {i["stop_reason"] for i in items} == {"target"}
    assert all(i["best"]["s_fb"] == 50 and i["success"] for i in items)
    trajectory = api_client.get(
        f"/api/v1/adversarial-searches/{body['id']}/trajectory/", {"item": items[0]["id"]}
    ).json()
    assert [c["iteration"] for c in trajectory] == [0, 1, 1, 2, 2, 3, 3]
    assert trajectory[0]["origin"] == "initial" and trajectory[0]["s_fb"] == -10
    cancelled = api_client.post(f"/api/v1/adversarial-searches/{body['id']}/cancel/")
    assert cancelled.json()["status"] == "done"  # already finished: nothing to cancel


def test_the_api_refuses_bad_input_and_others_judges(api_client, world):
    api_client.force_authenticate(world.owner)
    foreign = llm_judge_create(
        name="not yours",
        base_url="http://x.invalid/v1",
        model="m",
        created_by=UserFactory(username="owner2", role="researcher"),
    )
    bad = api_client.post(
        "/api/v1/adversarial-searches/",
        api_body(world, victim={"judge": foreign.pk}, direction="R0"),
        format="json",
    )
    assert bad.status_code == 400
    errors = bad.json()
    assert "does not exist" in str(errors["victim"]["judge"]) and "direction" in errors
    metric_gold = api_client.post(
        "/api/v1/adversarial-searches/",
        api_body(world, gold=[{"judge": Judge.objects.get(name="BLEU").pk}]),
        format="json",
    )
    assert metric_gold.status_code == 400
    assert "gold judges are LLM judges" in str(metric_gold.json()["gold_strategy"])
    assert not AdversarialSearch.objects.exists()


def stubborn(request):
    """A generator that never writes a <RES> block (nor after the format reminder)."""
    if request.get("model") == "generator-model":
        return "I will not use tags."
    return scripted_reply(request)


@pytest.fixture
def fruitless(world):
    """A search of 2 items whose generator never wrote a candidate: 3 iterations each, every
    call asked again with the format reminder, so 6 replies an item, none with a candidate."""
    world.server.reply = stubborn
    search = world.create(target_score=50, max_iterations=3)
    adversarial_search_start(search=search)
    adversarial_search_work(search_id=search.pk)
    search.refresh_from_db()
    assert search.status == "done", search.error
    return search


def test_a_search_whose_generator_wrote_no_candidate_says_no_result(client, world, fruitless):
    client.force_login(world.owner)
    page = client.get(reverse("judging-search-detail", args=[fruitless.pk]))
    html = page.content.decode()
    assert 'id="search-no-result"' in html  # beside the status "Done"
    summary = html.split('id="no-result-adveval"', 1)[1].split("</p>", 1)[0]
    assert (
        "AdvEval (LLM generator): 2 of 2 items ended with no result: 12 of 12 generator "
        "replies held no candidate (6 calls, 6 format retries)." in summary
    )
    assert 'id="generator-unparsed">12 of 12<' in html and 'id="generator-retries">6<' in html
    items = html.split('id="search-items"', 1)[1].split("</table>", 1)[0]
    assert "Done: iteration limit" not in items
    assert (
        items.count(
            "No result</strong>: 6 of 6 generator replies held no candidate (3 calls, 3 format "
            "retries)"
        )
        == 2
    )
    assert items.count("6 with no candidate") == 2
    assert items.count("<td>no result</td>") == 2 and "<td>no</td>" not in items  # not failed
    first = page.context["items"][0]
    assert (first.has_result, first.success, first.tally.replies) == (False, None, 6)
    # the trajectory lists every iteration, each unparsed one with the raw replies
    trajectory = page.context["trajectory"]
    assert [step.iteration.number for step in trajectory.steps] == [0, 1, 2, 3]
    assert [len(step.rows) for step in trajectory.steps] == [1, 0, 0, 0]
    shown = html.split('id="trajectory"', 1)[1].split("</table>", 1)[0]
    for number in (1, 2, 3):
        row = shown.split(f'id="iteration-{number}"', 1)[1].split("</tr>", 1)[0]
        assert "No candidate</strong>: no candidate between &lt;RES&gt; and &lt;/RES&gt;" in row
        assert row.count("<details") == 2 and row.count("I will not use tags.") == 2
        assert "Its reply to the format reminder" in row


def test_the_api_says_no_result_too(api_client, world, fruitless):
    api_client.force_authenticate(world.owner)
    base = f"/api/v1/adversarial-searches/{fruitless.pk}"
    items = api_client.get(f"{base}/items/").json()
    assert [
        (
            i["has_result"],
            i["success"],
            i["generator_calls"],
            i["format_retries"],
            i["generator_unparsed"],
        )
        for i in items
    ] == [(False, None, 6, 3, 6)] * 2
    assert items[0]["no_result_reason"] == (
        "6 of 6 generator replies held no candidate (3 calls, 3 format retries)"
    )
    (adveval,) = api_client.get(f"{base}/").json()["outcomes"]
    assert (adveval["items"], adveval["items_with_result"], adveval["items_no_result"]) == (2, 0, 2)
    assert (adveval["generator_replies"], adveval["generator_unparsed"]) == (12, 12)
    assert adveval["no_result_reason"].startswith("12 of 12 generator replies held no candidate")
    iterations = api_client.get(f"{base}/iterations/", {"item": items[0]["id"]}).json()
    assert [(it["number"], it["parse_status"]) for it in iterations] == [
        (0, ""),
        (1, "unparsed"),
        (2, "unparsed"),
        (3, "unparsed"),
    ]
    assert iterations[1]["raw_response"] == "I will not use tags."
    assert iterations[1]["format_retry"]["raw_response"] == "I will not use tags."


def test_a_search_with_results_shows_no_no_result(client, api_client, world):
    search = world.create(target_score=50)
    adversarial_search_start(search=search)
    adversarial_search_work(search_id=search.pk)
    client.force_login(world.owner)
    html = client.get(reverse("judging-search-detail", args=[search.pk])).content.decode()
    assert "No result" not in html and "no-result" not in html
    assert 'id="generator-unparsed">0 of 6<' in html
    api_client.force_authenticate(world.owner)
    items = api_client.get(f"/api/v1/adversarial-searches/{search.pk}/items/").json()
    assert {(i["has_result"], i["success"], i["no_result_reason"]) for i in items} == {
        (True, True, "")
    }


@pytest.mark.parametrize(
    ("direction", "label", "rule"),
    [
        (
            "R+",
            "R+: good texts the victim scores low",
            "a good text the victim scores low, S_gold &gt; 70.0 and S_gold − S_victim &gt; 40.0",
        ),
        (
            "R-",
            "R-: poor texts the victim scores high",
            "a poor text the victim scores high, S_gold &lt; 30.0 and S_victim − S_gold &gt; 40.0",
        ),
    ],
)
def test_the_page_names_r_plus_and_r_minus_as_the_method_does(
    client, world, direction, label, rule
):
    search = world.create(direction=direction)
    client.force_login(world.owner)
    html = client.get(reverse("judging-search-detail", args=[search.pk])).content.decode()
    assert f'id="search-direction">{label}<' in html
    assert f'id="success-rule">a successful attack: {rule}<' in html
