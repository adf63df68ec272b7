"""Helpers of the judge import tests: files written in the test, the rows counted, the
messages a judge call of an imported strategy sends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings

from apps.corpus.models import Perturbation, SourceItem
from apps.endpoints.models import Endpoint
from apps.judging.models import Judge, JudgeCall, Strategy
from apps.judging.prompting import call_messages

EXAMPLES = Path(settings.BASE_DIR) / "fixtures" / "judges"
PROMPTFOO_EXAMPLE = EXAMPLES / "promptfoo-rubric.yaml"
INSPECT_EXAMPLE = EXAMPLES / "inspect-model-graded-qa.yaml"


def counts() -> tuple[int, int, int]:
    return Endpoint.objects.count(), Strategy.objects.count(), Judge.objects.count()


def messages_for(strategy: Strategy, item: SourceItem, perturbation: Perturbation | None):
    """What a judge run sends for this text (the run's own code path)."""
    call = JudgeCall(item=item, perturbation=perturbation, original_first=None)
    return call_messages(strategy, call)


def promptfoo_config(assertion: dict[str, Any], provider: Any = None) -> str:
    """A promptfoo config (YAML is a superset of JSON) with one test and this assertion."""
    import json

    provider = provider or {
        "id": "openai:chat:judge-model",
        "config": {"apiBaseUrl": "http://127.0.0.1:9/v1"},
    }
    config = {
        "description": "Test config",
        "defaultTest": {"options": {"provider": provider}},
        "tests": [{"vars": {"q": "x"}, "assert": [assertion]}],
    }
    return json.dumps(config)
