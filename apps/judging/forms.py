"""Forms of the judging pages; the services do the checking that spans fields."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.accounts.choices import show_owners
from apps.accounts.models import Role, User
from apps.annotation.models import Study
from apps.annotation.selectors import studies_for_user
from apps.catalog.models import Criterion, Metric, PerturbationKind
from apps.corpus.models import Dataset
from apps.corpus.selectors import datasets_for_user
from apps.endpoints.models import ENDPOINT_SETTINGS, Endpoint
from apps.judging.models import Judge, Strategy
from apps.judging.selectors import judges_for_user, strategies_for_user
from apps.judging.services import STRATEGY_FIELDS
from apps.judging.services.connection_test import TEST_STRATEGY


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


class JudgeForm(forms.ModelForm):
    """A judge and, for an LLM judge, its endpoint's settings (saved on the judge's own endpoint
    by ``services.judge_save``; a metric judge ignores them)."""

    class Meta:
        model = Judge
        fields = [
            "name",
            "kind",
            "metric",
            "price_per_1k_prompt_tokens",
            "price_per_1k_completion_tokens",
            "shared_with",
        ]

    test_strategy = forms.ModelChoiceField(
        queryset=Strategy.objects.none(),
        required=False,
        label="Test with strategy",
        help_text="Test connection makes one call with this strategy's prompt on a sample "
        "summary, and shows the reply and how it is read; nothing is saved.",
    )

    def __init__(
        self, *args: Any, granted: list[str] | None = None, user: Any = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        fields: Any = self.fields
        strategies = strategies_for_user(user).order_by("family", "slug") if user else None
        fields["test_strategy"].queryset = strategies or Strategy.objects.none()
        if strategies is not None:
            fields["test_strategy"].initial = strategies.filter(slug=TEST_STRATEGY).first()
        fields["shared_with"].queryset = User.objects.filter(role=Role.RESEARCHER).order_by(
            "username"
        )
        fields["shared_with"].required = False
        endpoint = self.instance.endpoint if self.instance.pk else None
        settings = forms.fields_for_model(Endpoint, fields=ENDPOINT_SETTINGS)
        for name, field in settings.items():
            field.required = False  # checked for LLM judges by the service
            if endpoint is not None:
                field.initial = getattr(endpoint, name)
        granted = granted or []
        settings["api_key_env"].help_text = (
            f"Keys granted to you: {', '.join(granted)}. "
            if granted
            else "No key is granted to you yet: an administrator grants them. "
        ) + "Empty: no key (a local server)."
        order = ["name", "kind", *ENDPOINT_SETTINGS, *list(self.fields)[2:]]
        self.fields = {name: (settings.get(name) or fields[name]) for name in order}

    def drop_judge_errors(self) -> None:
        """Keep only the endpoint's errors (a connection test needs no name or prices)."""
        for name in list(self.errors):
            if name not in (*ENDPOINT_SETTINGS, "test_strategy"):
                del self.errors[name]

    def endpoint_settings(self) -> dict[str, Any]:
        """The endpoint's settings as entered, with the model's defaults for those left empty."""
        data = self.cleaned_data
        defaults = {f.name: f.get_default() for f in Endpoint._meta.concrete_fields}
        return {
            name: data[name] if data.get(name) not in (None, "") else defaults[name]
            for name in ENDPOINT_SETTINGS
        }


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
