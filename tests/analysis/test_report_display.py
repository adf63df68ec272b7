"""What a person sees of a report: a failure is a panel with its reason (never a 500), column
headers are words, numbers have a sensible precision and p-values are in scientific notation."""

import re

import pytest

from apps.analysis import reports
from apps.analysis.formatting import column_label, format_value
from tests.analysis.builders import annotators, compare, judge_run, score, study_with_items

pytestmark = pytest.mark.django_db


def _broken(*_args, **_kwargs):
    raise ValueError("the data are odd")


@pytest.fixture
def study(catalog):
    study, items, perts = study_with_items(4, ["negation"])
    people = annotators(2)
    for pert in perts["negation"]:
        for person in people:
            compare(study, pert, "discern-non-contradiction-default", person, "worse")
    run = judge_run(study)
    for n, (item, pert) in enumerate(zip(items, perts["negation"], strict=True)):
        score(run, item, None, 5.0, metric="consistency")
        score(run, item, pert, 1.0 + n * 0.5, metric="consistency")
    study.run = run
    return study


def test_a_report_that_fails_shows_its_reason_everywhere(client, api_client, study, monkeypatch):
    monkeypatch.setitem(reports.STUDY_REPORTS, "expert-weights", _broken)
    client.force_login(study.owner)
    base = f"/studies/{study.pk}/reports"
    page = client.get(f"{base}/expert-weights/")
    assert page.status_code == 200
    assert b"could not be built" in page.content and b"the data are odd" in page.content
    for fmt in ("csv", "json"):
        download = client.get(f"{base}/expert-weights.{fmt}")
        assert download.status_code == 409 and b"the data are odd" in download.content
    shared = client.get(f"{base}/all.html")
    assert shared.status_code == 200 and b"the data are odd" in shared.content
    assert b"Human agreement" in shared.content  # the other reports are still there
    api_client.force_authenticate(study.owner)
    api = api_client.get(f"/api/v1/studies/{study.pk}/reports/expert-weights/")
    assert api.status_code == 409 and "the data are odd" in api.json()["detail"]


def test_headers_are_words_and_p_values_scientific(client, study):
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/reports/human-agreement/").content.decode()
    # each figure sits beside its interval in one cell: "0.5 [0.2, 0.8]"
    assert "<th>Match rate (all votes pooled) [95% interval]</th>" in page
    assert re.search(r"<td>[\d.]+ \[[\d.]+, [\d.]+\]</td>", page)
    assert "95% interval, low" not in page
    assert "match_rate_vote_all</th>" not in page and "ci_low</th>" not in page
    run = client.get(f"/studies/{study.pk}/reports/judge-reliability/?run={study.run.pk}")
    assert "<th>Combined p (harmonic mean, calibrated)</th>" in run.content.decode()
    assert "6.25e-02" in run.content.decode()  # Wilcoxon p of 4 pairs all lower: 1/16


def test_numbers_are_shown_with_sensible_precision():
    assert format_value(0.123456) == "0.123"
    assert format_value(12.3456) == "12.3"
    assert format_value(3.0) == "3"
    assert format_value(42) == "42"
    assert format_value(None) == "—"
    assert format_value(float("nan")) == "—"
    assert format_value(0.000012345, p_value=True) == "1.23e-05"
    assert format_value("negation") == "negation"
    assert column_label("n_raters") == "Raters"
    assert column_label("some_new_column") == "Some new column"
