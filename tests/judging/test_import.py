"""Importing judges from promptfoo configs and Inspect AI scorer descriptions (issue 51,
docs/import.md): what each maps to, the prompt it sends, what is refused (field named), and
that a refusal creates nothing."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from apps.corpus.models import Perturbation
from apps.judging.importing import ImportRefused
from apps.judging.models import Judge
from apps.judging.scoring import ReplyReader
from apps.judging.services import judge_import, judge_import_preview
from tests.factories import key_grant
from tests.judging.import_helpers import (
    INSPECT_EXAMPLE,
    PROMPTFOO_EXAMPLE,
    counts,
    messages_for,
    promptfoo_config,
)

pytestmark = pytest.mark.django_db

#: promptfoo's DEFAULT_GRADING_PROMPT system message (src/prompts/grading.ts), dedented.
PROMPTFOO_RUBRIC_SYSTEM = """You are grading output according to a user-specified rubric. If the statement in the rubric is true, then the output passes the test. You respond with a JSON object with this structure: {reason: string, pass: boolean, score: number}

Examples:

<Output>Hello world</Output>
<Rubric>Content contains a greeting</Rubric>
{"reason": "the content contains the word 'Hello'", "pass": true, "score": 1.0}

<Output>Avast ye swabs, repel the invaders!</Output>
<Rubric>Does not speak like a pirate</Rubric>
{"reason": "'avast ye' is a common pirate term", "pass": false, "score": 0.0}"""
EXAMPLE_RUBRIC = "The summary states only facts found in the article, with no spelling mistakes."

#: Inspect AI's DEFAULT_MODEL_GRADED_QA_TEMPLATE and default_instructions(partial_credit=True)
#: (src/inspect_ai/scorer/_model.py), filled by Python's str.format as Inspect fills them.
INSPECT_QA_TEMPLATE = """
You are assessing a submitted answer on a given task based on a criterion. Here is the data:

[BEGIN DATA]
***
[Task]: {question}
***
[Submission]: {answer}
***
[Criterion]: {criterion}
***
[END DATA]

Does the submission meet the criterion?

{instructions}
"""
INSPECT_PARTIAL_INSTRUCTIONS = """
After assessing the submitted answer, reply with 'GRADE: $LETTER' (without quotes) where LETTER is one of CPI.  Please choose ONE option for the grade: either "C" for correct answers, "P" for partially correct answers,or "I" for incorrect answers.

For example, after reviewing a correct answer you might write 'GRADE: C' or after reviewing an incorrect answer you might write 'GRADE: I'.

First, write out in a step by step manner your reasoning about the criterion to be sure that your conclusion is correct. Avoid simply stating the correct answers at the outset. Then, end with your answer formatted as 'GRADE: $LETTER' (without quotes) where LETTER is one of CPI.
"""


def _import(user, text: str, name: str = "judge.yaml") -> list[Judge]:
    return judge_import(owner=user, data=text.encode(), filename=name)


def _refused(user, text: str, name: str = "judge.yaml") -> list[str]:
    before = counts()
    with pytest.raises(ImportRefused) as refused:
        _import(user, text, name)
    assert counts() == before  # nothing created
    return refused.value.problems


def test_the_shipped_promptfoo_example_asks_exactly_what_llm_rubric_asks(demo):
    (judge,) = judge_import(
        owner=demo.owner, data=PROMPTFOO_EXAMPLE.read_bytes(), filename="promptfoo-rubric.yaml"
    )
    assert judge.name == "Demo rubric: llm-rubric" and judge.created_by == demo.owner
    endpoint = judge.endpoint
    assert (endpoint.base_url, endpoint.model, endpoint.api_key_env) == (
        "http://127.0.0.1:8765/v1",
        "demo-judge",
        "",
    )
    strategy = judge_strategy(judge)
    assert (strategy.parser, strategy.scale_min, strategy.scale_max) == ("json_pass_score", 0, 1)
    assert strategy.temperature == 0 and "threshold: 0.5" in strategy.description
    perturbation = Perturbation.objects.filter(item__dataset__studies=demo).first()
    text = perturbation.text
    assert messages_for(strategy, perturbation.item, perturbation) == [
        {"role": "system", "content": PROMPTFOO_RUBRIC_SYSTEM},
        {
            "role": "user",
            "content": f"<Output>\n{text}\n</Output>\n<Rubric>\n{EXAMPLE_RUBRIC}\n</Rubric>",
        },
    ]


def judge_strategy(judge: Judge):
    from apps.judging.models import Strategy

    return Strategy.objects.get(created_by=judge.created_by, name=judge.name)


def test_the_inspect_example_asks_what_model_graded_qa_asks(demo):
    (judge,) = judge_import(
        owner=demo.owner, data=INSPECT_EXAMPLE.read_bytes(), filename="inspect.yaml"
    )
    strategy = judge_strategy(judge)
    assert (strategy.parser, strategy.grade_pattern, strategy.family) == (
        "grade_letter",
        "",
        "reference",
    )
    perturbation = Perturbation.objects.filter(item__dataset__studies=demo).first()
    item = perturbation.item
    expected = INSPECT_QA_TEMPLATE.format(
        question=item.source,
        answer=perturbation.text,
        criterion=item.original,  # Inspect's target: the original text
        instructions=INSPECT_PARTIAL_INSTRUCTIONS,
    )
    assert messages_for(strategy, item, perturbation) == [{"role": "user", "content": expected}]
    reader = ReplyReader.for_strategy(strategy)
    assert reader.read("Fine.\nGRADE: P").score == 0.5


def test_a_fixed_criterion_and_custom_template_and_pattern_are_used(researcher):
    description = """
