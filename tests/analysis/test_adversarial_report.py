"""The adversarial search report (methods §6): ASR per victim, direction and dataset with the
rule baseline beside it, final scores, effort, examples with diffs; HTML, CSV and JSON."""

from __future__ import annotations

import json

import pytest

from apps.analysis.reports import adversarial
from apps.analysis.reports.base import Report
from apps.judging.services import adversarial_search_work
from apps.judging.services.searches import adversarial_search_start
from tests.judging.conftest import (
    demo,  # noqa: F401  (a fixture)
    fake_openai_server,  # noqa: F401  (a fixture)
)
from tests.judging.scripted_search import scripted_reply, scripted_world

pytestmark = pytest.mark.django_db


def rows(report: Report, name: str) -> list[dict]:
    table = next(t for t in report.tables() if t.name == name)
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


@pytest.fixture
def searched(demo, fake_openai_server):  # noqa: F811
    world = scripted_world(demo, fake_openai_server, items=2)
    demo.datasets.add(world.dataset)
    search = world.create(study=demo, target_score=50, max_iterations=3, rule_baseline=True)
    adversarial_search_start(search=search)
    adversarial_search_work(search_id=search.pk)
    search.refresh_from_db()
    assert search.status == "done", search.error
    return demo, search


ADVEVAL, RULES = "AdvEval (LLM generator)", "Rule baseline"


def test_attack_success_with_the_rule_baseline_beside_it(searched):
    study, _ = searched
    report = adversarial.build(study)
    adveval, rules = rows(report, "attack_success")  # AdvEval, then the rules beside it
    assert [(r["victim"], r["direction"], r["dataset"]) for r in (adveval, rules)] == [
        ("victim", "R+", "scripted")
    ] * 2
    assert (adveval["method"], rules["method"]) == (ADVEVAL, RULES)
    # AdvEval reaches level 3 (S_gold 90, S_victim 40): both items succeed. The rules never
    # leave level 0 (the victim's 100): no success, but a result (their candidates scored).
    assert [
        (r["asr"], r["n_with_result"], r["items_no_result"], r["note"])
        for r in rows(report, "attack_success")
    ] == [(1.0, 2, 0, ""), (0.0, 2, 0, "")]
    assert adveval["ci_low"] == pytest.approx(0.3424, abs=1e-4)  # Wilson, 2 of 2
    assert adveval["ci_high"] == 1.0
    assert not report.warnings
    scores = {r["method"]: r for r in rows(report, "final_scores")}
    assert set(scores) == {ADVEVAL, RULES}  # the method in words
    adveval = scores[ADVEVAL]
    assert (adveval["n_items"], adveval["s_gold_mean"], adveval["s_victim_mean"]) == (2, 90, 40)
    # every item has the same scores: the interval of the mean is the mean itself
    assert (adveval["s_victim_ci_low"], adveval["s_victim_ci_high"]) == (40, 40)
    assert scores[RULES]["s_victim_mean"] == 100
    effort = {(r["method"], r["measure"]): r for r in rows(report, "iterations_and_queries")}
    iterations = effort[(ADVEVAL, "Iterations per item")]
    assert (iterations["mean"], iterations["ci_low"], iterations["n_items"]) == (3, 3, 2)
    # R0 then 2 candidates an iteration, each 1 victim sample and 8 gold samples
    assert effort[(ADVEVAL, "Victim queries per item")]["mean"] == 7
    assert effort[(ADVEVAL, "Gold queries per item")]["mean"] == 56
    outcomes = {r["method"]: r for r in rows(report, "item_outcomes")}
    assert (outcomes[ADVEVAL]["stopped_at_target"], outcomes[ADVEVAL]["items_with_result"]) == (
        2,
        2,
    )
    assert (outcomes[ADVEVAL]["generator_replies"], outcomes[ADVEVAL]["generator_unparsed"]) == (
        6,
        0,
    )
    assert (
        outcomes[RULES]["stopped_at_iteration_limit"],
        outcomes[RULES]["generator_replies"],
    ) == (
        2,
        0,
    )
    figures = report.sections[1].figures
    assert len(figures) == 2  # S_gold and S_victim box plots
    assert all("n under each box" in f.caption and "4 in all" in f.caption for f in figures)


