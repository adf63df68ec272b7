"""Imported judges run like any other: their calls go to their endpoint, and the replies are
read into scores by the imported strategy's parser (docs/import.md)."""

from __future__ import annotations

import json

import pytest

from apps.corpus.models import Perturbation
from apps.judging.demo_model import demo_judges_import
from apps.judging.models import JudgeCall, Strategy
from apps.judging.services import judge_import
from tests.judging.conftest import new_run, work
from tests.judging.import_helpers import messages_for, promptfoo_config
from tests.judging.test_demo_model import served  # noqa: F401 (the demo's model server)

pytestmark = pytest.mark.django_db


def test_an_imported_llm_rubric_judge_runs_and_its_replies_become_scores(demo, fake_openai_server):
    odd = Perturbation.objects.filter(item__dataset__studies=demo).order_by("pk").first()

    def reply(request: dict) -> str:
        if odd.text in request["messages"][-1]["content"]:
            return "I cannot grade this."  # unparsed, never guessed
        return json.dumps({"reason": "fine", "pass": True, "score": 0.8})

    fake_openai_server.reply = reply
    base_url = fake_openai_server.base_url
    provider = {"id": "openai:chat:judge-model", "config": {"apiBaseUrl": base_url}}
    config = promptfoo_config({"type": "llm-rubric", "value": "Is faithful."}, provider)
    (judge,) = judge_import(owner=demo.owner, data=config.encode(), filename="c.yaml")
    strategy = Strategy.objects.get(name=judge.name)
    run = work(new_run(demo, judge, strategy.slug))
    calls = list(JudgeCall.objects.filter(run=run).select_related("item", "perturbation"))
    assert calls and run.status == "done", run.status
    sent = [request.json["messages"] for request in fake_openai_server.requests]
    expected = [messages_for(strategy, c.item, c.perturbation) for c in calls]
    assert sorted(map(str, sent)) == sorted(map(str, expected))
    odd_calls = [c for c in calls if c.perturbation_id == odd.pk]
    assert [(c.parse_status, c.score) for c in odd_calls] == [("unparsed", None)]
    assert {c.score for c in calls if c.perturbation_id != odd.pk} == {0.8}


def test_the_demo_imports_both_examples_and_its_model_server_answers_them(served):  # noqa: F811
    study, demo_judge = served
    base_url = demo_judge.endpoint.base_url
    judges = demo_judges_import(owner=study.owner, base_url=base_url)
    assert sorted(j.name for j in judges) == [
        "Demo Inspect: model_graded_qa",
        "Demo rubric: llm-rubric",
    ]
    assert demo_judges_import(owner=study.owner, base_url=base_url) == []  # once only
    item = study.datasets.get().items.order_by("pk").first()
    for judge in judges:
        strategy = Strategy.objects.get(name=judge.name)
        run = work(new_run(study, judge, strategy.slug, item_ids=[item.pk]))
        calls = list(JudgeCall.objects.filter(run=run).select_related("perturbation__kind"))
        assert calls and all(c.parse_status == "parsed" for c in calls), [
            c.raw_response for c in calls
        ]
        originals = {c.score for c in calls if c.perturbation is None}
        assert originals == {1.0}, judge.name
        caught = {
            c.score
            for c in calls
            if c.perturbation is not None and c.perturbation.kind.slug != "spelling-mistake"
        }
        assert caught == {0.0}, judge.name