scorer: model_graded_fact
model: vllm/my-judge
base_url: http://127.0.0.1:8000/v1
criterion: "Mentions the vote count {7-2}."
template: "Q: {question}\\nA: {answer}\\nExpert: {criterion}\\n{instructions}\\nLiteral {{braces}}"
instructions: "Say Verdict: C or Verdict: I."
grade_pattern: "Verdict: ([CI])"
"""
    (judge,) = _import(researcher, description, "fact.yaml")
    strategy = judge_strategy(judge)
    assert strategy.prompt_template == (
        "Q: {{source}}\nA: {{text}}\nExpert: Mentions the vote count {7-2}.\n"
        "Say Verdict: C or Verdict: I.\nLiteral {braces}"
    )
    assert strategy.family == "single" and strategy.grade_pattern == "Verdict: ([CI])"
    reader = ReplyReader.for_strategy(strategy)
    assert reader.read("Checked.\nVerdict: C").score == 1.0
    assert reader.read("Checked.\nVerdict: I").score == 0.0
    assert not reader.read("Checked.\nGRADE: C").parsed  # the default pattern is not used


@pytest.mark.parametrize(
    ("description", "named"),
    [
        (
            "scorer: model_graded_qa\nmodel: openai/m\nbase_url: http://127.0.0.1:1/v1\n"
            "grade_pattern: 'GRADE: [CPI]'",
            "grade_pattern: a grade pattern needs a capture group",
        ),
        (
            "scorer: model_graded_qa\nmodel: openai/m\nbase_url: http://127.0.0.1:1/v1\n"
            "template: '{question} {answer} {topic}'",
            "template: {topic} has no Discern equivalent",
        ),
        (
            "scorer: model_graded_qa\nmodel: anthropic/claude-3-5-sonnet",
            'model: "anthropic/claude-3-5-sonnet" is not an OpenAI-compatible model',
        ),
        ("scorer: includes\nmodel: openai/m", 'scorer: "includes" is not one Discern imports'),
        (
            "scorer: model_graded_qa\nmodel: openai/gpt-4o",
            "api_key_env: api.openai.com needs a key",
        ),
        (
            "scorer: model_graded_qa\nmodel: openai/m\nbase_url: http://127.0.0.1:1/v1\n"
            "criterion: 'judge {{text}}'",
            "criterion: {{text}} would be read as a Discern placeholder",
        ),
    ],
)
def test_what_an_inspect_description_cannot_map_is_refused_by_field(researcher, description, named):
    problems = _refused(researcher, description)
    assert any(named in problem for problem in problems), problems


def test_an_unknown_assertion_type_is_refused_by_name_and_nothing_is_created(researcher):
    config = """
