"""Ratings collected in the study (direct assessment) feed the same statistics as imported
ones, labelled: judge-human alpha, human consistency, rater checks, Pearson per description
type, the Human agreement report, the raw data, and each annotator's agreement."""

import csv
import io

import pytest
from django.urls import reverse

from apps.analysis.annotation_agreement import annotator_agreement
from apps.analysis.reports import human_agreement, judge_vs_human
from apps.catalog.models import Criterion
from tests.analysis.builders import annotators, assess, judge_run, rate, score, study_with_items

pytestmark = pytest.mark.django_db

JUDGE = [1.0, 2.0, 3.0, 4.0, 5.0, 2.0]
HUMAN = [1, 2, 3, 4, 5, 2]


def _table(report, name):
    table = next(t for t in report.tables() if t.name == name)
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


@pytest.fixture
def rated(catalog):
    """Six items rated on coherence by a judge, two imported raters and three annotators
    (the second disagrees with the others)."""
    study, items, _ = study_with_items(6, [])
    study.assessment_criteria.set(Criterion.objects.filter(key="discern-coherence-default"))
    first, second, third = annotators(3)
    run = judge_run(study)
    for n, item in enumerate(items):
        score(run, item, None, JUDGE[n], criterion="discern-coherence-default")
        rate(item, None, "coherence", "r1", float(HUMAN[n]))
        rate(item, None, "coherence", "r2", float(HUMAN[n]))
        assess(study, item, None, "discern-coherence-default", first, HUMAN[n])
        assess(study, item, None, "discern-coherence-default", second, 5 if n < 3 else 1)
        assess(study, item, None, "discern-coherence-default", third, HUMAN[n])
    study.run, study.items, study.people = run, items, (first, second, third)
    return study


def test_judge_vs_human_has_collected_ratings_beside_imported(rated):
    report = judge_vs_human.build(rated)
    rows = {r["humans"]: r for r in _table(report, "judge_human_alpha")}
    assert set(rows) == {"imported", "collected in this study"}
    imported = rows["imported"]
    assert imported["judge_human_alpha"] == pytest.approx(1.0)  # judge and raters all agree
    # every resample of texts agrees perfectly too: the bootstrap interval is [1, 1]
    assert (imported["ci_low"], imported["ci_high"]) == (1.0, 1.0)
    collected = rows["collected in this study"]
    assert (collected["criterion"], collected["n_texts"], collected["n_humans"]) == (
        "coherence",
        6,
        3,
    )
    # the second annotator disagrees
    assert collected["judge_human_alpha"] < imported["judge_human_alpha"]
    assert collected["ci_low"] <= collected["judge_human_alpha"] <= collected["ci_high"]
    consistency = {r["humans"]: r for r in _table(report, "human_alpha")}
    assert consistency["imported"]["percent_agreement"] == pytest.approx(1.0)
    assert consistency["collected in this study"]["n_raters"] == 3
    pearson = _table(report, f"judge_human_pearson_run{rated.run.pk}_collected")
    assert pearson[0]["aspect"] == "coherence" and pearson[0]["n"] == 6
    checks = _table(report, "rater_checks")
    assert any(r["criterion"] == "coherence (collected in this study)" for r in checks)


def test_human_agreement_report_has_a_collected_section(rated, client):
    report = human_agreement.build(rated)
    rows = _table(report, "collected_agreement")
    assert [(r["grouping"], r["n_texts"], r["n_raters"]) for r in rows] == [
        ("all", 6, 3),
        ("dataset", 6, 3),
    ]
    client.force_login(rated.owner)
    page = client.get(f"/studies/{rated.pk}/reports/judge-vs-human/")
    assert page.status_code == 200 and "collected in this study" in page.text


def test_raw_data_and_agreement_include_ratings(rated, client):
    client.force_login(rated.owner)
    url = reverse("study-raw-data", args=[rated.pk, "judgements", "csv"])
    rows = list(csv.DictReader(io.StringIO(b"".join(client.get(url).streaming_content).decode())))
    collected = [r for r in rows if r["judgement"] == "assessment"]
    assert len(collected) == 18 and {r["aspect"] for r in collected} == {"coherence"}
    assert {r["scale_min"] for r in collected} == {"1"}
    first, second, third = rated.people
    figures = annotator_agreement(rated.pk)  # the progress page's agreement column
    assert figures[first.pk] == figures[third.pk] == "1.00 (n=6)"
    assert figures[second.pk].endswith("(n=6)") and figures[second.pk] < "1.00"


def test_one_annotator_shows_what_exists_and_why_there_is_no_agreement(catalog, client):
    """60 ratings by one annotator used to read "Texts 0, Raters 0" (alpha counts only
    texts rated twice). Now: 60 ratings of 60 texts by 1 rater, 0 texts rated twice, and
    the reason."""
    study, items, _ = study_with_items(60, [])
    study.assessment_criteria.set(Criterion.objects.filter(key="discern-coherence-default"))
    (alone,) = annotators(1)
    for n, item in enumerate(items):
        assess(study, item, None, "discern-coherence-default", alone, n % 5 + 1)
    report = human_agreement.build(study)
    row = _table(report, "collected_agreement")[0]
    assert (row["grouping"], row["n_ratings"], row["n_texts"], row["n_raters"]) == (
        "all",
        60,
        60,
        1,
    )
    assert (row["n_texts_compared"], row["human_alpha"], row["no_figure_because"]) == (
        0,
        None,
        "one rater",
    )
    why = (
        "No agreement figure for coherence: 60 ratings of 60 texts by 1 rater, one rater: "
        "agreement needs at least two raters on a text."
    )
    (section,) = [s for s in report.sections if s.title == "Human ratings collected in this study"]
    assert section.text.endswith(why)
    report = judge_vs_human.build(study)
    (consistency,) = _table(report, "human_alpha")
    assert (consistency["n_ratings"], consistency["n_raters"]) == (60, 1)
    assert consistency["no_figure_because"] == "one rater"
    (section,) = [s for s in report.sections if s.title == "Human consistency"]
    assert "coherence (collected in this study): 60 ratings of 60 texts by 1 rater" in section.text
    checks = {r["check"]: r for r in _table(report, "rater_checks")}
    assert checks["near-duplicate raters"]["who"] == "not checked"
    assert "only one rater" in checks["near-duplicate raters"]["detail"]
    assert checks["alpha if removed"]["detail"] == "needs three raters; 1 here"
    assert not report.warnings
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/reports/human-agreement/").content.decode()
    assert why in page
    table = page[page.index('data-table="collected_agreement"') :]
    table = table[: table.index("</table>")]
    assert "<td>60</td><td>60</td><td>1</td><td>0</td><td>one rater</td>" in table
