"""The cards where labs read results (docs/audit.md, "In CI"): JUnit XML with a suite per
judge, a case per verdict line, a failure per miss (the figure's bad word) and per figure
significantly worse than a saved card, skipped where the card could not decide; promptfoo's
results JSON with the same counts; the page, the API and `judge_audit` serve the same files."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils.text import slugify
from junitparser import Error, Failure, JUnitXml, Skipped

from apps.analysis.cards.baseline import baseline_compare
from apps.analysis.cards.junit import audit_junit_text
from apps.analysis.cards.promptfoo_results import audit_promptfoo_text
from apps.analysis.cards.snapshots import card_get
from apps.analysis.cards.verdict_lines import VERDICT_COLUMNS
from apps.analysis.definitions import DEFINITIONS
from apps.analysis.reports.base import Report
from apps.judging.models import AuditStatus, AuditSubject, JudgeAudit
from tests.analysis.audit_builders import command_audits, scripted_audit
from tests.analysis.test_audit_baseline import _planted
from tests.factories import StudyFactory, UserFactory, llm_judge_create

pytestmark = pytest.mark.django_db
#: The verdict words with which the card could not decide.
UNDECIDED = {"unstable", "too few texts to tell", "not measured"}


def _parsed(text: str, tmp_path, name: str = "report.xml") -> JUnitXml:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return JUnitXml.fromfile(str(path))


def _verdicts(subject_or_card) -> list[dict]:
    """A card's verdict lines (of a subject, or of a card's saved JSON)."""
    card = subject_or_card
    if isinstance(card, AuditSubject):
        card = card_get(card)
    elif isinstance(card, dict):
        card = Report.from_dict(card)
    table = next(t for t in card.tables() if t.name == "verdict")
    return [dict(zip(VERDICT_COLUMNS, row, strict=True)) for row in table.rows]


def _misses(rows: list[dict]) -> list[dict]:
    """The lines whose verdict is the figure's bad word: "misses", "order-biased"..."""
    return [r for r in rows if r["verdict"] == DEFINITIONS[r["key"]].bad]


def _marked(suite, kind) -> list:
    return [case for case in suite if any(isinstance(r, kind) for r in case.result)]


def test_a_suite_per_judge_a_case_per_verdict_line_a_failure_per_miss(catalog, tmp_path):
    audit, careful, careless = scripted_audit()
    xml = _parsed(audit_junit_text(audit), tmp_path)
    suites = list(xml)
    assert [s.name for s in suites] == [str(careful), str(careless)]
    for suite, subject in zip(suites, (careful, careless), strict=True):
        rows = _verdicts(subject)
        cases = list(suite)
        assert len(cases) == len(rows) == suite.tests
        assert [c.name for c in _marked(suite, Failure)] == [
            f"{r['figure']} ({r['scope']})" for r in _misses(rows)
        ]
        skipped = [f"{r['figure']} ({r['scope']})" for r in rows if r["verdict"] in UNDECIDED]
        assert [c.name for c in _marked(suite, Skipped)] == skipped and skipped
        assert suite.failures == len(_misses(rows)) and suite.skipped == len(skipped)
        assert suite.errors == 0 and not _marked(suite, Error)
        props = {p.name: p.value for p in suite.properties()}
        assert props["audit"] == str(audit.pk) and props["judge"] == subject.judge.name
        assert props["strategy"] == subject.strategy.slug
    careful_suite, careless_suite = suites
    assert careful_suite.failures == 0  # the careful judge detects, and keeps the order
    missed = next(c for c in careless_suite if c.name.startswith("Errors missed: perturbed"))
    failure = missed.result[0]
    assert isinstance(failure, Failure) and failure.type == "misses"
    assert failure.message.startswith("misses: Errors missed: perturbed text not scored lower")
    assert "= 0.5, 95% interval" in failure.message and "N = 24" in failure.message
    assert missed.classname == f"discern.{careless_suite_slug(careless)}.fbi_single"
    flips = next(c for c in careless_suite if c.name.startswith("Position bias"))
    assert flips.result[0].type == "order-biased"  # the bad word of its figure
    too_few = next(c for c in careless_suite if c.name.startswith("Harmless changes"))
    assert isinstance(too_few.result[0], Skipped)
    assert too_few.result[0].message.startswith("too few texts to tell")


def careless_suite_slug(subject) -> str:
    return slugify(str(subject)).replace("-", "_")


def test_a_regression_against_the_saved_card_is_a_failure(catalog, tmp_path):
    audit, careful, careless = scripted_audit()
    gate = baseline_compare(audit, _planted(audit, careful, careless))
    xml = _parsed(audit_junit_text(audit, gate=gate), tmp_path)
    careless_suite = next(s for s in xml if s.name == str(careless))
    gated = [c for c in careless_suite if c.name.startswith("against the saved card: ")]
    assert len(gated) == len([g for g in gate.gated if g.subject == str(careless)]) > 0
    failed = [c.name.removeprefix("against the saved card: ") for c in _marked(gated, Failure)]
    assert [f"{careless}: {name}" for name in failed] == gate.regressions
    assert {c.classname for c in gated} == {f"discern.{careless_suite_slug(careless)}.baseline"}
    first = _marked(gated, Failure)[0].result[0]
    assert first.message.startswith("significantly worse than the saved card: Errors missed")
    assert "p Holm-adjusted" in first.message
    lines = len(_verdicts(careless))
    assert careless_suite.tests == lines + len(gated)
    assert careless_suite.failures == len(_misses(_verdicts(careless))) + len(failed)
    careful_suite = next(s for s in xml if s.name == str(careful))
    assert careful_suite.tests == len(_verdicts(careful))  # no saved card for it: no gate


