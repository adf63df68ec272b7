"""A synthetic study with known ground truth: simulated annotators and judges with set noise
give the expected match rates and significant / not-significant discernment (issue bar)."""

import numpy as np
import pytest

from apps.analysis.reports import human_agreement, judge_reliability
from apps.catalog.models import Aspect, Criterion
from apps.catalog.tree import lineage_slugs
from tests.analysis.builders import annotators, compare, judge_run, score, study_with_items

pytestmark = pytest.mark.django_db
KINDS = ["negation", "spelling-mistake", "sentence-deletion", "continuation"]


def test_noisy_annotators_recover_the_expected_impact(catalog):
    rng = np.random.default_rng(7)
    study, _, perts = study_with_items(2, KINDS)
    people = annotators(5)
    lineage = lineage_slugs()
    aspects = list(Aspect.objects.all())
    for kind in KINDS:
        target = perts[kind][0].kind.target_aspect_id
        for aspect in aspects:
            truth = "worse" if aspect.slug in lineage[target] else "same"
            for pert in perts[kind]:
                for person in people:
                    # right with probability 0.8, else one of the other three options
                    outcome = (
                        truth
                        if rng.random() < 0.8
                        else rng.choice(
                            [o for o in ("worse", "same", "better", "uncertain") if o != truth]
                        )
                    )
                    compare(study, pert, f"discern-{aspect.slug}-default", person, outcome)
    report = human_agreement.build(study)
    default = next(
        r for t in report.tables() if t.name == "match_rates" for r in t.rows if r[0] == "default"
    )
    # 4 kinds x 11 aspects; 10 votes a cell at 80% accuracy: a wrong plurality is rare
    assert default[1] == 44
    assert default[3] >= 0.95 and default[7] >= 0.9
    assert Criterion.objects.filter(description_type="default", source="discern").count() == 11


def test_a_judge_that_notices_is_significant_and_one_that_does_not_is_not(catalog):
    rng = np.random.default_rng(11)
    n = 30
    study, items, perts = study_with_items(n, ["char-deletion-major", "word-exchange"])
    run = judge_run(study)
    for k, item in enumerate(items):
        for metric in ("coherence", "fluency"):
            original = 4 + rng.normal(0, 0.2)
            score(run, item, None, original, metric=metric)
            # the judge drops 1 point for the major deletions, 0 for word exchange
            score(
                run,
                item,
                perts["char-deletion-major"][k],
                original - 1 + rng.normal(0, 0.2),
                metric=metric,
            )
            score(
                run, item, perts["word-exchange"][k], original + rng.normal(0, 0.2), metric=metric
            )
    table = next(t for t in judge_reliability.build(run).tables() if t.name == "discernment")
    rows = {r[0]: dict(zip(table.columns, r, strict=True)) for r in table.rows}
    assert rows["Random character deletion (major)"]["D"] >= 1
    assert rows["Word exchange"]["D"] < 1
