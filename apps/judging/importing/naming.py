"""Names for imported judges: ``prefix: what it is``, distinct within one file."""

from __future__ import annotations

from apps.judging.importing.mapping import ImportedJudge

NAME_LENGTH = 100


def named(judge: ImportedJudge, name: str) -> ImportedJudge:
    """The judge and its strategy named ``name`` (no "/": owner/name is how a colleague's
    judge reads)."""
    judge.name = name.replace("/", "-").strip()[:NAME_LENGTH]
    judge.strategy["name"] = judge.name
    return judge


def name_judges(judges: list[ImportedJudge], prefix: str) -> list[ImportedJudge]:
    """``prefix: name`` for each, a number added to repeats."""
    seen: dict[str, int] = {}
    for judge in judges:
        base = f"{prefix}: {judge.name}"[: NAME_LENGTH - 4].strip()
        seen[base] = seen.get(base, 0) + 1
        named(judge, base if seen[base] == 1 else f"{base} {seen[base]}")
    return judges


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name (2)``, ``name (3)``... the first not in ``taken``."""
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        candidate = f"{name[: NAME_LENGTH - 6]} ({number})"
    return candidate
