"""Studies: what researchers set up for annotators and experts, and the study's plan."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q, QuerySet

from apps.accounts.models import Role
from apps.catalog.models import Criterion, PerturbationKind
from apps.corpus.models import Dataset, Perturbation


def validate_control_every(value: int) -> None:
    """0 (no control items) or one in 2 or more: one in 1 would hand out nothing else."""
    if value == 1:
        raise ValidationError("Use 0 (no control items) or 2 and more (one in 2, one in 10...).")


class StudyQuerySet(models.QuerySet["Study"]):
    def for_user(self, user) -> QuerySet[Study]:
        """Studies a user may open: all for superusers, owned or joined for everyone else."""
        if user.is_superuser:
            return self.all()
        return self.filter(Q(owner=user) | Q(memberships__user=user)).distinct()

    def active(self) -> QuerySet[Study]:
        return self.filter(archived_at__isnull=True)


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
    vetting_overlap = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1)],
        help_text="Annotators who vet each perturbation.",
    )
    comparison_groups = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1)],
        help_text="G: annotator groups; each pair x criterion gets one comparison per group.",
    )
    comparisons_need_vetting = models.BooleanField(
        default=True,
        help_text="Offer for comparison only perturbations vetted valid or score-invariant.",
    )
    lease_minutes = models.PositiveSmallIntegerField(
        default=30,
        validators=[MinValueValidator(1)],
        help_text="How long an item handed to an annotator stays theirs if not judged.",
    )
    vetted_only_default = models.BooleanField(
        default=True,
        verbose_name="Judge vetted perturbations only",
        help_text="The default for judge runs on this study: only perturbations vetted valid "
        "or score-invariant.",
    )
    confirm_above_requests = models.PositiveIntegerField(
        null=True,
        blank=True,
        verbose_name="Confirm model calls above",
        help_text="A judge run, adversarial search or LLM generation on this study that would "
        "send more HTTP requests to models than this asks to be confirmed first (empty: the "
        "server's default).",
    )
    control_every = models.PositiveSmallIntegerField(
        default=0,
        validators=[validate_control_every],
        verbose_name="Control items: one in",
        help_text="One unit in this many handed to an annotator is a control item with a "
        "known answer, unannounced (0: none).",
    )
    control_threshold = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MaxValueValidator(100)],
        verbose_name="Control accuracy threshold (%)",
        help_text="Annotators whose accuracy on control items is below this are flagged "
        "(empty: no threshold).",
    )
    control_exclude = models.BooleanField(
        default=False,
        verbose_name="Leave flagged annotators out of the reports",
        help_text="Their answers stay saved but no report counts them.",
    )
    archived_at = models.DateTimeField(
        null=True, blank=True, help_text="Archived studies leave members' lists; nothing is lost."
    )
    plan_built_at = models.DateTimeField(null=True, blank=True)
    plan_queued_at = models.DateTimeField(
        null=True, blank=True, help_text="Set while the worker builds a large plan."
    )
    plan_problem = models.TextField(
        blank=True, help_text="Why the criteria design could not be built, if it could not."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = StudyQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "studies"
        constraints = [
            models.CheckConstraint(
                condition=Q(vetting_overlap__gte=1, comparison_groups__gte=1, lease_minutes__gte=1),
                name="study_settings_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def archived(self) -> bool:
        return self.archived_at is not None


#: The settings kinds of work add to the study (`study_settings`), in the order declared: the
#: set-up page and the API show them after the core ones (services/studies.py).
KIND_SETUP_FIELDS: list[str] = []
#: Of them, those the progress page (and `PATCH settings/`) changes.
KIND_PROGRESS_FIELDS: list[str] = []


def study_settings(
    fields: dict[str, models.Field],
    *,
    progress: tuple[str, ...] = (),
    constraints: tuple[models.BaseConstraint, ...] = (),
) -> None:
    """A kind of work's own settings, declared in its models module: `fields` join `Study`
    (a many-to-many to `Criterion` is offered as the catalogue's criteria), `progress` names
    those its progress page changes, `constraints` check them in the database."""
    for name, field in fields.items():
        Study.add_to_class(name, field)
        KIND_SETUP_FIELDS.append(name)
    KIND_PROGRESS_FIELDS.extend(progress)
    Study._meta.constraints = [*Study._meta.constraints, *constraints]


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


class StudyPerturbation(models.Model):
    """A perturbation in a study's plan: its place in the work order and its vetting outcome.

    `verdict` is the consensus of the perturbation's vettings (blank until `vetting_overlap`
    vettings agree on a plurality, see services.vetting); `comparable` says whether it may be
    offered for pairwise comparison when the study requires vetting first.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="plan_perturbations")
    perturbation = models.ForeignKey(Perturbation, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField(help_text="Work order (a seeded shuffle).")
    verdict = models.CharField(max_length=16, blank=True)
    comparable = models.BooleanField(default=False)

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "perturbation"], name="plan_perturbation")
        ]
        indexes = [models.Index(fields=["study", "comparable", "position"])]

    def __str__(self) -> str:
        return f"{self.study_id}/{self.perturbation_id} @{self.position}"


class CriterionAssignment(models.Model):
    """The criteria design (methods §2): which criteria an annotator compares under, in a group."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="criterion_plan")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    group = models.PositiveSmallIntegerField()
    criterion = models.ForeignKey(Criterion, on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["study", "group", "annotator", "criterion"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "group", "criterion"], name="one_annotator_per_group_criterion"
            ),
            models.UniqueConstraint(
                fields=["study", "annotator", "criterion"], name="criterion_once_per_annotator"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.annotator_id} in group {self.group}: {self.criterion_id}"
