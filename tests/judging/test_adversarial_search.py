"""Whole adversarial searches, worked in this process as the worker task works them, against
the local fake OpenAI-compatible server (tests/judging/scripted_search.py): where they stop,
what the generator is shown, what they return, and what they keep."""

from __future__ import annotations

import re
import time

import pytest

from apps.endpoints.client import SamplingParams
from apps.judging.adversarial import generator
from apps.judging.models import (
    Candidate,
    JudgeCall,
    RunStatus,
    SearchItem,
    SearchIteration,
)
from apps.judging.services import adversarial_search_work
from apps.judging.services.searches import adversarial_search_start
from tests.fakes.openai_server import Fault
from tests.judging.scripted_search import generator_reply, level_of, scripted_reply, scripted_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(demo, fake_openai_server):
    return scripted_world(demo, fake_openai_server)


def run(world, **options):
    search = world.create(**options)
    adversarial_search_start(search=search)
    adversarial_search_work(search_id=search.pk)
    search.refresh_from_db()
    return search


def only_item(search) -> SearchItem:
    return SearchItem.objects.select_related("best").get(search=search, method="adveval")


def generator_prompts(world) -> list[str]:
    return [
        r.json["messages"][-1]["content"]
        for r in world.server.requests
        if r.json.get("model") == "generator-model"
    ]


def test_a_search_stops_at_the_target_and_returns_the_best_text(world):
    search = run(world, target_score=50)  # S_fb = 20 L - 10: level 3 reaches 50
    item = only_item(search)
    assert (search.status, item.status, item.stop_reason) == ("done", "done", "target")
    assert item.iterations == 3
    assert item.best.text.startswith("Answer at level 3")
    assert (item.best.s_gold, item.best.s_victim, item.best.s_fb) == (90, 40, 50)
    best = max(Candidate.objects.filter(search_item=item), key=lambda c: c.s_fb)
    assert item.best.s_fb == best.s_fb and item.success is True
    assert item.victim_queries == 1 + 3 * 2  # R0, then 2 candidates an iteration


def test_a_search_stops_at_the_iteration_limit(world):
    search = run(world, target_score=1000, max_iterations=2)
    item = only_item(search)
    assert (item.stop_reason, item.iterations) == ("iterations", 2)
    assert item.best.text.startswith("Answer at level 2")
    assert SearchIteration.objects.filter(search_item=item).count() == 3  # 0, 1, 2
    assert len(generator_prompts(world)) == 2


def test_a_search_stops_when_the_victim_budget_is_spent(world):
    search = run(world, target_score=1000, max_iterations=100, query_budget=6)
    item = only_item(search)
    # R0 takes 1 query, then 2 + 2, then only 1 is left: one candidate asked for, then none
    assert (item.stop_reason, item.victim_queries) == ("budget", 6)
    wanted = list(
        SearchIteration.objects.filter(search_item=item)
        .order_by("number")
        .values_list("wanted", flat=True)
    )
    assert wanted == [1, 2, 2, 1]
    victim_calls = JudgeCall.objects.filter(run=search.judges.get(role="victim").run)
    assert victim_calls.count() == 6
    assert item.best.text.startswith("Answer at level 3")


def test_the_trajectory_holds_at_most_ten_candidates_in_ascending_order(world):
    run(world, target_score=1000, max_iterations=6, candidates_per_iteration=3)
    prompts = generator_prompts(world)
    assert len(prompts) == 6
    sizes = []
    for prompt in prompts:
        scores = [float(s) for s in re.findall(r"^Score: (-?[\d.]+)$", prompt, re.MULTILINE)]
        assert scores == sorted(scores)
        sizes.append(len(scores))
    assert sizes == [1, 4, 7, 10, 10, 10]
    # the last prompt shows the ten best of the 16 scored so far, R0 (-10) long gone
    assert "-10" not in prompts[-1] and "level 5" in prompts[-1]


