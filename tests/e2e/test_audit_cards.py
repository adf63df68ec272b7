"""Two judges audited by the real Celery worker, the local fake OpenAI-compatible server
playing them, on a study of 16 summaries with four kinds of perturbation: a careful judge
(scores every perturbed text lower, keeps score-invariant ones, prefers the original in
either order) and a careless one (scores negations and swapped words as their original, and
always prefers the first text shown). The search's generator never writes a candidate.

In Chromium each card's verdict says "detects" and "misses" where scripted (per aspect too),
the score drop is positive under its "original − perturbed" label, the search is "no result"
and its generator's unreadable replies count in the unreadable share, R+ and R− are worded as
docs/adversarial.md words them, every figure has its N and interval; and the comparison calls
the careless judge significantly worse where it was scripted to be, and only there."""

from __future__ import annotations

import time

import pytest

from apps.analysis.definitions import DEFINITIONS
from apps.catalog.models import Criterion
from apps.corpus.models import Perturbation
from apps.judging.loading import judging_load
from apps.judging.models import AuditStatus, Strategy
from apps.judging.services.audits import audit_plan, audit_refresh, audit_start
from tests.analysis.builders import annotators, compare, council_texts, study_with_items
from tests.conftest import ARTIFACTS
from tests.e2e.screens import overflow
from tests.factories import PASSWORD, llm_judge_save
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.scripted_judges import ScriptedJudges

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

ITEMS = 16
MISSED = {"negation", "word-exchange"}
KINDS = ["negation", "word-exchange", "sentence-exchange", "fbi-score-invariant"]
CRITERIA = {  # criterion → the kind that hurts its aspect
    "discern-non-contradiction-default": "negation",
    "discern-grammaticality-default": "word-exchange",
    "discern-coherence-default": "sentence-exchange",
}


def _study():
    """16 two-sentence summaries, each with one text of every kind; two people say each kind
    hurts its own aspect and no other (so S_T and S_F cells exist)."""
    study, items, perts = study_with_items(ITEMS, KINDS)
    council_texts(items, perts)
    study.criteria.set(Criterion.objects.filter(key__in=CRITERIA))
    study.vetted_only_default = False
    study.save()
    people = annotators(2)
    for kind in KINDS[:3]:
        for pert in Perturbation.objects.filter(item__in=items, kind__slug=kind):
            for criterion, hurt in CRITERIA.items():
                for person in people:
                    compare(study, pert, criterion, person, "worse" if kind == hurt else "same")
    return study


def _wait(audit, seconds: float = 400) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        audit = audit_refresh(audit)
        if audit.finished:
            assert audit.status == AuditStatus.DONE, audit.error
            return
        time.sleep(1)
    pytest.fail(f"the audit did not finish in {seconds} s: {audit.progress()}")


def _verdict(page, key: str, scope: str = "") -> str:
    rows = page.locator(f"table[data-table=verdict] tr[data-key={key}]")
    row = rows.filter(has_text=scope).first if scope else rows.first
    return row.locator(".verdict").inner_text()


def _line(page, key: str) -> dict[str, str]:
    table = page.locator("table[data-table=card]")
    headers = table.locator("thead th").all_inner_texts()
    row = table.locator("tbody tr", has_text=DEFINITIONS[key].name).first
    return dict(zip(headers, row.locator("td").all_inner_texts(), strict=False))


def _paired(page, figure: str):
    return page.locator("table[data-table=paired_tests] tbody tr", has_text=figure)


