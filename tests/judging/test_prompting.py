"""Prompt templates and the messages of a call: placeholders, criteria, metrics, pairwise
order, few-shot examples, the misleading cue (methods §5), and every shipped strategy."""

import json

import pytest

from apps.catalog.models import Criterion, Metric
from apps.corpus.models import Perturbation, SourceItem
from apps.judging.loading import FIXTURES
from apps.judging.models import Strategy
from apps.judging.prompt_template import TemplateError, render, template_problems
from apps.judging.prompting import PromptError, call_values
from apps.judging.services import strategy_problems
from tests.judging.conftest import strategy

pytestmark = pytest.mark.django_db


def test_render_fills_each_placeholder_once():
    text = "A text that quotes {{text}} and {T} literally."
    assert render("<{{ text }}>", {"text": text}) == f"<{text}>"
    with pytest.raises(TemplateError):
        render("{{source}}", {})


def test_template_problems_name_what_is_wrong():
    assert template_problems("Rate {{text}}", pairwise=False) == []
    assert "unknown placeholder {{txt}}" in template_problems("{{txt}} {{text}}", pairwise=False)
    assert template_problems("{{source}}", pairwise=False)  # no text shown
    assert template_problems("{{text_a}} {{text_b}}", pairwise=True) == []
    assert template_problems("{{text}}", pairwise=True)
    assert template_problems("{{text}} {{text_a}}", pairwise=False)


def test_shipped_strategies_one_per_spec_strategy(demo):
    slugs = set(Strategy.objects.values_list("slug", flat=True))
    shipped = {row["slug"] for row in json.loads((FIXTURES / "strategies.json").read_text())}
    assert slugs == shipped
    families = set(Strategy.objects.values_list("family", flat=True))
    assert families == {
        "analyze-rate",
        "single",
        "pairwise",
        "reference",
        "geval",
        "prompting",
        "prometheus",
        "adveval",
    }
    fbi_single = {
        "fbi-single-vanilla",
        "fbi-single-explained",
        "fbi-single-rubric",
        "fbi-single-axis",
        "fbi-single-axis-rubric",
    }
    fbi_pairwise = {
        "fbi-pairwise-vanilla",
        "fbi-pairwise-explained",
        "fbi-pairwise-rules",
        "fbi-pairwise-axis",
        "fbi-pairwise-axis-rules",
    }
    assert fbi_single | fbi_pairwise | {"fbi-reference"} <= slugs
    assert {
        "cd-zero-shot",
        "cd-knowledge",
        "cd-few-shot",
        "cd-chain-of-thought",
        "cd-misleading-cue",
        "dhp-geval-score",
        "geval-probability",
        "hu-analyze-rate",
        "adveval-0-100",
        "prometheus",
    } <= slugs
    for s in Strategy.objects.all():
        assert strategy_problems(s) == {}, s.slug
        assert s.max_tokens >= 1
    analyze = strategy("hu-analyze-rate")
    assert (analyze.temperature, analyze.samples > 1) == (1.0, True)
    assert strategy("dhp-geval-score").samples == 5
    assert all(s.both_orders for s in Strategy.objects.filter(family="pairwise"))
    assert (strategy("adveval-0-100").scale_min, strategy("adveval-0-100").scale_max) == (0, 100)
    # the prompting techniques reports group by (methods §5), and which prompts name no quality
    techniques = {s.slug: s.technique for s in Strategy.objects.exclude(technique="")}
    assert techniques == {
        "cd-zero-shot": "zero-shot",
        "cd-knowledge": "knowledge",
        "cd-few-shot": "few-shot",
        "cd-chain-of-thought": "chain-of-thought",
        "cd-misleading-cue": "misleading-cue",
    }
    whole = {s.slug for s in Strategy.objects.all() if not s.names_quality}
    assert whole == {
        "fbi-single-vanilla",
        "fbi-single-explained",
        "fbi-single-rubric",
        "fbi-pairwise-vanilla",
        "fbi-pairwise-explained",
        "fbi-pairwise-rules",
        "fbi-reference",
    }


def _demo_texts():
    item = SourceItem.objects.filter(dataset__name="Demo news summaries").order_by("id").first()
    return item, Perturbation.objects.filter(item=item).order_by("id").first()


def test_criterion_placeholders_and_metric_definitions(demo):
    item, perturbation = _demo_texts()
    criterion = Criterion.objects.create(
        key="hu-faithfulness",
        aspect=Criterion.objects.first().aspect,
        description_type="literature",
        text="Is the {T} supported by the {S}?",
    )
    values = call_values(
        strategy("fbi-single-axis"),
        item=item,
        perturbation=perturbation,
        criterion=criterion,
        metric=None,
        original_first=None,
    )
    assert values["quality_description"] == "Is the summary supported by the source text?"
    assert values["text"] == perturbation.text and values["source"] == item.source
    metric = Metric.objects.get(task__slug="summarization", slug="coherence")
    values = call_values(
        strategy("cd-knowledge"),
        item=item,
        perturbation=None,
        criterion=None,
        metric=metric,
        original_first=None,
    )
    assert (values["quality"], values["quality_description"]) == ("Coherence", metric.definition)
    assert values["text"] == item.original and values["text_name"] == "summary"


def test_pairwise_order_decides_which_text_is_first(demo):
    item, perturbation = _demo_texts()
    pairwise = strategy("fbi-pairwise-vanilla")
    first = call_values(
        pairwise,
        item=item,
        perturbation=perturbation,
        criterion=None,
        metric=None,
        original_first=True,
    )
    second = call_values(
        pairwise,
        item=item,
        perturbation=perturbation,
        criterion=None,
        metric=None,
        original_first=False,
    )
    assert (first["text_a"], first["text_b"]) == (item.original, perturbation.text)
    assert (second["text_a"], second["text_b"]) == (perturbation.text, item.original)


def test_few_shot_examples_are_in_the_prompt(demo):
    item, _ = _demo_texts()
    values = call_values(
        strategy("cd-few-shot"),
        item=item,
        perturbation=None,
        criterion=None,
        metric=Metric.objects.get(task__slug="summarization", slug="fluency"),
        original_first=None,
    )
    assert "Example 1" in values["examples"] and "Example 2" in values["examples"]
    assert "Score: 5" in values["examples"] and "Score: 1" in values["examples"]


@pytest.mark.parametrize(
    ("ratings", "pr"),
    [([1, 1, 4], "5"), ([5, 4, 4], "1"), ([1, 2, 3], "1"), ([2, 2, 5], "5"), ([3, 3, 3], "1")],
)
def test_misleading_cue_claims_the_rating_pr(demo, ratings, pr):
    item, perturbation = _demo_texts()
    item.metadata = {"expert_ratings": {"coherence": ratings}}
    metric = Metric.objects.get(task__slug="summarization", slug="coherence")
    cue = strategy("cd-misleading-cue")
    values = call_values(
        cue, item=item, perturbation=None, criterion=None, metric=metric, original_first=None
    )
    assert values["expert_rating"] == pr  # PR = hi if m <= hi/2 else lo (m: mode, or max)
    with pytest.raises(PromptError):
        call_values(
            cue,
            item=item,
            perturbation=perturbation,
            criterion=None,
            metric=metric,
            original_first=None,
        )
    item.metadata = {}
    with pytest.raises(PromptError):
        call_values(
            cue, item=item, perturbation=None, criterion=None, metric=metric, original_first=None
        )