def test_every_call_is_kept_like_a_judge_call(world):
    search = run(world, target_score=30)  # level 2
    gold, victim = search.judges.get(role="gold"), search.judges.get(role="victim")
    gold_calls = JudgeCall.objects.filter(run=gold.run)
    assert gold_calls.count() == 8 * (1 + 2 * 2)  # 8 samples of R0 and of four candidates
    assert set(gold_calls.values_list("parse_status", flat=True)) == {"parsed"}
    assert JudgeCall.objects.filter(run=victim.run).count() == 5
    gold.run.refresh_from_db()
    assert (gold.run.status, gold.run.done, gold.run.total) == ("done", 40, 40)
    iterations = SearchIteration.objects.filter(search_item__search=search, number__gt=0)
    assert all(it.request_id and it.raw_response and it.cache_key for it in iterations)
    search.refresh_from_db()
    assert search.generator_calls == 2 and search.generator_http_requests == 2
    total = 2 + 40 + 5
    assert world.server.request_count == total
    assert len({r.body for r in world.server.requests}) == total  # none asked twice


def test_an_unreadable_reply_is_kept_raw_and_never_scored(world):
    def victim_says_nonsense(request):
        if request.get("model") == "victim-model" and "level 1, variant 1" in str(
            request["messages"]
        ):
            return "I would rather not say."
        return scripted_reply(request)

    world.server.reply = victim_says_nonsense
    search = run(world, target_score=30)
    item = only_item(search)
    nonsense = Candidate.objects.get(search_item=item, text__contains="level 1, variant 1")
    assert nonsense.s_fb is None and nonsense.s_victim is None
    assert "victim victim: no reply could be read (1 unparsed)" in nonsense.unscored
    call = JudgeCall.objects.get(candidate=nonsense, run__search_judge__role="victim")
    assert (call.parse_status, call.score, call.raw_response) == (
        "unparsed",
        None,
        "I would rather not say.",
    )
    trajectory = generator_prompts(world)[1].split("Source:")[1]
    assert "level 1, variant 2" in trajectory and "level 1, variant 1" not in trajectory
    assert (item.stop_reason, item.best.text) == ("target", "Answer at level 2, variant 1.")


def test_the_same_search_again_is_answered_from_the_cache(world):
    first = run(world, target_score=50)
    sent = world.server.request_count
    again = run(world, target_score=50)
    assert world.server.request_count == sent  # not one HTTP request
    assert only_item(again).best.text == only_item(first).best.text
    assert again.generator_cached == again.generator_calls == 3
    assert again.status == RunStatus.DONE


def test_a_metric_victim_needs_no_llm(world):
    """BLEU as the victim (against R0): the generator and gold are the only LLM calls."""
    from apps.judging.models import Judge
    from apps.judging.services import JudgeChoice

    bleu = Judge.objects.get(name="BLEU", created_by=None)
    search = run(world, victim=JudgeChoice(bleu), target_score=50)
    item = only_item(search)
    victim_calls = JudgeCall.objects.filter(run=search.judges.get(role="victim").run)
    r0 = victim_calls.get(candidate__origin="initial")
    assert (r0.parse_status, r0.score) == ("parsed", 100.0)  # R0 is the reference itself
    assert all(c.raw_response.startswith("BLEU = ") for c in victim_calls)
    assert {r.json["model"] for r in world.server.requests} == {"generator-model", "gold-model"}
    assert item.stop_reason == "target" and item.success is True
    assert item.best.s_victim < 40 and item.best.s_gold == 90


def test_an_ensemble_of_gold_judges_averages_them(world):
    from apps.judging.services import JudgeChoice
    from tests.judging.conftest import llm_judge, strategy

    def replies(request):
        if request.get("model") == "second-gold-model":
            return "70"
        return scripted_reply(request)

    world.server.reply = replies
    second = llm_judge(world.server, name="second gold", model="second-gold-model")
    gold = [
        JudgeChoice(world.gold, strategy("adveval-gold-0-100")),
        JudgeChoice(second, strategy("adveval-0-100")),
    ]
    search = run(world, gold=gold, target_score=40)  # S_fb = 80 - (100 - 20 L)
    item = only_item(search)
    assert item.best.s_gold == 80
    runs = {str(j.run_id): j.judge.name for j in search.judges.filter(role="gold")}
    assert {runs[k]: v for k, v in item.best.gold_by_judge.items()} == {
        "gold": 90.0,
        "second gold": 70.0,
    }
    assert item.best.text.startswith("Answer at level 3")


