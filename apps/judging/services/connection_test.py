"""Test connection: one real call to a judge's endpoint, as it stands in the form, before
anything is saved or run (docs/judging.md, "Test connection").

The call goes through the runner a judge run asks through (``apps.endpoints.runner``: the
model client with the egress policy, the key's grant and its masking, the limiter) with a
sample prompt of the chosen
strategy, made from a short sample text; its reply is read by the strategy's parser. Nothing is
stored: no judge, endpoint, run, call or cache entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from django.core.exceptions import ValidationError

from apps.catalog.models import Criterion, Task
from apps.corpus.models import Perturbation, SourceItem
from apps.endpoints.client import CallOutcome
from apps.endpoints.models import Endpoint
from apps.endpoints.retry import RetryPolicy
from apps.endpoints.runner import Ask, Runner
from apps.endpoints.services import endpoint_problems, endpoint_settings_apply
from apps.judging.engine.params import strategy_params
from apps.judging.models import Strategy
from apps.judging.prompt_template import render
from apps.judging.prompting import call_values
from apps.judging.scoring import ReplyReader

#: The sample a test call judges: a source, its summary and a perturbed summary.
SAMPLE_SOURCE = (
    "The city council voted 7-2 on Tuesday to extend the public library's opening hours to "
    "9 pm on weekdays, starting next month. The change costs 40,000 euros a year."
)
SAMPLE_ORIGINAL = "The council voted to open the library until 9 pm on weekdays from next month."
SAMPLE_PERTURBED = "The council voted to open the library until 6 pm on weekdays from next month."
#: The strategy a test uses unless another is chosen: a plain 1-5 rating.
TEST_STRATEGY = "fbi-single-vanilla"
SAMPLE_TASK = "Summarize the news article in one sentence."
#: A test waits at most this long, and makes one attempt.
TEST_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ConnectionTest:
    """What one test call did: the prompt sent, the reply, how it was read, how long it took."""

    messages: list[dict[str, str]]
    outcome: CallOutcome
    parse_status: str = ""
    score: float | None = None
    verdict: str | None = None
    parse_reason: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome.ok

    def as_dict(self) -> dict[str, Any]:
        outcome = self.outcome
        return {
            "ok": outcome.ok,
            "messages": self.messages,
            "reply": outcome.text,
            "parse_status": self.parse_status,
            "score": self.score,
            "verdict": self.verdict,
            "parse_reason": self.parse_reason,
            "latency_s": outcome.latency_s,
            "model": outcome.model,
            "prompt_tokens": outcome.prompt_tokens,
            "completion_tokens": outcome.completion_tokens,
            "error_kind": outcome.error_kind,
            "error": outcome.error_message,
            "status_code": outcome.status_code,
        }


def sample_messages(strategy: Strategy) -> list[dict[str, str]]:
    """The strategy's prompt for the sample (a pairwise one compares the two summaries)."""
    task = Task(name="Summarization", text_name="summary", description=SAMPLE_TASK)
    item = SourceItem(task=task, source=SAMPLE_SOURCE, original=SAMPLE_ORIGINAL)
    criterion = Criterion.objects.filter(source="discern").order_by("pk").first()
    values = call_values(
        strategy,
        item=item,
        perturbation=Perturbation(text=SAMPLE_PERTURBED),
        criterion=criterion,
        metric=None,
        original_first=True,
        text=SAMPLE_PERTURBED if strategy.pairwise else SAMPLE_ORIGINAL,
    )
    messages = []
    if strategy.system_prompt.strip():
        messages.append({"role": "system", "content": render(strategy.system_prompt, values)})
    messages.append({"role": "user", "content": render(strategy.prompt_template, values)})
    return messages


def judge_connection_test(
    *, user: Any, settings: Mapping[str, Any], strategy: Strategy
) -> ConnectionTest:
    """One call to the endpoint these settings describe, owned by ``user`` (whose key grant
    applies); ValidationError, naming the fields, when the settings cannot make a call."""
    endpoint = Endpoint(owner=user, name="(connection test)")
    endpoint_settings_apply(endpoint, settings)
    if problems := endpoint_problems(endpoint):
        raise ValidationError(problems)
    config = replace(
        endpoint.config(),
        name=f"connection-test-{getattr(user, 'pk', 0)}",
        timeout_s=min(endpoint.timeout_s, TEST_TIMEOUT_S),
        retry=RetryPolicy(max_attempts=1),
    )
    messages = sample_messages(strategy)
    params = strategy_params(strategy, endpoint, 0)

    with Runner(config) as runner:
        (answer,) = runner.run([Ask(None, messages, params)])
    outcome = answer.outcome
    assert outcome is not None  # asked: the runner was not stopped
    if not outcome.ok:
        return ConnectionTest(messages, outcome)
    result = ReplyReader.for_strategy(strategy).read(outcome.text or "", outcome.logprobs)
    return ConnectionTest(
        messages,
        outcome,
        parse_status=result.status,
        score=result.score,
        verdict=result.verdict,
        parse_reason=result.reason,
    )
