"""The "New audit" form (docs/audit.md): per judge, the strategy to audit it with (or none),
the small adversarial search's generator, gold judge and budget. The service checks the rest."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.accounts.choices import owned_name, show_owners
from apps.endpoints.models import Endpoint
from apps.endpoints.selectors import endpoints_for_user
from apps.judging.models import Judge, JudgeKind, Strategy
from apps.judging.selectors import judges_for_user, strategies_for_user

METRIC_CHOICE = "metric"


def single_score_strategies(user: Any) -> list[Strategy]:
    """Strategies that score one text (what a judge is audited with): no pairwise prompt, no
    misleading cue (both are parts of the battery)."""
    return [
        s
        for s in strategies_for_user(user).order_by("family", "name")
        if not s.pairwise and "{{expert_rating}}" not in s.prompt_template
    ]


class AuditForm(forms.Form):
    label = forms.CharField(
        max_length=200, required=False, help_text="A name for the audit in lists (optional)."
    )
    search_budget = forms.IntegerField(
        min_value=2,
        max_value=1000,
        initial=20,
        label="Calls to the audited judge per item",
        help_text="The small adversarial search asks the audited judge at most this many "
        "times per item.",
    )
    generator = forms.ModelChoiceField(
        queryset=Endpoint.objects.none(),
        required=False,
        label="Generator",
        help_text="The model endpoint that writes the search's texts; none: the search is skipped.",
    )
    gold_judge = forms.ModelChoiceField(
        queryset=Judge.objects.none(),
        required=False,
        label="Gold judge",
        help_text="The LLM judge whose scores the audited judge is compared with; none: the "
        "search is skipped.",
    )

    vetted_only = forms.BooleanField(
        required=False,
        label="Only perturbations vetted in the study",
        help_text="Off: every perturbation of the study's kinds, vetted or not.",
    )

    def __init__(self, *args: Any, user: Any, study: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if study is None:
            del self.fields["vetted_only"]  # a dataset's perturbations are not vetted
        else:
            self.fields["vetted_only"].initial = study.vetted_only_default
        judges = list(
            judges_for_user(user).select_related("endpoint", "created_by").order_by("kind", "name")
        )
        strategies = [(str(s.pk), s.name) for s in single_score_strategies(user)]
        self.judges = {j.pk: j for j in judges}
        self.judge_fields = []
        for judge in judges:
            name = f"judge_{judge.pk}"
            if judge.kind == JudgeKind.METRIC:
                choices = [("", "not audited"), (METRIC_CHOICE, "audit (no strategy)")]
            else:
                choices = [("", "not audited"), *strategies]
            label = owned_name(judge, judge.created_by, user)
            self.fields[name] = forms.ChoiceField(choices=choices, required=False, label=label)
            self.judge_fields.append(name)
        self.fields["generator"].queryset = endpoints_for_user(user)  # type: ignore[attr-defined]
        gold = judges_for_user(user).filter(kind=JudgeKind.LLM)
        self.fields["gold_judge"].queryset = gold  # type: ignore[attr-defined]
        show_owners(self.fields["generator"], user, "owner")
        show_owners(self.fields["gold_judge"], user, "created_by")
        self.strategies = {s.pk: s for s in single_score_strategies(user)}

    def judge_rows(self) -> list[Any]:
        return [self[name] for name in self.judge_fields]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.subjects():
            raise forms.ValidationError("Choose at least one judge to audit.")
        return data

    def subjects(self) -> list[tuple[Judge, Strategy | None]]:
        chosen = []
        for name in self.judge_fields:
            value = self.cleaned_data.get(name)
            if not value:
                continue
            judge = self.judges[int(name.removeprefix("judge_"))]
            strategy = None if value == METRIC_CHOICE else self.strategies[int(value)]
            chosen.append((judge, strategy))
        return chosen
