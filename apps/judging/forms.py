"""Forms of the judging pages; the services do the checking that spans fields."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.accounts.choices import show_owners
from apps.annotation.models import Study
from apps.annotation.selectors import studies_for_user
from apps.catalog.models import Criterion, Metric, PerturbationKind
from apps.corpus.models import Dataset
from apps.corpus.selectors import datasets_for_user
from apps.judging.models import Judge, Strategy
from apps.judging.selectors import judges_for_user, strategies_for_user
from apps.judging.services import STRATEGY_FIELDS


class JudgeRunForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=Judge.objects.none())
    strategy = forms.ModelChoiceField(
        queryset=Strategy.objects.none(),
        required=False,
        help_text="LLM judges only; the run pins this version.",
    )
    study = forms.ModelChoiceField(queryset=Study.objects.none(), required=False)
    dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.none(),
        required=False,
        help_text="A dataset, or one of the study's (empty: all of the study's).",
    )
    criteria = forms.ModelMultipleChoiceField(
        queryset=Criterion.objects.select_related("aspect"),
        required=False,
        help_text="LLM judges: criteria to judge on (empty: the study's criteria).",
    )
    metrics = forms.ModelMultipleChoiceField(
        queryset=Metric.objects.select_related("task"),
        required=False,
        help_text="LLM judges: task metrics to judge on.",
    )
    kinds = forms.ModelMultipleChoiceField(
        queryset=PerturbationKind.objects.all(),
        required=False,
        help_text="Perturbation kinds (empty: all, or the study's).",
    )
    include_originals = forms.BooleanField(required=False, initial=True)
    include_perturbations = forms.BooleanField(required=False, initial=True)
    vetted_only = forms.ChoiceField(
        label="Perturbations",
        choices=[
            (
                "true",
                "Vetted only: valid or score-invariant in the study, or of a dataset "
                "validated by its publisher",
            ),
            ("false", "All selected perturbations, vetted or not"),
        ],
        initial="true",
        required=False,
        widget=forms.RadioSelect,
        help_text="Judge analyses use vetted perturbations; mark a benchmark's "
        "dataset as validated by its publisher to judge it without re-vetting.",
    )
    label = forms.CharField(max_length=200, required=False)

    def clean_vetted_only(self) -> bool:
        """Vetted only unless "all" is chosen (a form without the field means vetted)."""
        return self.cleaned_data.get("vetted_only") != "false"

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields: Any = self.fields
        fields["judge"].queryset = judges_for_user(user)
        show_owners(fields["judge"], user, "created_by")
        fields["strategy"].queryset = strategies_for_user(user).order_by("family", "slug")
        fields["study"].queryset = studies_for_user(user)
        fields["dataset"].queryset = datasets_for_user(user)


class StrategyForm(forms.ModelForm):
    """A strategy's content; saving makes a new version (see services.strategy_revise)."""

    class Meta:
        model = Strategy
        fields = ["slug", *STRATEGY_FIELDS, "note"]
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

    def validate_unique(self) -> None:  # versions are numbered by the service
        pass
