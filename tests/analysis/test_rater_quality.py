"""Rater quality that cannot be missed, and warnings that point the right way: a planted
copy of a rater, even with some of its ratings changed, is flagged at import (function,
command, API) and once at the top of the reports that use the ratings; honest raters on a
skewed criterion (USR's 0-1 "Understandable") are not; a copied pair does not make the
honest third rater look like the problem."""

import io
import random

import pytest
from django.core.management import call_command

from apps.analysis.ratings_import import human_ratings_import
from apps.analysis.reports.rater_quality import rater_checks, rater_warnings
from apps.analysis.stats.raters import (
    alpha_if_removed,
    near_duplicate_raters,
    pair_agreements,
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
    # two shared units: chance (p_e = 1/2) predicts 2 x 1/2 = 1 disagreement, below 5
    assert near_duplicate_raters(few, min_shared=2) == []
    assert len(near_duplicate_raters(few, min_shared=2, min_chance=1)) == 1


def test_a_perfectly_monotone_rater_is_a_near_duplicate_by_spearman():
    a = {f"u{i}": float(i % 5 + 1) for i in range(50)}
    shifted = {u: v * 2 for u, v in a.items()}  # never the same score, same order
    (pair,) = near_duplicate_raters({"a": a, "b": shifted})
    assert pair.identical_share == 0 and pair.spearman == pytest.approx(1.0)
    # kappa is below 0 (never the same score); p_e = P(a=2)P(b=2) + P(a=4)P(b=4) = 0.08,
    # so chance predicts 50 x 0.92 = 46 disagreements: enough to tell
    assert pair.kappa < 0 and pair.chance_disagreements == pytest.approx(46.0)


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
    assert "coherence: near-duplicate raters: a and copy (Cohen's kappa 0.98" in warning
    assert "99.0% identical on 200 shared texts" in warning


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
    warning = page.index("coherence: near-duplicate raters: a and copy")
    assert page.index("WARNING") < warning < page.index('class="report-section"')
    # once, at the top; the full table (every check, with its N) is in the report itself
    assert page.count("near-duplicate raters: a and copy") == 1
    assert 'data-table="rater_checks"' in page


@pytest.mark.django_db
def test_reports_that_do_not_use_the_ratings_carry_no_rater_warning(rated, client):
    study, dataset, path = rated
    human_ratings_import(path=path, dataset=dataset)
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/reports/expert-weights/").content.decode()
    assert "near-duplicate" not in page and "WARNING" not in page


# -- chance-corrected near-duplicates: a USR-like skewed 0-1 criterion -------------------------

USR_TEXTS = 360  # USR Topical-Chat: 60 contexts x 6 responses


def _binary(zeros: set[int]) -> dict[str, float]:
    """A 0-1 rater of the USR_TEXTS texts who gives 0 to `zeros` and 1 to every other."""
    return {f"t{i}": 0.0 if i in zeros else 1.0 for i in range(USR_TEXTS)}


def _usr_like() -> dict[str, dict[str, float]]:
    """Three honest raters of a skewed criterion: each gives 0 to 11 texts (3.1%) and 1 to
    the rest; a and b share 3 zeros, b and c share 3, a and c none."""
    return {
        "a": _binary(set(range(0, 11))),
        "b": _binary(set(range(8, 19))),
        "c": _binary(set(range(16, 27))),
    }


def test_honest_raters_of_a_skewed_criterion_are_not_near_duplicates():
    ratings = _usr_like()
    pairs = {(p.rater_a, p.rater_b): p for p in pair_agreements(ratings)}
    ab = pairs[("a", "b")]
    # identical: 3 shared zeros + 341 shared ones = 344 / 360 = 95.6%: the old raw-identity
    # rule (>= 95%) flagged this pair.
    assert ab.identical_share == pytest.approx(344 / 360)
    # chance: p_e = (11/360)^2 + (349/360)^2 = 121922 / 129600 = 0.94076;
    # kappa = (344/360 - p_e) / (1 - p_e) = 0.01480 / 0.05924 = 0.2498 (Spearman, i.e. phi
    # here: (3 x 341 - 8 x 8) / (11 x 349) = 959 / 3839 = 0.2498, in USR's 0.16-0.46)
    p_e = 121922 / 129600
    assert ab.kappa == pytest.approx((344 / 360 - p_e) / (1 - p_e))
    assert ab.kappa == pytest.approx(959 / 3839) and ab.spearman == pytest.approx(959 / 3839)
    assert ab.chance_disagreements == pytest.approx(360 * (1 - p_e))  # 21.3: enough to tell
    assert near_duplicate_raters(ratings) == []
    # each gives 1 to 349/360 = 96.9% of texts, and so do the others: not a straight-liner
    assert straight_liners(ratings) == []
    assert rater_checks({"understandable": _by_text(ratings)}) and not rater_warnings(
        {"understandable": _by_text(ratings)}
    )


@pytest.mark.parametrize(
    ("zeros", "kappa"),
    [
        # one change (text 100: 1 -> 0): 12 zeros against a's 11, 359 of 360 identical;
        # p_e = (11 x 12 + 349 x 348) / 129600 = 121584 / 129600;
        # kappa = (359/360 - p_e) / (1 - p_e) = 0.05907 / 0.06185 = 0.9551
        (set(range(0, 11)) | {100}, (359 / 360 - 121584 / 129600) / (1 - 121584 / 129600)),
        # two changes (text 0: 0 -> 1, text 100: 1 -> 0): 11 zeros, 358 of 360 identical;
        # p_e = 121922 / 129600; kappa = 0.05369 / 0.05924 = 0.9062
        (set(range(1, 11)) | {100}, (358 / 360 - 121922 / 129600) / (1 - 121922 / 129600)),
    ],
)
def test_a_copy_on_the_skewed_criterion_is_flagged(zeros, kappa):
    ratings = _usr_like() | {"copy": _binary(zeros)}
    (pair,) = near_duplicate_raters(ratings)
    assert (pair.rater_a, pair.rater_b) == ("a", "copy")
    assert pair.kappa == pytest.approx(kappa) and pair.kappa >= 0.9


def test_a_rise_within_the_luck_of_the_texts_does_not_warn():
    """Leaving a (or c) out of the USR-like raters raises alpha by 0.094 (to the alpha of
    the two raters who share zeros), but only 30 texts carry a zero: the rise's bootstrap
    interval includes 0, so nobody is named."""
    _, effects = alpha_if_removed(_usr_like())
    top = effects[0]
    assert top.rater in {"a", "c"} and top.change == pytest.approx(0.094, abs=1e-3)
    assert top.ci_low < 0 < top.ci_high and not top.rises
    assert not any(e.rises for e in effects)


# -- "alpha if removed" beside a copied pair (DialSummEval) ----------------------------------

HONEST = [1, 1, 1, 2, 2, 2, 2, 2, 1, 1]  # differs from the copied pair on texts 3, 4, 8, 9
COPIED = [1, 1, 1, 1, 1, 2, 2, 2, 2, 2]


def _copied_pair() -> dict[str, dict[str, float]]:
    return {
        "a": {f"t{i}": float(v) for i, v in enumerate(COPIED)},
        "copy": {f"t{i}": float(v) for i, v in enumerate(COPIED)},
        "c": {f"t{i}": float(v) for i, v in enumerate(HONEST)},
    }


def test_a_copied_pair_does_not_make_the_honest_rater_the_suspect():
    """By hand (nominal; with two values every level agrees). Coincidences per text: a text
    the three agree on adds 3 x 2 / 2 = 3 to o_vv; a text c disagrees on adds o_xy = o_yx =
    1 (and o_xx = 1). Four such texts: sum of o_xy over x != y = 8; n_1 = n_2 = 15, n = 30.
    alpha = 1 - (n - 1) x 8 / (2 x 15 x 15) = 1 - 232 / 450 = 0.48444.
    Without c: a and copy never differ, alpha = 1, a rise of 0.5156: the naive check names
    the honest rater c. With a alone against c (the pair counted once): n = 20,
    n_1 = n_2 = 10, disagreements 8: alpha = 1 - 19 x 8 / (2 x 10 x 10) = 0.24."""
    ratings = _copied_pair()
    naive_overall, naive = alpha_if_removed(ratings, level="nominal")
    assert naive_overall == pytest.approx(1 - 232 / 450)
    assert naive[0].rater == "c" and naive[0].change == pytest.approx(1 - (1 - 232 / 450))
    assert naive[0].rises  # the bug: the honest rater looks like the problem
    (pair,) = near_duplicate_raters(ratings)  # kappa 1 on 10 texts, 10 x 1/2 = 5 by chance
    assert (pair.rater_a, pair.rater_b, pair.kappa) == ("a", "copy", 1.0)
    overall, effects = alpha_if_removed(ratings, level="nominal", duplicates=[pair])
    assert overall == pytest.approx(1 - 19 * 8 / 200) and effects == []  # two left: no check
    texts = {"coherence": _by_text(ratings)}
    warnings = rater_warnings(texts)
    assert warnings == [
        "coherence: near-duplicate raters: a and copy (Cohen's kappa 1.000, Spearman 1.000, "
        "100.0% identical on 10 shared texts; counted once in alpha if removed)"
    ]
    alpha_rows = [c for c in rater_checks(texts) if c.check == "alpha if removed"]
    assert [(c.who, c.warn) for c in alpha_rows] == [("not computed", False)]
    assert "2 here; near-duplicates counted once" in alpha_rows[0].detail


def test_beside_a_copied_pair_the_real_outlier_is_still_named():
    """a, b, c agree roughly, copy is a copy of a, noise rates at random: with a and copy
    counted once, leaving noise out raises alpha (interval above 0); nobody else warns."""
    ratings = {k: v for k, v in _planted(changed=2).items() if k != "flat"}
    checks = rater_checks({"coherence": _by_text(ratings)})
    flagged = [(c.check, c.who) for c in checks if c.warn]
    assert flagged == [
        ("near-duplicate raters", "a and copy"),
        ("alpha if removed", "noise"),
    ]
    effects = {c.who: c for c in checks if c.check == "alpha if removed"}
    assert set(effects) == {"a (a and copy counted once)", "b", "c", "noise"}
    assert effects["noise"].n == N_UNITS  # N: the texts the rater rated


def _by_text(ratings: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    texts: dict[str, dict[str, float]] = {}
    for rater, scores in ratings.items():
        for unit, value in scores.items():
            texts.setdefault(unit, {})[rater] = value
    return texts


def test_every_check_has_a_row_with_its_n():
    """Honest USR-like raters: no warning, yet every check says what it compared."""
    checks = rater_checks({"understandable": _by_text(_usr_like())})
    by_check = {c.check: c for c in checks}
    assert set(by_check) == {
        "near-duplicate raters",
        "straight-liner",
        "alpha if removed",
        "texts with fewer than 3 raters",
    }
    near = by_check["near-duplicate raters"]
    assert (near.who, near.n, near.warn) == ("no pair", 360, False)
    assert "3 pairs compared; closest a and b: Cohen's kappa 0.250" in near.detail
    liner = by_check["straight-liner"]
    assert (liner.who, liner.n) == ("no rater", 360)
    assert "gave 1 to 96.9% of 360 texts, the others 96.9% of the same texts" in liner.detail
    assert by_check["texts with fewer than 3 raters"].who == "no text"
    one = rater_checks({"coherence": {"t1": {"a": 1.0}, "t2": {"a": 2.0}}})
    assert [(c.check, c.who, c.n) for c in one][:3] == [
        ("near-duplicate raters", "not checked", 0),
        ("straight-liner", "not checked", 2),
        ("alpha if removed", "not computed", 2),
    ]


def test_rating_sets_that_share_no_rater_are_checked_apart():
    """Two sets of ratings of different texts by different raters, pooled under one
    criterion: each is checked on its own data, named by its raters, never the pool."""
    first = _planted(seed=1)
    second = {
        f"{rater}-2": {f"v{u}": v for u, v in units.items()}
        for rater, units in _planted(seed=2).items()
    }
    pooled: dict = {}
    for ratings in (first, second):
        for rater, units in ratings.items():
            for unit, value in units.items():
                pooled.setdefault(unit, {})[rater] = value
    checks = rater_checks({"coherence": pooled})
    alone = rater_checks({"coherence": {u: s for u, s in pooled.items() if u.startswith("u")}})
    first_name = "coherence (raters a, b, c, copy, flat, noise)"
    grouped = [c for c in checks if c.criterion == first_name]
    assert [c.detail for c in grouped] == [c.detail for c in alone]  # its own data alone
    assert {c.criterion for c in checks} == {
        first_name,
        "coherence (raters a-2, b-2, c-2, copy-2, flat-2, noise-2)",
    }
