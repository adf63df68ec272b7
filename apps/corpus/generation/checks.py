"""Checks on every generated perturbation: a failed check is a flag, never a silent keep."""

from __future__ import annotations

from apps.catalog.models import PerturbationKind
from apps.corpus.diff import DiffOp, compute_diff, diff_stats
from apps.corpus.models import Perturbation

# The largest share of the original's words a kind may change before its output is flagged
# as "too-large" (diff_stats' edit_size). A kind can set its own in parameters.max_edit_size.
MAX_EDIT_SIZE = {"C": 0.3, "W": 0.5, "S": 2.0}
DEFAULT_MAX_EDIT_SIZE = 1.0


def max_edit_size(kind: PerturbationKind) -> float:
    explicit = (kind.parameters or {}).get("max_edit_size")
    if explicit is not None:
        return float(explicit)
    return MAX_EDIT_SIZE.get(kind.level, DEFAULT_MAX_EDIT_SIZE)


def output_flags(
    original: str,
    text: str,
    kind: PerturbationKind,
    limit: float | None = None,
    ops: list[DiffOp] | None = None,
) -> list[str]:
    """Why this output should not be trusted as it is: empty, unchanged, or too large
    (beyond `limit`, else the kind's own limit). `ops`: the diff of the two, if computed."""
    if not text.strip():
        return ["empty"]
    if text == original:
        return ["unchanged"]
    size = diff_stats(ops if ops is not None else compute_diff(original, text))["edit_size"]
    if size > (limit if limit is not None else max_edit_size(kind)):
        return ["too-large"]
    return []


def checked(
    perturbation: Perturbation, kind: PerturbationKind, limit: float | None = None
) -> Perturbation:
    """A new generated perturbation with its diff (stored with it, so that its first annotator
    does not compute it: docs/annotation.md, "Speed") and the flags of its checks, read from
    that same diff."""
    original = perturbation.item.original
    ops = perturbation.with_diff(original).diff["ops"]
    perturbation.flags = output_flags(original, perturbation.text, kind, limit, ops=ops)
    return perturbation
