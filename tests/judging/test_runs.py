"""Judge runs through the run machinery (plan → claim → cache → call → parse → save) with the
real ``openai`` client against the local fake server: faults, unparsed replies, the cache,
pairwise orders, G-Eval probabilities and the judge's concurrency limit."""

import json
import time

import pytest

from apps.corpus.models import SourceItem
from apps.judging.models import JudgeCall, ParseStatus
from apps.judging.selectors import run_failures
from apps.judging.services import judge_run_rerun
from tests.fakes.openai_server import Fault, Reply
from tests.judging.conftest import llm_judge, new_run, work

pytestmark = pytest.mark.django_db


@pytest.fixture
def item(demo) -> SourceItem:
    return SourceItem.objects.filter(dataset__name="Demo news summaries").order_by("id").first()


def one_text(demo, judge, slug, criteria, item, **selection):
    """A run over one original on one criterion (R calls)."""
    return new_run(
        demo,
        judge,
        slug,
        criteria=criteria,
        item_ids=[item.pk],
        include_perturbations=False,
        **selection,
    )


def test_every_call_is_kept_with_request_reply_and_provenance(
    demo, criteria, item, fake_openai_server
):
    judge = llm_judge(fake_openai_server)
    run = work(
        new_run(
            demo, judge, "fbi-single-explained", criteria=criteria("fluency"), item_ids=[item.pk]
        )
    )
    assert (run.status, run.total, run.done, run.failed, run.unscored) == ("done", 4, 4, 0, 0)
    assert run.http_requests == fake_openai_server.request_count == 4
    assert run.prompt_tokens > 0 and run.completion_tokens > 0
    served = {r.request_id: r.json for r in fake_openai_server.requests}
    for call in run.calls.all():
        assert call.parse_status == "parsed" and 1 <= call.score <= 5
        assert call.raw_response.startswith("Analysis:")
        assert call.request_id in served and call.system_fingerprint == "fp_fake_0001"
        assert call.attempts == 1 and call.latency is not None and call.cache_key
        assert call.prompt_tokens and call.completion_tokens
        body = call.request["body"]
        assert body == served[call.request_id]  # exactly what went over the wire
        assert (body["model"], body["max_tokens"], body["temperature"]) == ("judge-model", 512, 0)
        assert call.target_text in body["messages"][-1]["content"]


def test_rate_limit_retry_after_is_honoured(demo, criteria, item, fake_openai_server):
    fake_openai_server.enqueue(Fault.rate_limit("0.3"))
    run = work(
        one_text(
            demo, llm_judge(fake_openai_server), "fbi-single-vanilla", criteria("overall"), item
        )
    )
    call = run.calls.get()
    assert (call.parse_status, call.attempts, run.http_requests) == ("parsed", 2, 2)
    assert call.total_seconds >= 0.3


def test_server_errors_fail_after_bounded_attempts_and_are_never_cached(
    demo, criteria, item, fake_openai_server
):
    fake_openai_server.add_rule(lambda request: True, Fault.server_error(503))
    judge = llm_judge(fake_openai_server, max_attempts=2)
    run = work(
        new_run(demo, judge, "fbi-single-vanilla", criteria=criteria("overall"), item_ids=[item.pk])
    )
    # not one reply: the run failed, and says why (in the provider's words)
    assert (run.status, run.done, run.failed) == ("failed", 0, 4)
    assert run.error.startswith("every call failed (4); most common: 4 x server_error: ")
    assert "The server had an error" in run.error
    assert fake_openai_server.request_count == run.http_requests == 8  # 2 attempts each
    call = run.calls.first()
    assert (call.error_kind, call.score, call.raw_response) == ("server_error", None, "")
    assert "HTTP 503" in call.error
    assert run_failures(run)["errors"][0]["n"] == 4
    fake_openai_server.reset()
    again = work(judge_run_rerun(run=run, user=demo.owner))
    assert (again.done, again.cached, again.failed) == (4, 0, 0)  # the errors were not reused
    assert fake_openai_server.request_count == 4


