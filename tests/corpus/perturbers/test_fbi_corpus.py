"""Every rule-based kind, at every degree, on all 2,492 FBI originals.

The data is read in place from the published peer data (settings.DISCERN_PEERS_DIR, never
copied into the repo); the test is skipped when it is absent. Each kind may refuse a text (PerturbationNotApplicable: too
short, one sentence...) but nothing else may go wrong, every result must satisfy the common
invariants, and refusals must stay a small share.
"""

from __future__ import annotations

import csv
import sys
from collections import Counter

import pytest

from apps.corpus.perturbers import RULES, PerturbationNotApplicable, apply_rule, degrees_of
from tests.conftest import PEERS
from tests.corpus.perturbers.perturber_texts import check_result

DATA = PEERS / "fbi" / "data"
MAX_NOT_APPLICABLE_SHARE = 0.05
WRONG_ENDING = "Then the moon fell into the sea."

pytestmark = pytest.mark.skipif(
    not DATA.is_dir(), reason=f"peer data not found: {DATA} (set DISCERN_PEERS_DIR)"
)


def load_originals() -> list[str]:
    csv.field_size_limit(sys.maxsize)
    texts: list[str] = []
    for path in sorted(DATA.glob("*/*.tsv")):
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        assert rows and {"cdx", "question", "og", "perturbed_gpt4"} <= set(rows[0]), path
        texts.extend(row["og"] for row in rows)
    return texts


@pytest.fixture(scope="module")
def originals() -> list[str]:
    texts = load_originals()
    assert len(texts) == 2492
    return texts


def test_every_kind_on_every_fbi_original(originals: list[str]) -> None:
    not_applicable: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = {}
    runs = 0
    for name, rule in RULES.items():
        extra: dict[str, object] = {}
        if "pool" in rule.needs:
            extra["pool"] = originals
        if "wrong_ending" in rule.needs:
            extra["wrong_ending"] = WRONG_ENDING
        level = "answer" if name == "random_answer" else rule.level
        for degree in degrees_of(name):
            key = f"{name}/{degree or '-'}"
            for i, text in enumerate(originals):
                try:
                    result = apply_rule(name, text, seed=i, degree=degree, **extra)
                except PerturbationNotApplicable as exc:
                    not_applicable[key] += 1
                    reasons.setdefault(key, Counter())[exc.reason.split(",")[0]] += 1
                    continue
                runs += 1
                check_result(text, result, level=level)
    print("\nnot applicable per kind (of 2,492):")
    for key in sorted(not_applicable):
        print(f"  {key:<28} {not_applicable[key]:>4}  {dict(reasons[key].most_common(2))}")
    assert runs > 0.95 * 2492 * sum(len(degrees_of(n)) for n in RULES)
    for key, count in not_applicable.items():
        assert count <= MAX_NOT_APPLICABLE_SHARE * len(originals), (key, count)