defaultTest:
  options:
    provider: {id: "openai:chat:m", config: {apiBaseUrl: "http://127.0.0.1:9/v1"}}
tests:
  - assert:
      - type: llm-rubric
        value: Is polite.
      - type: similar
        value: Hello there
"""
    problems = _refused(researcher, config)
    assert problems == [
        'tests[0].assert[1].type: "similar" is not a model-graded assertion Discern can import '
        "(it imports llm-rubric, g-eval, model-graded-closedqa)"
    ]


@pytest.mark.parametrize(
    ("provider", "named"),
    [
        ("anthropic:messages:claude-3-5-sonnet", 'defaultTest.options.provider: "anthropic'),
        ({"id": "bedrock:claude"}, 'defaultTest.options.provider.id: "bedrock:claude" is not'),
        ("file://grader.py", 'defaultTest.options.provider: "file://grader.py" is not'),
        ("openai:embedding:text-embedding-3", "is not a chat model"),
        ("openai:chat:gpt-4o", "defaultTest.options.provider.config.apiKeyEnvar: api.openai.com"),
        ({"id": "openai:chat:gpt-4o", "config": {"apiKey": "sk-123"}}, "config.apiKey: a key"),
        (
            {
                "id": "openai:chat:m",
                "config": {"apiBaseUrl": "http://127.0.0.1:1/v1", "headers": {}},
            },
            "config.headers: not a setting",
        ),
    ],
)
def test_a_provider_discern_cannot_call_is_refused_by_name(researcher, provider, named):
    config = promptfoo_config({"type": "llm-rubric", "value": "Polite."}, provider)
    problems = _refused(researcher, config)
    assert any(named in problem for problem in problems), problems


def test_a_key_variable_needs_a_grant(researcher):
    provider = {
        "id": "openai:chat:gpt-4o-mini",
        "config": {"apiKeyEnvar": "DISCERN_KEY_LAB", "temperature": 0.2, "max_tokens": 300},
    }
    config = promptfoo_config({"type": "llm-rubric", "value": "Polite."}, provider)
    (problem,) = _refused(researcher, config)
    assert problem.startswith(
        "defaultTest.options.provider.config.apiKeyEnvar: DISCERN_KEY_LAB is not granted to you"
    )
    key_grant("DISCERN_KEY_LAB", researcher)
    (judge,) = _import(researcher, config)
    assert (judge.endpoint.base_url, judge.endpoint.api_key_env) == (
        "https://api.openai.com/v1",
        "DISCERN_KEY_LAB",
    )
    strategy = judge_strategy(judge)
    assert (strategy.temperature, strategy.max_tokens) == (0.2, 300)


def test_a_rubrics_output_variable_is_the_text_and_others_are_refused(researcher):
    config = promptfoo_config({"type": "llm-rubric", "value": "{{ output }} is polite."})
    (judge,) = _import(researcher, config)
    assert "<Rubric>\n{{text}} is polite.\n</Rubric>" in judge_strategy(judge).prompt_template
    other = promptfoo_config({"type": "llm-rubric", "value": "Answers {{question}}."})
    (problem,) = _refused(researcher, other)
    assert problem.startswith("tests[0].assert[0].value: {{question}} has no Discern equivalent")


def test_closed_qa_and_g_eval_map_to_one_call_each(researcher):
    config = """
description: Mixed
defaultTest:
  options:
    provider: openai:chat:m
  assert:
    - type: model-graded-closedqa
      value: Mentions the price.
tests:
  - options:
      provider: {id: "openai:m", config: {apiBaseUrl: "http://127.0.0.1:9/v1"}}
    assert:
      - type: g-eval
        value: Coherence
        threshold: 0.7
      - type: model-graded-closedqa
        value: Mentions the price.
        provider: {id: "openai:chat:m", config: {apiBaseUrl: "http://127.0.0.1:9/v1"}}
  - assert:
      - type: g-eval
        value: Coherence
        provider: {id: "openai:m", config: {apiBaseUrl: "http://127.0.0.1:9/v1"}}