@pytest.mark.parametrize("fault", [Fault.garbage_json(), Fault.non_json()])
def test_garbage_replies_are_errors_not_scores(demo, criteria, item, fake_openai_server, fault):
    fake_openai_server.enqueue(fault)
    run = work(
        one_text(
            demo, llm_judge(fake_openai_server), "fbi-single-vanilla", criteria("overall"), item
        )
    )
    call = run.calls.get()
    assert (call.parse_status, call.error_kind, call.score) == ("error", "invalid_response", None)
    assert run.failed == 1


def test_a_hanging_server_times_out_and_the_call_is_retried(
    demo, criteria, item, fake_openai_server
):
    fake_openai_server.enqueue(Fault.hang(3))
    judge = llm_judge(fake_openai_server, timeout_s=0.4)
    run = work(one_text(demo, judge, "fbi-single-vanilla", criteria("overall"), item))
    call = run.calls.get()
    assert (call.parse_status, call.attempts) == ("parsed", 2)
    assert call.total_seconds >= 0.4


def test_a_slow_reply_is_waited_for(demo, criteria, item, fake_openai_server):
    fake_openai_server.enqueue(Fault.slow(0.3))
    run = work(
        one_text(
            demo, llm_judge(fake_openai_server), "fbi-single-vanilla", criteria("overall"), item
        )
    )
    call = run.calls.get()
    assert call.parse_status == "parsed" and call.latency >= 0.3 and call.attempts == 1


def test_waiting_for_a_slow_reply_keeps_no_core_busy(demo, criteria, item, fake_openai_server):
    """A run waits for its replies without turning over: with a model's seconds a reply, the
    run's loop once went round and round while a save was due with nothing to save (228 ms of
    CPU a call at 1 s a reply, a core kept busy)."""
    fake_openai_server.enqueue(Fault.slow(1.5))
    judge = llm_judge(fake_openai_server)
    run = one_text(demo, judge, "fbi-single-vanilla", criteria("overall"), item)
    wall, cpu = time.perf_counter(), time.process_time()
    run = work(run)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert run.calls.get().parse_status == "parsed" and wall >= 1.5
    assert cpu < wall / 3, f"{cpu:.2f} s of CPU in {wall:.2f} s"


@pytest.mark.parametrize(
    "reply", ["It reads well overall.", "Rating: 4/10", "Rating: 2\nRating: 4", "", "Rating: 7"]
)
def test_an_unparseable_reply_is_stored_raw_and_unscored(
    demo, criteria, item, fake_openai_server, reply
):
    fake_openai_server.reply = lambda request: reply
    run = work(
        one_text(
            demo, llm_judge(fake_openai_server), "fbi-single-explained", criteria("overall"), item
        )
    )
    call = run.calls.get()
    assert (call.parse_status, call.score, call.raw_response) == ("unparsed", None, reply)
    assert call.parse_reason
    assert (run.done, run.unscored, run.failed) == (1, 1, 0)
    exported = json.loads(next(iter(_export(run))))
    assert exported["score"] is None and exported["raw_response"] == reply


def _export(run):
    from apps.judging.exporting import export_jsonl

    return export_jsonl(run)


def test_format_reminder_asks_once_more_and_records_it(demo, criteria, item, fake_openai_server):
    def reply(request):
        last = request["messages"][-1]["content"]
        return "Analysis: fine.\nRating: 3" if "answer again" in last else "Quite good, I'd say."

    fake_openai_server.reply = reply
    run = new_run(
        demo,
        llm_judge(fake_openai_server),
        "hu-analyze-rate",
        criteria=criteria("overall"),
        item_ids=[item.pk],
        include_perturbations=False,
    )
    run = work(run)
    assert run.total == run.strategy.samples == 10
    call = run.calls.first()
    assert (call.parse_status, call.score) == ("parsed", 3.0)
    assert call.raw_response == "Quite good, I'd say."  # the first reply is kept as it was
    assert call.format_retry["raw_response"] == "Analysis: fine.\nRating: 3"
    assert "after a format reminder" in call.parse_reason
    assert run.http_requests == fake_openai_server.request_count == 20


