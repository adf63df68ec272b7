"""The judge page's form: a judge and, for an LLM judge, its endpoint, in plain words and in
groups that apply to the judge's kind (docs/judging.md, "Judges")."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.accounts.models import Role, User
from apps.endpoints.models import ENDPOINT_SETTINGS, Endpoint
from apps.judging.models import Judge, Strategy
from apps.judging.models.judge import BATCH_PRICE_PERCENT
from apps.judging.selectors import strategies_for_user
from apps.judging.services.connection_test import TEST_STRATEGY

#: Common OpenAI-compatible servers: (address, name, max-tokens parameter), offered as
#: one-click presets and as the address's suggestions.
SERVERS = (
    ("https://api.openai.com/v1", "OpenAI", "max_completion_tokens"),
    ("http://127.0.0.1:8080/v1", "llama.cpp server on this machine", "max_tokens"),
    ("http://127.0.0.1:8000/v1", "vLLM on this machine", "max_tokens"),
    ("http://127.0.0.1:11434/v1", "Ollama on this machine", "max_tokens"),
)
#: The endpoint's default sampling parameters, as fields of their own (stored in
#: ``Endpoint.default_params``; a strategy's own settings win).
PARAMS = ("temperature", "top_p", "seed", "stop")
LABELS = {
    "name": "Name",
    "kind": "Kind",
    "base_url": "Server address (base URL)",
    "api_key_env": "Key variable",
    "model": "Model",
    "max_concurrency": "Calls at once",
    "requests_per_minute": "Requests per minute",
    "timeout_s": "Timeout (seconds)",
    "max_attempts": "Attempts per call",
    "max_tokens_param": "Name of the max-tokens parameter",
    "metric": "Metric",
    "price_per_million_prompt_tokens": "Price per million prompt tokens",
    "price_per_million_completion_tokens": "Price per million completion tokens",
    "batch_api": "The server has a batch interface",
    "batch_price_percent": "Batch price (% of the prices above)",
    "shared_with": "Offer it to",
}
#: The form's groups: title, the judge kind they apply to ("" both), their fields.
GROUPS = (
    ("The judge", "", ("name", "kind")),
    ("Model server", "llm", ("base_url", "model", "api_key_env")),
    ("Sampling", "llm", PARAMS),
    (
        "Limits",
        "llm",
        ("max_concurrency", "requests_per_minute", "timeout_s", "max_attempts", "max_tokens_param"),
    ),
    ("Prices", "llm", ("price_per_million_prompt_tokens", "price_per_million_completion_tokens")),
    ("Batch interface", "llm", ("batch_api", "batch_price_percent")),
    ("Metric", "metric", ("metric",)),
    ("Sharing", "", ("shared_with",)),
)


class JudgeForm(forms.ModelForm):
    """A judge and, for an LLM judge, its endpoint's settings (saved on the judge's own endpoint
    by ``services.judge_save``; a metric judge ignores them)."""

    class Meta:
        model = Judge
        fields = [
            "name",
            "kind",
            "metric",
            "price_per_million_prompt_tokens",
            "price_per_million_completion_tokens",
            "batch_price_percent",
            "shared_with",
        ]
        widgets = {"shared_with": forms.CheckboxSelectMultiple}

    temperature = forms.FloatField(
        required=False, min_value=0, max_value=2, help_text="Empty: 0 (a strategy may set it)."
    )
    top_p = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        label="Top-p (nucleus sampling)",
        help_text="Sample only from the likeliest words making up this share; empty: the "
        "server's default.",
    )
    seed = forms.IntegerField(
        required=False, help_text="Same seed, same replies, on servers that take one."
    )
    stop = forms.CharField(
        required=False,
        max_length=200,
        label="Stop sequences",
        help_text="The reply ends at any of these, separated by commas.",
    )
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
        others = User.objects.filter(role=Role.RESEARCHER).order_by("username")
        fields["shared_with"].queryset = others.exclude(pk=user.pk) if user else others
        fields["shared_with"].required = False
        fields["batch_price_percent"].required = False  # empty: the usual 50%
        fields["shared_with"].help_text = (
            "Colleagues offered this judge: once they accept, they may use it (its key "
            "included), not change it."
        )
        endpoint = self.instance.endpoint if self.instance.pk else None
        settings = forms.fields_for_model(
            Endpoint, fields=[n for n in ENDPOINT_SETTINGS if n != "default_params"]
        )
        for name, field in settings.items():
            field.required = False  # checked for LLM judges by the service
            if endpoint is not None:
                field.initial = getattr(endpoint, name)
        settings["base_url"].widget.attrs["list"] = "servers"
        settings["api_key_env"].help_text = (
            f"Keys granted to you: {', '.join(granted)}. "
            if granted
            else "No key is granted to you yet: an administrator grants them. "
        ) + "Empty: no key (a local server)."
        defaults = (endpoint.default_params or {}) if endpoint is not None else {}
        for name in PARAMS:
            value = defaults.get(name)
            fields[name].initial = ", ".join(value) if isinstance(value, list) else value
        self.fields = fields | settings
        for name, label in LABELS.items():
            self.fields[name].label = label

    def clean_batch_price_percent(self) -> int:
        value = self.cleaned_data.get("batch_price_percent")
        return BATCH_PRICE_PERCENT if value is None else int(value)

    def groups(self) -> list[tuple[str, str, list[forms.BoundField]]]:
        """The fields by group, for the page: (title, kind it applies to, fields)."""
        return [(title, kind, [self[name] for name in names]) for title, kind, names in GROUPS]

    def drop_judge_errors(self) -> None:
        """Keep only the endpoint's errors (a connection test needs no name or prices)."""
        for name in list(self.errors):
            if name not in (*ENDPOINT_SETTINGS, *PARAMS, "test_strategy"):
                del self.errors[name]

    def endpoint_settings(self) -> dict[str, Any]:
        """The endpoint's settings as entered, with the model's defaults for those left empty;
        the sampling fields make its ``default_params``."""
        data = self.cleaned_data
        defaults = {f.name: f.get_default() for f in Endpoint._meta.concrete_fields}
        chosen = {
            name: data[name] if data.get(name) not in (None, "") else defaults[name]
            for name in ENDPOINT_SETTINGS
            if name != "default_params"
        }
        params: dict[str, Any] = {
            name: data[name] for name in PARAMS if data.get(name) not in (None, "")
        }
        if "stop" in params:
            params["stop"] = [s.strip() for s in params["stop"].split(",") if s.strip()]
        return chosen | {"default_params": params}