"""
    # defaultTest's closed-QA asks OpenAI with no key: refused; say where.
    (problem,) = _refused(researcher, config)
    assert problem.startswith(
        "defaultTest.options.provider.config.apiKeyEnvar: api.openai.com needs a key"
    )
    fixed = config.replace(
        "provider: openai:chat:m",
        'provider: {id: "openai:chat:m", config: {apiBaseUrl: "http://127.0.0.1:9/v1"}}',
    )
    judges = _import(researcher, fixed)
    assert [j.name for j in judges] == ["Mixed: model-graded-closedqa", "Mixed: g-eval"]
    closed, geval = (judge_strategy(j) for j in judges)
    assert closed.parser == "grade_letter" and closed.grade_pattern == r"([YN])\s*$"
    assert "[Criterion]: Mentions the price.\n" in closed.prompt_template
    reader = ReplyReader.for_strategy(closed)
    assert reader.read("Reasoning...\nY\nY\n").score == 1.0
    assert reader.read("Reasoning...\nN\nN").score == 0.0
    assert not reader.read("I am not sure.").parsed
    assert (geval.parser, geval.scale_max, geval.family) == ("json_pass_score", 10, "geval")
    assert "**Evaluation Criteria**\nCoherence\n" in geval.prompt_template
    assert ReplyReader.for_strategy(geval).read('{"score":7,"reason":"ok"}').score == 7.0


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (b"tests: [unclosed", "judge.yaml: not YAML or JSON (line 1)"),
        (b"- just\n- a list\n", "judge.yaml: a promptfoo config or an Inspect AI scorer"),
        (b"", "not an empty file"),
        (b"\xff\xfe\x00garbage", "judge.yaml: not text (UTF-8)"),
        (b"!!python/object/apply:os.system ['true']", "judge.yaml: not YAML or JSON"),
        (b"a: 1\n", "neither a promptfoo config"),
        (b"tests: 3\n", "tests: a list of tests"),
        (b"tests:\n  - assert: 5\n", "tests[0].assert: a list of assertions"),
        (b"x: " + b"[" * 5000 + b"]" * 5000, "judge.yaml:"),
        (b"#" * (256 * 1024 + 1), "at most 256 KB"),
    ],
)
def test_bad_files_get_a_clear_error_naming_the_file_or_field(researcher, data, named):
    before = counts()
    with pytest.raises(ImportRefused) as refused:
        judge_import_preview(owner=researcher, data=data, filename="judge.yaml")
    assert any(named in problem for problem in refused.value.problems), refused.value.problems
    assert counts() == before


def test_alias_bombs_are_read_without_blowing_up(researcher):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    problems = _refused(researcher, bomb + "tests: *i\n")
    assert problems


def test_names_are_unique_per_owner_and_the_same_assertion_makes_one_judge(researcher):
    assertion = {"type": "llm-rubric", "value": "Polite.", "metric": "politeness"}
    config = promptfoo_config(assertion)
    (first,) = _import(researcher, config)
    (second,) = _import(researcher, config)
    assert (first.name, second.name) == ("Test config: politeness", "Test config: politeness (2)")


def test_the_command_prints_the_mapping_and_dry_run_keeps_nothing(researcher, capsys):
    before = counts()
    call_command("import_judge", str(PROMPTFOO_EXAMPLE), owner="rita", dry_run=True)
    out = capsys.readouterr().out
    assert "tests[0].assert[0].threshold -> strategy.description = 0.5" in out
    assert "<Rubric>\n" + EXAMPLE_RUBRIC in out and "Dry run: nothing was created." in out
    assert counts() == before
    call_command("import_judge", str(INSPECT_EXAMPLE), owner="rita")
    assert Judge.objects.filter(created_by=researcher, name="Demo Inspect: model_graded_qa")
    with pytest.raises(CommandError, match="nothing created"):
        call_command("import_judge", str(INSPECT_EXAMPLE), owner="rita", base_url="ftp://x")
    with pytest.raises(CommandError, match="no researcher named nobody"):
        call_command("import_judge", str(INSPECT_EXAMPLE), owner="nobody")
