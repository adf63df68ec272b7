"""Reports are reachable by links: from the study's progress page and from each judge run."""

import re

import pytest

from tests.analysis.builders import judge_run, score, study_with_items

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(catalog):
    study, items, perts = study_with_items(2, ["negation"])
    run = judge_run(study, created_by=study.owner)
    for item, pert in zip(items, perts["negation"], strict=True):
        score(run, item, None, 100.0)
        score(run, item, pert, 50.0)
    study.run = run
    return study


def _report_hrefs(html: str) -> list[str]:
    return [
        h.replace("&amp;", "&") for h in re.findall(r'href="(/studies/\d+/reports/[^"]*)"', html)
    ]


def test_progress_page_links_every_report_and_each_link_opens(client, study):
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/progress/").content.decode()
    links = _report_hrefs(page)
    for name in ("human-agreement", "expert-weights", "judge-vs-human"):
        assert f"/studies/{study.pk}/reports/{name}/" in links
    assert f"/studies/{study.pk}/reports/judge-reliability/?run={study.run.pk}" in links
    assert f"/studies/{study.pk}/reports/all.html" in links
    for href in links:
        assert client.get(href).status_code == 200, href


def test_run_page_links_its_reliability_report(client, study):
    client.force_login(study.owner)
    page = client.get(f"/judging/runs/{study.run.pk}/")
    assert page.status_code == 200
    links = _report_hrefs(page.content.decode())
    assert links[0] == f"/studies/{study.pk}/reports/judge-reliability/?run={study.run.pk}"
    assert client.get(links[0]).status_code == 200
