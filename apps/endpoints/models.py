"""Model endpoints: an OpenAI-compatible server, the model on it, its key variable and limits.

An LLM judge points to one, and so does a generation job's generator: every caller of a model
goes through its endpoint's client and limiter (docs/endpoints.md).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q

from apps.endpoints.client import EndpointConfig
from apps.endpoints.egress import HostUnreadable, egress_policy, normal_host
from apps.endpoints.key_names import key_name_problem
from apps.endpoints.retry import RetryPolicy


def validate_key_variable(name: str) -> None:
    """Only allowed key variables (apps.endpoints.key_names): never the workers' own secrets."""
    if problem := key_name_problem(name):
        raise ValidationError(problem)


def validate_http_url(url: str) -> None:
    """An http(s) address the egress policy allows, as far as the URL tells (the addresses a
    name resolves to are checked when a worker connects: apps.endpoints.egress)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("an http:// or https:// address, e.g. https://api.openai.com/v1")
    if problem := egress_policy().url_problem(url):
        raise ValidationError(problem)


#: Keys an endpoint's default_params may hold; a strategy's own settings win over them.
DEFAULT_PARAM_KEYS = frozenset({"temperature", "top_p", "seed", "stop"})

#: What a researcher sets on an endpoint (the LLM judge form and API show these too).
ENDPOINT_SETTINGS = (
    "base_url",
    "api_key_env",
    "model",
    "default_params",
    "max_concurrency",
    "requests_per_minute",
    "timeout_s",
    "max_attempts",
    "max_tokens_param",
    "batch_api",
)


def host_matches(host: str, pattern: str) -> bool:
    """``api.openai.com`` matches itself; ``*.example.com`` matches its sub-domains."""
    host, pattern = host.rstrip(".").lower(), pattern.strip().rstrip(".").lower()
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


class KeyGrantQuerySet(models.QuerySet["KeyGrant"]):
    def for_user(self, user: Any) -> KeyGrantQuerySet:
        """The grants that cover this researcher: by name or through one of their groups."""
        if not (user is not None and user.is_authenticated and user.is_researcher):
            return self.none()
        return self.filter(Q(users=user) | Q(groups__in=user.groups.all())).distinct()

    def granted_variables(self, user: Any) -> list[str]:
        """The key variables this researcher may name, sorted."""
        return sorted(set(self.for_user(user).values_list("variable", flat=True)))

    def problem(self, owner: Any, variable: str, base_url: str) -> str | None:
        """Why an endpoint of ``owner`` may not send ``variable``'s key to ``base_url``, or
        None when it may. No key needs no grant; administrators and the shipped endpoints
        (no owner) need none; a researcher needs a grant covering them and, when the grant
        names hosts, the address's host among them."""
        if not variable or owner is None or owner.is_superuser:
            return None
        grants = list(self.for_user(owner).filter(variable=variable))
        if not grants:
            mine = self.granted_variables(owner)
            yours = f"keys granted to you: {', '.join(mine)}" if mine else "none is granted to you"
            return (
                f"{variable} is not granted to you ({yours}); an administrator grants keys "
                "in the admin, under Key grants"
            )
        try:
            host = normal_host(urlsplit(base_url).hostname or "")
        except HostUnreadable as error:
            return str(error)
        if any(grant.allows_host(host) for grant in grants):
            return None
        hosts = sorted({h for grant in grants for h in grant.host_list()})
        return f"{variable} may be sent only to {', '.join(hosts)}, not to {host}"


class KeyGrant(models.Model):
    """An administrator's grant of one key variable to researchers, by name or by group,
    optionally bound to the hosts the key may be sent to (docs/endpoints.md, Keys). An
    endpoint may name a key only when a grant covers its owner; sharing a judge shares its
    use, with the owner's grant and its hosts."""

    variable = models.CharField(
        max_length=100,
        validators=[validate_key_variable],
        help_text="The environment variable holding the key: DISCERN_KEY_...",
    )
    users = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    groups = models.ManyToManyField("auth.Group", blank=True, related_name="+")
    hosts = models.TextField(
        blank=True,
        help_text="Host names the key may be sent to, one per line (*.example.com: its "
        "sub-domains); empty: any host the egress policy allows.",
    )
    note = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = KeyGrantQuerySet.as_manager()

    class Meta:
        ordering = ["variable", "pk"]

    def __str__(self) -> str:
        return self.variable

    def host_list(self) -> list[str]:
        return [line.strip() for line in self.hosts.replace(",", "\n").splitlines() if line.strip()]

    def allows_host(self, host: str) -> bool:
        hosts = self.host_list()
        return not hosts or any(host_matches(host, pattern) for pattern in hosts)