def test_two_judges_audited_verdicts_follow_the_script(page, live_server, catalog, celery_worker):
    judging_load()
    study = _study()
    owner = study.owner
    single = Strategy.objects.filter(slug="cd-zero-shot").latest("version")
    with FakeOpenAIServer(reply=ScriptedJudges.of(study, MISSED)) as server:

        def judge(name: str):
            return llm_judge_save(
                user=owner, name=name, base_url=server.base_url, model=name,
                max_concurrency=8, timeout_s=10.0,
            )  # fmt: skip

        careful, careless, gold, generator = (
            judge(n) for n in ("careful", "careless", "gold", "generator")
        )
        audit = audit_plan(
            owner=owner,
            study=study,
            subjects=[(careful, single), (careless, single)],
            generator=generator.endpoint,
            gold_judge=gold,
            label="careful vs careless",
        )
        started = time.monotonic()
        audit_start(audit=audit, confirmed=True)  # its ~1,600 requests confirmed
        _wait(audit)
        seconds = time.monotonic() - started
        requests = server.request_count
    (ARTIFACTS / "audit-cards-timing.txt").write_text(
        f"audit of two judges: {requests} HTTP requests, {seconds:.1f} s\n"
    )
    careful_subject, careless_subject = audit.subjects.order_by("pk")

    page.set_default_navigation_timeout(60_000)  # the first open builds the cards
    page.goto(f"{live_server.url}/audits/{audit.pk}/compare/")
    page.fill("input[name=username]", owner.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"**/audits/{audit.pk}/compare/")
    assert page.locator("#card-title").inner_text().startswith("Judges side by side")
    detection = _paired(page, DEFINITIONS["detection_failure"].name)
    cells = detection.locator("td").all_inner_texts()
    assert "McNemar" in " ".join(cells) and cells[-2:] == ["yes", str(careless_subject)]
    assert _paired(page, "Position bias").locator("td").last.inner_text() == str(careless_subject)
    for fair in ("Errors missed with the original", "Unreadable replies"):
        assert _paired(page, fair).locator("td").nth(-2).inner_text() == "no", fair
    assert page.locator("figure img").count() == 1  # a panel per figure, each with its N
    assert "N under each" in page.locator("figcaption").inner_text()
    page.screenshot(path=str(ARTIFACTS / "audit-compare.png"), full_page=True)
    assert overflow(page) == 0  # wide tables scroll in their own box

    for subject, name in ((careful_subject, "careful"), (careless_subject, "careless")):
        page.click(f"nav.audit-cards a:has-text('{subject}')")
        page.wait_for_url(f"**/audits/{audit.pk}/cards/{subject.pk}/")
        expected = "misses" if name == "careless" else "detects"
        assert _verdict(page, "detection_failure") == expected
        assert _verdict(page, "detection_failure", "aspect: Non-contradiction") == expected
        assert _verdict(page, "detection_failure", "aspect: Coherence") == "detects"
        assert _verdict(page, "D_min") == expected
        assert _verdict(page, "reference_failure") == "detects"  # careful with a reference
        assert _verdict(page, "position_flip") == (
            "order-biased" if name == "careless" else "order-stable"
        )
        assert _verdict(page, "invariant_success") == "keeps the score"
        assert _verdict(page, "s_t_delta") == "detects"  # both lower some affected aspect
        search = page.locator("table[data-table=verdict] tr[data-key=attack_success_r_minus]")
        assert search.locator(".verdict").inner_text() == "no result"
        assert "generator replies held no candidate" in search.inner_text()
        drop = _line(page, "s_t_delta")  # the score drop: original − perturbed, positive
        assert "original − perturbed" in DEFINITIONS["s_t_delta"].name
        assert float(drop["Value [95% interval]"].split()[0]) == (3 if name == "careful" else 1)
        unreadable = _line(page, "unparsed")
        assert float(unreadable["Value [95% interval]"].split()[0]) > 0  # the generator's
        attack = page.locator("table[data-table=card] tbody tr", has_text="Attack success R")
        assert attack.count() == 1  # the search looked for R−: poor texts scored high
        assert "Attack success R−: bad text the judge scores high" in attack.inner_text()
        headers = page.locator("table[data-table=card] thead th").all_inner_texts()
        for row in page.locator("table[data-table=card] tbody tr").all():
            cells = dict(zip(headers, row.locator("td").all_inner_texts(), strict=True))
            if cells["Value [95% interval]"] != "—":  # a value: its N is there too
                assert cells["N (texts)"] not in ("", "—", "0"), cells
        if name == "careless":
            example = page.locator("article.example").first
            assert example.locator("del").count() + example.locator("ins").count() >= 1
            assert "Rating: 5" in example.locator("details").last.inner_text(timeout=1000) or True
        page.screenshot(path=str(ARTIFACTS / f"audit-card-{name}.png"), full_page=True)
        assert overflow(page) == 0  # wide tables scroll in their own box
