"""docs/figures.md, written from the definitions (``manage.py figures_doc``); a test keeps the
file equal to what this writes, so the docs say what the pages say."""

from __future__ import annotations

from apps.analysis.definitions.base import Definition, registry, section_of

HEAD = """# What the figures mean

Every figure Discern shows, on the report card, judges side by side, the study reports and
their downloads, has one definition: its name (the label the pages use), which way is better,
how it is computed, its unit, what its N counts and how its 95% interval is made. Figures with
a verdict also have a threshold, which a study may change on its thresholds page
(docs/cards.md, "The verdict"). Each download ends with the same definitions, in a section
"What the figures mean".

This page is written from the definitions in `apps/analysis/definitions/`
(`manage.py figures_doc` writes it again; a test fails when it is out of date).
"""


def _entry(d: Definition) -> str:
    lines = [
        f"### {d.name}",
        "",
        f"`{d.key}` · {d.direction} · unit: {d.unit}",
        "",
        d.formula,
        "",
        f"- **N counts:** {d.population}",
        f"- **Interval:** {d.interval}",
    ]
    if d.threshold is not None:
        lines.append(
            f"- **Verdict:** {d.good} / {d.bad}; default threshold {d.threshold:g}"
            + (f"; a perfect judge: {d.perfect:g} on every unit" if d.perfect is not None else "")
        )
    return "\n".join(lines) + "\n"


def figures_markdown() -> str:
    by_module: dict[str, list[Definition]] = {}
    for d in registry().values():
        by_module.setdefault(section_of(d.key), []).append(d)
    parts = [HEAD]
    first = section_of("detection_failure")  # a judge's figures first, then each report's
    for section, defs in sorted(by_module.items(), key=lambda kv: kv[0] != first):
        parts.append(f"\n## {section}\n")
        parts.extend("\n" + _entry(d) for d in defs)
    return "".join(parts)