N_COLUMNS = {"n_with_result", "n_items", "n_texts"}


def test_every_table_carries_n_and_its_columns_have_words(searched):
    """Each table has an N column; each column is a figure with a definition or a plain
    column with words (none left to the machine-name fallback)."""
    from apps.analysis.definitions import definition
    from apps.analysis.definitions.adversarial import LABELS
    from apps.analysis.formatting import COLUMN_LABELS

    report = adversarial.build(searched[0])
    for table in report.tables():
        assert N_COLUMNS & set(table.columns), table.name
        assert "N " in table.caption or "N the" in table.caption, table.name
        for column in table.columns:
            assert definition(column) or column in LABELS or column in COLUMN_LABELS, column
    examples = rows(report, "examples")
    assert {e["success"] for e in examples} == {"yes"}  # words, not booleans
    assert {e["n_items"] for e in examples} == {2}


def stubborn(request):
    """A generator that never writes a <RES> block (nor after the format reminder)."""
    if request.get("model") == "generator-model":
        return "I will not use tags."
    return scripted_reply(request)


def test_a_search_whose_generator_wrote_no_candidate_has_no_result_not_zero(
    demo,  # noqa: F811
    fake_openai_server,  # noqa: F811
):
    """2 items, 3 iterations each, every generator call asked again with the format reminder
    and never a candidate: 12 replies, none readable. The rules still find candidates."""
    world = scripted_world(demo, fake_openai_server, items=2)
    world.server.reply = stubborn
    demo.datasets.add(world.dataset)
    search = world.create(study=demo, target_score=50, max_iterations=3, rule_baseline=True)
    adversarial_search_start(search=search)
    adversarial_search_work(search_id=search.pk)
    report = adversarial.build(demo)
    adveval, rules = rows(report, "attack_success")
    assert (adveval["asr"], adveval["ci_low"], adveval["ci_high"]) == (None,) * 3
    assert (adveval["n_with_result"], adveval["items_no_result"]) == (0, 2)
    assert adveval["note"] == (
        "no result (2 of 2 items): 12 of 12 generator replies held no candidate (6 calls, "
        "6 format retries)"
    )
    assert (rules["asr"], rules["n_with_result"], rules["items_no_result"]) == (0.0, 2, 0)
    (warning,) = report.warnings
    assert f"Search {search.pk} (victim, R+), AdvEval (LLM generator)" in warning
    assert "unknown, not 0" in warning
    assert [r["method"] for r in rows(report, "final_scores")] == [RULES]
    outcomes = {r["method"]: r for r in rows(report, "item_outcomes")}
    adveval = outcomes[ADVEVAL]
    assert (
        adveval["n_items"],
        adveval["items_with_result"],
        adveval["stopped_at_iteration_limit"],
    ) == (
        2,
        0,
        2,
    )
    assert (adveval["generator_replies"], adveval["generator_unparsed"]) == (12, 12)
    effort = {(r["method"], r["measure"]): r for r in rows(report, "iterations_and_queries")}
    assert effort[(ADVEVAL, "Iterations per item")]["mean"] == 3  # unreadable rounds count
    assert effort[(ADVEVAL, "Victim queries per item")]["mean"] == 1  # R0 only
    assert rows(report, "examples") == []
    figures = report.sections[1].figures
    assert all("2 in all" in f.caption for f in figures)  # the rules' two items only


def test_examples_show_the_diff_from_r0(searched):
    report = adversarial.build(searched[0])
    examples = rows(report, "examples")
    assert len(examples) == 2 and all(e["success"] == "yes" for e in examples)
    first = examples[0]
    assert first["r0"] == "Answer at level 0 (item 0)."
    assert first["final_text"].startswith("Answer at level 3")
    assert first["diff_from_r0"] == "Answer at level [-0 (item 0)-]{+3, variant 1+}."


def test_no_labels_yet_says_so(searched):
    report = adversarial.build(searched[0])
    validation = next(s for s in report.sections if s.title == "Gold validation")
    assert "No annotator" in validation.text and not validation.tables


