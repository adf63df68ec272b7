"""Reads that depend on who is asking: a user reaches only the datasets their role allows."""

from __future__ import annotations

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from apps.accounts.permissions import is_researcher, owned_by
from apps.corpus.models import Dataset, GenerationJob, ImportJob, Perturbation, SourceItem


def datasets_for_user(user) -> QuerySet[Dataset]:
    """Superusers: all. Researchers: their own and those of studies they own or belong to.
    Annotators and experts reach texts only through their assigned work, not here."""
    if not is_researcher(user):
        return Dataset.objects.none()
    if user.is_superuser:
        return Dataset.objects.all()
    return Dataset.objects.filter(
        Q(owner=user) | Q(studies__owner=user) | Q(studies__memberships__user=user)
    ).distinct()


def with_item_counts(datasets: QuerySet[Dataset]) -> QuerySet[Dataset]:
    """Each dataset's `item_count`, counted in a subquery: never multiplied by the joins
    through studies and memberships that decide who sees the dataset."""
    per_dataset = (
        SourceItem.objects.filter(dataset=OuterRef("pk"))
        .order_by()
        .values("dataset")
        .annotate(n=Count("id"))
        .values("n")
    )
    return datasets.annotate(item_count=Coalesce(Subquery(per_dataset), 0))


def datasets_owned_by(user) -> QuerySet[Dataset]:
    """Datasets this user may change (import into, generate in, add to a study): their own."""
    return owned_by(Dataset.objects.all(), user)


def datasets_attachable(user, study=None) -> QuerySet[Dataset]:
    """Datasets this user may put in a study: their own, and those the study already has
    (sharing a dataset with a study is its owner's decision, never a member's)."""
    owned = Q(owner=user) if not user.is_superuser else Q()
    if study is not None and study.pk:
        owned |= Q(pk__in=study.datasets.values("pk"))
    return Dataset.objects.filter(owned) if is_researcher(user) else Dataset.objects.none()


def items_for_user(user) -> QuerySet[SourceItem]:
    return SourceItem.objects.filter(dataset__in=datasets_for_user(user))


def perturbations_for_user(user) -> QuerySet[Perturbation]:
    return Perturbation.objects.filter(item__dataset__in=datasets_for_user(user))


def import_jobs_for_user(user) -> QuerySet[ImportJob]:
    if user.is_superuser:
        return ImportJob.objects.all()
    return ImportJob.objects.filter(created_by=user)


def generation_jobs_for_user(user) -> QuerySet[GenerationJob]:
    """The generations this user started or that wrote into their datasets."""
    if user.is_superuser:
        return GenerationJob.objects.all()
    if not user.is_authenticated:
        return GenerationJob.objects.none()
    return GenerationJob.objects.filter(Q(created_by=user) | Q(dataset__owner=user))
