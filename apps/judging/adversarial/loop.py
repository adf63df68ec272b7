"""One search worked to its end in this process (docs/methods.md §6, docs/adversarial.md).

Every item moves through its iterations in lockstep with the others, one step per pass:

1. an item with no iteration gets iteration 0: R0 as its only candidate;
2. a *pending* iteration gets its candidates: one generator call per item, all at once
   (AdvEval), or a draw of rule-based perturbations (the baseline); the reply and the
   candidates are stored in one transaction (the iteration is then *generated*);
3. a *generated* iteration's candidates are judged: their judge calls are added to each
   search judge's run, and the judge engine works each run as it works any judge run
   (cache, limits, retries, unparsed replies stored raw and unscored); then the candidates
   get their scores (the iteration is *scored*);
4. after a *scored* iteration the item stops (target reached, iteration limit, victim-query
   budget) or gets its next, *pending*, iteration.

Everything is in the database at every step, so a worker killed at any point leaves a
search another worker continues from the last finished step: stored replies are never asked
again (a generator call or judge call in flight when the worker died is).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import F
from django.db.models.functions import Now
from django.utils import timezone

from apps.judging import claims
from apps.judging.adversarial import finals, generator, scoring
from apps.judging.adversarial.objective import is_success
from apps.judging.adversarial.prompt import GeneratorInput, generator_messages
from apps.judging.adversarial.rule_candidates import rule_candidates
from apps.judging.adversarial.trajectory import Step, best_step, trajectory
from apps.judging.engine import run_work
from apps.judging.models import (
    AdversarialSearch,
    Candidate,
    CandidateOrigin,
    ItemStatus,
    IterationStatus,
    JudgeCall,
    JudgeRun,
    Method,
    ParseStatus,
    RunStatus,
    SearchItem,
    SearchIteration,
    SearchJudge,
    StopReason,
)

HEARTBEAT_S = 3.0


class Heartbeat(threading.Thread):
    """Shows the search is alive while this process works on it; notices a lost claim."""

    def __init__(self, search_id: int, token: str) -> None:
        super().__init__(name=f"search-{search_id}-heartbeat", daemon=True)
        self.search_id, self.token = search_id, token
        self.stopping = threading.Event()
        self.lost = False

    def run(self) -> None:
        try:
            while not self.stopping.wait(HEARTBEAT_S):
                mine = AdversarialSearch.objects.filter(pk=self.search_id)
                if not mine.filter(claimed_by=self.token).update(heartbeat_at=Now()):
                    # taken over (this worker was presumed dead); a row this connection
                    # cannot see (not committed yet) is not a lost claim
                    self.lost = self.lost or mine.exclude(claimed_by=self.token).exists()
        finally:
            connection.close()

    def stop(self) -> None:
        self.stopping.set()
        self.join(10)


@dataclass
class State:
    """An item and its latest iteration, for one pass."""

    item: SearchItem
    latest: SearchIteration | None


class SearchWork:
    def __init__(self, search: AdversarialSearch, token: str, node: str = "") -> None:
        self.search = search
        self.token = token
        self.node = node
        self.judges: list[SearchJudge] = list(
            search.judges.select_related("judge", "strategy", "run")
        )
        self.sides = scoring.judge_sides(self.judges)
        self.victim = next(j for j in self.judges if j.role == "victim")

    # -- the passes --------------------------------------------------------------------------

    def run_all(self, heartbeat: Heartbeat | None = None) -> None:
        while not self.stopped(heartbeat):
            states = self.states()
            if not states:
                self.finish()
                return
            self.start_items([s for s in states if s.latest is None])
            self.generate(_latest(states, IterationStatus.PENDING))
            self.judge(_latest(states, IterationStatus.GENERATED))
            if self.stopped(heartbeat):
                return
            self.decide([s for s in self.states() if _is(s.latest, IterationStatus.SCORED)])

    def stopped(self, heartbeat: Heartbeat | None) -> bool:
        status = AdversarialSearch.objects.filter(pk=self.search.pk).values_list(
            "status", flat=True
        )
        return status.first() != RunStatus.RUNNING or bool(heartbeat and heartbeat.lost)

    def states(self) -> list[State]:
        items = list(
            SearchItem.objects.filter(search=self.search, status=ItemStatus.RUNNING)
            .select_related("item__task", "item__dataset__task")
            .order_by("id")
        )
        latest: dict[int, SearchIteration] = {}
        for iteration in SearchIteration.objects.filter(search_item__in=items).order_by("number"):
            latest[iteration.search_item_id] = iteration
        for item in items:
            if item.pk in latest:
                latest[item.pk].search_item = item
        return [State(item, latest.get(item.pk)) for item in items]

    # -- 1. iteration 0: R0 ------------------------------------------------------------------

    def start_items(self, states: Sequence[State]) -> None:
        for state in states:
            with transaction.atomic():
                iteration = SearchIteration.objects.create(
                    search_item=state.item,
                    number=0,
                    status=IterationStatus.GENERATED,
                    wanted=1,
                    finished_at=timezone.now(),
                )
                Candidate.objects.create(
                    iteration=iteration,
                    search_item=state.item,
                    index=0,
                    text=state.item.item.original,
                    origin=CandidateOrigin.INITIAL,
                )

    # -- 2. candidates -------------------------------------------------------------------------

    def generate(self, iterations: Sequence[SearchIteration]) -> None:
        rules = [it for it in iterations if it.search_item.method == Method.RULES]
        for iteration in rules:
            self._rule_draw(iteration)
        llm = [it for it in iterations if it.search_item.method == Method.ADVEVAL]
        if llm:
            self._generator_round(llm)

    def _rule_draw(self, iteration: SearchIteration) -> None:
        item = iteration.search_item
        tried = set(Candidate.objects.filter(search_item=item).values_list("text", flat=True))
        drawn = rule_candidates(
            item.item.original,
            seed=generator.iteration_seed(item.item.external_id, item.method, iteration.number),
            wanted=iteration.wanted,
            tried=tried,
        )
        with transaction.atomic():
            for index, candidate in enumerate(drawn):
                Candidate.objects.create(
                    iteration=iteration,
                    search_item=item,
                    index=index,
                    text=candidate.text,
                    origin=CandidateOrigin.RULE,
                    provenance=candidate.provenance,
                )
            iteration.parse_status = ParseStatus.PARSED
            iteration.parse_reason = f"{len(drawn)} rule-based candidate(s)"
            self._generated(iteration)

    def _generator_round(self, iterations: Sequence[SearchIteration]) -> None:
        calls = [generator.prepare(self.search, it, self._messages(it)) for it in iterations]
        by_id = {it.pk: it for it in iterations}
        generator.ask_all(
            self.search.generator,
            calls,
            lambda call: self._store_reply(by_id[call.iteration_id], call),
            self.node,
        )

    def _messages(self, iteration: SearchIteration) -> list[dict[str, str]]:
        item = iteration.search_item
        source = item.item
        task = source.task or source.dataset.task
        scored = Candidate.objects.filter(search_item=item, s_fb__isnull=False).order_by("id")
        steps = [Step(c.pk, c.text, c.s_fb) for c in scored if c.s_fb is not None]
        criterion = self.search.criterion
        text_name = task.text_name if task else "text"
        return generator_messages(
            GeneratorInput(
                task_name=task.name if task else "",
                task_description=task.description if task else "",
                text_name=text_name,
                source=source.source,
                criterion=criterion.render(text_name)
                if criterion and self.search.criterion_in_prompt
                else "",
                steps=trajectory(steps),
                wanted=iteration.wanted,
            )
        )

    def _store_reply(self, iteration: SearchIteration, call: generator.GeneratorCall) -> None:
        answered = generator.fill_iteration(iteration, call)
        with transaction.atomic():
            counters = {
                "generator_calls": F("generator_calls") + 1,
                "generator_http_requests": F("generator_http_requests") + call.attempts,
            }
            if iteration.cached:
                counters["generator_cached"] = F("generator_cached") + 1
            else:
                prompt, completion = generator.paid_tokens(iteration)
                counters["generator_prompt_tokens"] = F("generator_prompt_tokens") + prompt
                counters["generator_completion_tokens"] = (
                    F("generator_completion_tokens") + completion
                )
            AdversarialSearch.objects.filter(pk=self.search.pk).update(**counters)
            if not answered:  # no usable reply: the item stops with the reason
                iteration.status, iteration.finished_at = IterationStatus.FAILED, timezone.now()
                iteration.save()
                SearchItem.objects.filter(pk=iteration.search_item_id).update(
                    status=ItemStatus.FAILED, error=f"generator: {iteration.error}"
                )
                return
            texts = generator.read_candidates(iteration)
            self._add_generated(iteration, texts)
            self._generated(iteration)

    def _add_generated(self, iteration: SearchIteration, texts: Sequence[str]) -> None:
        earlier = {
            text: pk
            for pk, text in Candidate.objects.filter(search_item_id=iteration.search_item_id)
            .order_by("-id")
            .values_list("id", "text")
        }
        for index, text in enumerate(texts):
            Candidate.objects.create(
                iteration=iteration,
                search_item_id=iteration.search_item_id,
                index=index,
                text=text,
                origin=CandidateOrigin.GENERATOR,
                duplicate_of_id=earlier.get(text),
            )

    def _generated(self, iteration: SearchIteration) -> None:
        iteration.status, iteration.finished_at = IterationStatus.GENERATED, timezone.now()
        iteration.save()

    # -- 3. judging ----------------------------------------------------------------------------

    def judge(self, iterations: Sequence[SearchIteration]) -> None:
        if not iterations:
            return
        candidates = list(
            Candidate.objects.filter(iteration__in=iterations, duplicate_of__isnull=True)
            .select_related("search_item")
            .order_by("id")
        )
        self._plan_calls(candidates)
        for judge in self.judges:
            run = JudgeRun.objects.select_related("judge", "strategy").get(pk=judge.run_id)
            if run.status != RunStatus.RUNNING:
                return  # the search was cancelled
            if claims.pending_count(run.pk):
                token = claims.new_token(self.node)
                run_work(run, token=token, share=run.judge.max_concurrency, node=self.node)
                if claims.pending_count(run.pk):
                    return  # cancelled or stalled: scored on a later pass
        self._score(iterations, candidates)

    def _plan_calls(self, candidates: Sequence[Candidate]) -> None:
        criterion = self.search.criterion
        for judge in self.judges:
            calls = [
                JudgeCall(
                    run_id=judge.run_id,
                    identity=f"i{c.search_item.item_id}.x{c.pk}.s{sample}",
                    item_id=c.search_item.item_id,
                    candidate=c,
                    criterion=None if judge.judge.is_metric else criterion,
                    sample_index=sample,
                )
                for c in candidates
                for sample in range(judge.samples)
            ]
            JudgeCall.objects.bulk_create(calls, ignore_conflicts=True, batch_size=500)
            total = JudgeCall.objects.filter(run_id=judge.run_id).count()
            JudgeRun.objects.filter(pk=judge.run_id).update(total=total, planned=True)

    def _score(
        self, iterations: Sequence[SearchIteration], candidates: Sequence[Candidate]
    ) -> None:
        found = scoring.outcomes_of([c.pk for c in candidates], [j.run_id for j in self.judges])
        for candidate in candidates:
            scored = scoring.candidate_scores(
                self.sides, found.get(candidate.pk, {}), self.search.direction, self.search.alpha
            )
            candidate.s_gold, candidate.s_victim = scored.s_gold, scored.s_victim
            candidate.s_fb, candidate.unscored = scored.s_fb, scored.unscored
            candidate.gold_by_judge = scored.gold_by_judge
        per_item: dict[int, int] = defaultdict(int)
        for candidate in candidates:
            per_item[candidate.search_item_id] += 1
        gold_samples = sum(j.samples for j in self.judges if j.role == "gold")
        with transaction.atomic():
            Candidate.objects.bulk_update(
                candidates, ["s_gold", "s_victim", "s_fb", "unscored", "gold_by_judge"]
            )
            for iteration in iterations:
                judged = per_item.get(iteration.search_item_id, 0)
                SearchItem.objects.filter(pk=iteration.search_item_id).update(
                    victim_queries=F("victim_queries") + judged * self.victim.samples,
                    gold_queries=F("gold_queries") + judged * gold_samples,
                    iterations=F("iterations") + (1 if iteration.number else 0),
                )
                SearchIteration.objects.filter(pk=iteration.pk).update(
                    status=IterationStatus.SCORED, finished_at=Now()
                )

    # -- 4. stop, or the next iteration --------------------------------------------------------

    def decide(self, states: Sequence[State]) -> None:
        for state in states:
            item, latest = state.item, state.latest
            assert latest is not None
            reason = self._stop_reason(item, latest)
            if reason:
                self._finish_item(item, reason)
                continue
            remaining = self.search.query_budget - item.victim_queries
            SearchIteration.objects.get_or_create(
                search_item=item,
                number=latest.number + 1,
                defaults={
                    "wanted": min(
                        self.search.candidates_per_iteration, remaining // self.victim.samples
                    )
                },
            )

    def _stop_reason(self, item: SearchItem, latest: SearchIteration) -> str:
        best = best_step(self._steps(item))
        if best is not None and best.s_fb >= self.search.target_score:
            return StopReason.TARGET
        if item.iterations >= self.search.max_iterations:
            return StopReason.ITERATIONS
        if self.search.query_budget - item.victim_queries < self.victim.samples:
            return StopReason.BUDGET
        if item.method == Method.RULES and latest.number and not latest.candidates.exists():
            return StopReason.EXHAUSTED
        return ""

    def _steps(self, item: SearchItem) -> list[Step]:
        scored = Candidate.objects.filter(search_item=item, s_fb__isnull=False)
        return [Step(c.pk, c.text, c.s_fb) for c in scored if c.s_fb is not None]

    @transaction.atomic
    def _finish_item(self, item: SearchItem, reason: str) -> None:
        best = best_step(self._steps(item))
        chosen = Candidate.objects.filter(pk=best.order).first() if best else None
        item.stop_reason, item.status, item.best = reason, ItemStatus.DONE, chosen
        item.success = None
        if chosen is not None and chosen.s_gold is not None and chosen.s_victim is not None:
            item.success = is_success(
                chosen.s_gold,
                chosen.s_victim,
                self.search.direction,
                self.search.success_tau1,
                self.search.tau2,
            )
        item.save()
        if item.method == Method.ADVEVAL:
            item.perturbation = finals.final_perturbation(self.search, item)
            item.save(update_fields=["perturbation"])

    def finish(self) -> None:
        items = SearchItem.objects.filter(search=self.search)
        failed = list(items.filter(status=ItemStatus.FAILED).values_list("error", flat=True))
        everything_failed = bool(failed) and len(failed) == items.count()
        with transaction.atomic():
            AdversarialSearch.objects.filter(pk=self.search.pk, status=RunStatus.RUNNING).update(
                status=RunStatus.FAILED if everything_failed else RunStatus.DONE,
                error="; ".join(sorted(set(failed)))[:5000] if failed else "",
                finished_at=Now(),
                claimed_by="",
            )
            for judge in self.judges:
                claims.run_recount(judge.run_id)
            JudgeRun.objects.filter(
                pk__in=[j.run_id for j in self.judges], status=RunStatus.RUNNING
            ).update(status=RunStatus.DONE, finished_at=Now())
            finals.into_study(self.search)


def _latest(states: Sequence[State], status: str) -> list[SearchIteration]:
    """The latest iterations in this status."""
    return [s.latest for s in states if s.latest is not None and s.latest.status == status]


def _is(iteration: SearchIteration | None, status: str) -> bool:
    return iteration is not None and iteration.status == status
