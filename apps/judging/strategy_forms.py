"""The strategy page's form: its fields in plain words and in groups, its few-shot examples as
rows (apps.judging.example_forms); saving makes a new version (services.strategy_revise)."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.judging.example_forms import example_formset
from apps.judging.models import Strategy
from apps.judging.services import STRATEGY_FIELDS

#: The strategy form's groups: title, the parser they apply to ("" any), their fields.
STRATEGY_GROUPS = (
    ("What it is", "", ("slug", "name", "family", "technique", "description", "source")),
    ("The prompt", "", ("system_prompt", "prompt_template")),
    (
        "Reading the reply",
        "",
        ("parser", "grade_pattern", "scale_min", "scale_max", "format_retry", "format_reminder"),
    ),
    ("Sampling", "", ("samples", "temperature", "max_tokens", "use_logprobs", "top_logprobs")),
    ("Pairs", "pairwise", ("both_orders",)),
)
STRATEGY_LABELS = {
    "slug": "Short name (in addresses and exports)",
    "technique": "Prompting technique",
    "source": "Source (paper)",
    "system_prompt": "System prompt",
    "prompt_template": "Prompt",
    "parser": "How the reply is read",
    "grade_pattern": "Grade pattern (letter grades)",
    "scale_min": "Lowest score",
    "scale_max": "Highest score",
    "samples": "Samples per text",
    "temperature": "Temperature",
    "max_tokens": "Longest reply (tokens)",
    "both_orders": "Judge each pair in both orders",
    "use_logprobs": "Score from the token probabilities (G-Eval)",
    "top_logprobs": "Likeliest tokens read per position",
    "format_retry": "Ask again when a reply cannot be read",
    "format_reminder": "Reminder of the format (for that second ask)",
    "note": "What this version changes",
}
STRATEGY_HELP = {
    "slug": "Lowercase letters, digits and hyphens; versions of a strategy share it.",
    "name": "The name shown in lists and reports.",
    "family": "The method it follows, for grouping in reports.",
    "description": "What it asks, in a sentence or two.",
    "system_prompt": "Sent before the prompt as the model's instructions (optional).",
    "prompt_template": "The text sent for each call; the placeholders above are filled in.",
    "parser": "Where the score (or the verdict) is found in the reply.",
    "scale_min": "The lowest score the prompt asks for.",
    "scale_max": "The highest score the prompt asks for.",
    "samples": "Calls per text and criterion; analyses average their scores.",
    "temperature": "Empty: the judge's own setting.",
    "max_tokens": "A longer reply is cut off here.",
    "top_logprobs": "With token probabilities: how many alternatives the server returns (1-20).",
}


class StrategyForm(forms.ModelForm):
    """A strategy's content; saving makes a new version (see services.strategy_revise). Its
    few-shot examples are rows of ``self.examples`` (a formset), stored as the same JSON."""

    class Meta:
        model = Strategy
        fields = ["slug", *(f for f in STRATEGY_FIELDS if f != "examples"), "note"]
        widgets = {
            "prompt_template": forms.Textarea(attrs={"rows": 18, "cols": 90}),
            "system_prompt": forms.Textarea(attrs={"rows": 3, "cols": 90}),
            "description": forms.Textarea(attrs={"rows": 2, "cols": 90}),
            "format_reminder": forms.Textarea(attrs={"rows": 2, "cols": 90}),
            "note": forms.Textarea(attrs={"rows": 2, "cols": 90}),
        }

    def __init__(self, *args: Any, revising: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if revising:
            del self.fields["slug"]
        for name, label in STRATEGY_LABELS.items():
            if name in self.fields:
                self.fields[name].label = label
        for name, text in STRATEGY_HELP.items():
            if name in self.fields:
                self.fields[name].help_text = text
        self.examples = example_formset(self.data if self.is_bound else None, self._stored())

    def _stored(self) -> list[Any]:
        stored = self.instance.examples if self.instance.pk else []
        return stored if isinstance(stored, list) else []

    def clean(self) -> dict[str, Any]:
        """The examples from their rows; a bad row is named, and nothing is saved."""
        data = super().clean() or {}
        if not self.examples.is_bound:
            data["examples"] = self._stored()
        elif self.examples.is_valid():
            data["examples"] = self.examples.examples()
        else:
            for problem in self.examples.problems():
                self.add_error(None, problem)
        return data

    def groups(self) -> list[tuple[str, str, list[forms.BoundField]]]:
        """The fields by group, for the page: (title, parser it applies to, fields)."""
        return [
            (title, kind, [self[n] for n in names if n in self.fields])
            for title, kind, names in STRATEGY_GROUPS
        ]

    def validate_unique(self) -> None:  # versions are numbered by the service
        pass
