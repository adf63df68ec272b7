"""The adversarial search report (methods §6): ASR per victim, direction and dataset with the
rule baseline beside it, final scores, effort, examples with diffs; HTML, CSV and JSON."""

from __future__ import annotations

import json

import pytest

from apps.analysis.reports import adversarial
from apps.analysis.reports.base import Report
from apps.judging.services import adversarial_search_work
from apps.judging.services.searches import adversarial_search_start
from tests.judging.conftest import (
    demo,  # noqa: F401  (a fixture)
    fake_openai_server,  # noqa: F401  (a fixture)
)
from tests.judging.scripted_search import scripted_world

pytestmark = pytest.mark.django_db


def rows(report: Report, name: str) -> list[dict]:
    table = next(t for t in report.tables() if t.name == name)
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


@pytest.fixture
def searched(demo, fake_openai_server):  # noqa: F811
    world = scripted_world(demo, fake_openai_server, items=2)
    demo.datasets.add(world.dataset)
    search = world.create(study=demo, target_score=50, max_iterations=3, rule_baseline=True)
    adversarial_search_start(search=search)
    adversarial_search_work(search_id=search.pk)
    search.refresh_from_db()
    assert search.status == "done", search.error
    return demo, search


def test_attack_success_with_the_rule_baseline_beside_it(searched):
    study, _ = searched
    report = adversarial.build(study)
    (asr,) = rows(report, "attack_success")
    assert (asr["victim"], asr["direction"], asr["dataset"]) == ("victim", "R+", "scripted")
    # AdvEval reaches level 3 (S_gold 90, S_victim 40): both items succeed. The rules never
    # leave level 0 (the victim's 100): no success.
    assert (asr["adveval_asr"], asr["adveval_n"], asr["rules_asr"], asr["rules_n"]) == (
        1.0,
        2,
        0.0,
        2,
    )
    assert asr["adveval_ci_low"] == pytest.approx(0.3424, abs=1e-4)  # Wilson, 2 of 2
    assert asr["adveval_ci_high"] == 1.0
    scores = {r["method"]: r for r in rows(report, "final_scores")}
    assert (scores["adveval"]["s_gold_mean"], scores["adveval"]["s_victim_mean"]) == (90, 40)
    assert scores["rules"]["s_victim_mean"] == 100
    effort = {r["method"]: r for r in rows(report, "iterations_and_queries")}
    assert (effort["adveval"]["stopped_at_target"], effort["adveval"]["iterations_mean"]) == (2, 3)
    assert effort["rules"]["stopped_at_iteration_limit"] == 2
    assert len(report.sections[1].figures) == 2  # S_gold and S_victim box plots


def test_examples_show_the_diff_from_r0(searched):
    report = adversarial.build(searched[0])
    examples = rows(report, "examples")
    assert len(examples) == 2 and all(e["success"] for e in examples)
    first = examples[0]
    assert first["r0"] == "Answer at level 0 (item 0)."
    assert first["final_text"].startswith("Answer at level 3")
    assert first["diff_from_r0"] == "Answer at level [-0 (item 0)-]{+3, variant 1+}."


def test_no_labels_yet_says_so(searched):
    report = adversarial.build(searched[0])
    validation = next(s for s in report.sections if s.title == "Gold validation")
    assert "No annotator" in validation.text and not validation.tables


def test_the_report_is_in_the_study_report_as_html_csv_and_json(client, searched):
    study, _ = searched
    client.force_login(study.owner)
    base = f"/studies/{study.pk}/reports/adversarial-search"
    page = client.get(f"{base}/")
    assert page.status_code == 200 and b"Attack success rate" in page.content
    payload = json.loads(client.get(f"{base}.json").content)
    assert payload["name"] == "adversarial-search"
    csv_text = client.get(f"{base}.csv", {"table": "attack_success"}).content.decode()
    assert csv_text.splitlines()[0].startswith("victim,direction,dataset,adveval_asr")
    assert "victim,R+,scripted,1.0," in csv_text
    whole = client.get(f"/studies/{study.pk}/reports/all.html").content.decode()
    assert "Adversarial search" in whole and "Attack success rate" in whole


def test_an_empty_study_gets_an_empty_report(demo):  # noqa: F811
    report = adversarial.build(demo)
    assert report.notes and rows(report, "attack_success") == []
