"""A strategy's few-shot examples as rows of a form (source, text, score, why), stored as the
same JSON list the API takes: ``[{"source", "text", "score", "why"}]``."""

from __future__ import annotations

from typing import Any, cast

from django import forms

#: Blank rows offered under the examples already written.
BLANK_ROWS = 2
PREFIX = "examples"


class ExampleForm(forms.Form):
    source = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="The source the text was written from (optional).",
    )
    text = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}), help_text="The rated text."
    )
    score = forms.FloatField(required=False, help_text="The score it deserves.")
    why = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Why",
        help_text="The reason for that score (optional).",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if any(data.get(name) not in (None, "") for name in self.fields):
            if not data.get("text"):
                self.add_error("text", "an example needs its text")
            if data.get("score") is None and "score" not in self.errors:
                self.add_error("score", "an example needs its score")
        return data

    def example(self) -> dict[str, Any] | None:
        """The row as stored (None: a blank row)."""
        data = self.cleaned_data
        if not data.get("text"):
            return None
        score = data["score"]
        row = {"source": data.get("source", ""), "text": data["text"]}
        row["score"] = int(score) if float(score).is_integer() else score
        return row | {"why": data.get("why", "")}


class BaseExampleFormSet(forms.BaseFormSet):
    def examples(self) -> list[dict[str, Any]]:
        """The filled rows, in order, as the strategy's JSON list."""
        return [row for form in self.forms if (row := form.example()) is not None]

    def problems(self) -> list[str]:
        """Each bad row's errors, naming the row and the field."""
        found = []
        for number, form in enumerate(self.forms, start=1):
            for name, errors in form.errors.items():
                label = form.fields[name].label or name.capitalize()
                found += [f"Example {number}, {label.lower()}: {e}" for e in errors]
        return found


ExampleFormSet = forms.formset_factory(ExampleForm, formset=BaseExampleFormSet, extra=BLANK_ROWS)


def example_formset(data: Any, examples: list[dict[str, Any]]) -> BaseExampleFormSet:
    """The rows of ``examples``, bound to ``data`` when it holds the rows (a post of the page);
    a post without them (an older client) leaves the examples as they are."""
    bound = data is not None and f"{PREFIX}-TOTAL_FORMS" in data
    initial = [
        {name: example.get(name, "") for name in ExampleForm.base_fields}
        for example in examples
        if isinstance(example, dict)
    ]
    formset = ExampleFormSet(data if bound else None, prefix=PREFIX, initial=initial)
    return cast(BaseExampleFormSet, formset)