class EndpointQuerySet(models.QuerySet["Endpoint"]):
    def for_user(self, user: Any) -> EndpointQuerySet:
        """Endpoints this researcher may use: their own, those shared with them, and the shipped
        ones (no owner). Nobody else's; annotators and experts none."""
        if not (user.is_authenticated and user.is_researcher):
            return self.none()
        if user.is_superuser:
            return self
        shared = Endpoint.shared_with.through.objects.filter(user=user).values("endpoint_id")
        return self.filter(Q(owner=user) | Q(owner=None) | Q(pk__in=shared))


class Endpoint(models.Model):
    """An OpenAI-compatible endpoint and the model to call on it. The API key is never stored:
    ``api_key_env`` names the variable holding it.

    Owned like a judge: by the researcher who made it (``owner``), who alone changes it and may
    share it, read-only, with other researchers (``shared_with``); none for shipped ones.
    """

    name = models.CharField(max_length=100)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    shared_with = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="+",
        help_text="Researchers who may use this endpoint (its key included), not change it.",
    )
    base_url = models.CharField(
        max_length=300, validators=[validate_http_url], help_text="e.g. https://api.openai.com/v1"
    )
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[validate_key_variable],
        help_text="The NAME of the environment variable holding the key: DISCERN_KEY_... "
        "(empty: no key).",
    )
    model = models.CharField(max_length=200)
    default_params = models.JSONField(
        default=dict, blank=True, help_text="temperature, top_p, seed, stop (strategies win)."
    )
    max_concurrency = models.PositiveSmallIntegerField(
        default=8, validators=[MinValueValidator(1)], help_text="Calls in flight, all workers."
    )
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    timeout_s = models.FloatField(default=60.0, validators=[MinValueValidator(0.1)])
    max_attempts = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(1)], help_text="HTTP attempts per call, in all."
    )
    max_tokens_param = models.CharField(
        max_length=24,
        default="max_tokens",
        choices=[("max_tokens", "max_tokens"), ("max_completion_tokens", "max_completion_tokens")],
    )
    batch_api = models.BooleanField(
        default=False,
        help_text="The server also has OpenAI's batch interface (/v1/files and /v1/batches): "
        "runs may be sent through it, at the batch price, answered within hours.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = EndpointQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="endpoint_name_per_owner"),
            models.UniqueConstraint(
                fields=["name"], condition=Q(owner=None), name="endpoint_name_shipped"
            ),
            models.CheckConstraint(
                condition=Q(max_concurrency__gte=1), name="endpoint_concurrency"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def limit_key(self) -> str:
        """The name its concurrency and rate limits are shared under, by every caller."""
        return f"endpoint-{self.pk}"

    def key_problem(self) -> str | None:
        """Why its owner may not send its key to its address (KeyGrantQuerySet.problem)."""
        return KeyGrant.objects.problem(self.owner, self.api_key_env, self.base_url)

    def config(self) -> EndpointConfig:
        """What the client needs to call it; a key its owner is not (or no longer) granted
        for this address is refused there, with the reason."""
        return EndpointConfig(
            base_url=self.base_url,
            model=self.model,
            api_key_env=self.api_key_env,
            key_refused=self.key_problem() or "",
            name=self.limit_key,
            timeout_s=self.timeout_s,
            max_concurrency=self.max_concurrency,
            requests_per_minute=self.requests_per_minute,
            max_tokens_param=self.max_tokens_param,  # type: ignore[arg-type]
            retry=RetryPolicy(max_attempts=self.max_attempts),
        )
