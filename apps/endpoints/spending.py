"""Nobody spends by surprise, in the API: an action that calls a model (a judge run, an
adversarial search, an LLM generation) is recorded, estimated, and started only when its
estimate allows it; a dry run answers the estimate and keeps nothing (docs/judging.md,
"Before a run starts")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework import status
from rest_framework.response import Response

T = TypeVar("T")


def estimated_start(
    *,
    record: Callable[[], T],
    estimate: Callable[[T], dict[str, Any]],
    start: Callable[[T], T],
    answer: Callable[[T], dict[str, Any]],
    dry_run: bool = False,
) -> Response:
    """``record`` it (not started), show its ``estimate``, then ``start`` it (the service
    refuses one above its limit that is not confirmed, or one that would measure nothing).
    A dry run answers the estimate (200); a refusal answers why, with the estimate (400);
    either keeps nothing. Otherwise 201: ``answer`` with the estimate."""
    with transaction.atomic():
        made = record()
        shown = estimate(made)
        if dry_run:
            transaction.set_rollback(True)
            return Response({"estimate": shown})
        try:
            made = start(made)
        except ValidationError as error:
            transaction.set_rollback(True)
            return Response(error.message_dict | {"estimate": shown}, status=400)
    return Response(answer(made) | {"estimate": shown}, status=status.HTTP_201_CREATED)
