"""Best-worst scaling in the reports and the raw data (SPEC §10): SPEC's hand case of five
texts of one item (a: the original, b-e: four perturbed texts) in three tuples,

    (a, b, c, d) best a worst d; (a, b, c, e) best b worst e; (a, c, d, e) best a worst d
    → a: 2/3, b: 1/2, c: 0, d: −1, e: −1/2,

gives those counting scores in the Human agreement report and the downloads, with the
split-half reliability (or why there is none) and its N; a judge ordering the texts as people
do correlates 1 with them, one swap less."""

import csv
import io
import json

import pytest
from django.urls import reverse

from apps.analysis.reports import human_agreement, judge_vs_human
from apps.analysis.stats.bws import TOO_FEW
from apps.annotation.models.best_worst import BestWorst, BestWorstTuple
from apps.catalog.models import Criterion
from tests.analysis.builders import annotators, judge_run, score, study_with_items
from tests.factories import PerturbationFactory

pytestmark = pytest.mark.django_db

COHERENCE = "discern-coherence-default"
#: SPEC §10's tuples: (texts shown, best, worst), texts by letter.
HAND_CASE = [("abcd", "a", "d"), ("abce", "b", "e"), ("acde", "a", "d")]
SCORES = {"a": 2 / 3, "b": 1 / 2, "c": 0.0, "d": -1.0, "e": -1 / 2}


def _table(report, name):
    table = next(t for t in report.tables() if t.name == name)
    return [dict(zip(table.columns, row, strict=True)) for row in table.rows]


def _section(report, title="Best-worst scaling"):
    found = [s for s in report.sections if s.title == title]
    return found[0] if found else None


def _answer(study, unit, letters, best, worst, person):
    return BestWorst.objects.create(
        study=study,
        unit=unit,
        annotator=person,
        best=letters.index(best),
        worst=letters.index(worst),
    )


def _hand_case(n_annotators: int, *, tuples=HAND_CASE):
    """One item, its original (a) and four perturbed texts (b-e), the tuples answered alike by
    each annotator."""
    study, (item,), perts = study_with_items(1, ["negation"])
    study.best_worst_criteria.set(Criterion.objects.filter(key=COHERENCE))
    kind = perts["negation"][0].kind
    perturbed = [perts["negation"][0]] + [
        PerturbationFactory(item=item, kind=kind, external_id=f"negation-0{n}", text=f"p {n}")
        for n in "cde"
    ]
    ids = {"a": None, **{letter: p.pk for letter, p in zip("bcde", perturbed, strict=True)}}
    criterion = Criterion.objects.get(key=COHERENCE)
    people = annotators(n_annotators)
    for number, (letters, best, worst) in enumerate(tuples):
        unit = BestWorstTuple.objects.create(
            study=study,
            item=item,
            criterion=criterion,
            number=number,
            texts=[ids[letter] for letter in letters],
            position=number,
        )
        for person in people:
            _answer(study, unit, letters, best, worst, person)
    study.item, study.ids, study.people = item, ids, people
    names = {"a": "original", "b": "negation-0"}
    study.names = {letter: names.get(letter, f"negation-0{letter}") for letter in "abcde"}
    return study