def test_rerun_is_served_from_cache_and_samples_stay_distinct(
    demo, criteria, item, fake_openai_server
):
    judge = llm_judge(fake_openai_server, default_params={"seed": 7})
    run = work(
        new_run(
            demo,
            judge,
            "dhp-geval-score",
            criteria=criteria("overall"),
            item_ids=[item.pk],
            include_perturbations=False,
        )
    )
    assert run.total == 5 and fake_openai_server.request_count == 5  # R = 5: five requests
    keys = set(run.calls.values_list("cache_key", flat=True))
    assert len(keys) == 5
    seeds = sorted(r.json["seed"] for r in fake_openai_server.requests)
    assert seeds == [7, 8, 9, 10, 11]  # a fixed seed is offset per sample, or samples repeat
    again = work(judge_run_rerun(run=run, user=demo.owner))
    assert fake_openai_server.request_count == 5  # no HTTP call at all
    assert (again.done, again.cached, again.http_requests, again.prompt_tokens) == (5, 5, 0, 0)
    original = dict(run.calls.values_list("identity", "score"))
    assert dict(again.calls.values_list("identity", "score")) == original
    assert all(c.cached_from_id for c in again.calls.all())


def test_another_model_is_never_served_from_the_cache(demo, criteria, item, fake_openai_server):
    first = llm_judge(fake_openai_server, model="model-a")
    work(one_text(demo, first, "fbi-single-vanilla", criteria("overall"), item))
    other = llm_judge(fake_openai_server, model="model-b")
    run = work(one_text(demo, other, "fbi-single-vanilla", criteria("overall"), item))
    assert run.cached == 0 and fake_openai_server.request_count == 2
    assert [r.json["model"] for r in fake_openai_server.requests] == ["model-a", "model-b"]


def test_pairwise_runs_both_orders_and_records_which_came_first(
    demo, criteria, item, fake_openai_server
):
    fake_openai_server.reply = lambda request: "A"  # a judge that always prefers the first text
    run = work(
        new_run(
            demo,
            llm_judge(fake_openai_server),
            "fbi-pairwise-vanilla",
            criteria=criteria("overall"),
            item_ids=[item.pk],
        )
    )
    assert run.total == 6  # 3 perturbations x 2 orders
    for call in run.calls.select_related("perturbation", "item"):
        prompt = call.request["body"]["messages"][-1]["content"]
        first, second = (
            (call.item.original, call.perturbation.text)
            if call.original_first
            else (call.perturbation.text, call.item.original)
        )
        assert f"Answer A:\n{first}\n\nAnswer B:\n{second}\n" in prompt
        assert call.verdict == "A"
        assert call.preferred == ("original" if call.original_first else "perturbed")


def test_geval_scores_by_probability_weighted_mean(demo, item, fake_openai_server):
    from apps.catalog.models import Metric

    top = [[("4", -0.2231), ("3", -1.6094), ("5", -2.9957)]]  # p = 0.8, 0.2, 0.05
    fake_openai_server.reply = lambda request: Reply("4", top_logprobs=top)
    metric = Metric.objects.get(task__slug="summarization", slug="fluency")
    run = work(
        new_run(
            demo,
            llm_judge(fake_openai_server),
            "geval-probability",
            metrics=[metric],
            item_ids=[item.pk],
            include_perturbations=False,
        )
    )
    call = run.calls.get()
    request = fake_openai_server.requests[0].json
    assert request["logprobs"] is True and request["top_logprobs"] == 10
    assert call.score == pytest.approx((4 * 0.8 + 3 * 0.2 + 5 * 0.05) / 1.05, abs=1e-3)
    assert call.logprobs and "probability-weighted" in call.parse_reason


def test_concurrency_never_exceeds_the_judge_limit(demo, criteria, fake_openai_server):
    fake_openai_server.latency = 0.05
    judge = llm_judge(fake_openai_server, max_concurrency=3)
    run = work(new_run(demo, judge, "fbi-single-axis", criteria=criteria("overall", "fluency")))
    assert run.done == 40 and run.cached == 0 and fake_openai_server.request_count == 40
    assert fake_openai_server.max_in_flight == 3


