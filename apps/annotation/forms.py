"""Forms of the annotation pages: each judgement carries the idempotency key of its page."""

from django import forms

from apps.annotation.models import Choice, Study, Verdict


class VerdictForm(forms.Form):
    verdict = forms.ChoiceField(choices=Verdict.choices)
    note = forms.CharField(required=False, max_length=5000)
    idempotency_key = forms.UUIDField()


class ChoiceForm(forms.Form):
    choice = forms.ChoiceField(choices=Choice.choices)
    original_first = forms.TypedChoiceField(
        choices=[("1", "original first"), ("0", "perturbed first")], coerce=lambda v: v == "1"
    )
    idempotency_key = forms.UUIDField()


class EditForm(forms.Form):
    text = forms.CharField(strip=False, max_length=1_000_000)
    note = forms.CharField(required=False, max_length=2000)


class VoteForm(forms.Form):
    kind = forms.IntegerField()
    metric = forms.IntegerField()
    idempotency_key = forms.UUIDField()


class StudySettingsForm(forms.ModelForm):
    class Meta:
        model = Study
        fields = [
            "vetting_overlap",
            "comparison_groups",
            "comparisons_need_vetting",
            "lease_minutes",
            "guidelines",
        ]
        widgets = {"guidelines": forms.Textarea(attrs={"rows": 4})}