def test_the_report_shows_spec_hand_case_counting_scores_highest_first(catalog, client):
    study = _hand_case(2)
    report = human_agreement.build(study)
    rows = _table(report, "bws_scores")
    letter = {name: key for key, name in study.names.items()}
    assert [letter[r["text"]] for r in rows] == ["a", "b", "c", "e", "d"]
    for row in rows:
        assert row["counting_score"] == pytest.approx(SCORES[letter[row["text"]]], abs=1e-4)
        assert row["criterion"] == COHERENCE and row["item"] == "i0"
    by_text = {letter[r["text"]]: r for r in rows}
    # two annotators answered alike: a shown 3 times x 2, best 2 x 2, never worst
    assert (by_text["a"]["best"], by_text["a"]["worst"], by_text["a"]["appearances"]) == (4, 0, 6)
    assert by_text["a"]["kind"] is None and by_text["b"]["kind"] == "negation"
    assert by_text["d"]["appearances"] == 4  # shown in two tuples, by two people

    (reliability,) = _table(report, "bws_reliability")
    # each tuple's two (identical) answers go to different halves: the halves agree exactly
    assert (reliability["n_texts"], reliability["n_answers"], reliability["n_annotators"]) == (
        5,
        6,
        2,
    )
    assert reliability["split_half_reliability"] == pytest.approx(1.0)
    assert (reliability["ci_low"], reliability["ci_high"]) == (1.0, 1.0)
    assert (reliability["split_low"], reliability["split_high"]) == (1.0, 1.0)
    assert reliability["split_half_spearman_brown"] == pytest.approx(1.0)
    assert (reliability["n_texts_in_both"], reliability["splits_left_out"]) == (5, 0)
    assert reliability["splits"] == 100 and reliability["no_figure_because"] == ""

    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/reports/human-agreement/").content.decode()
    assert 'data-table="bws_scores"' in page and "Counting score" in page
    assert "Split-half reliability (mean Spearman rho between halves) [95% interval]" in page
    payload = client.get(f"/studies/{study.pk}/reports/human-agreement.json").json()
    meanings = next(s for s in payload["sections"] if s["title"] == "What the figures mean")
    keys = {row[0] for row in meanings["tables"][0]["rows"]}
    assert {"counting_score", "split_half_reliability", "split_half_spearman_brown"} <= keys


def test_one_annotator_still_gets_a_reliability_with_its_n(catalog):
    """With one answer per tuple the tuples themselves are divided between the halves."""
    study = _hand_case(1)
    (row,) = _table(human_agreement.build(study), "bws_reliability")
    assert (row["n_texts"], row["n_answers"], row["n_annotators"]) == (5, 3, 1)
    if row["no_figure_because"]:
        assert row["split_half_reliability"] is None
    else:
        assert row["ci_low"] <= row["split_half_reliability"] <= row["ci_high"]
        assert row["n_texts_in_both"] >= 3
        assert row["splits_left_out"] < row["splits"]
    scores = {
        r["text"]: r["counting_score"] for r in _table(human_agreement.build(study), "bws_scores")
    }
    assert scores[study.names["a"]] == pytest.approx(2 / 3, abs=1e-4)


def test_a_reliability_that_cannot_be_computed_says_why(catalog):
    study = _hand_case(1, tuples=HAND_CASE[:1])
    report = human_agreement.build(study)
    (row,) = _table(report, "bws_reliability")
    assert (row["n_texts"], row["n_answers"]) == (4, 1)
    assert row["split_half_reliability"] is None and row["no_figure_because"] == TOO_FEW
    assert f"{COHERENCE}: 1 answers on 4 texts, {TOO_FEW}" in _section(report).text


def test_a_study_without_best_worst_shows_nothing_new_and_one_that_asks_says_so(catalog, client):
    study, _, _ = study_with_items(2, ["negation"])
    assert _section(human_agreement.build(study)) is None
    assert _section(judge_vs_human.build(study)) is None
    study.best_worst_criteria.set(Criterion.objects.filter(key=COHERENCE))
    for report in (human_agreement.build(study), judge_vs_human.build(study)):
        section = _section(report)
        assert (
            section.text
            == "This study asks for best-worst scaling but has no best-worst answers yet."
        )
        assert section.tables == []
    client.force_login(study.owner)
    for name in ("human-agreement", "judge-vs-human"):
        assert client.get(f"/studies/{study.pk}/reports/{name}/").status_code == 200
    for table in ("best-worst", "best-worst-scores"):
        text = _download(client, study, table, "csv")
        assert len(text.splitlines()) == 1  # the header alone
        assert _download(client, study, table, "jsonl") == ""


def _judge(study, order):
    """A judge run scoring the five texts on coherence: `order` from best to worst."""
    run = judge_run(study)
    pert = {p.pk: p for p in study.item.perturbations.all()}
    for value, letter in zip([5.0, 4.0, 3.0, 2.0, 1.0], order, strict=True):
        text = study.ids[letter]
        score(run, study.item, pert.get(text), value, criterion=COHERENCE)
    return run


