"""Imported human ratings in the Human agreement report: ordinal alpha with its interval,
percent agreement and N per criterion, pooled, per dataset and per source; and the judge-vs-
human report's human consistency carries the same interval and percent agreement."""

import pytest

from apps.analysis.models import HumanRating
from apps.analysis.reports import human_agreement, judge_vs_human
from apps.catalog.models import Task
from tests.analysis.builders import rate, study_with_items
from tests.factories import DatasetFactory, SourceItemFactory

pytestmark = pytest.mark.django_db

FIRST = [1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0, 3.0, 4.0, 5.0]
SECOND = [1.0, 2.0, 3.0, 4.0, 4.0, 1.0, 2.0, 3.0, 5.0, 5.0]  # equal on 8 of 10 texts


def _table(report, name):
    table = next(t for t in report.tables() if t.name == name)
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


@pytest.fixture
def rated_study(catalog):
    """Six texts of one dataset and four of another, rated by r1 and r2 on coherence; r3 rates
    the first text only. The first seven ratings of each rater come from source s1, the rest s2.
    """
    study, items, _ = study_with_items(6, [])
    other = DatasetFactory(name="second set")
    study.datasets.add(other)
    task = Task.objects.get(slug="summarization")
    items += [SourceItemFactory(dataset=other, external_id=f"b{n}", task=task) for n in range(4)]
    for n, item in enumerate(items):
        rate(item, None, "coherence", "r1", FIRST[n])
        rate(item, None, "coherence", "r2", SECOND[n])
    rate(items[0], None, "coherence", "r3", 1.0)
    HumanRating.objects.filter(item__in=items[:7]).update(source="s1")
    HumanRating.objects.filter(item__in=items[7:]).update(source="s2")
    study.first_dataset = items[0].dataset.name
    return study


def test_imported_ratings_pooled_per_dataset_and_per_source(rated_study):
    rows = _table(human_agreement.build(rated_study), "imported_agreement")
    by_group = {(r["grouping"], r["group"]): r for r in rows}
    assert [r["grouping"] for r in rows] == ["all", "dataset", "dataset", "source", "source"]
    assert {r["criterion"] for r in rows} == {"coherence"}
    expected = {
        ("all", "pooled"): (10, 3, 8 / 10),
        ("dataset", rated_study.first_dataset): (6, 3, 5 / 6),
        ("dataset", "second set"): (4, 2, 3 / 4),
        ("source", "s1"): (7, 3, 6 / 7),
        ("source", "s2"): (3, 2, 2 / 3),
    }
    assert set(by_group) == set(expected)
    for key, (n_texts, n_raters, percent) in expected.items():
        row = by_group[key]
        assert (row["n_texts"], row["n_raters"]) == (n_texts, n_raters), key
        assert row["percent_agreement"] == pytest.approx(percent, abs=1e-4), key
    pooled = by_group[("all", "pooled")]
    assert pooled["human_alpha"] is not None
    assert pooled["ci_low"] <= pooled["human_alpha"] <= pooled["ci_high"]
    # what exists: 10 texts x 2 raters + r3's one rating; all 10 texts rated twice or more
    assert (pooled["n_ratings"], pooled["n_texts_compared"], pooled["no_figure_because"]) == (
        21,
        10,
        "",
    )
    for row in rows:
        if row["human_alpha"] is not None and row["ci_low"] is not None:
            assert row["ci_low"] <= row["human_alpha"] <= row["ci_high"]


def test_human_consistency_has_interval_and_percent_agreement(rated_study):
    (row,) = _table(judge_vs_human.build(rated_study), "human_alpha")
    assert row["criterion"] == "coherence"
    assert row["ci_low"] <= row["human_alpha"] <= row["ci_high"]
    assert row["percent_agreement"] == pytest.approx(0.8, abs=1e-4)
    assert (row["n_texts"], row["n_raters"]) == (10, 3)


def test_a_study_without_ratings_says_so(client, catalog):
    study, _, _ = study_with_items(2, [])
    report = human_agreement.build(study)
    section = next(s for s in report.sections if s.title == "Imported human ratings")
    assert section.tables == [] and "no imported human ratings" in section.text
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/reports/human-agreement/")
    assert page.status_code == 200 and b"no imported human ratings" in page.content
