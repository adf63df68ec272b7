"""Every report builds, renders and downloads for every kind of judge and for empty, partial
and full data: report x judge family x data, each through the page, CSV, JSON and the API."""

from __future__ import annotations

import itertools

import pytest

from apps.analysis.reports import RUN_REPORTS, STUDY_REPORTS, TITLES
from apps.analysis.services import report_get
from apps.judging.loading import judging_load
from tests.analysis.builders import (
    annotators,
    compare,
    judge_run,
    llm_run,
    pairwise,
    rate,
    score,
    study_with_items,
    vet,
    vote,
)

pytestmark = pytest.mark.django_db

KINDS = ["negation", "repetition", "fbi-score-invariant"]
CRITERIA = [
    "discern-non-contradiction-default",
    "discern-fluency-default",
    "discern-fluency-detailed",
]
METRICS = ["coherence", "consistency"]
#: family -> (shipped strategy slug or None for a metric judge, what a call is about, scale)
FAMILIES: dict[str, tuple[str | None, str, tuple[float, float]]] = {
    "metric": (None, "own", (0, 100)),
    "single": ("fbi-single-vanilla", "criterion", (1, 5)),
    "pairwise": ("fbi-pairwise-vanilla", "pairwise", (1, 5)),
    "reference": ("fbi-reference", "criterion", (1, 5)),
    "geval-samples": ("dhp-geval-score", "metric", (1, 5)),
    "geval-logprobs": ("geval-probability", "metric", (1, 5)),
    "prometheus": ("prometheus", "criterion", (1, 5)),
    "0-100": ("adveval-0-100", "criterion", (0, 100)),
    "analyze-rate": ("hu-analyze-rate", "criterion", (1, 5)),
    "prompting": ("cd-misleading-cue", "criterion", (1, 5)),
}
DATA = ["empty", "partial", "full"]
REPORTS = [*STUDY_REPORTS, *RUN_REPORTS]


def _value(scale, original: bool, item: int, sample: int, fractional: bool) -> float:
    """A plausible score: originals high, perturbed lower, varying by item and sample."""
    lo, hi = scale
    share = (0.9 - 0.05 * (item % 3)) if original else (0.35 + 0.1 * ((item + sample) % 3))
    value = lo + share * (hi - lo)
    return round(value, 2) if fractional else float(round(value))


def _scores(family: str, run, items, perts, data: str) -> None:
    _, about, scale = FAMILIES[family]
    samples = 3 if family == "geval-samples" else 1
    fractional = family in ("geval-logprobs", "metric")
    if about == "pairwise":
        _pairwise_calls(run, perts, data)
        return
    dims = {"criterion": CRITERIA, "metric": METRICS, "own": [None]}[about]
    chosen = items if data == "full" else items[:1]
    for n, item in enumerate(chosen):
        for dim, sample in itertools.product(dims, range(samples)):
            about_it = {about: dim} if dim else {}
            score(
                run,
                item,
                None,
                _value(scale, True, n, sample, fractional),
                sample=sample,
                **about_it,
            )
            for slug in KINDS if data == "full" else []:
                value = _value(scale, slug == "fbi-score-invariant", n, sample, fractional)
                score(run, item, perts[slug][n], value, sample=sample, **about_it)
    if data == "partial":  # an unparsed reply, and a perturbation whose original was not scored
        about_it = {about: dims[0]} if dims[0] else {}
        score(run, items[1], None, None, **about_it)
        score(
            run, items[1], perts["negation"][1], _value(scale, False, 1, 0, fractional), **about_it
        )


def _pairwise_calls(run, perts, data: str) -> None:
    if data == "partial":  # one order only, and one unparsed reply
        pairwise(run, perts["negation"][0], "original", original_first=True, criterion=CRITERIA[0])
        pairwise(run, perts["negation"][1], None, original_first=False, criterion=CRITERIA[0])
        return
    for slug in KINDS:
        for n, pert in enumerate(perts[slug]):
            first = "original" if n % 2 == 0 else "perturbed"
            pairwise(run, pert, first, original_first=True, criterion=CRITERIA[0])
            pairwise(run, pert, "original", original_first=False, criterion=CRITERIA[0])


def _humans(study, items, perts, data: str) -> None:
    people = annotators(3)
    experts = annotators(2, "expert")
    if data == "partial":
        compare(study, perts["negation"][0], CRITERIA[0], people[0], "worse")
        vet(study, perts["negation"][0], people[0], "valid")
        vote(study, "negation", "consistency", experts[0])
        rate(items[0], None, "fluency", "r1", 4)
        return
    outcomes = ["worse", "worse", "same"]
    for slug in KINDS:
        for n, pert in enumerate(perts[slug]):
            for person, outcome in zip(people, outcomes, strict=True):
                compare(study, pert, CRITERIA[0], person, outcome)
                compare(study, pert, CRITERIA[1], person, "same" if n % 2 else outcome)
            vet(study, pert, people[0], "valid")
            vet(study, pert, people[1], "valid" if n % 2 else "invalid")
        vote(study, slug, "consistency", experts[0])
        vote(study, slug, "coherence", experts[1])
    for n, item in enumerate(items):
        for rater, aspect in itertools.product(
            ("r1", "r2", "r3"), ("fluency", "non-contradiction")
        ):
            rate(item, None, aspect, rater, 5 - (n + len(rater)) % 2)
            rate(item, perts["negation"][n], aspect, rater, 2 + (n % 3))


def _study(family: str, data: str):
    judging_load()
    study, items, perts = study_with_items(4, KINDS)
    slug = FAMILIES[family][0]
    running = "done" if data == "full" else "running"
    run = judge_run(study, status=running) if slug is None else llm_run(study, slug, status=running)
    if data != "empty":
        _scores(family, run, items, perts, data)
        _humans(study, items, perts, data)
    study.run = run
    return study


@pytest.mark.parametrize("data", DATA)
@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("name", REPORTS)
def test_report_builds_renders_and_downloads(catalog, client, api_client, name, family, data):
    study = _study(family, data)
    run = study.run if name in RUN_REPORTS else None
    snapshot = report_get(study=study, name=name, run=run)
    assert snapshot.status == "done", snapshot.error
    client.force_login(study.owner)
    api_client.force_authenticate(study.owner)
    query = {"run": run.pk} if run else {}
    base = f"/studies/{study.pk}/reports/{name}"
    page = client.get(f"{base}/", query)
    assert page.status_code == 200
    assert TITLES[name].encode() in page.content and b"could not be built" not in page.content
    for fmt in ("csv", "json"):
        assert client.get(f"{base}.{fmt}", query).status_code == 200, fmt
    api = api_client.get(f"/api/v1/studies/{study.pk}/reports/{name}/", query)
    assert api.status_code == 200 and api.json()["name"] == name


@pytest.mark.parametrize("data", DATA)
@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_whole_study_file_builds(catalog, client, family, data):
    study = _study(family, data)
    client.force_login(study.owner)
    shared = client.get(f"/studies/{study.pk}/reports/all.html")
    assert shared.status_code == 200
    assert b"could not be built" not in shared.content
    assert shared.content.count(b'class="report"') == len(STUDY_REPORTS) + 1
