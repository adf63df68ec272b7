"""`manage.py judge_improve`: from an audited judge's card, try candidate strategies on a
training half of the texts and confirm the best on the held-out half (docs/improve.md, "From
the command line"). Prints the estimate first; starts only within the study's limit, or with
--yes; --budget stops it early; --json writes the result."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from apps.accounts.models import User
from apps.analysis.improving.plan import improvement_plan, improvement_start
from apps.analysis.improving.snapshot import improvement_json
from apps.judging.models import AuditSubject, Improvement, JudgeAudit, RunStatus
from apps.judging.selectors import strategies_for_user


class Command(BaseCommand):
    help = (
        "Improve an audited judge: try candidate strategies for the same model on a training "
        "half of the texts (split by source item), confirm the best against the current "
        "strategy on the held-out half, and say whether to adopt it. Prints the estimate "
        "first."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--owner", required=True, help="The researcher's username.")
        parser.add_argument("--audit", type=int, required=True, help="The audit's id.")
        parser.add_argument(
            "--subject",
            type=int,
            help="The audited judge (its subject id on the audit page); needed when the audit "
            "has several.",
        )
        parser.add_argument(
            "--strategy",
            action="append",
            default=[],
            metavar="STRATEGY",
            help="One more candidate of yours (id or slug), tried beside the shipped variants; "
            "repeat for more.",
        )
        parser.add_argument("--seed", type=int, default=0, help="Seeds the split of the texts.")
        parser.add_argument(
            "--budget",
            type=int,
            metavar="REQUESTS",
            help="Stop once this many HTTP requests are sent, with what was learned by then.",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Plan it and print the estimate; start nothing, keep nothing.",
        )
        parser.add_argument(
            "--yes",
            action="store_true",
            help="Start it even when its requests exceed the study's limit (the estimate is "
            "printed first).",
        )
        parser.add_argument(
            "--batch",
            action="store_true",
            help="Send its runs through the judge's batch interface (the batch price).",
        )
        parser.add_argument(
            "--live-fallback",
            action="store_true",
            help="With --batch: ask live, at the live price, what a batch leaves unanswered.",
        )
        parser.add_argument("--wait", action="store_true", help="Wait until it ends.")
        parser.add_argument("--timeout", type=float, default=0, help="Seconds; 0: no limit.")
        parser.add_argument(
            "--json",
            type=Path,
            help="Write the result here (implies --wait): the whole "
            "improvement as the page's JSON download holds it.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        owner = User.objects.filter(username=options["owner"]).first()
        if owner is None:
            raise CommandError(f"no user named '{options['owner']}'")
        subject = self._subject(owner, options["audit"], options["subject"])
        strategies = [self._strategy(owner, key) for key in options["strategy"]]
        with transaction.atomic():  # a dry run plans, prints the estimate and keeps nothing
            try:
                improvement = improvement_plan(
                    owner=owner,
                    subject=subject,
                    strategies=strategies,
                    budget_requests=options["budget"],
                    seed=options["seed"],
                )
            except ValidationError as exc:
                raise CommandError("Not planned: " + " ".join(exc.messages)) from exc
            self._estimate(improvement)
            if options["dry_run"]:
                transaction.set_rollback(True)
                self.stdout.write("dry run: nothing was started or kept")
                return
        try:
            improvement = improvement_start(
                improvement=improvement,
                confirmed=options["yes"],
                batch=options["batch"],
                live_fallback=options["live_fallback"],
            )
        except ValidationError as exc:
            raise CommandError(
                f"improvement {improvement.pk} planned, not started: {' '.join(exc.messages)} "
                "(--yes confirms; --dry-run shows the estimate only)"
            ) from exc
        self.stdout.write(f"improvement {improvement.pk} started")
        if not (options["wait"] or options["json"]):
            return
        improvement = self._wait(improvement, options["timeout"])
        if options["json"]:
            text = json.dumps(improvement_json(improvement), indent=2, sort_keys=True)
            options["json"].write_text(text + "\n", encoding="utf-8")
            self.stdout.write(f"wrote {options['json']}")
        if improvement.status != RunStatus.DONE:
            raise CommandError(
                f"improvement {improvement.pk} ended {improvement.status}: {improvement.error}"
            )
        self.stdout.write(improvement.result.get("headline", ""))

    def _subject(self, owner: User, audit_id: int, subject_id: int | None) -> AuditSubject:
        audit = JudgeAudit.objects.for_user(owner).filter(pk=audit_id).first()
        if audit is None:
            raise CommandError(f"no audit {audit_id} of {owner.username}")
        subjects = list(audit.subjects.order_by("pk"))
        chosen = [s for s in subjects if subject_id in (None, s.pk)]
        if len(chosen) != 1:
            listed = ", ".join(f"{s.pk} ({s})" for s in subjects)
            raise CommandError(f"--subject: choose one of the audit's subjects: {listed}")
        return chosen[0]

    def _strategy(self, owner: User, key: str) -> Any:
        found = strategies_for_user(owner)
        strategy = (
            found.filter(pk=int(key)).first() if key.isdigit() else found.filter(slug=key).first()
        )
        if strategy is None:
            raise CommandError(f"--strategy {key}: no such strategy of yours to use")
        return strategy

    def _estimate(self, improvement: Improvement) -> None:
        for part, words in (
            ("training", "training (every candidate on the training texts)"),
            ("confirmation", "confirmation (two strategies on the held-out texts, at most)"),
        ):
            e = improvement.estimate[part]
            cost = "unknown" if e.get("cost_usd") is None else f"${float(e['cost_usd']):.4f}"
            self.stdout.write(
                f"{words}: {e['calls']} calls, {e['cached_calls']} from the cache, "
                f"{e['http_calls']} HTTP requests, ~{e['prompt_tokens']} prompt + "
                f"{e['completion_tokens']} completion tokens, cost {cost}"
            )
        candidates = ", ".join(c.label for c in improvement.candidates.all())
        self.stdout.write(
            f"improvement {improvement.pk}: {len(improvement.train_items)} source items to try "
            f"on, {len(improvement.held_items)} held out; candidates: {candidates}"
        )

    def _wait(self, improvement: Improvement, timeout: float) -> Improvement:
        deadline = time.monotonic() + timeout if timeout else None
        shown = ""
        while True:
            improvement.refresh_from_db()
            now = f"{improvement.get_stage_display()} ({improvement.http_requests()} requests)"
            if now != shown:
                self.stdout.write(f"  {now}")
                shown = now
            if improvement.finished:
                return improvement
            if deadline is not None and time.monotonic() > deadline:
                raise CommandError(f"improvement {improvement.pk} still running after {timeout} s")
            time.sleep(1)
