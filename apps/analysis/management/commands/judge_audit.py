"""`manage.py judge_audit`: plan a judge audit, print its estimate, start it, optionally wait
for it and write its cards as JSON, its verdicts as JUnit XML and promptfoo's results JSON
(docs/audit.md, "From the command line" and "In CI")."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from apps.accounts.models import User
from apps.analysis.cards.baseline import (
    BaselineError,
    BaselineResult,
    baseline_compare,
    saved_cards,
)
from apps.analysis.cards.junit import audit_junit_text
from apps.analysis.cards.promptfoo_results import audit_promptfoo_text
from apps.analysis.cards.snapshots import audit_json_text
from apps.annotation.selectors import studies_for_user
from apps.corpus.selectors import datasets_for_user
from apps.endpoints.models import Endpoint
from apps.judging.models import AuditStatus, Judge, JudgeAudit, Strategy
from apps.judging.selectors import judges_for_user, strategies_for_user
from apps.judging.services.audits import audit_plan, audit_refresh, audit_start

# Said once when --wait sees no call finish for this long: the audit runs on Celery workers.
IDLE_HINT_S = 30.0
IDLE_HINT = (
    "  no call has finished after {seconds:.0f} s: the audit's calls run on the Celery workers; "
    "is one running? (`make demo` starts them, or `celery -A workers worker`)"
)


def _subject(value: str, owner: User) -> tuple[Judge, Strategy | None]:
    """``JUDGE[:STRATEGY]``, each by id or by name (a strategy: its slug), among those the
    owner may use; an error lists them."""
    judge_key, _, strategy_key = value.partition(":")
    judges = judges_for_user(owner)
    strategies = strategies_for_user(owner)
    judge = _by_id_or_name(judges, judge_key, "name")
    if judge is None:
        listed = ", ".join(f"{j.pk} ({j.name})" for j in judges.order_by("pk")) or (
            "none (`manage.py load_judging` loads the shipped ones)"
        )
        raise CommandError(f"--judge {value}: no judge {judge_key!r}; yours to use: {listed}")
    strategy = _by_id_or_name(strategies, strategy_key, "slug") if strategy_key else None
    if strategy_key and strategy is None:
        listed = ", ".join(f"{s.pk} ({s.slug})" for s in strategies.order_by("slug"))
        raise CommandError(
            f"--judge {value}: no strategy {strategy_key!r}; strategies (id, slug): {listed}"
        )
    return judge, strategy


def _by_id_or_name(found: Any, key: str, name_field: str) -> Any:
    """The one row with this id or name; None when there is none, an error when a name is
    several (a colleague's judge shared with you may share its name: give its id)."""
    if key.isdigit():
        return found.filter(pk=int(key)).first()
    named = list(found.filter(**{name_field: key})[:5])
    if len(named) > 1:
        ids = ", ".join(str(row.pk) for row in named)
        raise CommandError(f"several are named {key!r} (ids {ids}): give the id")
    return named[0] if named else None


def _baseline(path: Path | None, wait: bool) -> Any:
    """The saved cards, read and checked before anything is spent."""
    if path is None:
        return None
    if not wait:
        raise CommandError("--baseline needs --wait (the cards are compared once it ends)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        saved_cards(data)
    except (OSError, ValueError) as exc:
        raise CommandError(f"--baseline {path}: {exc}", returncode=2) from exc
    return data


class Command(BaseCommand):
    help = (
        "Audit judges on a study or a dataset: plan the standard battery, print the estimate, "
        "start it; --wait waits for the end, --json writes every report card and the comparison, "
        "--junit and --promptfoo the verdicts for CI."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--owner", required=True, help="The researcher's username.")
        data = parser.add_mutually_exclusive_group(required=True)
        data.add_argument("--study", type=int)
        data.add_argument("--dataset", type=int)
        parser.add_argument(
            "--judge",
            action="append",
            required=True,
            metavar="JUDGE[:STRATEGY]",
            help="A judge to audit (id or name) and, for an LLM judge, its single-score "
            "strategy (id or slug, e.g. 4:cd-zero-shot); repeat for more judges.",
        )
        parser.add_argument("--search-budget", type=int, default=20)
        parser.add_argument("--generator", type=int, help="The search's generator endpoint id.")
        parser.add_argument("--gold-judge", type=int, help="The search's gold judge id.")
        parser.add_argument("--label", default="")
        parser.add_argument(
            "--vetted-only",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="A study's audit: only perturbations vetted in the study (default: the "
            "study's setting); --no-vetted-only takes every perturbation of its kinds.",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Plan the audit and print its estimate; start nothing, keep nothing.",
        )
        parser.add_argument(
            "--yes",
            action="store_true",
            help="Start it even when its HTTP requests exceed the study's limit (the estimate "
            "is printed first).",
        )
        parser.add_argument(
            "--batch",
            action="store_true",
            help="Send the runs of judges whose endpoint has a batch interface through it (the "
            "batch price, answered within 24 h); the others, and searches, run live.",
        )
        parser.add_argument(
            "--live-fallback",
            action="store_true",
            help="With --batch: ask live, at the live price, what a batch leaves unanswered.",
        )
        parser.add_argument("--wait", action="store_true", help="Wait until the audit ends.")
        parser.add_argument("--timeout", type=float, default=0, help="Seconds; 0: no limit.")
        parser.add_argument("--json", type=Path, help="Write the audit's cards here (with --wait).")
        parser.add_argument(
            "--junit",
            type=Path,
            metavar="FILE.xml",
            help="With --wait, write the cards' verdicts here as JUnit XML: a test case per "
            "verdict line, failed where the judge misses; with --baseline, one per figure "
            "compared, failed where it got significantly worse. The exit code is unchanged.",
        )
        parser.add_argument(
            "--promptfoo",
            type=Path,
            metavar="FILE.json",
            help="With --wait, write the same verdicts as promptfoo's results JSON.",
        )
        parser.add_argument(
            "--baseline",
            type=Path,
            metavar="CARD.json",
            help="A saved card or audit JSON (--json's file): with --wait, compare each card "
            "with it and exit 1 naming every figure significantly worse now.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        baseline = _baseline(options["baseline"], options["wait"])
        for name in ("json", "junit", "promptfoo"):
            if options[name] and not options["wait"]:
                raise CommandError(f"--{name} needs --wait (the cards are written once it ends)")
        try:
            owner = User.objects.get(username=options["owner"])
        except User.DoesNotExist as exc:
            raise CommandError(f"no user named '{options['owner']}'") from exc
        study = (
            studies_for_user(owner).filter(pk=options["study"]).first()
            if options["study"]
            else None
        )
        dataset = (
            datasets_for_user(owner).filter(pk=options["dataset"]).first()
            if options["dataset"]
            else None
        )
        if study is None and dataset is None:
            studies = ", ".join(f"{s.pk} ({s.name})" for s in studies_for_user(owner))
            raise CommandError(
                f"no such study or dataset of {owner.username}; their studies: {studies or 'none'}"
            )
        generator = (
            Endpoint.objects.filter(pk=options["generator"]).first()
            if options["generator"]
            else None
        )
        gold = (
            Judge.objects.filter(pk=options["gold_judge"]).first()
            if options["gold_judge"]
            else None
        )
        subjects = [_subject(value, owner) for value in options["judge"]]
        with transaction.atomic():  # a dry run plans, prints the estimate and keeps nothing
            audit = self._plan(owner, study, dataset, subjects, generator, gold, options)
            self._estimate(audit)
            if options["dry_run"]:
                transaction.set_rollback(True)
                self.stdout.write("dry run: nothing was started or kept")
                return
        try:
            audit = audit_start(
                audit=audit,
                confirmed=options["yes"],
                batch=options["batch"],
                live_fallback=options["live_fallback"],
            )
        except ValidationError as exc:
            raise CommandError(
                f"audit {audit.pk} planned, not started: {' '.join(exc.messages)} "
                "(--yes confirms; --dry-run shows the estimate only)"
            ) from exc
        self.stdout.write(f"audit {audit.pk} started")
        if not options["wait"]:
            return
        audit = self._wait(audit, options["timeout"])
        if options["json"]:
            self._write(options["json"], audit_json_text(audit))
        gate, unreadable = None, None
        if baseline is not None and audit.status == AuditStatus.DONE:
            try:
                gate = baseline_compare(audit, baseline)
            except BaselineError as exc:
                unreadable = CommandError(f"--baseline: {exc}", returncode=2)
        if options["junit"]:
            self._write(options["junit"], audit_junit_text(audit, gate=gate))
        if options["promptfoo"]:
            self._write(options["promptfoo"], audit_promptfoo_text(audit, gate=gate))
        if audit.status != AuditStatus.DONE:
            raise CommandError(f"audit {audit.pk} ended {audit.status}: {audit.error}")
        if unreadable is not None:
            raise unreadable
        if gate is not None:
            self._gate(gate)

    def _write(self, path: Path, text: str) -> None:
        path.write_text(text, encoding="utf-8")
        self.stdout.write(f"wrote {path}")

    def _plan(self, owner, study, dataset, subjects, generator, gold, options) -> JudgeAudit:
        try:
            return audit_plan(
                owner=owner,
                study=study,
                dataset=dataset,
                subjects=subjects,
                search_budget=options["search_budget"],
                generator=generator,
                gold_judge=gold,
                label=options["label"],
                vetted_only=options["vetted_only"],
            )
        except ValidationError as exc:
            problems = exc.message_dict if hasattr(exc, "error_dict") else {"": exc.messages}
            lines = [f"{field}: {'; '.join(m)}" for field, m in problems.items()]
            raise CommandError("The audit was not planned.\n" + "\n".join(lines)) from exc

    def _gate(self, result: BaselineResult) -> None:
        """Exit 1 naming each figure significantly worse than the saved cards."""
        self.stdout.write(f"compared with the saved cards: {result.compared} figures tested")
        if result.regressions:
            lines = "\n".join(f"  worse now: {r}" for r in result.regressions)
            raise CommandError(
                f"{len(result.regressions)} figure(s) significantly worse than the saved "
                f"card (Holm-corrected, p < 0.05):\n{lines}"
            )
        self.stdout.write("no figure is significantly worse than the saved card")

    def _estimate(self, audit: JudgeAudit) -> None:
        e = audit.estimate
        cost = "unknown" if e.get("cost_usd") is None else f"${e['cost_usd']:.4f}"
        if e.get("batch_runs"):
            batch = e.get("cost_batch_usd")
            cost += f" (as a batch: {'unknown' if batch is None else f'${batch:.4f}'})"
        self.stdout.write(
            f"audit {audit.pk}: {e['calls']} calls, {e['cached_calls']} from the cache, "
            f"{e['http_calls']} HTTP requests, ~{e['prompt_tokens']} prompt + "
            f"{e['completion_tokens']} completion tokens, cost {cost}"
        )
        for note in e.get("notes", []):
            self.stdout.write(f"  note: {note}")
        if e.get("nothing"):
            self.stdout.write(
                f"  measures nothing: {e['nothing']} (--no-vetted-only takes every perturbation)"
            )
        for subject in audit.subjects.all():
            for part in subject.parts.exclude(skipped_reason=""):
                self.stdout.write(
                    f"  {subject} · {part.get_part_display()}: skipped, {part.skipped_reason}"
                )

    def _wait(self, audit: JudgeAudit, timeout: float) -> JudgeAudit:
        started = time.monotonic()
        deadline = started + timeout if timeout else None
        shown, hinted = -1, False
        while True:
            audit = audit_refresh(audit)
            progress = audit.progress()
            done = progress["done"] + progress["failed"]
            if done != shown:
                self.stdout.write(f"  {done} / {progress['total']} calls, {audit.status}")
                shown = done
            if audit.finished:
                return audit
            if not done and not hinted and time.monotonic() - started > IDLE_HINT_S:
                self.stdout.write(IDLE_HINT.format(seconds=IDLE_HINT_S))
                hinted = True
            if deadline is not None and time.monotonic() > deadline:
                raise CommandError(f"audit {audit.pk} still {audit.status} after {timeout} s")
            time.sleep(1)