def test_identical_requests_in_one_run_are_asked_once(demo, criteria, item, fake_openai_server):
    from apps.corpus.models import Perturbation

    twin = Perturbation.objects.filter(item=item).first()
    Perturbation.objects.create(item=item, kind=twin.kind, text=twin.text, origin="import")
    run = work(
        new_run(
            demo,
            llm_judge(fake_openai_server),
            "fbi-single-vanilla",
            criteria=criteria("overall"),
            item_ids=[item.pk],
        )
    )
    assert (run.total, run.done, run.cached) == (5, 5, 1)
    assert fake_openai_server.request_count == 4
    copy = run.calls.get(cached=True)
    assert copy.cached_from.perturbation_id == twin.pk


def test_a_missing_api_key_is_an_error_naming_the_variable(
    demo, criteria, item, fake_openai_server, monkeypatch
):
    monkeypatch.delenv("DISCERN_KEY_TEST", raising=False)
    judge = llm_judge(fake_openai_server, api_key_env="DISCERN_KEY_TEST")
    run = work(one_text(demo, judge, "fbi-single-vanilla", criteria("overall"), item))
    call = run.calls.get()
    assert call.parse_status == ParseStatus.ERROR and "DISCERN_KEY_TEST" in call.error
    assert fake_openai_server.request_count == 0
    monkeypatch.setenv("DISCERN_KEY_TEST", "sk-secret-value")
    fake_openai_server.api_key = "sk-secret-value"
    again = work(judge_run_rerun(run=run, user=demo.owner))
    assert again.done == 1
    assert not JudgeCall.objects.filter(raw_response__contains="sk-secret").exists()
    assert "sk-secret" not in json.dumps(list(JudgeCall.objects.values_list("request", flat=True)))


def test_a_reply_or_error_that_repeats_the_key_is_stored_masked(
    demo, criteria, item, fake_openai_server, monkeypatch
):
    secret = "sk-secret-echoed-0123456789"
    monkeypatch.setenv("DISCERN_KEY_TEST", secret)
    fake_openai_server.api_key = secret
    fake_openai_server.enqueue(Fault.error(400, f"Invalid request from key {secret}"))
    judge = llm_judge(fake_openai_server, api_key_env="DISCERN_KEY_TEST")
    run = work(one_text(demo, judge, "fbi-single-vanilla", criteria("overall"), item))
    failed = run.calls.get()
    assert failed.parse_status == ParseStatus.ERROR
    assert "Invalid request from key ***" in failed.error
    fake_openai_server.enqueue(Fault.reply(f"4\nYou sent: Bearer {secret}"))
    again = work(judge_run_rerun(run=run, user=demo.owner))
    echoed = again.calls.get()
    assert echoed.raw_response == "4\nYou sent: Bearer ***"
    assert echoed.parse_status == ParseStatus.PARSED and echoed.score == 4
    stored = JudgeCall.objects.values_list("raw_response", "error", "request")
    assert secret not in json.dumps(list(stored))


def test_a_run_whose_calls_make_no_progress_fails_with_the_reason(
    demo, criteria, item, fake_openai_server, monkeypatch
):
    """Calls stuck in flight (here: a hang shorter than the judge's timeout, and a stall limit
    made tiny) fail the run with the reason, whatever its heartbeat says."""
    from apps.judging.engine import llm_work
    from workers.tasks.judging import work_run

    monkeypatch.setattr(llm_work, "stall_limit", lambda endpoint: 1.0)
    fake_openai_server.add_rule(lambda request: True, Fault.hang(30.0))
    judge = llm_judge(fake_openai_server, timeout_s=60.0)
    run = one_text(demo, judge, "fbi-single-vanilla", criteria("overall"), item)
    work_run.apply(args=(run.pk,))  # plans, then works, as the worker does
    run.refresh_from_db()
    assert run.status == "failed"
    assert "RunStalled: no call finished in 1 s with 1 request(s) in flight" in run.error
    assert run.http_requests == fake_openai_server.request_count == 1
