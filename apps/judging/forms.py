"""The "New judge run" form; the services do the checking that spans fields."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.accounts.choices import show_owners
from apps.annotation.models import Study
from apps.annotation.selectors import studies_for_user
from apps.catalog.choices import criterion_checkboxes, kind_checkboxes, metric_checkboxes
from apps.catalog.models import Criterion, Metric, PerturbationKind
from apps.corpus.models import Dataset
from apps.corpus.selectors import datasets_for_user
from apps.judging.models import Judge, Strategy
from apps.judging.selectors import judges_for_user, strategies_for_user
from apps.judging.setup_widgets import KindSelect, strategy_label

#: The run form's groups: title, the judge kind they apply to ("" any), their fields.
RUN_GROUPS = (
    ("The judge", "", ("judge",)),
    ("How the LLM judge is asked", "llm", ("strategy", "criteria", "metrics")),
    (
        "Texts to judge",
        "",
        ("study", "dataset", "kinds", "include_originals", "include_perturbations", "vetted_only"),
    ),
    ("", "", ("label",)),
)


class JudgeRunForm(forms.Form):
    judge = forms.ModelChoiceField(
        queryset=Judge.objects.none(),
        widget=KindSelect,
        help_text="A metric (BLEU, chrF, ROUGE-L) needs nothing more; an LLM judge needs a "
        "strategy and criteria or task metrics.",
    )
    strategy = forms.ModelChoiceField(
        queryset=Strategy.objects.none(),
        required=False,
        help_text="How the judge is asked, and how many times per text; the run keeps this "
        "version even if the strategy is changed later.",
    )
    study = forms.ModelChoiceField(
        queryset=Study.objects.none(),
        required=False,
        help_text="Judge the texts of one of your studies (its criteria and kinds by default).",
    )
    dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.none(),
        required=False,
        help_text="A dataset, or one of the study's (empty: all of the study's).",
    )
    criteria = forms.ModelMultipleChoiceField(
        queryset=Criterion.objects.select_related("aspect"),
        required=False,
        widget=criterion_checkboxes(),
        help_text="What the judge rates each text on (none ticked: the study's criteria).",
    )
    metrics = forms.ModelMultipleChoiceField(
        queryset=Metric.objects.select_related("task"),
        required=False,
        label="Task metrics",
        widget=metric_checkboxes(),
        help_text="Or the quality metrics of a task (e.g. coherence of a summary).",
    )
    kinds = forms.ModelMultipleChoiceField(
        queryset=PerturbationKind.objects.all(),
        required=False,
        label="Perturbation kinds",
        widget=kind_checkboxes(),
        help_text="Judge perturbations of these kinds (none ticked: all, or the study's).",
    )
    include_originals = forms.BooleanField(
        required=False,
        initial=True,
        label="Judge the original texts",
        help_text="The unperturbed texts, which the perturbations are compared with.",
    )
    include_perturbations = forms.BooleanField(
        required=False, initial=True, label="Judge the perturbed texts"
    )
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
    label = forms.CharField(
        max_length=200, required=False, help_text="A name for the run in lists (optional)."
    )

    def clean_vetted_only(self) -> bool:
        """Vetted only unless "all" is chosen (a form without the field means vetted)."""
        return self.cleaned_data.get("vetted_only") != "false"

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields: Any = self.fields
        fields["judge"].queryset = judges_for_user(user)
        show_owners(fields["judge"], user, "created_by")
        fields["strategy"].queryset = strategies_for_user(user).order_by("family", "slug")
        fields["strategy"].label_from_instance = strategy_label
        fields["study"].queryset = studies_for_user(user)
        fields["dataset"].queryset = datasets_for_user(user)

    def clean(self) -> dict[str, Any]:
        """A metric judge's run ignores the LLM-only fields (hidden on the page)."""
        data = super().clean() or {}
        judge = data.get("judge")
        if judge is not None and judge.is_metric:
            data.update(strategy=None, criteria=[], metrics=[])
        return data

    def groups(self) -> list[tuple[str, str, list[forms.BoundField]]]:
        """The fields by group, for the page: (title, judge kind it applies to, fields)."""
        return [(t, kind, [self[n] for n in names]) for t, kind, names in RUN_GROUPS]
