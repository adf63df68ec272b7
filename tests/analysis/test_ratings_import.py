"""Importing published per-annotator ratings, and the rater-quality checks."""

import pytest

from apps.analysis.models import HumanRating
from apps.analysis.ratings_import import human_ratings_import
from apps.analysis.stats.raters import near_duplicate_raters, straight_liners, under_rated_units
from apps.inputs.problems import ImportFailed
from tests.factories import DatasetFactory, PerturbationFactory, SourceItemFactory

pytestmark = pytest.mark.django_db
HEADER = "item,perturbation,criterion,rater,score\n"


@pytest.fixture
def dataset(catalog):
    from apps.catalog.models import Task

    data = DatasetFactory()
    task = Task.objects.get(slug="summarization")
    for n in (1, 2):
        item = SourceItemFactory(dataset=data, external_id=f"s{n}", task=task)
        PerturbationFactory(item=item, external_id=f"s{n}-neg")
    return data


def test_ratings_import_resolves_aspects_and_metrics(dataset, tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text(
        HEADER + "s1,,Coherence,e1,4\ns1,,fluency,e2,5\ns2,s2-neg,Relevance,e1,2\n"
        "s2,,Informativeness,e3,1\n"
    )
    summary = human_ratings_import(path=path, dataset=dataset)
    assert (summary.created, summary.scale) == (4, (1.0, 5.0))
    coherence = HumanRating.objects.get(criterion_name="Coherence")
    assert coherence.aspect.slug == "coherence" and coherence.metric.slug == "coherence"
    relevance = HumanRating.objects.get(criterion_name="Relevance")
    assert relevance.aspect is None and relevance.metric.slug == "relevance"
    assert relevance.perturbation.external_id == "s2-neg"
    assert HumanRating.objects.get(criterion_name="Informativeness").metric is None
    again = human_ratings_import(path=path, dataset=dataset)
    assert (again.created, again.existing) == (0, 4)


def test_jsonl_and_an_explicit_scale(dataset, tmp_path):
    path = tmp_path / "ratings.jsonl"
    path.write_text(
        '{"item": "s1", "criterion": "overall", "rater": "a", "score": 73}\n'
        '{"item": "s2", "criterion": "overall", "rater": "a", "score": 12.5}\n'
    )
    summary = human_ratings_import(path=path, dataset=dataset, scale=(0, 100))
    assert summary.scale == (0, 100)
    assert sorted(HumanRating.objects.values_list("score", flat=True)) == [12.5, 73.0]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("s9,,coherence,e1,4\n", "ratings.csv, row 3, field 'item': no item 's9' in the dataset"),
        ("s1,nope,coherence,e1,4\n", "row 3, field 'perturbation': no perturbation 'nope'"),
        ("s1,,coherence,e1,four\n", "row 3, field 'score': not a number: 'four'"),
        ("s1,,coherence,,4\n", "row 3, field 'rater': empty"),
        (
            "s1,,coherence,e1,4\ns1,,coherence,e1,5\n",
            "row 4, field 'rater': the same rater, text and criterion as row 3",
        ),
    ],
)
def test_bad_rows_name_the_place_and_store_nothing(dataset, tmp_path, rows, message):
    path = tmp_path / "ratings.csv"
    path.write_text(HEADER + "s2,,coherence,e1,3\n" + rows)
    with pytest.raises(ImportFailed) as failure:
        human_ratings_import(path=path, dataset=dataset)
    assert message in str(failure.value)
    assert HumanRating.objects.count() == 0


