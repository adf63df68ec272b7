"""Sharing a judge: the owner offers it (``judge_save``'s ``shared_with``), the researcher
offered it accepts or declines. Until they accept, they see neither the judge nor its endpoint
(docs/judging.md, "Sharing")."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from apps.judging.models import Judge, JudgeShare


def judge_offer(*, judge: Judge, recipients: Iterable[Any]) -> None:
    """Share ``judge`` with exactly these researchers (its owner and non-researchers left out):
    a new recipient gets an offer, one already offered or accepted keeps their state, one left
    out loses the judge. Its endpoint follows (``judge_endpoint_shares``)."""
    wanted = {u.pk for u in recipients if u.is_researcher and u.pk != judge.created_by_id}
    judge.shares.exclude(user_id__in=wanted).delete()
    have = set(judge.shares.values_list("user_id", flat=True))
    JudgeShare.objects.bulk_create(
        [JudgeShare(judge=judge, user_id=pk) for pk in sorted(wanted - have)]
    )
    judge_endpoint_shares(judge)


def judge_endpoint_shares(judge: Judge) -> None:
    """The judge's endpoint is shared with those who accepted the judge, and nobody else."""
    if judge.endpoint_id is None:
        return
    accepted = judge.shares.accepted().values_list("user_id", flat=True)
    judge.endpoint.shared_with.set(list(accepted))  # type: ignore[union-attr]


def _check_recipient(share: JudgeShare, user: Any) -> None:
    if share.user_id != user.pk:
        raise PermissionDenied("Only the researcher a judge is offered to may accept or decline.")


@transaction.atomic
def judge_share_accept(*, share: JudgeShare, user: Any) -> JudgeShare:
    """``user`` accepts the judge offered them: from now on they see and use it and its
    endpoint (read-only). Accepting again changes nothing."""
    _check_recipient(share, user)
    if share.accepted_at is None:
        share.accepted_at = timezone.now()
        share.save(update_fields=["accepted_at"])
        judge_endpoint_shares(share.judge)
    return share


@transaction.atomic
def judge_share_decline(*, share: JudgeShare, user: Any) -> None:
    """``user`` declines the judge offered them (or gives back one they accepted): the share
    is gone, and with it their use of the judge and its endpoint."""
    _check_recipient(share, user)
    judge = share.judge
    share.delete()
    judge_endpoint_shares(judge)