def test_promptfoo_results_count_what_junit_counts(catalog, tmp_path):
    audit, careful, careless = scripted_audit()
    gate = baseline_compare(audit, _planted(audit, careful, careless))
    xml = _parsed(audit_junit_text(audit, gate=gate), tmp_path)
    written = json.loads(audit_promptfoo_text(audit, gate=gate))
    summary = written["results"]
    assert written["evalId"] == f"discern-audit-{audit.pk}" and summary["version"] == 3
    stats = summary["stats"]
    assert stats["failures"] == sum(s.failures for s in xml) > 0
    assert stats["errors"] == sum(s.errors for s in xml) == 0
    skipped = sum(s.skipped for s in xml)
    assert stats["successes"] == sum(s.tests for s in xml) - stats["failures"] - skipped
    assert len(summary["results"]) == sum(s.tests for s in xml)
    outcomes = [r["metadata"]["outcome"] for r in summary["results"]]
    assert outcomes.count("skipped") == skipped
    assert [p["label"] for p in summary["prompts"]] == [careful.strategy.name] * 2
    missed = next(
        r
        for r in summary["results"]
        if r["provider"]["label"] == str(careless) and r["vars"]["figure"] == "detection_failure"
    )
    assert missed["success"] is False and missed["failureReason"] == 1
    assert missed["gradingResult"]["pass"] is False and missed["score"] == 0.0
    assert missed["gradingResult"]["reason"].startswith("misses: Errors missed")
    assert missed["namedScores"] == {"detection_failure": 0.5}
    assert missed["gradingResult"]["componentResults"][0]["pass"] is False
    same_question = [r for r in summary["results"] if r["vars"]["figure"] == "detection_failure"]
    assert len({r["testIdx"] for r in same_question if r["vars"]["scope"] == "all kinds"}) == 1
    per_judge = {p["label"]: p["metrics"]["testFailCount"] for p in summary["prompts"]}
    assert sum(per_judge.values()) == stats["failures"]


def test_hostile_names_survive_the_xml_and_the_json(catalog, tmp_path):
    audit, _careful, careless = scripted_audit(n_items=2)
    hostile = "<&\"'\x01>"
    careless.label = f"careless {hostile}"
    careless.save(update_fields=["label"])
    careless.judge.name = hostile
    careless.judge.save(update_fields=["name"])
    audit.label = f"audit {hostile}\x0b]]>"
    audit.save(update_fields=["label"])
    text = audit_junit_text(audit)
    assert "\x01" not in text and "\x0b" not in text
    xml = _parsed(text, tmp_path)
    suite = next(s for s in xml if s.name.startswith("careless"))
    assert suite.name == "careless <&\"'\ufffd>"
    props = {p.name: p.value for p in suite.properties()}
    assert props["judge"] == "<&\"'\ufffd>"
    assert props["audit_label"] == "audit <&\"'\ufffd>\ufffd]]>"
    assert all(c.classname.startswith("discern.careless.") for c in suite)
    written = json.loads(audit_promptfoo_text(audit))["results"]  # JSON holds them as they are
    assert f"careless {hostile}" in {r["provider"]["label"] for r in written["results"]}


def test_an_audit_with_nothing_to_say_writes_valid_files(catalog, tmp_path):
    owner = UserFactory(role="researcher")
    empty = JudgeAudit.objects.create(owner=owner, study=StudyFactory(owner=owner), label="e")
    xml = _parsed(audit_junit_text(empty), tmp_path)
    assert list(xml) == [] and xml.tests == 0
    written = json.loads(audit_promptfoo_text(empty))["results"]
    assert written["results"] == [] and written["stats"]["successes"] == 0
    judge = llm_judge_create(name="never ran", base_url="http://127.0.0.1:1", model="m")
    AuditSubject.objects.create(audit=empty, judge=judge)  # no part ran: nothing measured
    xml = _parsed(audit_junit_text(empty), tmp_path, "again.xml")
    (suite,) = list(xml)
    assert suite.tests > 0 and suite.skipped == suite.tests and suite.failures == 0
    stats = json.loads(audit_promptfoo_text(empty))["results"]["stats"]
    assert (stats["successes"], stats["failures"], stats["errors"]) == (0, 0, 0)


