"""Two judges audited on the demo study by the real Celery worker, the local fake
OpenAI-compatible server playing them: a careful judge (scores perturbed texts lower, keeps
score-invariant ones, prefers the original in either order) and a careless one (scores
perturbations of four kinds as their original, and always prefers the first text shown). In
Chromium the report card of each and the comparison come out, and the careless judge is shown
significantly worse in detection and position bias, where it was scripted to be, and not in
reference-guided scoring nor in unparsed replies, where it behaves like the careful one."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from apps.annotation.demo import DEMO_PASSWORD, demo_load
from apps.corpus.models import Perturbation, SourceItem
from apps.judging.loading import judging_load
from apps.judging.models import AuditStatus, Strategy
from apps.judging.services.audits import audit_plan, audit_refresh, audit_start
from tests.conftest import ARTIFACTS
from tests.e2e.screens import overflow
from tests.factories import llm_judge_save
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = [pytest.mark.e2e, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

MISSED = {"negation", "different-entity", "conflicting-fact", "word-exchange"}
PAIR = re.compile(r"Answer A:\n(.*?)\n\nAnswer B:\n(.*?)\n\nReply", re.DOTALL)


class Script:
    """The two judges' replies, told apart by model name, from the texts in the prompt."""

    def __init__(self, originals: set[str], perturbed: dict[str, tuple[str, bool]]) -> None:
        self.originals, self.perturbed = originals, perturbed

    def __call__(self, request: dict[str, Any]) -> str:
        careless = request.get("model") == "careless"
        prompt = "\n".join(str(m.get("content") or "") for m in request.get("messages", []))
        pair = PAIR.search(prompt)
        if pair is not None:
            first_is_original = pair.group(1).strip() in self.originals
            return "A" if careless or first_is_original else "B"
        reference = "Assistant's answer:" in prompt
        if reference:  # the judged text comes after the reference (the original)
            prompt = prompt.split("Assistant's answer:", 1)[1]
        text = max((t for t in [*self.originals, *self.perturbed] if t in prompt), key=len)
        if text in self.originals:
            return "Justification: fine.\nRating: 5"
        kind, invariant = self.perturbed[text]
        kept = invariant or (careless and kind in MISSED and not reference)
        return f"Justification: {'fine' if kept else 'flawed'}.\nRating: {5 if kept else 2}"


def _script(study) -> Script:
    items = SourceItem.objects.filter(dataset__studies=study)
    originals = {i.original.strip() for i in items}
    perturbed = {
        p.text.strip(): (p.kind.slug, p.kind.score_invariant)
        for p in Perturbation.objects.filter(item__in=items).select_related("kind")
    }
    return Script(originals, perturbed)


def _judge(server: FakeOpenAIServer, name: str):
    return llm_judge_save(
        name=name, base_url=server.base_url, model=name, max_concurrency=8, timeout_s=10.0
    )


def _wait(audit, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        audit = audit_refresh(audit)
        if audit.finished:
            assert audit.status == AuditStatus.DONE, audit.error
            return
        time.sleep(1)
    pytest.fail(f"the audit did not finish in {seconds} s: {audit.progress()}")


def _row(page, figure: str):
    return page.locator("table[data-table=paired_tests] tbody tr", has_text=figure)


def test_two_judges_audited_careless_one_worse_where_scripted(
    page, live_server, catalog, celery_worker
):
    study = demo_load()
    judging_load()
    study.vetted_only_default = False
    study.save()
    single = Strategy.objects.filter(slug="cd-zero-shot").latest("version")
    with FakeOpenAIServer(reply=_script(study)) as server:
        careful, careless = _judge(server, "careful"), _judge(server, "careless")
        audit = audit_plan(
            owner=study.owner,
            study=study,
            subjects=[(careful, single), (careless, single)],
            label="careful vs careless",
        )
        started = time.monotonic()
        audit_start(audit=audit)
        _wait(audit)
        seconds = time.monotonic() - started
        requests = server.request_count
    (ARTIFACTS / "audit-cards-timing.txt").write_text(
        f"audit of two judges: {requests} HTTP requests, {seconds:.1f} s\n"
    )
    careful_subject, careless_subject = audit.subjects.order_by("pk")

    page.goto(f"{live_server.url}/audits/{audit.pk}/compare/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"**/audits/{audit.pk}/compare/")
    assert page.locator("#card-title").inner_text().startswith("Judges side by side")
    detection = _row(page, "Single answer: perturbations not scored lower")
    assert "McNemar" in detection.inner_text()
    assert detection.locator("td").nth(12).inner_text() == "yes"
    assert detection.locator("td").nth(13).inner_text() == str(careless_subject)
    flips = _row(page, "Position bias")
    assert flips.locator("td").nth(12).inner_text() == "yes"
    assert flips.locator("td").nth(13).inner_text() == str(careless_subject)
    for fair in ("Reference-guided", "Unparsed replies", "Discernment D per kind"):
        assert _row(page, fair).locator("td").nth(12).inner_text() == "no", fair
    assert page.locator("figure img").count() >= 4  # a plot per figure
    page.screenshot(path=str(ARTIFACTS / "audit-compare.png"), full_page=True)
    assert overflow(page) == 0  # wide tables scroll in their own box

    for subject, name in ((careful_subject, "careful"), (careless_subject, "careless")):
        page.click(f"nav.audit-cards a:has-text('{subject}')")
        page.wait_for_url(f"**/audits/{audit.pk}/cards/{subject.pk}/")
        card = page.locator("table[data-table=card]")
        missed = card.locator("tr", has_text="Single answer: perturbations not scored lower")
        value = float(missed.locator("td").nth(2).inner_text())
        assert (value > 0.2) if name == "careless" else (value == 0.0)
        assert missed.locator("a", has_text="open").count() == 1  # the evidence
        assert "skipped" in card.locator("tr", has_text="Attack success R-").inner_text()
        worst = page.locator("table[data-table=worst_kinds] tbody tr").first
        assert worst.locator("td").nth(4).inner_text() == ("1" if name == "careless" else "0")
        page.screenshot(path=str(ARTIFACTS / f"audit-card-{name}.png"), full_page=True)
        assert overflow(page) == 0  # wide tables scroll in their own box
