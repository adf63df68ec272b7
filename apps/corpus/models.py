"""The corpus: datasets of source items and their perturbations, with provenance."""

from __future__ import annotations

from django.conf import settings
from django.db import models, transaction

from apps.catalog.models import PerturbationKind, Task
from apps.corpus.diff import DIFF_VERSION, DiffOp, diff_payload


class Dataset(models.Model):
    """Source items of one researcher (``owner``); names are unique per owner."""

    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    task = models.ForeignKey(Task, null=True, blank=True, on_delete=models.PROTECT)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    publisher_validated = models.BooleanField(
        default=False,
        help_text="Its perturbations were already validated by its publisher (a benchmark "
        "such as FBI): judge runs on vetted perturbations take them without re-vetting.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="dataset_name_per_owner"),
            models.UniqueConstraint(
                fields=["name"], condition=models.Q(owner=None), name="dataset_name_unowned"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class SourceItem(models.Model):
    """One input: source/context/instruction (may be empty), the original text, a task."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200)
    task = models.ForeignKey(Task, null=True, blank=True, on_delete=models.PROTECT)
    source = models.TextField(blank=True, help_text="Source, context or instruction.")
    original = models.TextField()
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset", "id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "external_id"], name="item_external_id")
        ]

    def __str__(self) -> str:
        return f"{self.dataset.name}:{self.external_id}"


class Origin(models.TextChoices):
    IMPORT = "import", "Imported"
    RULE = "rule", "Rule-based"
    LLM = "llm", "LLM-written"


class Perturbation(models.Model):
    """A perturbed text made from one source item by one kind, with provenance.

    `text` and `explanation` mirror the latest version; every version is kept.
    """

    item = models.ForeignKey(SourceItem, on_delete=models.CASCADE, related_name="perturbations")
    kind = models.ForeignKey(PerturbationKind, on_delete=models.PROTECT, related_name="+")
    external_id = models.CharField(max_length=200, blank=True)
    text = models.TextField()
    explanation = models.TextField(blank=True, help_text="The generator's account of the change.")
    origin = models.CharField(max_length=8, choices=Origin.choices)
    rule_name = models.CharField(max_length=40, blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    seed = models.BigIntegerField(null=True, blank=True)
    generation = models.JSONField(
        default=dict, blank=True, help_text="The LLM call that wrote it (model, prompt, reply)."
    )
    flags = models.JSONField(default=list, blank=True, help_text="Checks that failed.")
    diff = models.JSONField(
        default=dict, blank=True, help_text="Cached diff of original vs text (see diff_ops)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "kind_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "kind", "external_id"],
                condition=~models.Q(external_id=""),
                name="perturbation_external_id",
            )
        ]
        indexes = [models.Index(fields=["kind", "item"])]

    def __str__(self) -> str:
        return f"{self.item} / {self.kind.slug}"

    @property
    def unchanged(self) -> bool:
        """The text equals its item's original: nothing was perturbed."""
        return self.text == self.item.original

    def with_diff(self, original: str) -> Perturbation:
        """This new perturbation with its diff against ``original`` (its item's text), so that
        it is stored with it: the first annotator to see it does not pay for it on a click
        (docs/annotation.md, "Speed"). Returns self, for building lists."""
        self.diff = diff_payload(original, self.text)
        return self

    def diff_ops(self) -> list[DiffOp]:
        """The word-level diff of the item's original against this text, computed once and
        stored (on creation, by ``with_diff``, or after an import, by ``diffs.diffs_store``);
        recomputed when the stored one is not this text's (edited since) or the diff
        algorithm's version moves on."""
        if self.diff.get("version") != DIFF_VERSION or not self._diff_matches():
            self.diff = diff_payload(self.item.original, self.text)
            if self.pk:
                Perturbation.objects.filter(pk=self.pk).update(diff=self.diff)
        return self.diff["ops"]

    def _diff_matches(self) -> bool:
        """The stored diff's perturbed side spells this text (a diff's ops cover both texts)."""
        return "".join(op["b"] for op in self.diff["ops"]) == self.text

    @transaction.atomic
    def revise(self, *, text: str, explanation: str | None = None, author=None, note: str = ""):
        """Record an edit as a new version; earlier versions, and the generation, stay."""
        last = self.versions.order_by("-number").first()
        number = (last.number if last else 0) + 1
        self.text = text
        if explanation is not None:
            self.explanation = explanation
        self.diff = {}
        self.save(update_fields=["text", "explanation", "diff"])
        return PerturbationVersion.objects.create(
            perturbation=self,
            number=number,
            text=text,
            explanation=self.explanation,
            author=author,
            note=note,
        )


class PerturbationVersion(models.Model):
    """One version of a perturbation's text; version 1 is what was generated or imported."""

    perturbation = models.ForeignKey(
        Perturbation, on_delete=models.CASCADE, related_name="versions"
    )
    number = models.PositiveIntegerField()
    text = models.TextField()
    explanation = models.TextField(blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["perturbation", "number"]
        constraints = [
            models.UniqueConstraint(fields=["perturbation", "number"], name="version_number")
        ]

    def __str__(self) -> str:
        return f"{self.perturbation_id} v{self.number}"


class JobStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class BackgroundJob(models.Model):
    """Work the worker does for a page that polls it: a status and when it ended."""

    Status = JobStatus

    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at"]

    @property
    def finished(self) -> bool:
        return self.status in (JobStatus.DONE, JobStatus.FAILED)


class ImportJob(BackgroundJob):
    """An upload being imported, with progress for the page that shows it."""

    class Target(models.TextChoices):
        ITEMS = "items", "Source items"
        CRITERIA = "criteria", "Criteria"

    target = models.CharField(max_length=10, choices=Target.choices, default=Target.ITEMS)
    dataset_name = models.CharField(max_length=200, blank=True)
    file_format = models.CharField(max_length=10, blank=True)
    path = models.CharField(max_length=500)
    original_name = models.CharField(max_length=255)
    rows_total = models.PositiveIntegerField(default=0)
    rows_done = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"import of {self.original_name} ({self.status})"

    @property
    def percent(self) -> int:
        return int(100 * self.rows_done / self.rows_total) if self.rows_total else 0


class GenerationJob(BackgroundJob):
    """A request to perturb items of a dataset with some kinds; run by the worker."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    kinds = models.ManyToManyField(PerturbationKind, related_name="+")
    item_ids = models.JSONField(default=list, blank=True, help_text="Empty: every item.")
    degree = models.CharField(
        max_length=8, blank=True, help_text="For rule kinds without a degree of their own."
    )
    seed = models.BigIntegerField(default=0)
    use_kind_parameters = models.BooleanField(
        default=False, help_text="Use each kind's fixed parameters instead of length presets."
    )
    deliver_to = models.JSONField(
        default=dict,
        blank=True,
        help_text='Where the results go too, as {destination: id}: e.g. {"study": 3}, that '
        "study's vetting queue (see generation/destinations.py).",
    )
    generator = models.ForeignKey(
        "endpoints.Endpoint",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The model endpoint that writes the LLM kinds (none: rule kinds only).",
    )
    temperature = models.FloatField(default=0.7)
    max_tokens = models.PositiveIntegerField(default=2048)
    started = models.BooleanField(
        default=True,
        help_text="False: a job that calls a model, recorded with its estimate and waiting to "
        "be started (generation/estimate.py); the worker runs started jobs only.",
    )
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    counts = models.JSONField(default=dict, blank=True, help_text="created, merged, flagged...")
    problems = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"generation {self.pk} on {self.dataset_id} ({self.status})"

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0
