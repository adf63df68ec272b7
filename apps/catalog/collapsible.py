"""Long lists of checkboxes whose groups fold away (``<details>``): criteria by aspect, kinds by
family, task metrics by task, on the set-up pages."""

from __future__ import annotations

from typing import Any

from django.forms.renderers import get_default_renderer
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from apps.catalog.choices import GroupedCheckboxes
from apps.catalog.models import Metric

#: A list this long or shorter shows its groups open.
SHORT_LIST = 12


class CollapsibleGroups(GroupedCheckboxes):
    """Grouped checkboxes, each group a ``<details>`` (open when short or when one of its
    boxes is ticked), so a long list of criteria or kinds stays a page high."""

    def render(self, name: str, value: Any, attrs: Any = None, renderer: Any = None) -> SafeString:
        context = self.get_context(name, value, attrs)
        groups = context["widget"]["optgroups"]
        total = sum(len(options) for _, options, _ in groups)
        inner = format_html_join(
            "", "{}", ((self._group(g, options, total, renderer),) for g, options, _ in groups)
        )
        return format_html('<div class="check-groups collapsible">{}</div>', inner)

    def _group(self, title: str, options: list[dict[str, Any]], total: int, renderer: Any) -> str:
        chosen = sum(1 for option in options if option["selected"])
        boxes = format_html_join(
            "",
            "<div>{}</div>",
            ((self._option(o, renderer),) for o in options),
        )
        count = f"{chosen} of {len(options)} chosen" if chosen else f"{len(options)}"
        return format_html(
            '<details{}><summary>{} <span class="muted">({})</span></summary><div>{}</div>'
            "</details>",
            " open" if chosen or total <= SHORT_LIST else "",
            title,
            count,
            boxes,
        )

    @staticmethod
    def _option(option: dict[str, Any], renderer: Any) -> SafeString:
        """One checkbox and its words, by Django's own option template."""
        html = (renderer or get_default_renderer()).render(
            option["template_name"], {"widget": option}
        )
        return mark_safe(html)  # the renderer escapes what it fills in


def collapsible(widget: GroupedCheckboxes) -> CollapsibleGroups:
    """The same groups and labels (``kind_checkboxes()``, ``criterion_checkboxes()``), each
    group collapsible."""
    return CollapsibleGroups(group_of=widget.group_of, label_of=widget.label_of)


def metric_label(metric: Metric) -> str:
    return metric.name or metric.slug


def metric_checkboxes() -> CollapsibleGroups:
    """Task metrics under their task (give the field a queryset with select_related("task"))."""
    return CollapsibleGroups(group_of=lambda m: m.task.name, label_of=metric_label)