def test_r_minus_looks_for_poor_texts_the_victim_scores_high(world):
    def replies(request):
        prompt = "\n".join(m["content"] for m in request["messages"])
        if request.get("model") == "gold-model":
            return "10"
        if request.get("model") == "victim-model":
            text = prompt.split("Answer with a single whole number")[0].rsplit(":\n", 1)[-1]
            return str(min(100, 20 * level_of(text)))
        return scripted_reply(request)

    world.server.reply = replies
    search = run(world, direction="R-", target_score=50)  # S_fb = 20 L - 10
    item = only_item(search)
    assert (item.stop_reason, item.success) == ("target", True)
    assert (item.best.s_gold, item.best.s_victim) == (10, 60)
    assert item.perturbation.kind.slug == "adversarial-r-minus"


def test_the_final_text_becomes_a_perturbation_with_its_trajectory(world):
    search = run(world, target_score=30, rule_baseline=True)
    item = only_item(search)
    perturbation = item.perturbation
    assert (perturbation.kind.slug, perturbation.text) == ("adversarial-r-plus", item.best.text)
    assert perturbation.item_id == item.item_id and perturbation.origin == "llm"
    assert perturbation.versions.count() == 1
    trajectory = perturbation.generation["trajectory"]
    assert [step["iteration"] for step in trajectory] == [0, 1, 2]
    assert trajectory[1]["generator"]["reply"].startswith("<RES>Answer at level 1")
    assert trajectory[2]["candidates"][0]["s_fb"] == 30
    assert perturbation.parameters["success"] is False  # S_gold 90, S_victim 60: gap 30
    assert perturbation.parameters["victim"] == "victim"
    rules = SearchItem.objects.get(search=search, method="rules")
    assert rules.status == "done" and rules.perturbation is None
    assert set(rules.candidates.exclude(origin="initial").values_list("origin", flat=True)) == {
        "rule"
    }
    assert rules.victim_queries <= search.query_budget


def test_the_rule_baseline_stops_at_the_same_limits(world):
    search = run(world, target_score=1000, max_iterations=3, rule_baseline=True)
    rules = SearchItem.objects.get(search=search, method="rules")
    assert (rules.stop_reason, rules.iterations) == ("iterations", 3)
    assert rules.victim_queries == 1 + 3 * 2
    assert not any("variant" in t for t in rules.candidates.values_list("text", flat=True))


def test_a_studys_final_texts_enter_its_vetting_queue(world, demo):
    from apps.annotation.models import StudyPerturbation

    demo.datasets.add(world.dataset)
    search = run(world, study=demo, target_score=50)
    item = only_item(search)
    assert demo.kinds.filter(slug="adversarial-r-plus").exists()
    assert StudyPerturbation.objects.filter(study=demo, perturbation=item.perturbation).exists()


def test_a_generator_reply_without_candidates_is_asked_once_more(world):
    from apps.judging.adversarial.prompt import FORMAT_REMINDER

    def forgetful(request):
        last = request["messages"][-1]["content"]
        first_round = "level 1" not in last
        if request.get("model") == "generator-model" and last != FORMAT_REMINDER and first_round:
            return "Here are two answers: level 1 and level 1 again."  # forgets the format
        if last == FORMAT_REMINDER:
            return generator_reply(request["messages"][1]["content"])
        return scripted_reply(request)

    world.server.reply = forgetful
    search = run(world, target_score=10)  # level 1 is enough
    first = SearchIteration.objects.get(search_item__search=search, number=1)
    assert (first.parse_status, first.raw_response) == (
        "parsed",
        "Here are two answers: level 1 and level 1 again.",
    )
    assert "after a format reminder" in first.parse_reason
    assert first.format_retry["raw_response"].startswith("<RES>Answer at level 1")
    assert first.candidates.count() == 2
    search.refresh_from_db()
    assert search.generator_http_requests == 2 and search.generator_calls == 1


