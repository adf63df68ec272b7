"""Strategies: how a judge is asked. Data, not code, and versioned: an edit makes a new
version, old versions stay, and a judge run pins the version it used."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Max, OuterRef, Q, QuerySet, Subquery

from apps.judging.parsers import PARSERS, Scale
from apps.judging.prompt_template import placeholders

#: How each parser reads a reply, in words (the strategy form's choices).
PARSER_LABELS = {
    "analysis_rating": 'Analysis, then "Rating: n" (Hu et al.)',
    "grade_letter": 'A letter grade: "GRADE: C/P/I" (Inspect AI) or a last "Y"/"N" (promptfoo)',
    "json_pass_score": 'JSON {"reason", "pass", "score"} (promptfoo llm-rubric, g-eval)',
    "pairwise": 'A verdict between two texts: "A", "B" or "tie"',
    "prometheus": 'Feedback, then "[RESULT] n" (Prometheus)',
    "score_0_100": "A score from 0 to 100 (AdvEval)",
    "score_only": "A score alone (vanilla, G-Eval)",
}
PARSER_CHOICES = [(name, PARSER_LABELS.get(name, name)) for name in sorted(PARSERS)]
#: Parsers whose scores fall between whole numbers (a pass rate, a partial grade).
FRACTION_PARSERS = frozenset({"grade_letter", "json_pass_score"})
#: Placeholders whose value depends on the criterion or metric a call judges.
QUALITY_PLACEHOLDERS = frozenset({"quality", "quality_description", "expert_rating"})


class Family(models.TextChoices):
    ANALYZE_RATE = "analyze-rate", "Analyze then rate (Hu et al.)"
    SINGLE = "single", "Single answer (FBI)"
    PAIRWISE = "pairwise", "Pairwise (FBI)"
    REFERENCE = "reference", "Reference-guided (FBI)"
    GEVAL = "geval", "G-Eval score only (DHP)"
    PROMPTING = "prompting", "Prompting strategies (Chaudhary et al.)"
    PROMETHEUS = "prometheus", "Prometheus"
    ADVEVAL = "adveval", "0-100 (AdvEval)"


class Technique(models.TextChoices):
    """The prompting technique of a strategy (Chaudhary et al., methods §5): what the judge
    consistency report groups by, and how a misleading-cue run finds its knowledge-prompt run."""

    ZERO_SHOT = "zero-shot", "Zero-shot"
    KNOWLEDGE = "knowledge", "Knowledge (definitions given)"
    FEW_SHOT = "few-shot", "Few-shot"
    CHAIN_OF_THOUGHT = "chain-of-thought", "Chain of thought"
    MISLEADING_CUE = "misleading-cue", "Misleading cue"


class StrategyQuerySet(models.QuerySet["Strategy"]):
    def latest_versions(self) -> QuerySet[Strategy]:
        """The newest version of every strategy slug."""
        newest = (
            Strategy.objects.filter(slug=OuterRef("slug"))
            .values("slug")
            .annotate(v=Max("version"))
            .values("v")
        )
        return self.filter(version=Subquery(newest))


class Strategy(models.Model):
    """One version of a prompting strategy: template, scale, output parser, sampling.

    The prompt template uses ``{{placeholders}}`` (see apps.judging.prompt_template).
    """

    slug = models.SlugField(max_length=80)
    version = models.PositiveIntegerField(default=1)
    name = models.CharField(max_length=150)
    family = models.CharField(max_length=16, choices=Family.choices)
    technique = models.CharField(
        max_length=20,
        choices=Technique.choices,
        blank=True,
        help_text="Prompting technique, for comparing the strategies of one judge in reports.",
    )
    description = models.TextField(blank=True)
    source = models.CharField(max_length=200, blank=True, help_text="The paper it follows.")
    system_prompt = models.TextField(blank=True)
    prompt_template = models.TextField()
    scale_min = models.SmallIntegerField(default=1)
    scale_max = models.SmallIntegerField(default=5)
    parser = models.CharField(max_length=32, choices=PARSER_CHOICES)
    samples = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="R: calls per text and criterion; scores are averaged in analyses.",
    )
    temperature = models.FloatField(null=True, blank=True)
    max_tokens = models.PositiveIntegerField(default=512, validators=[MinValueValidator(1)])
    both_orders = models.BooleanField(
        default=False, help_text="Pairwise: judge each pair twice, the order swapped."
    )
    use_logprobs = models.BooleanField(
        default=False, help_text="G-Eval: score by the probability-weighted mean of the scale."
    )
    top_logprobs = models.PositiveSmallIntegerField(
        default=10, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    grade_pattern = models.CharField(
        max_length=300,
        blank=True,
        help_text="Letter grades: the regular expression whose first group is the letter "
        "(empty: Inspect AI's GRADE: C/P/I).",
    )
    format_retry = models.BooleanField(
        default=False, help_text="Ask once more, with a format reminder, when a reply is unparsed."
    )
    format_reminder = models.TextField(blank=True)
    examples = models.JSONField(
        default=list, blank=True, help_text='Few-shot: [{"source", "text", "score", "why"}].'
    )
    note = models.TextField(blank=True, help_text="What this version changed.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = StrategyQuerySet.as_manager()

    class Meta:
        ordering = ["family", "slug", "-version"]
        verbose_name_plural = "strategies"
        constraints = [
            models.UniqueConstraint(fields=["slug", "version"], name="strategy_version"),
            models.CheckConstraint(
                condition=Q(scale_min__lt=F("scale_max")), name="strategy_scale"
            ),
            models.CheckConstraint(condition=Q(samples__gte=1), name="strategy_samples"),
        ]

    def __str__(self) -> str:
        return f"{self.name} (v{self.version})"

    @property
    def pairwise(self) -> bool:
        return self.parser == "pairwise"

    @property
    def names_quality(self) -> bool:
        """Whether the prompt changes with the criterion or metric judged. When it does not
        (several FBI prompts judge the answer as a whole), asking once per criterion would
        ask the same question several times: a text is judged once (docs/judging.md)."""
        used = placeholders(self.prompt_template) | placeholders(self.system_prompt)
        return bool(used & QUALITY_PLACEHOLDERS)

    @property
    def scale(self) -> Scale:
        """The scale replies are read on: with decimals for the parsers whose scores fall
        between whole numbers (promptfoo's 0-1 scores, Inspect's partial grade)."""
        return Scale(self.scale_min, self.scale_max, self.parser in FRACTION_PARSERS)
