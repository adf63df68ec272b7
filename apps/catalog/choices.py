"""Long lists of kinds and criteria as grouped checkboxes (by family and method, by aspect)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.catalog.models import Criterion, PerturbationKind


class GroupedCheckboxes(forms.CheckboxSelectMultiple):
    """A model multiple-choice field's checkboxes under group headings, laid out in columns
    (static/discern.css). Groups come from the objects themselves, at render time, so the
    field's queryset (which validation uses) stays the one source of the options."""

    def __init__(
        self,
        *,
        group_of: Callable[[Any], str],
        label_of: Callable[[Any], str] = str,
        attrs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(attrs)
        self.group_of = group_of
        self.label_of = label_of

    def optgroups(self, name: str, value: Any, attrs: Any = None) -> Any:
        grouped: dict[str, list[tuple[Any, str]]] = {}
        for option_value, _ in self.choices:
            obj = getattr(option_value, "instance", None)
            if obj is not None:
                grouped.setdefault(self.group_of(obj), []).append(
                    (option_value, self.label_of(obj))
                )
        flat, self.choices = self.choices, list(grouped.items())
        try:
            return super().optgroups(name, value, attrs)
        finally:
            self.choices = flat

    def render(self, name: str, value: Any, attrs: Any = None, renderer: Any = None) -> SafeString:
        inner = super().render(name, value, attrs, renderer)
        return format_html('<div class="check-groups">{}</div>', inner)


def kind_group(kind: PerturbationKind) -> str:
    """E.g. "FBI · Rule-based"."""
    return f"{kind.get_family_display()} · {kind.get_method_display()}"


def criterion_label(criterion: Criterion) -> str:
    return f"{criterion.key} ({criterion.get_description_type_display()})"


def kind_checkboxes() -> GroupedCheckboxes:
    return GroupedCheckboxes(group_of=kind_group)


def criterion_checkboxes() -> GroupedCheckboxes:
    """Criteria under their aspect (give the field a queryset with select_related("aspect"))."""
    return GroupedCheckboxes(group_of=lambda c: c.aspect.name, label_of=criterion_label)
