"""The criteria design (methods §2) as a pure function."""

import random
from collections import Counter

import pytest

from apps.annotation.design import (
    CriterionSpec,
    PlanError,
    criteria_plan,
    design_size,
    groups_split,
)

TYPES = ("default", "simplified", "detailed", "term", "list")


def paper_criteria():
    """Hu et al.: 11 aspects x 5 types, plus 25 literature descriptions = 80."""
    specs = [CriterionSpec((a, t), a, t) for a in range(11) for t in TYPES]
    specs += [CriterionSpec((i % 11, "lit", i), i % 11, "literature") for i in range(25)]
    return specs


def check_plan(plan, criteria, groups):
    """The hard rules: coverage per group, one description per aspect, balanced loads."""
    spec = {c.id: c for c in criteria}
    for g in range(groups):
        shares = [s for s in plan if s.group == g]
        covered = [c for s in shares for c in s.criteria]
        assert sorted(covered, key=str) == sorted(spec, key=str)  # every criterion exactly once
        loads = [len(s.criteria) for s in shares]
        assert max(loads) - min(loads) <= 1
        for s in shares:
            aspects = [spec[c].aspect for c in s.criteria]
            assert len(aspects) == len(set(aspects))


def test_paper_design():
    criteria = paper_criteria()
    plan = criteria_plan(annotators=list(range(40)), groups=4, criteria=criteria)
    check_plan(plan, criteria, 4)
    assert Counter(s.group for s in plan) == {0: 10, 1: 10, 2: 10, 3: 10}
    assert {len(s.criteria) for s in plan} == {8}
    total = Counter(c.description_type for c in criteria)
    spec = {c.id: c for c in criteria}
    for share in plan:  # every type within one of its fair share, for every annotator
        have = Counter(spec[c].description_type for c in share.criteria)
        for dtype, n in total.items():
            assert abs(have[dtype] - 8 * n / 80) < 1
    assert design_size(groups=4, pairs=18 * 4, criteria=80) == 23_040


def test_types_spread_perfectly_when_possible():
    criteria = [CriterionSpec((a, t), a, t) for a in range(5) for t in TYPES]
    plan = criteria_plan(annotators=list("abcde"), groups=1, criteria=criteria)
    for share in plan:
        assert sorted(t for _, t in share.criteria) == sorted(TYPES)


@pytest.mark.parametrize("seed", range(40))
def test_random_designs_keep_the_rules(seed):
    rng = random.Random(seed)
    per_group = rng.randint(1, 6)
    groups = rng.randint(1, 3)
    annotators = [f"u{i}" for i in range(per_group * groups + rng.randint(0, groups - 1))]
    criteria = [
        CriterionSpec((a, k), a, rng.choice((*TYPES, "literature")))
        for a in range(rng.randint(1, 11))
        for k in range(rng.randint(1, per_group))
    ]
    plan = criteria_plan(annotators=annotators, groups=groups, criteria=criteria)
    assert [s.annotator for s in plan] == annotators
    check_plan(plan, criteria, groups)


def test_groups_are_dealt_round_robin():
    assert groups_split([1, 2, 3, 4, 5], 2) == [[1, 3, 5], [2, 4]]


def test_too_few_annotators_for_an_aspect_is_refused():
    criteria = [CriterionSpec((0, t), 0, t) for t in TYPES]  # 5 descriptions of one aspect
    with pytest.raises(PlanError, match="only 4 annotators"):
        criteria_plan(annotators=list(range(8)), groups=2, criteria=criteria)


def test_more_groups_than_annotators_is_refused():
    with pytest.raises(PlanError, match="at least 3 annotators"):
        criteria_plan(annotators=[1, 2], groups=3, criteria=[])


def test_same_plan_every_time():
    criteria = paper_criteria()
    first = criteria_plan(annotators=list(range(20)), groups=2, criteria=criteria)
    again = criteria_plan(annotators=list(range(20)), groups=2, criteria=criteria)
    assert first == again
