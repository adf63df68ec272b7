"""Report pages, downloads, the shareable file, caching and who may see them."""

import json

import pytest
from rest_framework.authtoken.models import Token

from apps.analysis.models import ReportSnapshot
from tests.analysis.builders import (
    annotators,
    compare,
    judge_run,
    score,
    study_with_items,
    vote,
)
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(catalog):
    study, items, perts = study_with_items(3, ["negation"])
    people = annotators(2)
    for pert in perts["negation"]:
        for person in people:
            compare(study, pert, "discern-non-contradiction-default", person, "worse")
    vote(study, "negation", "consistency", people[0])
    run = judge_run(study)
    for item, pert in zip(items, perts["negation"], strict=True):
        score(run, item, None, 5.0, metric="consistency")
        score(run, item, pert, 2.0, metric="consistency")
    study.run = run
    return study


def test_researcher_sees_every_report_with_plots(client, study):
    client.force_login(study.owner)
    index = client.get(f"/studies/{study.pk}/reports/")
    assert index.status_code == 200 and b"judge-reliability/?run=" in index.content
    for name in ("human-agreement", "expert-weights", "judge-vs-human"):
        page = client.get(f"/studies/{study.pk}/reports/{name}/")
        assert page.status_code == 200 and b'class="report-table"' in page.content
    page = client.get(f"/studies/{study.pk}/reports/judge-reliability/?run={study.run.pk}")
    assert page.status_code == 200
    assert page.content.count(b"data:image/png;base64,") >= 2


def test_downloads_csv_json_and_one_html_file(client, study):
    client.force_login(study.owner)
    base = f"/studies/{study.pk}/reports/expert-weights"
    payload = json.loads(client.get(f"{base}.json").content)
    assert payload["name"] == "expert-weights"
    csv_text = client.get(f"{base}.csv", {"table": "expert_weights"}).content.decode()
    assert csv_text.splitlines()[0] == "task,kind,metric,votes,weight,ci_low,ci_high,experts"
    assert "Summarization,Negation,Consistency,1,1.0" in csv_text  # names, not slugs
    stacked = client.get(f"{base}.csv").content.decode()
    assert stacked.startswith("table,task,kind,metric")
    shared = client.get(f"/studies/{study.pk}/reports/all.html")
    assert shared["Content-Disposition"].endswith('-report.html"')
    body = shared.content.decode()
    assert "Human agreement" in body and "Judge reliability" in body
    assert "data:image/png;base64," in body and "/static/" not in body  # self-contained


def test_reports_are_cached_until_their_inputs_change(client, study):
    client.force_login(study.owner)
    url = f"/studies/{study.pk}/reports/human-agreement/"
    client.get(url)
    first = ReportSnapshot.objects.get(name="human-agreement")
    client.get(url)
    assert ReportSnapshot.objects.get(pk=first.pk).updated_at == first.updated_at  # not rebuilt
    extra = UserFactory(username="late-annotator")
    from apps.annotation.models import Comparison

    compare(
        study,
        Comparison.objects.first().perturbation,
        "discern-non-contradiction-default",
        extra,
        "same",
    )
    client.get(url)
    rebuilt = ReportSnapshot.objects.get(pk=first.pk)
    assert rebuilt.updated_at > first.updated_at and rebuilt.fingerprint != first.fingerprint


def test_api_serves_reports_as_json(api_client, study):
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=study.owner)}")
    response = api_client.get(
        f"/api/v1/studies/{study.pk}/reports/judge-reliability/", {"run": study.run.pk}
    )
    assert response.status_code == 200
    names = [t["name"] for s in response.json()["sections"] for t in s["tables"]]
    assert "discernment" in names and "failure_rates" in names
    assert (
        api_client.get(f"/api/v1/studies/{study.pk}/reports/judge-reliability/").status_code == 400
    )
    assert api_client.get(f"/api/v1/studies/{study.pk}/reports/nope/").status_code == 404


def test_outsiders_and_annotators_cannot_read_reports(client, api_client, study):
    outsider = UserFactory(username="other-researcher", role="researcher")
    client.force_login(outsider)
    assert client.get(f"/studies/{study.pk}/reports/").status_code == 404
    assert client.get(f"/studies/{study.pk}/reports/expert-weights.json").status_code == 404
    member = MembershipFactory(study=study, user=UserFactory(username="member-ann")).user
    client.force_login(member)
    assert client.get(f"/studies/{study.pk}/reports/").status_code == 403
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=outsider)}")
    assert api_client.get(f"/api/v1/studies/{study.pk}/reports/expert-weights/").status_code == 404
