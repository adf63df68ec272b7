"""Long lists of kinds and criteria as grouped checkboxes that read as words: each option its
name and a muted line saying what it is, each group (family and method, aspect) a collapsible
`<details>`, open when something in it is chosen or the whole list is short."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django import forms
from django.forms.utils import flatatt
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.text import Truncator

from apps.catalog.models import Criterion, Metric, PerturbationKind

#: A list with at most this many options shows its groups open (so do groups with a choice in
#: them); a longer one shows only their headings.
OPEN_UP_TO = 12
#: How much of a kind's or criterion's text a checkbox shows (two lines in a column).
TEXT_SHOWN = 120


def _nothing(obj: Any) -> str:
    return ""


class GroupedCheckboxes(forms.CheckboxSelectMultiple):
    """A model multiple-choice field's checkboxes under group headings. Groups come from the
    objects themselves, at render time, so the field's queryset (which validation uses) stays
    the one source of the options.

    `label_of` names an option (its accessible name), `detail_of` adds a muted line (its
    accessible description), `note_of` a line under the group's heading (from its first
    option), `kind_of` the option's kind (`data-kind`: static/applies_to.js shows the fields
    that apply to the kinds ticked). static/checks.js adds a "choose all" button to each
    group. `open_chosen`: groups with a choice start open (else only those of a short list
    do); headings count choices.
    """

    open_chosen = True

    class Media:
        js = ("checks.js",)

    def __init__(
        self,
        *,
        group_of: Callable[[Any], str],
        label_of: Callable[[Any], str] = str,
        detail_of: Callable[[Any], str] = _nothing,
        note_of: Callable[[Any], str] = _nothing,
        kind_of: Callable[[Any], str] = _nothing,
        attrs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(attrs)
        self.group_of = group_of
        self.label_of = label_of
        self.detail_of = detail_of
        self.note_of = note_of
        self.kind_of = kind_of

    def optgroups(self, name: str, value: Any, attrs: Any = None) -> Any:
        # Each option's label is its object: `render` words it.
        grouped: dict[str, list[tuple[Any, Any]]] = {}
        for option_value, _ in self.choices:
            obj = getattr(option_value, "instance", None)
            if obj is not None:
                grouped.setdefault(self.group_of(obj), []).append((option_value, obj))
        flat, self.choices = self.choices, list(grouped.items())
        try:
            return super().optgroups(name, value, attrs)
        finally:
            self.choices = flat

    def render(self, name: str, value: Any, attrs: Any = None, renderer: Any = None) -> SafeString:
        optgroups = self.get_context(name, value, attrs)["widget"]["optgroups"]
        short = sum(len(options) for _, options, _ in optgroups) <= OPEN_UP_TO
        groups = format_html_join(
            "", "{}", ((self._group(title, options, short),) for title, options, _ in optgroups)
        )
        return format_html('<div class="check-groups" data-check-groups>{}</div>', groups)

    def _group(self, title: str, options: list[dict[str, Any]], short: bool) -> SafeString:
        chosen = sum(1 for option in options if option["selected"])
        count = f"{chosen} of {len(options)} chosen" if chosen else f"{len(options)}"
        note = self.note_of(options[0]["label"])
        return format_html(
            '<details class="check-group"{}><summary>{} <small class="muted">{}</small>'
            '</summary>{}<div class="check-list">{}</div></details>',
            " open" if (chosen and self.open_chosen) or short else "",
            title,
            count,
            format_html('<p class="muted group-note">{}</p>', note) if note else "",
            format_html_join("", "{}", ((self._option(option),) for option in options)),
        )

    def _option(self, option: dict[str, Any]) -> SafeString:
        obj, attrs = option["label"], dict(option["attrs"])
        ident = attrs.get("id", "")
        detail = self.detail_of(obj)
        attrs["aria-labelledby"] = f"{ident}-name"
        if kind := self.kind_of(obj):
            attrs["data-kind"] = kind  # static/applies_to.js shows the fields for it
        if detail:
            attrs["aria-describedby"] = f"{ident}-detail"
        return format_html(
            '<label class="check"><input type="checkbox" name="{}" value="{}"{}>'
            '<span><span id="{}-name">{}</span>{}</span></label>',
            option["name"],
            option["value"],
            flatatt(attrs),
            ident,
            self.label_of(obj),
            format_html('<small class="muted" id="{}-detail">{}</small>', ident, detail)
            if detail
            else "",
        )


#: A full stop that ends a sentence: followed by a capital (not "e.g. 'the").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def first_sentence(text: str) -> str:
    """The text up to its first full stop (all of it when it has none)."""
    return _SENTENCE_END.split(" ".join(text.split()), maxsplit=1)[0]


def kind_group(kind: PerturbationKind) -> str:
    """E.g. "FBI · Rule-based"."""
    return f"{kind.get_family_display()} · {kind.get_method_display()}"


def kind_detail(kind: PerturbationKind) -> str:
    return Truncator(first_sentence(kind.description)).chars(TEXT_SHOWN)


def criterion_label(criterion: Criterion) -> str:
    """E.g. "Coherence — detailed" (give it a criterion with its aspect)."""
    return f"{criterion.aspect.name} — {criterion.get_description_type_display().lower()}"


def criterion_detail(criterion: Criterion) -> str:
    """The criterion's wording, with "text" for its placeholder, shortened."""
    return Truncator(" ".join(criterion.render("text").split())).chars(TEXT_SHOWN)


def aspect_note(criterion: Criterion) -> str:
    """The first sentence of the aspect's definition, shortened (a long one would crowd the
    heading)."""
    definition = " ".join(criterion.aspect.definition.split())
    return Truncator(first_sentence(definition)).chars(TEXT_SHOWN)


def kind_checkboxes() -> GroupedCheckboxes:
    return GroupedCheckboxes(
        group_of=kind_group, detail_of=kind_detail, kind_of=lambda kind: kind.method
    )


def criterion_checkboxes(
    label_of: Callable[[Criterion], str] = criterion_label,
) -> GroupedCheckboxes:
    """Criteria under their aspect (give the field a queryset with select_related("aspect"))."""
    return GroupedCheckboxes(
        group_of=lambda c: c.aspect.name,
        label_of=label_of,
        detail_of=criterion_detail,
        note_of=aspect_note,
    )


def metric_label(metric: Metric) -> str:
    return metric.name or metric.slug


def metric_checkboxes() -> GroupedCheckboxes:
    """Task metrics under their task (give the field a queryset with select_related("task"))."""
    return GroupedCheckboxes(group_of=lambda m: m.task.name, label_of=metric_label)
