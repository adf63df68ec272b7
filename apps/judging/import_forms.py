"""The judge import page's form: a file to upload, or, once previewed, the same file's text
sent back to save it (checked again then, as if uploaded anew)."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.judging.importing import MAX_BYTES


class JudgeImportForm(forms.Form):
    file = forms.FileField(
        required=False,
        label="promptfoo config or Inspect AI scorer description",
        help_text=f"YAML or JSON, at most {MAX_BYTES // 1024} KB. Nothing is saved before you "
        "see what it maps to.",
    )
    document = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"hidden": True})
    )
    filename = forms.CharField(required=False, max_length=200, widget=forms.HiddenInput)

    def clean(self) -> dict[str, Any]:
        """``data`` (bytes) and ``filename``, from the upload or the previewed text."""
        data = super().clean() or {}
        upload = data.get("file")
        if upload is not None:
            if upload.size > MAX_BYTES:
                self.add_error("file", f"{upload.name}: larger than {MAX_BYTES // 1024} KB")
                return data
            data["data"], data["filename"] = upload.read(), upload.name
        elif data.get("document"):
            data["data"] = data["document"].encode()
            data["filename"] = data.get("filename") or "uploaded file"
        else:
            self.add_error("file", "choose a file to import")
        return data
