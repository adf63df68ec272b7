"""Forms of a study's set-up by its researcher, and what every work page's answer form carries
(`AnswerForm`: each kind of work declares its answer form in its page module,
apps/annotation/views/<kind>.py)."""

import csv
import io
from typing import Any

from django import forms

from apps.accounts.models import Role, User
from apps.annotation.models import (
    ACTIVE_HELP,
    MOST_ACTIVE_SECONDS,
    ControlItem,
    Panel,
    Study,
)
from apps.annotation.models.study import KIND_SETUP_FIELDS
from apps.annotation.services.studies import (
    CONTROL_FIELDS,
    RELATIONS,
    SETTINGS_FIELDS,
    SETUP_FIELDS,
)
from apps.catalog.choices import criterion_checkboxes, criterion_label, kind_checkboxes
from apps.catalog.models import Criterion
from apps.corpus.selectors import datasets_attachable


class AnswerForm(forms.Form):
    """What every work page's form carries besides its answer: the page's idempotency key,
    the version of the answer it showed (`based_on`, when the page sends it) and the time
    the person was active on the unit (`active_seconds`, measured by annotation.js)."""

    idempotency_key = forms.UUIDField()
    based_on = forms.IntegerField(
        required=False, min_value=0, help_text="The answer's version the page showed."
    )
    active_seconds = forms.FloatField(
        required=False, min_value=0, max_value=MOST_ACTIVE_SECONDS, help_text=ACTIVE_HELP
    )


class KeepsUnsent(forms.ModelForm):
    """Each kind of work's own settings (`study_settings`) may be left out of a post (a form or
    a script from before they existed): then they keep the study's value (a new study's: the
    default)."""

    OPTIONAL = KIND_SETUP_FIELDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in self.OPTIONAL:
            if name in self.fields:
                self.fields[name].required = False

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name in self.OPTIONAL:
            if name in self.fields and data.get(name) in (None, ""):
                data[name] = getattr(self.instance, name)
        return data


class StudySettingsForm(KeepsUnsent):
    class Meta:
        model = Study
        fields = SETTINGS_FIELDS
        widgets = {"guidelines": forms.Textarea(attrs={"rows": 4})}


class ControlSettingsForm(forms.ModelForm):
    """How often control items come, and what a low accuracy on them does."""

    class Meta:
        model = Study
        fields = CONTROL_FIELDS


class ControlForm(forms.Form):
    """One control item (services/controls.py `control_add` checks the rest)."""

    work = forms.ChoiceField(choices=ControlItem.Work.choices)
    perturbation = forms.IntegerField(
        required=False,
        min_value=1,
        help_text="Vetting, comparison: the perturbation (its id). Direct assessment: the "
        "perturbed text to rate, or leave empty and give the item.",
    )
    item = forms.IntegerField(
        required=False,
        min_value=1,
        help_text="Direct assessment: the item whose original is rated.",
    )
    criterion = forms.CharField(
        required=False, max_length=120, help_text="Comparison, direct assessment: its key."
    )
    answer = forms.CharField(
        max_length=16,
        help_text="Vetting: a verdict (valid, invalid, score-invariant, not-relevant, not-sure); "
        "comparison: the perturbed text is worse, same or better; direct assessment: the rating.",
    )
    tolerance = forms.IntegerField(
        required=False,
        min_value=0,
        initial=0,
        help_text="Direct assessment: a rating this far from the answer still counts as right.",
    )


class ControlImportForm(forms.Form):
    file = forms.FileField(
        help_text="CSV with a header (work, perturbation, item, criterion, answer, tolerance) "
        "or JSONL (one object a line, the same names)."
    )


def _rated_label(criterion: Criterion) -> str:
    """A criterion to rate under, with its scale: "Coherence — default, rated 1 to 5"."""
    return f"{criterion_label(criterion)}, rated {criterion.scale_min} to {criterion.scale_max}"


def _setup_field(db_field: Any, **kwargs: Any) -> Any:
    """A set-up field's form field: criteria (a many-to-many to `Criterion`, a kind's own
    included) are offered as the catalogue's criteria, grouped by aspect."""
    if db_field.many_to_many and db_field.related_model is Criterion:
        kwargs.setdefault("widget", criterion_checkboxes())
    return db_field.formfield(**kwargs)


class StudyForm(KeepsUnsent):
    """A study's set-up; the datasets offered are the researcher's own. On the edit page
    (one long page) every group of kinds and criteria starts closed, its heading counting the
    choices in it; `StudyNewForm` opens the groups with choices (one step at a time)."""

    open_chosen = False

    class Meta:
        model = Study
        fields = SETUP_FIELDS
        formfield_callback = _setup_field
        widgets = {
            "description": forms.Textarea(attrs={"rows": 2}),
            "guidelines": forms.Textarea(attrs={"rows": 6}),
            "datasets": forms.CheckboxSelectMultiple,
            "kinds": kind_checkboxes(),
            "assessment_criteria": criterion_checkboxes(label_of=_rated_label),
        }
        help_texts = {
            "guidelines": "Shown to annotators on every work page (key g).",
            "datasets": "The data the study works on.",
            "kinds": "Perturbation kinds annotators vet and compare.",
            "criteria": "Criteria pairs are compared under (split among annotators).",
        }

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        fields: Any = self.fields
        fields["datasets"].queryset = datasets_attachable(user, self.instance)
        for name in RELATIONS:
            if fields[name].queryset.model is Criterion:
                fields[name].queryset = Criterion.objects.select_related("aspect")
            if name != "datasets":
                fields[name].widget.open_chosen = self.open_chosen