def test_the_pages_and_the_api_serve_them_to_whoever_reads_the_card(
    client, api_client, catalog, tmp_path
):
    audit, _careful, careless = scripted_audit(n_items=4)
    client.force_login(audit.owner)
    page = client.get(reverse("audit-card", args=[audit.pk, careless.pk])).content.decode()
    card_junit = reverse("audit-card-junit", args=[audit.pk, careless.pk])
    assert f'href="{card_junit}"' in page
    assert f'href="{reverse("audit-card-promptfoo", args=[audit.pk, careless.pk])}"' in page
    compare = client.get(reverse("audit-compare", args=[audit.pk])).content.decode()
    assert f'href="{reverse("audit-junit", args=[audit.pk])}"' in compare
    detail = reverse("judging-audit-detail", args=[audit.pk])
    assert 'id="ci-junit"' not in client.get(detail).content.decode()  # not ended yet
    JudgeAudit.objects.filter(pk=audit.pk).update(status=AuditStatus.DONE)
    audit.refresh_from_db()
    detail_page = client.get(detail).content.decode()
    assert f'href="{reverse("audit-junit", args=[audit.pk])}" id="ci-junit"' in detail_page
    whole = client.get(reverse("audit-junit", args=[audit.pk]))
    assert whole.status_code == 200 and whole["Content-Type"] == "application/xml"
    assert whole["Content-Disposition"] == f'attachment; filename="audit-{audit.pk}-junit.xml"'
    assert whole.content.decode() == audit_junit_text(audit)  # what the command writes
    one = _parsed(client.get(card_junit).content.decode(), tmp_path)
    assert [s.name for s in one] == [str(careless)]
    results = client.get(reverse("audit-promptfoo", args=[audit.pk])).json()
    assert results["results"]["stats"]["failures"] > 0
    api_client.force_authenticate(audit.owner)
    api = api_client.get(f"/api/v1/judge-audits/{audit.pk}/junit.xml")
    assert api.status_code == 200 and api.content == whole.content
    api_json = api_client.get(f"/api/v1/judge-audits/{audit.pk}/promptfoo.json")
    assert api_json.status_code == 200 and api_json.json() == results
    stranger = UserFactory(role="researcher")  # the audit does not exist for them
    client.force_login(stranger)
    api_client.force_authenticate(stranger)
    for url in (
        reverse("audit-junit", args=[audit.pk]),
        reverse("audit-promptfoo", args=[audit.pk]),
        card_junit,
        reverse("audit-json", args=[audit.pk]),  # as the JSON download does
    ):
        assert client.get(url).status_code == 404, url
    assert api_client.get(f"/api/v1/judge-audits/{audit.pk}/junit.xml").status_code == 404
    other = scripted_audit(n_items=2, owner=audit.owner)[0]
    wrong_card = reverse("audit-card-junit", args=[other.pk, careless.pk])
    client.force_login(audit.owner)
    assert client.get(wrong_card).status_code == 404  # a subject of another audit


def test_the_command_wants_wait_for_the_ci_files(catalog, tmp_path):
    audit, _careful, _careless = scripted_audit(n_items=2)
    for option in ("--json", "--junit", "--promptfoo"):
        with pytest.raises(CommandError, match=f"{option} needs --wait"):
            call_command(
                "judge_audit", "--owner", audit.owner.username, "--study", str(audit.study_id),
                "--judge", "1", option, str(tmp_path / "out"),
            )  # fmt: skip


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_judge_audit_junit_fails_each_miss_and_regression_and_keeps_the_exit_code(
    celery_worker, catalog, tmp_path, capsys
):
    """A lab's CI: the careless judge's audit writes a JUnit failure per miss and still exits
    0; against the careful judge's saved card it exits 1, its regressions failures too."""
    saved, cards = tmp_path / "careful.json", tmp_path / "careless.json"
    first, gated, results = tmp_path / "first.xml", tmp_path / "report.xml", tmp_path / "pf.json"
    with command_audits() as (audit, _server):
        audit("careful", "--json", str(saved))
        audit("careless", "--json", str(cards), "--junit", str(first))  # exit 0: no exception
        assert f"wrote {first}" in capsys.readouterr().out
        with pytest.raises(CommandError) as worse:
            audit(
                "careless",
                "--baseline",
                str(saved),
                "--junit",
                str(gated),
                "--promptfoo",
                str(results),
            )
    assert worse.value.returncode == 1
    rows = _verdicts(json.loads(cards.read_text())["cards"][0]["card"])
    (suite,) = JUnitXml.fromfile(str(first))
    misses = _misses(rows)
    assert len(list(suite)) == len(rows) and suite.failures == len(misses) > 0
    assert [c.name for c in _marked(suite, Failure)] == [
        f"{r['figure']} ({r['scope']})" for r in misses
    ]
    assert suite.skipped == len([r for r in rows if r["verdict"] in UNDECIDED])
    (suite,) = JUnitXml.fromfile(str(gated))
    regressions = str(worse.value).count("worse now: ")
    against = [c for c in suite if c.name.startswith("against the saved card: ")]
    assert len(_marked(against, Failure)) == regressions > 0
    assert suite.failures == len(misses) + regressions
    stats = json.loads(results.read_text())["results"]["stats"]
    assert (stats["failures"], stats["errors"]) == (suite.failures, suite.errors)
    assert stats["tokenUsage"]["numRequests"] == 0  # the rerun came from the cache
    assert float(suite.time) > 0  # the runs' time, start to end