def test_judge_vs_human_rank_correlation_by_hand(catalog, client):
    study = _hand_case(2)
    alike = _judge(study, "abced")  # the counting scores' order: rho = tau = 1
    swapped = _judge(study, "abecd")  # c and e swapped: sum d² = 2, rho = 1 - 6·2/(5·24) = 0.9
    report = judge_vs_human.build(study)
    rows = {r["run"].split(":")[0]: r for r in _table(report, "judge_bws")}
    same, one_swap = rows[str(alike.pk)], rows[str(swapped.pk)]
    assert (same["criterion"], same["aspect"], same["n_texts"]) == (COHERENCE, "coherence", 5)
    assert same["judge_bws_spearman"] == pytest.approx(1.0)
    assert same["judge_bws_kendall"] == pytest.approx(1.0)
    assert (same["ci_low"], same["ci_high"]) == (1.0, 1.0)  # every resample orders alike
    assert (same["fisher_ci_low"], same["fisher_ci_high"]) == (1.0, 1.0)
    assert one_swap["judge_bws_spearman"] == pytest.approx(0.9)
    # 10 pairs, one discordant (c, e): tau = (9 - 1) / 10
    assert one_swap["judge_bws_kendall"] == pytest.approx(0.8)
    assert one_swap["ci_low"] < 0.9 < one_swap["ci_high"]  # the bootstrap over texts
    assert one_swap["fisher_ci_low"] < 0.9 < one_swap["fisher_ci_high"]
    assert one_swap["kendall_ci_low"] < 0.8 < one_swap["kendall_ci_high"]
    assert one_swap["n_texts"] == 5 and one_swap["no_figure_because"] == ""
    client.force_login(study.owner)
    page = client.get(f"/studies/{study.pk}/reports/judge-vs-human/").content.decode()
    assert 'data-table="judge_bws"' in page and "Spearman rho, judge vs counting scores" in page


def test_judge_vs_human_says_when_no_judge_scored_those_texts(catalog):
    study = _hand_case(2)
    run = judge_run(study)
    score(run, study.item, None, 3.0, criterion="discern-grammaticality-default")  # another aspect
    section = _section(judge_vs_human.build(study))
    assert section.tables == []
    assert "No judge run has scored the texts best-worst scaling scored" in section.text


def _download(client, study, table, fmt):
    response = client.get(reverse("study-raw-data", args=[study.pk, table, fmt]))
    assert response.status_code == 200, response
    return b"".join(response.streaming_content).decode()


def test_raw_data_has_every_answer_and_every_counting_score(catalog, client):
    study = _hand_case(2)
    client.force_login(study.owner)
    text = _download(client, study, "best-worst", "csv")
    header = text.splitlines()[0].split(",")
    assert header == [
        "id",
        "study",
        "annotator",
        "created_at",
        "updated_at",
        "saves",
        "active_seconds",
        "dataset",
        "item",
        "tuple",
        "criterion",
        "aspect",
        "texts",
        "best",
        "worst",
        "best_text",
        "worst_text",
    ]
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 6
    first = rows[0]
    names = study.names
    assert json.loads(first["texts"]) == [names[letter] for letter in "abcd"]
    assert (first["best"], first["worst"]) == ("0", "3")
    assert (first["best_text"], first["worst_text"]) == ("original", names["d"])
    assert first["annotator"] == study.people[0].username and first["criterion"] == COHERENCE
    assert first["item"] == "i0" and first["study"] == study.slug
    lines = [
        json.loads(line) for line in _download(client, study, "best-worst", "jsonl").splitlines()
    ]
    assert lines[1]["texts"] == [names[letter] for letter in "abcd"]  # a list, not its text
    assert lines[2]["best"] == 1 and lines[2]["worst_text"] == names["e"]

    scores = list(csv.DictReader(io.StringIO(_download(client, study, "best-worst-scores", "csv"))))
    letter = {name: key for key, name in names.items()}
    assert [letter[r["text"]] for r in scores] == ["a", "b", "c", "e", "d"]
    assert list(scores[0]) == [
        "study",
        "criterion",
        "aspect",
        "dataset",
        "item",
        "text",
        "kind",
        "best",
        "worst",
        "appearances",
        "score",
    ]
    for row in scores:
        assert float(row["score"]) == pytest.approx(SCORES[letter[row["text"]]])
    assert (scores[0]["best"], scores[0]["worst"], scores[0]["appearances"]) == ("4", "0", "6")
    assert scores[0]["kind"] == "" and scores[1]["kind"] == "negation"
    jsonl = _download(client, study, "best-worst-scores", "jsonl").splitlines()
    assert json.loads(jsonl[-1])["score"] == -1.0
