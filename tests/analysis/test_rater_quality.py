"""Rater quality that cannot be missed: a planted copy of a rater, even with 1% of its
ratings changed, is flagged at import (function, command, API) and at the top of the reports."""

import io
import random

import pytest
from django.core.management import call_command

from apps.analysis.ratings_import import human_ratings_import
from apps.analysis.stats.raters import (
    alpha_if_removed,
    near_duplicate_raters,
    straight_liners,
)
from apps.catalog.models import Task
from tests.analysis.builders import study_with_items
from tests.factories import SourceItemFactory

N_UNITS = 200


def _planted(changed: int = 0, seed: int = 7) -> dict[str, dict[str, float]]:
    """Three raters who roughly agree on a 1-5 scale, a copy of `a` with `changed` of its
    ratings moved by one point, a noisy rater and a straight-liner."""
    rng = random.Random(seed)
    truth = [rng.randint(1, 5) for _ in range(N_UNITS)]

    def near(value: int) -> float:
        return float(min(5, max(1, value + rng.choice([-1, 0, 0, 0, 1]))))

    ratings = {name: {f"u{i}": near(t) for i, t in enumerate(truth)} for name in "abc"}
    copy = dict(ratings["a"])
    for i in rng.sample(range(N_UNITS), changed):
        copy[f"u{i}"] = 5.0 if copy[f"u{i}"] < 5 else 4.0
    ratings["copy"] = copy
    ratings["noise"] = {f"u{i}": float(rng.randint(1, 5)) for i in range(N_UNITS)}
    ratings["flat"] = {f"u{i}": 3.0 for i in range(N_UNITS)}
    return ratings


@pytest.mark.parametrize("changed", [0, N_UNITS // 100, 4])
def test_a_copied_rater_is_a_near_duplicate_even_with_some_ratings_changed(changed):
    pairs = near_duplicate_raters(_planted(changed))
    assert [(p.rater_a, p.rater_b) for p in pairs] == [("a", "copy")]
    assert pairs[0].identical_share == pytest.approx(1 - changed / N_UNITS)
    assert pairs[0].shared_units == N_UNITS


def test_near_duplicates_need_enough_shared_units():
    few = {"a": {"u1": 1.0, "u2": 2.0}, "b": {"u1": 1.0, "u2": 2.0}}
    assert near_duplicate_raters(few) == []
    assert len(near_duplicate_raters(few, min_shared=2)) == 1


def test_a_perfectly_monotone_rater_is_a_near_duplicate_by_spearman():
    a = {f"u{i}": float(i % 5 + 1) for i in range(50)}
    shifted = {u: v * 2 for u, v in a.items()}  # never the same score, same order
    (pair,) = near_duplicate_raters({"a": a, "b": shifted})
    assert pair.identical_share == 0 and pair.spearman == pytest.approx(1.0)


def test_straight_liners_and_the_rater_whose_removal_raises_alpha_most():
    ratings = _planted()
    assert [(s.rater, s.value, s.share) for s in straight_liners(ratings)] == [("flat", 3.0, 1.0)]
    overall, effects = alpha_if_removed({k: v for k, v in ratings.items() if k != "flat"})
    assert effects[0].rater == "noise" and effects[0].alpha_without > overall
    assert effects[0].change == pytest.approx(effects[0].alpha_without - overall)
    # leaving out one half of the copy lowers alpha: the copy inflated it
    copy = next(e for e in effects if e.rater == "copy")
    assert copy.change < 0


def test_two_raters_have_no_alpha_if_removed():
    ratings = _planted()
    _, effects = alpha_if_removed({"a": ratings["a"], "b": ratings["b"]})
    assert effects == []


def _ratings_file(tmp_path, ratings) -> object:
    path = tmp_path / "ratings.csv"
    lines = ["item,criterion,rater,score"]
    for rater, scores in ratings.items():
        lines += [f"{unit},coherence,{rater},{score:g}" for unit, score in scores.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def rated(catalog, tmp_path):
    """A study over N_UNITS items and a ratings file with a copy that differs on 1%."""
    study, _, _ = study_with_items(0, [])
    dataset = study.datasets.get()
    task = Task.objects.get(slug="summarization")
    for i in range(N_UNITS):
        SourceItemFactory(dataset=dataset, external_id=f"u{i}", task=task)
    ratings = _planted(changed=N_UNITS // 100)
    del ratings["noise"], ratings["flat"]
    return study, dataset, _ratings_file(tmp_path, ratings)


@pytest.mark.django_db
def test_the_import_answer_warns_of_the_copy(rated):
    _, dataset, path = rated
    summary = human_ratings_import(path=path, dataset=dataset)
    assert summary.created == 4 * N_UNITS
    (warning,) = [w for w in summary.warnings if "near-duplicate" in w]
    assert "coherence: near-duplicate raters: a and copy (99.0% identical" in warning


@pytest.mark.django_db
def test_the_import_command_prints_the_warning(rated):
    _, dataset, path = rated
    out, err = io.StringIO(), io.StringIO()
    call_command("import_ratings", str(path), dataset=dataset.name, stdout=out, stderr=err)
    assert "800 ratings imported" in out.getvalue()
    assert "WARNING: coherence: near-duplicate raters: a and copy" in err.getvalue()


@pytest.mark.django_db
def test_the_import_api_answers_with_the_warning(rated, api_client):
    study, dataset, path = rated
    dataset.owner = study.owner
    dataset.save()
    api_client.force_authenticate(study.owner)
    with path.open("rb") as handle:
        response = api_client.post(
            f"/api/v1/datasets/{dataset.pk}/ratings/", {"file": handle}, format="multipart"
        )
    assert response.status_code == 201, response.content
    assert any("a and copy" in w for w in response.json()["warnings"])


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["judge-vs-human", "human-agreement"])
def test_the_copy_heads_the_report(rated, client, name):
    study, dataset, path = rated
    human_ratings_import(path=path, dataset=dataset)
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/reports/{name}/").content.decode()
    warning = page.index("near-duplicate raters: a and copy")
    assert page.index("WARNING") < warning < page.index('class="report-section"')
