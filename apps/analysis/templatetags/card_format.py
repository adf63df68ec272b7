"""Template filters for the report card's verdict and its worst-kind examples
(templates/analysis/_card_body.html)."""

from __future__ import annotations

import re
from typing import Any

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from apps.analysis.definitions import DEFINITIONS
from apps.analysis.formatting import counted_text, format_value, interval_text

register = template.Library()
_CHANGE = re.compile(r"\[-(.*?)-\]|\{\+(.*?)\+\}", re.DOTALL)


def _row(table: Any, row: list[Any]) -> dict[str, Any]:
    return dict(zip(table.columns, row, strict=False))


def verdict_class(key: str, word: str) -> str:
    """good, bad, unstable or none: the colour of a verdict word."""
    definition = DEFINITIONS.get(key)
    side = definition.side(word) if definition is not None else ""
    return side or ("unstable" if word == "unstable" else "none")


@register.filter
def verdict_lines(table: Any) -> list[dict[str, Any]]:
    """`{% for line in table|verdict_lines %}`: each verdict line ready to show."""
    out = []
    for row in table.rows:
        cell = _row(table, row)
        out.append(
            {
                "key": cell["key"],
                "figure": cell["figure"],
                "scope": cell["scope"],
                "verdict": cell["verdict"],
                "css": verdict_class(str(cell["key"]), str(cell["verdict"])),
                "value": interval_text(cell["value"], cell["ci_low"], cell["ci_high"]),
                "n": counted_text(cell.get("n"), cell.get("texts")),
                "threshold": format_value(cell["threshold"]),
                "direction": DEFINITIONS[str(cell["key"])].direction,
                "why": cell["why"],
                "evidence": cell["evidence"],
            }
        )
    return out


@register.filter
def example_cards(table: Any) -> list[dict[str, Any]]:
    """`{% for ex in table|example_cards %}`: each worst kind's example ready to show."""
    out = []
    for row in table.rows:
        cell = _row(table, row)
        cell["rate"] = interval_text(cell["failure_rate"], cell["ci_low"], cell["ci_high"])
        out.append(cell)
    return out


@register.filter
def marked_change(text: str) -> SafeString:
    """`[-removed-]{+added+}` as <del>removed</del><ins>added</ins>, the rest escaped."""
    parts: list[str] = []
    last = 0
    for match in _CHANGE.finditer(text or ""):
        parts.append(escape(text[last : match.start()]))
        removed, added = match.groups()
        parts.append(f"<del>{escape(removed)}</del>" if removed is not None else "")
        parts.append(f"<ins>{escape(added)}</ins>" if added is not None else "")
        last = match.end()
    parts.append(escape((text or "")[last:]))
    return mark_safe("".join(parts))  # every part is escaped above
