"""Template filters for showing numbers and report tables (see apps/analysis/formatting.py)."""

from typing import Any

from django import template

from apps.analysis.formatting import column_label, format_value, table_display
from apps.analysis.glossary import glossed as _glossed

register = template.Library()


@register.filter
def number(value: Any) -> str:
    """`{{ x|number }}`: three significant figures, integers as they are, "—" when missing."""
    return format_value(value)


@register.filter
def pvalue(value: Any) -> str:
    """`{{ p|pvalue }}`: scientific notation, 1.23e-05."""
    return format_value(value, p_value=True)


@register.filter
def words(name: str) -> str:
    """`{{ column|words }}`: a column's name in words."""
    return column_label(name)


@register.filter
def report_table(table: Any) -> dict[str, Any]:
    """`{% with shown=table|report_table %}`: labelled headers and formatted cells."""
    return table_display(table)


#: Report columns whose values are links to the evidence (a run's calls, a text, a search).
LINK_COLUMNS = frozenset({"evidence", "calls", "text_link"})


@register.filter
def linked_rows(shown: dict[str, Any]) -> list[list[dict[str, str]]]:
    """`{% for row in shown|linked_rows %}`: each cell as {"text", "href"}; the evidence
    columns' paths become links, every other cell is text."""
    out = []
    for row in shown["rows"]:
        cells = []
        for column, value in zip(shown["columns"], row, strict=False):
            link = column in LINK_COLUMNS and str(value).startswith("/")
            cells.append({"text": "open" if link else value, "href": value if link else ""})
        out.append(cells)
    return out


@register.filter
def glossed(text: Any, base: str = "") -> str:
    """`{{ label|glossed }}`: the text with each of the papers' terms linked to its gloss;
    `{{ label|glossed:base }}` with absolute links (a downloaded file)."""
    return _glossed(str(text), base or "")
