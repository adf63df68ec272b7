"""Every figure a person reads means what its label says: one definition per figure
(apps/analysis/definitions), and every page and download of a scripted study and audit
labels each figure by it. The scripted judge scores what it should lower lower and leaves
the rest, so the signs are known: the score drop is positive where an aspect is affected and
0 where none is, and no error is missed."""

from __future__ import annotations

import csv
import io
import json
import re
from html import unescape

import pytest

from apps.analysis.definitions import DEFINITIONS
from apps.analysis.definitions.document import figures_markdown
from apps.analysis.docs_views import DOCS
from apps.analysis.reports import STUDY_REPORTS
from apps.judging.models import AuditPart, AuditSubject, JudgeAudit, PartKind
from tests.analysis.builders import annotators, compare, score, strategy_run, study_with_items

pytestmark = pytest.mark.django_db
NEGATION, SWAP = "negation", "word-exchange"  # Non-contradiction / Grammaticality kinds
COUNTED = re.compile(r"\b[Nn]\b|\d+ (items|texts|calls|pairs|units|kinds)")
CRITERIA = {
    "discern-non-contradiction-default": NEGATION,
    "discern-grammaticality-default": SWAP,
}


@pytest.fixture
def scripted(catalog):
    """20 items, a negation and a word swap of each; people say each hurts its own aspect
    only; the judge drops its score by 3 exactly where the kind's aspect is, nowhere else."""
    study, items, perts = study_with_items(20, [NEGATION, SWAP])
    from apps.catalog.models import Criterion

    study.criteria.set(Criterion.objects.filter(key__in=CRITERIA))
    people = annotators(2)
    run = strategy_run(study, template="Rate {{text}} for {{quality}}")
    for n, item in enumerate(items):
        for criterion, hurt in CRITERIA.items():
            score(run, item, None, 5.0, criterion=criterion)
            for kind in (NEGATION, SWAP):
                pert = perts[kind][n]
                score(run, item, pert, 2.0 if kind == hurt else 5.0, criterion=criterion)
                for person in people:
                    compare(study, pert, criterion, person, "worse" if kind == hurt else "same")
    audit = JudgeAudit.objects.create(owner=study.owner, study=study, label="scripted")
    subject = AuditSubject.objects.create(audit=audit, judge=run.judge, strategy=run.strategy)
    for part in (PartKind.FBI_SINGLE, PartKind.ASPECT_DELTAS):
        AuditPart.objects.create(subject=subject, part=part, run=run)
    return study, run, audit, subject


def _tables(html: str) -> dict[str, list[str]]:
    """data-table name → its header cells' text, from a rendered page."""
    found = {}
    for name, head in re.findall(r'data-table="([^"]+)".*?<thead>(.*?)</thead>', html, re.S):
        found[name] = [
            unescape(re.sub(r"<[^>]+>", "", th)) for th in re.findall(r"<th>(.*?)</th>", head, re.S)
        ]
    return found


def _check_labels(payload: dict, html: str) -> set[str]:
    """Each figure column of each table of a report is headed by its definition's name on
    the page; returns the figures seen."""
    shown = _tables(html)
    seen = set()
    for section in payload["sections"]:
        for table in section["tables"]:
            figures = [c for c in table["columns"] if c in DEFINITIONS]
            if table["name"] in ("verdict", "worst_kind_examples") or not figures:
                continue
            headers = shown[table["name"]]
            for column in figures:
                name = DEFINITIONS[column].name
                assert any(h == name or h == f"{name} [95% interval]" for h in headers), (
                    table["name"],
                    column,
                    headers,
                )
                seen.add(column)
    return seen


def _check_meanings(payload: dict, csv_text: str) -> None:
    """The download ends with what its figures mean: the same names as the definitions."""
    meanings = next(s for s in payload["sections"] if s["title"] == "What the figures mean")
    rows = meanings["tables"][0]["rows"]
    assert rows and all(r[1] == DEFINITIONS[r[0]].name for r in rows)
    listed = [r for r in csv.reader(io.StringIO(csv_text)) if r and r[0] == "definitions"]
    assert {r[1] for r in listed} == {r[0] for r in rows}