def test_a_score_outside_the_given_scale(dataset, tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text(HEADER + "s1,,coherence,e1,6\n")
    with pytest.raises(ImportFailed, match=r"row 2, field 'score': 6\.0 is outside 1-5"):
        human_ratings_import(path=path, dataset=dataset, scale=(1, 5))


def test_missing_column(dataset, tmp_path):
    path = tmp_path / "ratings.csv"
    path.write_text("item,rater,score\ns1,e1,3\n")
    with pytest.raises(ImportFailed, match=r"row 1: missing column\(s\) criterion"):
        human_ratings_import(path=path, dataset=dataset)


def test_rater_checks_find_copies_constant_raters_and_thin_units():
    ratings = {
        "a": {"u1": 4, "u2": 2, "u3": 5},
        "b": {"u1": 4, "u2": 2, "u3": 5},  # a copy of a
        "c": {"u1": 3, "u2": 3, "u3": 3},  # never varies
        "d": {"u1": 1, "u2": 4},
    }
    # kappa 1 on 3 shared texts; chance would give only 3 x 2/3 = 2 disagreements, so the
    # default bar (5) is lowered to see the pair at all
    pairs = near_duplicate_raters(ratings, kappa=1.0, spearman=2.0, min_shared=2, min_chance=0)
    assert [(p.rater_a, p.rater_b, p.shared_units) for p in pairs] == [("a", "b", 3)]
    assert [s.rater for s in straight_liners(ratings, share=1.0, min_units=2)] == ["c"]
    assert under_rated_units(ratings, expected=4) == {"u3": 3}
    assert under_rated_units(ratings, expected=3) == {}


def test_one_shared_unit_is_not_enough_to_call_raters_copies():
    two_raters = {"a": {"u1": 3, "u2": 4}, "b": {"u1": 3, "u9": 1}}
    assert near_duplicate_raters(two_raters, kappa=1.0, min_shared=2, min_chance=0) == []


def test_ratings_import_api_and_rater_checks_in_the_report(
    dataset, api_client, researcher, tmp_path
):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.authtoken.models import Token

    from apps.analysis.reports import judge_vs_human
    from tests.factories import StudyFactory

    dataset.owner = researcher
    dataset.save()
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher)}")
    rows = (
        HEADER + "s1,,coherence,a,4\ns2,,coherence,a,2\ns1,,coherence,b,4\n"
        "s2,,coherence,b,2\ns1,,coherence,c,3\ns2,,coherence,c,3\ns1,,coherence,d,5\n"
    )
    upload = SimpleUploadedFile("summeval.csv", rows.encode())
    response = api_client.post(
        f"/api/v1/datasets/{dataset.pk}/ratings/",
        {"file": upload, "scale_min": 1, "scale_max": 5},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    assert response.json() == {
        "created": 7,
        "existing": 0,
        "scale": [1.0, 5.0],
        # alpha rises 0.604 → 0.800 without c, but on two texts the rise's bootstrap interval
        # (-0.083 to 0.196) includes 0: no warning (the old answer named c)
        "warnings": [],
    }
    bad = SimpleUploadedFile("bad.csv", (HEADER + "s1,,coherence,z,9\n").encode())
    refused = api_client.post(
        f"/api/v1/datasets/{dataset.pk}/ratings/",
        {"file": bad, "scale_min": 1, "scale_max": 5},
        format="multipart",
    )
    assert refused.status_code == 400
    assert refused.json()["errors"] == ["bad.csv, row 2, field 'score': 9.0 is outside 1.0-5.0"]
    study = StudyFactory(owner=researcher)
    study.datasets.add(dataset)
    checks = next(t for t in judge_vs_human.build(study).tables() if t.name == "rater_checks")
    # two shared texts are too few to call a and b copies, or c a straight-liner: the
    # checks say so, with their N
    rows = {(r[1], r[2]): r for r in checks.rows}
    assert rows[("near-duplicate raters", "not checked")][4] == 2  # most shared texts
    assert rows[("straight-liner", "not checked")][4] == 2  # most texts of one rater
    alpha = [r for r in checks.rows if r[1] == "alpha if removed"]
    assert alpha[0][:3] == ["coherence", "alpha if removed", "c"] and alpha[0][5] == "no"
    assert "95% interval -0.083 to 0.196" in alpha[0][3]
    assert ("texts with fewer than 4 raters", "1 texts") in rows
