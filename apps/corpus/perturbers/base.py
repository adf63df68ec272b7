"""Shared types for the rule-based perturbers.

Every perturber is a pure function ``rule(text, *, seed, **params) -> PerturbResult``:

* no I/O, no Django, no global random state: all randomness comes from ``random.Random(seed)``,
  so the same text, seed and parameters always give the same output;
* the output is the input with a few spans replaced; those replacements are returned as
  :class:`Edit` objects in *original* coordinates, so ``apply_edits(text, result.edits) ==
  result.text`` and a UI can highlight exactly what changed;
* a perturber that cannot do its job raises :class:`PerturbationNotApplicable` - it never
  returns the text unchanged.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "Edit",
    "PerturbResult",
    "PerturbationNotApplicable",
    "Perturber",
    "Rule",
    "apply_edits",
    "make_rng",
    "require_count",
]


class PerturbationNotApplicable(ValueError):
    """The kind cannot be applied to this text (too short, one sentence, empty pool, ...).

    ``rule`` is the rule name, ``reason`` a short human-readable explanation.
    """

    def __init__(self, rule: str, reason: str) -> None:
        self.rule = rule
        self.reason = reason
        super().__init__(f"{rule}: {reason}")


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace ``original[start:end]`` (== ``old``) by ``new``."""

    start: int
    end: int
    old: str
    new: str

    def as_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "old": self.old, "new": self.new}


@dataclass(frozen=True, slots=True)
class PerturbResult:
    """A perturbed text and its provenance.

    ``params`` holds the effective parameters plus JSON-serializable details of what was done
    (``rule``, ``seed``, ``k``, chosen indices, ...). ``edits`` are non-overlapping, sorted, in
    coordinates of the original text.
    """

    text: str
    params: dict[str, Any]
    edits: tuple[Edit, ...] = field(default=())

    def provenance(self) -> dict[str, Any]:
        """``params`` plus the edits, JSON-serializable (for storage)."""
        return {**self.params, "edits": [e.as_dict() for e in self.edits]}


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits given in original coordinates."""
    out: list[str] = []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start < pos:
            raise ValueError(f"overlapping edits at {e.start}")
        if text[e.start : e.end] != e.old:
            raise ValueError(f"edit at {e.start}:{e.end} does not match the text")
        out.append(text[pos : e.start])
        out.append(e.new)
        pos = e.end
    out.append(text[pos:])
    return "".join(out)


def make_rng(seed: int) -> random.Random:
    """A private generator; ``seed`` must be an int (bools refused, they are a typo)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    return random.Random(seed)


def require_count(rule: str, name: str, value: object, *, minimum: int = 1) -> int:
    """Validate an integer count parameter (a programming error, hence ValueError/TypeError)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{rule}: {name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{rule}: {name} must be >= {minimum}, got {value}")
    return value


class Perturber(Protocol):
    def __call__(self, text: str, *, seed: int, **params: Any) -> PerturbResult: ...


@dataclass(frozen=True)
class Rule:
    """Registry entry of one rule-based perturbation kind.

    ``params`` are the declared keyword parameters (all required unless listed in
    ``optional``); ``level`` is DHP's character / word / sentence; ``graded`` rules have minor and
    major presets (see :mod:`.presets`); ``aspect`` is the Hu et al. target aspect where the kind
    comes from that paper; ``needs`` names parameters the caller must supply from outside the
    text itself (the pool of other texts, a wrong ending).
    """

    name: str
    func: Callable[..., PerturbResult]
    params: tuple[str, ...]
    level: str
    graded: bool
    description: str
    source: str
    aspect: str | None = None
    optional: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()

    def __call__(self, text: str, *, seed: int, **params: Any) -> PerturbResult:
        unknown = set(params) - set(self.params)
        if unknown:
            raise TypeError(f"{self.name}: unknown parameter(s) {sorted(unknown)}")
        missing = [p for p in self.params if p not in params and p not in self.optional]
        if missing:
            raise TypeError(f"{self.name}: missing parameter(s) {missing}")
        return self.func(text, seed=seed, **params)

    def apply(self, text: str, *, seed: int, params: Mapping[str, Any]) -> PerturbResult:
        return self(text, seed=seed, **dict(params))
