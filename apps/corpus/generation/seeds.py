"""Stable per-(item, kind) seeds: the same job seed gives the same perturbations anywhere."""

import hashlib


def derived_seed(job_seed: int, item_external_id: str, kind_slug: str) -> int:
    digest = hashlib.sha256(f"{job_seed}|{item_external_id}|{kind_slug}".encode()).digest()
    return int.from_bytes(digest[:6], "big")