def _usernames_field(role: str) -> forms.CharField:
    return forms.CharField(
        required=False,
        label=f"{role} (optional)",
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "ann bob carla"}),
        help_text="Usernames of existing accounts, separated by spaces, commas or lines.",
    )


class StudyNewForm(StudyForm):
    """A new study's set-up and, optionally, the existing accounts that join it."""

    open_chosen = True
    annotators = _usernames_field("Annotators")
    experts = _usernames_field("Experts")

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, user=user, **kwargs)
        self.owner = user

    def _accounts(self, name: str) -> list[User]:
        names = list(dict.fromkeys(self.cleaned_data.get(name, "").replace(",", " ").split()))
        found = {u.username: u for u in User.objects.filter(username__in=names, is_active=True)}
        unknown = [n for n in names if n not in found]
        if unknown:
            raise forms.ValidationError(
                f"No account is called {', '.join(unknown)}: create accounts on the next page."
            )
        if self.owner.username in found:
            raise forms.ValidationError("You own the study already: leave yourself out.")
        return [found[n] for n in names]

    def clean_annotators(self) -> list[User]:
        return self._accounts("annotators")

    def clean_experts(self) -> list[User]:
        return self._accounts("experts")

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        both = set(data.get("annotators") or ()) & set(data.get("experts") or ())
        if both:
            names = ", ".join(sorted(u.username for u in both))
            self.add_error(
                "experts", f"{names}: an account joins as annotator or expert, not both."
            )
        return data


MEMBER_ROLES = [(r.value, r.label) for r in Role]


class MemberAddForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=MEMBER_ROLES, initial=Role.ANNOTATOR)


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=MEMBER_ROLES)


class MembersCreateForm(forms.Form):
    """New accounts from a list of names: one a line, or a CSV whose first column is the name."""

    names = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "placeholder": "ann\nbob\ncarla"}),
        help_text="One name a line (or paste a CSV: the first column is the name).",
    )
    file = forms.FileField(required=False, help_text="Or upload a CSV of names.")
    role = forms.ChoiceField(choices=MEMBER_ROLES, initial=Role.ANNOTATOR)
    access = forms.ChoiceField(
        choices=[
            ("link", "One-time invitation links (they choose a password)"),
            ("password", "Generated passwords"),
        ],
        initial="link",
        widget=forms.RadioSelect,
    )

    def clean(self):
        data = super().clean() or {}
        text = data.get("names") or ""
        upload = data.get("file")
        if upload is not None:
            try:
                text += "\n" + upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                self.add_error("file", "The file is not UTF-8 text.")
        data["usernames"] = names_from_csv(text)
        if not data["usernames"] and not self.errors:
            self.add_error("names", "Give at least one name.")
        return data


def names_from_csv(text: str) -> list[str]:
    """The first cell of each non-empty row, without a "username"/"name" header."""
    rows = csv.reader(io.StringIO(text))
    names = [row[0].strip() for row in rows if row and row[0].strip()]
    if names and names[0].lower() in ("username", "name", "user"):
        names = names[1:]
    return names


#: The panel page's settings, in the order the page shows them.
PANEL_FIELDS = (
    "consent",
    "items_per_participant",
    "participants_per_group",
    "participants_total",
    "completion_code",
    "completion_url",
    "screen_items",
    "screen_failures",
    "screened_out_code",
    "screened_out_url",
    "report_screened_out",
    "same_session_required",
)


class HttpsURLField(forms.URLField):
    """A URL typed without a scheme is taken as https (Django 6's default)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(assume_scheme="https", **kwargs)


class PanelSettingsForm(forms.ModelForm):
    """A study's settings for recruited participants (docs/annotation.md, "Recruiting a
    panel"): consent, quotas, completion, and the attention check."""

    class Meta:
        model = Panel
        fields = PANEL_FIELDS
        field_classes = {"completion_url": HttpsURLField, "screened_out_url": HttpsURLField}
        widgets = {"consent": forms.Textarea(attrs={"rows": 5})}

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        items, allowed = data.get("screen_items") or 0, data.get("screen_failures") or 0
        if items and allowed >= items:
            self.add_error(
                "screen_failures",
                f"Allowing {allowed} failed control items within the first {items} items "
                f"screens nobody out: allow fewer than {items}.",
            )
        if items and not self.instance.study.control_every:
            self.add_error(
                "screen_items",
                "The study mixes in no control items, so nothing can screen: set 'Control "
                "items: one in' on the control items page first, or use 0 here.",
            )
        return data
