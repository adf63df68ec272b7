"""The catalog: tasks and their metrics, the aspect tree, criteria and perturbation kinds."""

from __future__ import annotations

from django.db import models


class Task(models.Model):
    """An NLG task, e.g. summarization, with the metrics a judge scores it on."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    text_name = models.CharField(
        max_length=50, default="text", help_text='What the evaluated text is called: "summary".'
    )
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Metric(models.Model):
    """One quality metric of a task (summarization → coherence, consistency, ...)."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="metrics")
    slug = models.SlugField()
    name = models.CharField(max_length=100)
    definition = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["task", "position", "slug"]
        constraints = [models.UniqueConstraint(fields=["task", "slug"], name="metric_unique")]

    def __str__(self) -> str:
        return f"{self.task.slug}/{self.slug}"


class Aspect(models.Model):
    """A quality dimension; aspects form a tree rooted at Overall (methods §1)."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=100)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    definition = models.TextField(blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "slug"]

    def __str__(self) -> str:
        return self.name

    def lineage(self) -> list[Aspect]:
        """This aspect and its ancestors, nearest first (uses the cached tree, one query)."""
        by_id = {a.pk: a for a in Aspect.objects.all()}
        chain: list[Aspect] = []
        node: Aspect | None = by_id.get(self.pk, self)
        while node is not None:
            chain.append(node)
            node = by_id.get(node.parent_id) if node.parent_id else None
        return chain


class DescriptionType(models.TextChoices):
    DEFAULT = "default", "Default"
    SIMPLIFIED = "simplified", "Simplified"
    DETAILED = "detailed", "Detailed"
    TERM = "term", "Term"
    LIST = "list", "List"
    LITERATURE = "literature", "Literature"


class Criterion(models.Model):
    """An aspect described in words of one description type, with a score scale.

    The text may contain `{T}`, the placeholder for the evaluated text's name.
    """

    PLACEHOLDER = "{T}"

    key = models.SlugField(max_length=120, unique=True)
    aspect = models.ForeignKey(Aspect, on_delete=models.PROTECT, related_name="criteria")
    description_type = models.CharField(max_length=16, choices=DescriptionType.choices)
    text = models.TextField()
    scale_min = models.SmallIntegerField(default=1)
    scale_max = models.SmallIntegerField(default=5)
    source = models.CharField(max_length=100, blank=True, help_text="Where the wording is from.")

    class Meta:
        ordering = ["aspect__position", "description_type", "key"]
        verbose_name_plural = "criteria"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(scale_min__lt=models.F("scale_max")), name="criterion_scale"
            )
        ]

    def __str__(self) -> str:
        return self.key

    def render(self, text_name: str) -> str:
        return self.text.replace(self.PLACEHOLDER, text_name)


class Level(models.TextChoices):
    CHARACTER = "C", "Character"
    WORD = "W", "Word"
    SENTENCE = "S", "Sentence"


class Method(models.TextChoices):
    RULE = "rule", "Rule-based"
    LLM = "llm", "LLM-written"


class Degree(models.TextChoices):
    MINOR = "minor", "Minor"
    MAJOR = "major", "Major"


class KindFamily(models.TextChoices):
    ASPECT_TARGETED = "aspect-targeted", "Aspect-targeted (Hu et al.)"
    HIERARCHICAL = "hierarchical", "Hierarchical (DHP)"
    FBI = "fbi", "FBI"
    ADVERSARIAL = "adversarial", "Adversarial search (AdvEval)"
    CUSTOM = "custom", "Custom"


class KindQuerySet(models.QuerySet["PerturbationKind"]):
    def generable(self) -> KindQuerySet:
        """Kinds a generation job can make: all but those adversarial searches make."""
        return self.exclude(family=KindFamily.ADVERSARIAL)


class PerturbationKind(models.Model):
    """A named way to degrade (or keep) quality: level, method, degree, target aspect."""

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=120)
    family = models.CharField(max_length=20, choices=KindFamily.choices)
    level = models.CharField(max_length=1, choices=Level.choices, blank=True)
    method = models.CharField(max_length=8, choices=Method.choices)
    degree = models.CharField(max_length=8, choices=Degree.choices, blank=True)
    target_aspect = models.ForeignKey(
        Aspect, null=True, blank=True, on_delete=models.PROTECT, related_name="kinds"
    )
    task = models.ForeignKey(
        Task, null=True, blank=True, on_delete=models.PROTECT, related_name="kinds"
    )
    ability = models.CharField(max_length=40, blank=True, help_text="FBI ability, if any.")
    score_invariant = models.BooleanField(
        default=False, help_text="Changes the text but should not change its score."
    )
    description = models.TextField(blank=True)
    quality_issue = models.TextField(
        blank=True, help_text="The quality issue it causes, as shown to experts."
    )
    rule = models.CharField(max_length=40, blank=True, help_text="Rule function, if rule-based.")
    parameters = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=20, blank=True)

    objects = KindQuerySet.as_manager()

    class Meta:
        ordering = ["family", "slug"]

    def __str__(self) -> str:
        return self.name

    def expected_impact(self) -> list[Aspect]:
        """The aspects this kind should lower: its target and all the target's ancestors."""
        if self.target_aspect is None or self.score_invariant:
            return []
        return self.target_aspect.lineage()


class KindPrompt(models.Model):
    """How an LLM writes perturbations of one kind: an instruction and worked examples, our
    own wording, versioned (an edit is a new version; runs record the version they used)."""

    kind = models.ForeignKey(PerturbationKind, on_delete=models.CASCADE, related_name="prompts")
    version = models.PositiveIntegerField()
    instruction = models.TextField()
    examples = models.JSONField(
        default=list, help_text="[{source, original, perturbed, explanation}, ...]"
    )
    max_edit_size = models.FloatField(
        null=True, blank=True, help_text="Flag outputs changing more than this share of words."
    )
    note = models.TextField(blank=True, help_text="What this version changed.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kind", "-version"]
        constraints = [models.UniqueConstraint(fields=["kind", "version"], name="prompt_version")]

    def __str__(self) -> str:
        return f"{self.kind.slug} v{self.version}"