def test_the_report_is_in_the_study_report_as_html_csv_and_json(client, searched):
    study, _ = searched
    client.force_login(study.owner)
    base = f"/studies/{study.pk}/reports/adversarial-search"
    page = client.get(f"{base}/")
    assert page.status_code == 200 and b"Attack success rate" in page.content
    payload = json.loads(client.get(f"{base}.json").content)
    assert payload["name"] == "adversarial-search"
    csv_text = client.get(f"{base}.csv", {"table": "attack_success"}).content.decode()
    assert csv_text.splitlines()[0].startswith("victim,direction,dataset,method,asr")
    assert "victim,R+,scripted,AdvEval (LLM generator),1.0," in csv_text
    assert (
        "<th>Attack success rate [95% interval]</th>" in page.content.decode()
    )  # its definition's name
    assert "Adveval asr" not in page.content.decode()
    whole = client.get(f"/studies/{study.pk}/reports/all.html").content.decode()
    assert "Adversarial search" in whole and "Attack success rate" in whole


def test_an_empty_study_gets_an_empty_report(demo):  # noqa: F811
    report = adversarial.build(demo)
    assert report.notes and rows(report, "attack_success") == []


def test_gold_validation_by_hand(demo, fake_openai_server):  # noqa: F811
    """Four adversarial texts, all good by the gold judge (S_gold 90); three annotators label:

    s0: good good good      majority good     = gold: hit
    s1: not  not  not       majority not good        miss
    s2: good good not       majority good            hit
    s3: not  not  good      majority not good        miss   -> accuracy 2/4

    Nominal alpha: the coincidences are those of tests/analysis/stats/test_adversarial.py's
    hand case (o(good,good) = o(not,not) = 4, o(good,not) = o(not,good) = 2): alpha = 7/18.
    """
    import uuid

    from apps.annotation.services import GOLD_CHECK, gold_check_submit
    from tests.judging.scripted_search import searched_study

    searched = searched_study(demo, fake_openai_server, items=4)
    wanted = {"s0": (1, 1, 1), "s1": (0, 0, 0), "s2": (1, 1, 0), "s3": (0, 0, 1)}
    by_text = {p.pk: external for external, p in searched.texts.items()}
    for n, person in enumerate(searched.annotators):
        while slot := GOLD_CHECK.next(study=searched.study, person=person):
            gold_check_submit(
                study=searched.study,
                annotator=person,
                perturbation_id=slot.perturbation_id,
                good=bool(wanted[by_text[slot.perturbation_id]][n]),
                idempotency_key=uuid.uuid4(),
            )
    report = adversarial.build(searched.study)
    accuracy, agreement = rows(report, "gold_validation")
    assert (accuracy["value"], accuracy["n_texts"]) == (0.5, 4)
    assert accuracy["ci_low"] == pytest.approx(0.15, abs=0.01)  # Wilson, 2 of 4
    assert agreement["value"] == pytest.approx(7 / 18, abs=1e-4)
    assert (agreement["n_texts"], agreement["n_annotators"]) == (4, 3)


def test_search_outcome_counts_a_format_retry_as_the_call_it_is(demo, fake_openai_server):  # noqa: F811
    """The generator's first reply holds no candidate, its reply to the format reminder does
    (level 1, enough for the target): two calls, the first unreadable."""
    from apps.judging.adversarial.prompt import FORMAT_REMINDER
    from tests.judging.scripted_search import generator_reply

    def forgetful(request):
        last = request["messages"][-1]["content"]
        if last == FORMAT_REMINDER:
            return generator_reply(request["messages"][1]["content"])
        if request.get("model") == "generator-model":
            return "Here are two answers: level 1 and level 1 again."
        return scripted_reply(request)

    world = scripted_world(demo, fake_openai_server)
    world.server.reply = forgetful
    search = world.create(target_score=10, rule_baseline=False)
    adversarial_search_start(search=search)
    adversarial_search_work(search_id=search.pk)
    outcome = adversarial.search_outcome(search)
    item = search.items.get()
    assert (outcome.items, outcome.items_with_result) == (1, 1)
    assert (outcome.generator_calls, outcome.generator_unparsed) == (2, 1)
    assert outcome.generator_call_units() == {
        ("generator", item.pk, 1, 0): 1.0,
        ("generator", item.pk, 1, 1): 0.0,
    }
    assert (outcome.no_result_reason, outcome.note) == ("", "")
