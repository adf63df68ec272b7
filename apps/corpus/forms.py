from django import forms

from apps.catalog.models import Task
from apps.corpus.importing.service import FORMATS


class ImportForm(forms.Form):
    file = forms.FileField(help_text="CSV, TSV, JSONL, or a .zip of an FBI-style folder.")
    dataset = forms.CharField(max_length=200, help_text="A new or existing dataset's name.")
    format = forms.ChoiceField(
        choices=[("", "from the file name")] + [(f, f) for f in FORMATS], required=False
    )
    task = forms.ModelChoiceField(
        Task.objects.all(),
        required=False,
        to_field_name="slug",
        help_text="For items that name no task.",
    )
