"""Studies: what researchers set up for annotators and experts."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q, QuerySet

from apps.accounts.models import Role
from apps.catalog.models import Criterion, PerturbationKind
from apps.corpus.models import Dataset


class StudyQuerySet(models.QuerySet["Study"]):
    def for_user(self, user) -> QuerySet[Study]:
        """Studies a user may open: all for superusers, owned or joined for everyone else."""
        if user.is_superuser:
            return self.all()
        return self.filter(Q(owner=user) | Q(memberships__user=user)).distinct()


class Study(models.Model):
    """Groups datasets, perturbation kinds, criteria and the people who work on them."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    guidelines = models.TextField(blank=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_studies"
    )
    datasets = models.ManyToManyField(Dataset, blank=True, related_name="studies")
    kinds = models.ManyToManyField(PerturbationKind, blank=True, related_name="studies")
    criteria = models.ManyToManyField(Criterion, blank=True, related_name="studies")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = StudyQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.name


class StudyMembership(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "user"], name="one_membership")]

    def __str__(self) -> str:
        return f"{self.user} in {self.study} as {self.role}"
