"""Long lists of kinds and criteria as grouped checkboxes (by family and method, by aspect)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django import forms
from django.utils.html import format_html
from django.utils.safestring import SafeString

from apps.catalog.models import Criterion, PerturbationKind

Grouped = list[tuple[str, list[tuple[int, str]]]]


class GroupedCheckboxes(forms.CheckboxSelectMultiple):
    """Checkboxes under group headings, laid out in columns (static/discern.css)."""

    def render(self, name: str, value: Any, attrs: Any = None, renderer: Any = None) -> SafeString:
        inner = super().render(name, value, attrs, renderer)
        return format_html('<div class="check-groups">{}</div>', inner)


def _grouped(objects: Iterable[Any], group_of: Callable[[Any], str]) -> Grouped:
    groups: dict[str, list[tuple[int, str]]] = {}
    for obj in objects:
        groups.setdefault(group_of(obj), []).append((obj.pk, str(obj)))
    return list(groups.items())


def kind_choices(kinds: Iterable[PerturbationKind]) -> Grouped:
    """Kinds under "family · method" headings (e.g. "FBI · Rule-based")."""
    ordered = sorted(kinds, key=lambda k: (k.family, k.method, k.name))
    return _grouped(ordered, lambda k: f"{k.get_family_display()} · {k.get_method_display()}")


def criterion_choices(criteria: Iterable[Criterion]) -> Grouped:
    """Criteria under their aspect's name; each shows its description type."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for criterion in criteria:
        label = f"{criterion.key} ({criterion.get_description_type_display()})"
        groups.setdefault(criterion.aspect.name, []).append((criterion.pk, label))
    return list(groups.items())


def grouped_field(field: forms.Field, choices: Grouped) -> None:
    """Show a ModelMultipleChoiceField's options grouped; validation still uses its queryset."""
    field.widget = GroupedCheckboxes(choices=choices)