def test_a_generator_that_never_answers_in_format_is_unparsed_and_the_search_goes_on(world):
    def stubborn(request):
        if request.get("model") == "generator-model":
            return "I will not use tags."
        return scripted_reply(request)

    world.server.reply = stubborn
    search = run(world, target_score=50, max_iterations=2)
    item = only_item(search)
    iterations = SearchIteration.objects.filter(search_item=item, number__gt=0)
    assert [it.parse_status for it in iterations] == ["unparsed", "unparsed"]
    assert all(it.format_retry["raw_response"] == "I will not use tags." for it in iterations)
    assert not Candidate.objects.filter(search_item=item, origin="generator").exists()
    assert (item.stop_reason, item.best.origin, item.perturbation) == (
        "iterations",
        "initial",
        None,
    )


def test_a_failed_generator_call_stops_the_item_and_a_resume_tries_it_again(world):
    from apps.judging.services import adversarial_search_resume
    from tests.fakes.openai_server import Fault

    world.server.add_rule(
        lambda r: (r.json or {}).get("model") == "generator-model",
        Fault.error(400, "model not found"),
        times=1,
    )
    search = run(world, target_score=50)
    item = only_item(search)
    assert (search.status, item.status) == ("failed", "failed")
    assert "generator: HTTP 400" in item.error and "model not found" in search.error
    failed = SearchIteration.objects.get(search_item=item, number=1)
    assert (failed.status, failed.parse_status, failed.error_kind) == (
        "failed",
        "error",
        "client_error",
    )
    adversarial_search_resume(search=search)
    adversarial_search_work(search_id=search.pk)
    search.refresh_from_db()
    item = only_item(search)
    assert (search.status, item.status, item.stop_reason) == ("done", "done", "target")
    assert search.generator_calls == 4  # the failed one, then three


def test_an_items_own_reference_is_what_a_metric_victim_compares_with(world):
    from apps.corpus.models import SourceItem
    from apps.judging.models import Judge
    from apps.judging.services import JudgeChoice

    item = SourceItem.objects.get(dataset=world.dataset)
    item.metadata = {"reference": "Answer at level 1, variant 1."}
    item.save()
    bleu = Judge.objects.get(name="BLEU", created_by=None)
    search = run(world, victim=JudgeChoice(bleu), target_score=1000, max_iterations=1)
    calls = JudgeCall.objects.filter(run=search.judges.get(role="victim").run)
    r0 = calls.get(candidate__origin="initial")
    same = calls.get(candidate__text="Answer at level 1, variant 1.")
    assert same.score == 100.0 and r0.score < 100.0  # the reference, not R0, scores 100
    assert same.parse_reason == "bleu against the reference"
    assert same.request["reference"] == "reference"


def test_each_generator_reply_is_handed_over_as_it_comes(world, fake_openai_server):
    """A call still on the wire (or waiting for the endpoint's limits) keeps no finished reply
    of the same round from being stored: a worker killed meanwhile loses none."""
    fake_openai_server.add_rule(
        lambda request: "Question 0" in str(request.json), Fault.slow(2.0), times=1
    )
    search = world.create()
    calls = [
        generator.GeneratorCall(
            number,
            [{"role": "user", "content": f"Question {number}. Source: x. Write one new text."}],
            SamplingParams(max_tokens=64),
            key=f"handed-over-{number}",
            request={},
            wanted=1,
        )
        for number in range(2)
    ]
    seen = []
    started = time.monotonic()

    def answered(call) -> None:
        seen.append((call.iteration_id, fake_openai_server.in_flight, time.monotonic() - started))

    generator.ask_all(search.generator, calls, answered)
    assert [number for number, _, _ in seen] == [1, 0]
    _, on_the_wire, after = seen[0]
    # handed over while the slow call was still being answered (the server may not yet have
    # counted the fast one's reply as finished: at least the slow one is on the wire)
    assert on_the_wire >= 1 and after < 1.5
    assert seen[1][2] >= 2.0
    assert all(call.outcome.ok and call.attempts == 1 for call in calls)