def test_every_report_labels_its_figures_by_their_definitions(scripted, client):
    study, run, _audit, _subject = scripted
    client.force_login(study.owner)
    seen: set[str] = set()
    pages = [(name, "") for name in STUDY_REPORTS] + [("judge-reliability", f"?run={run.pk}")]
    for name, query in pages:
        html = client.get(f"/studies/{study.pk}/reports/{name}/{query}").content.decode()
        payload = client.get(f"/studies/{study.pk}/reports/{name}.json{query}").json()
        seen |= _check_labels(payload, html)
        if any(s["title"] == "What the figures mean" for s in payload["sections"]):
            _check_meanings(
                payload,
                client.get(f"/studies/{study.pk}/reports/{name}.csv{query}").content.decode(),
            )
    assert "delta" in seen


def test_the_score_drop_is_original_minus_perturbed_and_its_sign_follows_the_script(
    scripted, client
):
    study, run, _audit, _subject = scripted
    client.force_login(study.owner)
    payload = client.get(f"/studies/{study.pk}/reports/judge-reliability.json?run={run.pk}").json()
    table = next(t for s in payload["sections"] for t in s["tables"] if t["name"] == "deltas")
    rows = [dict(zip(table["columns"], r, strict=True)) for r in table["rows"]]
    assert DEFINITIONS["delta"].name == "Score drop (original − perturbed)"
    hurt = [r for r in rows if r["cell"].startswith("S_T")]
    spared = [r for r in rows if r["cell"].startswith("S_F")]
    assert hurt and all(r["delta"] == 3.0 for r in hurt)  # 5 on the original, 2 perturbed
    assert spared and all(r["delta"] == 0.0 for r in spared)


def test_the_card_and_its_downloads_label_and_sign_every_figure(scripted, client):
    _study, _run, audit, subject = scripted
    client.force_login(audit.owner)
    html = client.get(f"/audits/{audit.pk}/cards/{subject.pk}/").content.decode()
    payload = client.get(f"/audits/{audit.pk}/cards/{subject.pk}.json").json()
    csv_text = client.get(f"/audits/{audit.pk}/cards/{subject.pk}.csv").content.decode()
    _check_labels(payload, html)
    _check_meanings(payload, csv_text)
    tables = {t["name"]: t for s in payload["sections"] for t in s["tables"]}
    lines = {
        r[0]: dict(zip(tables["card"]["columns"], r, strict=True)) for r in tables["card"]["rows"]
    }
    for key, line in lines.items():  # every line is named by its definition
        assert key in DEFINITIONS, key
        assert line["figure"] == DEFINITIONS[key].name
    assert lines["detection_failure"]["value"] == 0.0  # only affected aspects count
    assert lines["detection_failure"]["n"] == 40 and lines["detection_failure"]["texts"] is None
    assert lines["s_t_delta"]["value"] == 3.0 and lines["s_f_delta"]["value"] == 0.0
    verdicts = {(r[0], r[2]): r[3] for r in tables["verdict"]["rows"]}
    assert verdicts[("detection_failure", "all kinds")] == "detects"
    assert verdicts[("s_t_delta", "all kinds")] == "detects"
    assert verdicts[("s_f_delta", "all kinds")] == "keeps unaffected aspects"
    for row in tables["verdict"]["rows"]:  # every verdict line is a defined figure, with N
        line = dict(zip(tables["verdict"]["columns"], row, strict=True))
        assert line["figure"] == DEFINITIONS[line["key"]].name
        assert line["value"] is None or line["n"] > 0
    for figure in (f for s in payload["sections"] for f in s["figures"]):  # each with its N
        assert COUNTED.search(figure["caption"]), figure["caption"]
    shown = json.dumps(payload)
    assert "Score change (perturbed" not in shown and "bad text scored high" not in shown
    side_html = client.get(f"/audits/{audit.pk}/compare/").content.decode()
    side = client.get(f"/audits/{audit.pk}/compare.json").json()
    _check_labels(side, side_html)
    _check_meanings(side, client.get(f"/audits/{audit.pk}/compare.csv").content.decode())
    for row in next(
        t for s in side["sections"] for t in s["tables"] if t["name"] == "side_by_side"
    )["rows"]:
        assert row[1] == DEFINITIONS[row[0]].name  # side by side names each figure the same


def test_docs_list_every_figure_as_the_pages_name_it():
    assert (DOCS / "figures.md").read_text(encoding="utf-8") == figures_markdown(), (
        "docs/figures.md is out of date: run `manage.py figures_doc`"
    )
    adversarial = (DOCS / "adversarial.md").read_text(encoding="utf-8")
    assert "R+" in DEFINITIONS["attack_success_r_plus"].name
    assert "good texts the victim scores low (**R+**)" in adversarial.replace("\n", " ")
    assert "poor texts it scores high (**R−**)" in adversarial.replace("\n", " ")
