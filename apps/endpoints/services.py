"""Endpoints: the checks that span fields (a key granted to the owner for this address
included), and saving one for its owner."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from apps.endpoints.egress import HostUnreadable, normal_url
from apps.endpoints.key_names import key_name_problem
from apps.endpoints.models import DEFAULT_PARAM_KEYS, ENDPOINT_SETTINGS, Endpoint


def endpoint_problems(endpoint: Endpoint) -> dict[str, str]:
    """What is wrong beyond single fields: the address and model missing, unknown defaults."""
    needed = ("base_url", "model")
    problems = {name: "an endpoint needs this" for name in needed if not getattr(endpoint, name)}
    try:  # every field's own checks too, so that one answer names every problem
        endpoint.clean_fields(exclude=["owner", "name", *problems])
    except ValidationError as error:
        problems |= {name: " ".join(texts) for name, texts in error.message_dict.items()}
    if not key_name_problem(endpoint.api_key_env) and (refused := endpoint.key_problem()):
        problems.setdefault("api_key_env", refused)
    if not isinstance(endpoint.default_params, dict):
        problems["default_params"] = "a JSON object"
    elif unknown := set(endpoint.default_params) - DEFAULT_PARAM_KEYS:
        problems["default_params"] = (
            f"unknown key(s) {', '.join(sorted(unknown))}; allowed: "
            f"{', '.join(sorted(DEFAULT_PARAM_KEYS))}"
        )
    return problems


def endpoint_settings_apply(endpoint: Endpoint, settings: Mapping[str, Any]) -> None:
    """Set the researcher's settings on an (unsaved) endpoint; anything else is refused."""
    unknown = set(settings) - set(ENDPOINT_SETTINGS)
    if unknown:
        raise ValidationError({"__all__": f"not endpoint settings: {', '.join(sorted(unknown))}"})
    for name, value in settings.items():
        setattr(endpoint, name, value)
    with contextlib.suppress(HostUnreadable):  # an unreadable host stays, for the check to name
        endpoint.base_url = normal_url(endpoint.base_url)  # kept as the clients read it


@transaction.atomic
def endpoint_save(*, endpoint: Endpoint, owner: Any, name: str) -> Endpoint:
    """Check and store an endpoint under ``owner`` (None: shipped) and ``name``. The caller
    checks that whoever asks may change it (an LLM judge's endpoint: the judge's owner)."""
    endpoint.owner, endpoint.name = owner, name
    problems = endpoint_problems(endpoint)
    if problems:
        raise ValidationError(problems)
    endpoint.full_clean()
    endpoint.save()
    return endpoint
