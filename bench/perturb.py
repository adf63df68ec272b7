"""Throughput of the rule-based perturbers on the FBI originals.

Usage: .venv/bin/python bench/perturb.py [DATA_DIR]   (default: fbi/data of the published
peer data, $DISCERN_PEERS_DIR or ../shared/peers beside the checkout). Reads every
<ability>/<kind>.tsv, takes the ``og`` column (2,492 texts), runs each rule at each of its
degrees (preset parameters + the perturbation, segmentation cache cleared before each kind,
so every text is segmented afresh) and prints texts/second per kind.
The data is only read, never copied.
"""

from __future__ import annotations

import csv
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from apps.corpus.perturbers import (
    RULES,
    PerturbationNotApplicable,
    apply_rule,
    degrees_of,
)
from apps.corpus.perturbers.segmentation import segment

ROOT = Path(__file__).resolve().parent.parent
PEERS = Path(os.environ.get("DISCERN_PEERS_DIR", ROOT.parent / "shared" / "peers"))
DEFAULT_DATA = str(PEERS / "fbi" / "data")
WRONG_ENDING = "Then the moon fell into the sea."


def load_originals(data_dir: str | Path) -> list[str]:
    """The ``og`` column of every ``<ability>/<kind>.tsv`` (columns come in varying order)."""
    csv.field_size_limit(sys.maxsize)
    texts: list[str] = []
    for path in sorted(Path(data_dir).glob("*/*.tsv")):
        with path.open(newline="", encoding="utf-8") as fh:
            texts.extend(row["og"] for row in csv.DictReader(fh, delimiter="\t"))
    return texts


def extra_params(rule: str, texts: list[str]) -> dict[str, object]:
    needs = RULES[rule].needs
    out: dict[str, object] = {}
    if "pool" in needs:
        out["pool"] = texts
    if "wrong_ending" in needs:
        out["wrong_ending"] = WRONG_ENDING
    return out


def main() -> None:
    data_dir = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DATA
    texts = load_originals(data_dir)
    chars = sum(len(t) for t in texts)
    print(f"{len(texts)} FBI originals, {chars / len(texts):.0f} characters on average")
    print("texts/s = texts / CPU seconds of this process (wall seconds shown too: the machine")
    print("may be shared); the segmentation cache is cleared before each kind.\n")
    header = (
        f"{'rule':<20} {'degree':<6} {'ok':>5} {'n/a':>5} {'wall s':>7} {'cpu s':>6} {'texts/s':>8}"
    )
    print(header)
    print("-" * len(header))
    total = 0.0
    for rule in RULES:
        extra = extra_params(rule, texts)
        for degree in degrees_of(rule):
            segment.cache_clear()
            ok = na = 0
            w0, c0 = time.perf_counter(), time.process_time()
            for i, text in enumerate(texts):
                try:
                    apply_rule(rule, text, seed=i, degree=degree, **extra)
                    ok += 1
                except PerturbationNotApplicable:
                    na += 1
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            total += cpu
            print(
                f"{rule:<20} {degree or '-':<6} {ok:>5} {na:>5} {wall:>7.2f} {cpu:>6.2f} "
                f"{len(texts) / cpu:>8.0f}"
            )
    segment.cache_clear()
    w0, c0 = time.perf_counter(), time.process_time()
    for text in texts:
        segment(text)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    print(
        f"{'(segmentation only)':<27} {'':>5} {'':>5} {wall:>7.2f} {cpu:>6.2f} "
        f"{len(texts) / cpu:>8.0f}"
    )
    print(f"\ntotal {total:.1f} CPU s")


if __name__ == "__main__":
    main()
