"""The form that sets up an adversarial search (docs/adversarial.md); the service checks what
spans fields."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.accounts.choices import show_owners
from apps.accounts.permissions import owned_by
from apps.annotation.models import Study
from apps.catalog.choices import criterion_label
from apps.catalog.models import Criterion
from apps.corpus.models import Dataset
from apps.corpus.selectors import datasets_for_user
from apps.endpoints.models import Endpoint
from apps.endpoints.selectors import endpoints_for_user
from apps.judging.models import Direction, Judge, JudgeKind, Strategy
from apps.judging.selectors import judges_for_user, strategies_for_user
from apps.judging.services import JudgeChoice, SearchSetup
from apps.judging.setup_widgets import KindSelect, strategy_label

GOLD_STRATEGY = "adveval-gold-0-100"
VICTIM_STRATEGY = "adveval-0-100"
#: The page's groups: title, the victim's kind they apply to ("" any), their fields.
SEARCH_GROUPS = (
    ("What is searched", "", ("dataset", "study", "criterion", "direction", "item_ids")),
    ("The judges", "", ("victim", "gold", "gold_strategy")),
    ("How the LLM victim is asked", "llm", ("victim_strategy",)),
    (
        "The generator",
        "",
        ("generator", "generator_temperature", "candidates_per_iteration", "criterion_in_prompt"),
    ),
    (
        "When to stop, and what counts as a success",
        "",
        ("target_score", "alpha", "max_iterations", "query_budget", "tau1", "tau2"),
    ),
    ("", "", ("rule_baseline", "label")),
)


class SearchForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.none())
    study = forms.ModelChoiceField(
        queryset=Study.objects.none(),
        required=False,
        help_text="Your study: the report goes into its reports, the final texts into its "
        "vetting and comparison queues.",
    )
    direction = forms.ChoiceField(
        choices=Direction.choices,
        initial=Direction.R_PLUS,
        help_text="R+: texts the victim overrates; R−: texts it underrates.",
    )
    generator = forms.ModelChoiceField(
        queryset=Endpoint.objects.none(),
        help_text="The model endpoint that writes the candidates (an LLM judge's endpoint "
        "bears the judge's name).",
    )
    victim = forms.ModelChoiceField(
        queryset=Judge.objects.none(),
        widget=KindSelect,
        label="Victim (the judge under test)",
        help_text="An LLM judge or a metric.",
    )
    victim_strategy = forms.ModelChoiceField(
        queryset=Strategy.objects.none(),
        required=False,
        label="Victim's strategy",
        help_text="How the LLM victim is asked (a metric needs none).",
    )
    gold = forms.ModelMultipleChoiceField(
        queryset=Judge.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        label="Gold judges",
        help_text="One LLM judge, or several: S_gold is then their mean (an ensemble).",
    )
    gold_strategy = forms.ModelChoiceField(
        queryset=Strategy.objects.none(),
        label="Gold judges' strategy",
        help_text="The shipped gold strategy rates 0-100, the mean of 8 samples.",
    )
    criterion = forms.ModelChoiceField(
        queryset=Criterion.objects.select_related("aspect"),
        required=False,
        help_text="What the judges score; needed by strategies that name a quality.",
    )
    criterion_in_prompt = forms.BooleanField(
        required=False,
        initial=True,
        label="Show the criterion to the generator",
        help_text="Off: the generator is told only to fool the victim.",
    )
    alpha = forms.FloatField(
        initial=1.0,
        label="Weight of the gold score (alpha)",
        help_text="How much S_gold counts in the feedback score S_fb.",
    )
    target_score = forms.FloatField(
        initial=60.0,
        label="Target feedback score",
        help_text="An item's search stops once S_fb reaches this.",
    )
    max_iterations = forms.IntegerField(
        initial=10, min_value=1, max_value=1000, label="Most rounds per item"
    )
    query_budget = forms.IntegerField(
        initial=300,
        min_value=1,
        label="Victim calls per item",
        help_text="The search of an item stops at this many (300 in the paper).",
    )
    candidates_per_iteration = forms.IntegerField(
        initial=4,
        min_value=1,
        max_value=50,
        label="Candidates per round",
        help_text="Texts the generator writes each round.",
    )
    generator_temperature = forms.FloatField(
        initial=1.0, min_value=0.0, max_value=2.0, label="Generator's temperature"
    )
    tau1 = forms.FloatField(
        required=False,
        label="Success threshold (τ1)",
        help_text="The victim's score a success needs; empty: 70 (R+) or 30 (R−).",
    )
    tau2 = forms.FloatField(
        initial=40.0,
        label="Success gap (τ2)",
        help_text="The gap between the gold and the victim's scores a success needs.",
    )
    rule_baseline = forms.BooleanField(
        required=False,
        initial=True,
        label="Also run the rule-based baseline",
        help_text="Searches with the rule-based perturbers too, under the same limits.",
    )
    item_ids = forms.CharField(
        required=False,
        label="Items",
        help_text="Item ids, comma-separated (empty: every item).",
    )
    label = forms.CharField(
        max_length=200, required=False, help_text="A name for the search in lists (optional)."
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fields: Any = self.fields
        judges = judges_for_user(user)
        strategies = strategies_for_user(user).order_by("family", "slug")
        fields["dataset"].queryset = datasets_for_user(user)
        fields["study"].queryset = owned_by(Study.objects.all(), user)
        fields["generator"].queryset = endpoints_for_user(user)
        fields["victim"].queryset = judges
        fields["gold"].queryset = judges.filter(kind=JudgeKind.LLM)
        show_owners(fields["generator"], user, "owner")
        show_owners(fields["victim"], user, "created_by")
        show_owners(fields["gold"], user, "created_by")
        fields["victim_strategy"].queryset = strategies
        fields["gold_strategy"].queryset = strategies
        fields["criterion"].label_from_instance = criterion_label
        fields["victim_strategy"].label_from_instance = strategy_label
        fields["gold_strategy"].label_from_instance = strategy_label
        if not self.is_bound:
            self.initial.setdefault("gold_strategy", _latest(strategies, GOLD_STRATEGY))
            self.initial.setdefault("victim_strategy", _latest(strategies, VICTIM_STRATEGY))

    def groups(self) -> list[tuple[str, str, list[forms.BoundField]]]:
        """The fields by group, for the page: (title, victim kind it applies to, fields)."""
        return [(t, kind, [self[n] for n in names]) for t, kind, names in SEARCH_GROUPS]

    def clean_item_ids(self) -> list[int]:
        raw = self.cleaned_data.get("item_ids") or ""
        try:
            return [int(part) for part in raw.replace(" ", "").split(",") if part]
        except ValueError:
            raise forms.ValidationError("whole numbers separated by commas") from None

    def setup(self) -> SearchSetup:
        data = self.cleaned_data
        return SearchSetup(
            dataset=data["dataset"],
            study=data["study"],
            generator=data["generator"],
            victim=JudgeChoice(
                data["victim"], None if data["victim"].is_metric else data["victim_strategy"]
            ),
            gold=[JudgeChoice(judge, data["gold_strategy"]) for judge in data["gold"]],
            direction=data["direction"],
            criterion=data["criterion"],
            criterion_in_prompt=data["criterion_in_prompt"],
            item_ids=data["item_ids"],
            alpha=data["alpha"],
            target_score=data["target_score"],
            max_iterations=data["max_iterations"],
            query_budget=data["query_budget"],
            candidates_per_iteration=data["candidates_per_iteration"],
            generator_temperature=data["generator_temperature"],
            tau1=data["tau1"],
            tau2=data["tau2"],
            rule_baseline=data["rule_baseline"],
            label=data["label"],
        )


def _latest(strategies: Any, slug: str) -> int | None:
    found = strategies.filter(slug=slug).first()
    return found.pk if found else None
