"""A metric judge (BLEU, chrF, ROUGE-L) scores texts with neither a criterion nor a metric:
every report, page and download still builds."""

import pytest

from apps.analysis.reports import RUN_REPORTS, STUDY_REPORTS
from apps.analysis.services import report_get
from tests.analysis.builders import judge_run, score, study_with_items

pytestmark = pytest.mark.django_db


@pytest.fixture
def metric_study(catalog):
    study, items, perts = study_with_items(3, ["negation"])
    run = judge_run(study)  # a BLEU judge: its calls name no criterion and no metric
    for item, pert in zip(items, perts["negation"], strict=True):
        score(run, item, None, 100.0)
        score(run, item, pert, 40.0)
    study.run = run
    return study


def test_every_report_builds_after_a_metric_run(metric_study):
    run = metric_study.run
    for name in STUDY_REPORTS:
        snapshot = report_get(study=metric_study, name=name)
        assert snapshot.status == "done", snapshot.error
    for name in RUN_REPORTS:
        snapshot = report_get(study=metric_study, name=name, run=run)
        assert snapshot.status == "done", snapshot.error
        tables = {t["name"]: t for s in snapshot.payload["sections"] for t in s["tables"]}
        assert {row[1] for row in tables["p_values"]["rows"]} == {"BLEU"}


def test_report_pages_and_downloads_answer_after_a_metric_run(client, metric_study):
    client.force_login(metric_study.owner)
    base = f"/studies/{metric_study.pk}/reports"
    run = f"?run={metric_study.run.pk}"
    urls = [f"{base}/all.html", f"{base}/judge-reliability/{run}"]
    urls += [f"{base}/judge-reliability.{fmt}{run}" for fmt in ("csv", "json")]
    for name in STUDY_REPORTS:
        urls += [f"{base}/{name}/", f"{base}/{name}.csv", f"{base}/{name}.json"]
    for url in urls:
        assert client.get(url).status_code == 200, url
