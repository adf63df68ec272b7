from typing import Any

from django import forms

from apps.accounts.choices import show_owners
from apps.catalog.choices import kind_checkboxes
from apps.catalog.models import Degree, Method, PerturbationKind, Task
from apps.corpus.generation.destinations import destinations
from apps.corpus.importing.items import FORMATS
from apps.corpus.models import Dataset
from apps.endpoints.models import Endpoint
from apps.endpoints.selectors import endpoints_for_user


class ImportForm(forms.Form):
    file = forms.FileField(help_text="CSV, TSV, JSONL, or a .zip of an FBI-style folder.")
    dataset = forms.CharField(max_length=200, help_text="A new or existing dataset's name.")
    format = forms.ChoiceField(
        choices=[("", "from the file name")] + [(f, f.upper()) for f in FORMATS],
        required=False,
        label="File format",
    )
    task = forms.ModelChoiceField(
        Task.objects.all(),
        required=False,
        to_field_name="slug",
        help_text="The task of the items that name none (e.g. summarization).",
    )
    keep_repeats = forms.BooleanField(
        required=False,
        label="Keep repeated rows",
        help_text="FBI folders: keep rows of a degrading kind that copy a score-invariant row "
        "byte for byte (by default they are dropped; either way the summary names them).",
    )


class GenerationForm(forms.Form):
    dataset = forms.ModelChoiceField(
        Dataset.objects.none(), help_text="Its items' texts are perturbed."
    )
    kinds = forms.ModelMultipleChoiceField(
        PerturbationKind.objects.generable(),
        label="Perturbation kinds",
        widget=kind_checkboxes(),
        help_text="Rule-based kinds run locally; LLM-written kinds need a generator. Both run "
        "in the worker, with checks on every output.",
    )
    generator = forms.ModelChoiceField(
        Endpoint.objects.none(),
        required=False,
        help_text="The OpenAI-compatible endpoint that writes the LLM kinds (an LLM judge's "
        "endpoint bears the judge's name).",
    )
    # Not required: the page sends the generator's settings only when an LLM-written kind is
    # ticked (static/applies_to.js); left out, they take their initial value (`clean`).
    temperature = forms.FloatField(
        initial=0.7,
        required=False,
        min_value=0,
        max_value=2,
        label="Generator's temperature",
        help_text="LLM-written kinds: higher, more varied rewrites.",
    )
    max_tokens = forms.IntegerField(
        initial=2048,
        required=False,
        min_value=16,
        max_value=32_000,
        label="Longest output (tokens)",
        help_text="LLM-written kinds: a longer output is cut off here.",
    )
    degree = forms.ChoiceField(
        choices=[("", "the kind's own (minor if none)"), *Degree.choices],
        required=False,
        help_text="How strong a change the kinds that have degrees make.",
    )
    seed = forms.IntegerField(initial=0, help_text="Same seed, same perturbations.")
    items = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Item ids, separated by commas or new lines; empty: every item of the dataset.",
    )
    use_kind_parameters = forms.BooleanField(
        required=False,
        label="Use the kinds' fixed parameters",
        help_text="Instead of presets scaled to each text's length.",
    )

    def __init__(self, *args, datasets, user, **kwargs):
        """Choices are what this user may use: their own datasets (from the view), the
        endpoints they can use, and for each destination (e.g. "study", a study's vetting
        queue: see generation/destinations.py) what they may send results to."""
        super().__init__(*args, **kwargs)
        fields: Any = self.fields
        fields["dataset"].queryset = datasets
        fields["generator"].queryset = endpoints_for_user(user)
        show_owners(fields["generator"], user, "owner")
        for destination in destinations():
            fields[destination.name] = forms.ModelChoiceField(
                destination.choices(user), required=False, help_text=destination.help_text
            )

    def groups(self) -> list[tuple[str, str, list[forms.BoundField]]]:
        """The fields by group, for the page: (title, kind, fields); the LLM's settings
        apart, shown once an LLM-written kind is ticked (or none is)."""
        llm = ("generator", "temperature", "max_tokens")
        rest = [self[n] for n in self.fields if n not in llm and n not in ("dataset", "kinds")]
        return [
            ("", "", [self["dataset"], self["kinds"]]),
            ("For LLM-written kinds", Method.LLM, [self[n] for n in llm]),
            ("", "", rest),
        ]

    def job_options(self) -> dict[str, Any]:
        """The cleaned form as ``generation_job_start``'s options."""
        data = dict(self.cleaned_data)
        data.pop("items", None)
        chosen = {d.name: data.pop(d.name, None) for d in destinations()}
        data["deliver_to"] = {name: target.pk for name, target in chosen.items() if target}
        return data

    def clean_items(self) -> list[str]:
        raw = self.cleaned_data.get("items") or ""
        return [part.strip() for part in raw.replace("\n", ",").split(",") if part.strip()]

    def clean(self):
        data = super().clean() or {}
        dataset, wanted = data.get("dataset"), data.get("items") or []
        if dataset is not None and wanted:
            found = dict(
                dataset.items.filter(external_id__in=wanted).values_list("external_id", "id")
            )
            missing = [w for w in wanted if w not in found]
            if missing:
                self.add_error("items", f"not in {dataset.name}: {', '.join(missing[:10])}")
            data["item_ids"] = list(found.values())
        for name in ("temperature", "max_tokens"):
            if data.get(name) is None and name not in self.errors:
                data[name] = self.fields[name].initial
        llm = [k.name for k in data.get("kinds", []) if k.method == Method.LLM]
        if llm and not data.get("generator"):
            raise forms.ValidationError(
                f"LLM-written kinds ({', '.join(llm)}) need a generator endpoint."
            )
        return data
