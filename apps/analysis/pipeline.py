"""A study's pipeline in order, for its page: data, perturbations, vetting, comparisons,
direct assessment, the stages kinds of work register (`stage_register`, shown when the study
asks for the work), gold labels (when the plan holds adversarial texts), expert votes, judge
runs, reports. Each stage has its counts and the next
thing to do; the whole is read in a fixed number of queries, whatever the study's size
(docs/annotation.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.db.models import Count, Q
from django.urls import reverse

from apps.accounts.models import Role
from apps.analysis.kinds import kind_modules
from apps.analysis.reports import STUDY_REPORTS, TITLES
from apps.annotation.models import (
    AssessmentSlot,
    ComparisonSlot,
    ExpertVote,
    GoldCheckSlot,
    Study,
    StudyMembership,
    StudyPerturbation,
    VettingSlot,
)
from apps.catalog.models import KindFamily
from apps.corpus.models import SourceItem
from apps.judging.models import JudgeRun, RunStatus


@dataclass
class Figure:
    label: str
    value: int
    id: str = ""  # for the page's tests and styling


def _figures(*rows: tuple[str, int] | Figure) -> list[Figure]:
    return [row if isinstance(row, Figure) else Figure(*row) for row in rows]


@dataclass
class Stage:
    key: str
    title: str
    figures: list[Figure]
    done: bool
    next_label: str = ""
    next_url: str = ""
    links: list[tuple[str, str]] = field(default_factory=list)
    problem: str = ""


@dataclass(frozen=True)
class WorkStage:
    """The stage of a type of work a study asks for by choosing criteria for it, registered
    by the kind's analysis module (apps/analysis/kinds.py)."""

    key: str  # the stage's key; its "done" figure's id is "<key>-done"
    title: str
    criteria: str  # the study's relation of the criteria it asks the work under
    slot_model: Any  # the work's slots: done when `done_at` is set
    noun: str = "answers"  # what its figures count: "answers done", "answers planned"


@dataclass(frozen=True)
class WorkCounts:
    criteria: int = 0
    slots: int = 0
    done: int = 0


_STAGES: dict[str, WorkStage] = {}


def stage_register(stage: WorkStage) -> WorkStage:
    """Add a kind of work's stage, shown after direct assessment's."""
    _STAGES[stage.key] = stage
    return stage


def work_stages() -> list[WorkStage]:
    """The registered stages, in the order of the pipeline."""
    kind_modules("apps.analysis")
    return list(_STAGES.values())


def _work_counts(study: Study, stage: WorkStage, relations: dict[str, int]) -> WorkCounts:
    """The stage's criteria and slots: one query, none when the study chose no criteria."""
    criteria = relations[stage.criteria]
    if not criteria:
        return WorkCounts()
    slots = stage.slot_model.objects.filter(study=study).aggregate(
        n=Count("id"), done=Count("id", filter=Q(done_at__isnull=False))
    )
    return WorkCounts(criteria, slots["n"], slots["done"])


@dataclass
class Counts:
    datasets: int
    items: int
    kinds: int
    criteria: int
    perturbations: int
    annotators: int
    experts: int
    vetting_slots: int
    vetting_done: int
    comparable: int
    comparison_slots: int
    comparison_done: int
    assessment_criteria: int
    assessment_slots: int
    assessment_done: int
    gold_slots: int
    gold_done: int
    votes: int
    runs: int
    runs_done: int
    #: Each registered stage's counts, by its key.
    work: dict[str, WorkCounts] = field(default_factory=dict)


def study_counts(study: Study) -> Counts:
    """Every figure of the pipeline: nine aggregate queries (one more with adversarial texts,
    one more per registered stage the study asks for)."""
    relations = Study.objects.filter(pk=study.pk).aggregate(
        # first: the aggregates below name relations, and "kinds" then names the count
        adversarial_kinds=Count(
            "kinds", filter=Q(kinds__family=KindFamily.ADVERSARIAL), distinct=True
        ),
        datasets=Count("datasets", distinct=True),
        kinds=Count("kinds", distinct=True),
        criteria=Count("criteria", distinct=True),
        assessment_criteria=Count("assessment_criteria", distinct=True),
        **{stage.criteria: Count(stage.criteria, distinct=True) for stage in work_stages()},
    )
    roles = dict(
        StudyMembership.objects.filter(study=study)
        .values_list("role")
        .annotate(n=Count("id"))
        .values_list("role", "n")
    )
    plan = StudyPerturbation.objects.filter(study=study).aggregate(
        n=Count("id"), comparable=Count("id", filter=Q(comparable=True))
    )
    vetting = VettingSlot.objects.filter(study=study).aggregate(
        n=Count("id"), done=Count("id", filter=Q(done_at__isnull=False))
    )
    comparing = ComparisonSlot.objects.filter(study=study).aggregate(
        n=Count("id"), done=Count("id", filter=Q(done_at__isnull=False))
    )
    rating = AssessmentSlot.objects.filter(study=study).aggregate(
        n=Count("id"), done=Count("id", filter=Q(done_at__isnull=False))
    )
    gold = {"n": 0, "done": 0}  # gold labels exist for adversarial texts only
    if relations["adversarial_kinds"]:
        gold = GoldCheckSlot.objects.filter(study=study).aggregate(
            n=Count("id"), done=Count("id", filter=Q(done_at__isnull=False))
        )
    runs = JudgeRun.objects.filter(study=study).aggregate(
        n=Count("id"), done=Count("id", filter=Q(status=RunStatus.DONE))
    )
    return Counts(
        datasets=relations["datasets"],
        items=SourceItem.objects.filter(dataset__studies=study).count(),
        kinds=relations["kinds"],
        criteria=relations["criteria"],
        perturbations=plan["n"],
        annotators=roles.get(Role.ANNOTATOR, 0),
        experts=roles.get(Role.EXPERT, 0),
        vetting_slots=vetting["n"],
        vetting_done=vetting["done"],
        comparable=plan["comparable"],
        comparison_slots=comparing["n"],
        comparison_done=comparing["done"],
        assessment_criteria=relations["assessment_criteria"],
        assessment_slots=rating["n"],
        assessment_done=rating["done"],
        gold_slots=gold["n"],
        gold_done=gold["done"],
        votes=ExpertVote.objects.filter(study=study).count(),
        runs=runs["n"],
        runs_done=runs["done"],
        work={stage.key: _work_counts(study, stage, relations) for stage in work_stages()},
    )


def study_pipeline(study: Study, counts: Counts) -> list[Stage]:
    """The stages in order, each with its next action (links to the existing pages)."""
    stages = [
        _data(study, counts),
        _perturbations(study, counts),
        _vetting(study, counts),
        _comparisons(study, counts),
        _assessment(study, counts),
        *(_work_stage(study, counts, stage) for stage in work_stages()),
        _gold(study, counts),
        _votes(study, counts),
        _judging(study, counts),
        _reports(study, counts),
    ]
    return [stage for stage in stages if stage is not None]


def _url(name: str, *args: object, **query: object) -> str:
    url = reverse(name, args=args)
    return f"{url}?{urlencode(query)}" if query else url


def _data(study: Study, c: Counts) -> Stage:
    figures = _figures(("datasets", c.datasets), Figure("items", c.items, "item-count"))
    stage = Stage("data", "Data", figures, c.items > 0)
    if c.items == 0:
        stage.next_label, stage.next_url = "Import items", _url("import-new")
        stage.links = [("Choose datasets", _url("study-edit", study.pk))]
    else:
        stage.links = [("Datasets", _url("dataset-list"))]
    return stage


def _perturbations(study: Study, c: Counts) -> Stage:
    stage = Stage(
        "perturbations",
        "Perturbations",
        _figures(
            ("kinds", c.kinds),
            Figure("perturbations in the plan", c.perturbations, "perturbation-count"),
        ),
        c.perturbations > 0,
    )
    if c.kinds == 0:
        stage.next_label, stage.next_url = "Choose kinds", _url("study-edit", study.pk)
    elif c.perturbations == 0 and c.items:
        stage.next_label = "Generate perturbations"
        stage.next_url = _url("generation-new", study=study.pk)
    else:
        stage.links = [("Generate more", _url("generation-new", study=study.pk))]
    return stage


def _vetting(study: Study, c: Counts) -> Stage:
    figures = _figures(
        ("annotators", c.annotators),
        ("vettings done", c.vetting_done),
        ("vettings planned", c.vetting_slots),
    )
    done = c.vetting_slots > 0 and c.vetting_done == c.vetting_slots
    stage = Stage("vetting", "Vetting", figures, done)
    if c.annotators == 0:
        stage.next_label, stage.next_url = "Add annotators", _url("study-members", study.pk)
    elif c.vetting_slots < c.perturbations or not c.vetting_slots:
        stage.next_label, stage.next_url = "Build the plan", _url("study-progress", study.pk)
    else:
        stage.next_label, stage.next_url = "Watch progress", _url("study-progress", study.pk)
    return stage


def _comparisons(study: Study, c: Counts) -> Stage:
    figures = _figures(
        ("criteria", c.criteria),
        ("comparable pairs", c.comparable),
        ("comparisons done", c.comparison_done),
        ("comparisons planned", c.comparison_slots),
    )
    done = c.comparison_slots > 0 and c.comparison_done == c.comparison_slots
    stage = Stage("comparisons", "Comparisons", figures, done, problem=study.plan_problem)
    if c.criteria == 0:
        stage.next_label, stage.next_url = "Choose criteria", _url("study-edit", study.pk)
    elif c.comparison_slots:
        stage.next_label, stage.next_url = "Watch progress", _url("study-progress", study.pk)
    else:
        stage.links = [("Pairs become comparable as vetting goes on", "")]
    return stage


def _assessment(study: Study, c: Counts) -> Stage:
    """Direct assessment: texts rated on a criterion's scale (optional: no criteria, none)."""
    figures = _figures(
        ("criteria to rate under", c.assessment_criteria),
        Figure("ratings done", c.assessment_done, "assessment-done"),
        ("ratings planned", c.assessment_slots),
    )
    done = c.assessment_slots > 0 and c.assessment_done == c.assessment_slots
    stage = Stage("assessment", "Direct assessment", figures, done)
    if c.assessment_criteria == 0:
        stage.links = [("Optional: choose criteria to rate texts under", "")]
        stage.next_label, stage.next_url = "Choose criteria", _url("study-edit", study.pk)
    elif c.annotators == 0:
        stage.next_label, stage.next_url = "Add annotators", _url("study-members", study.pk)
    elif not c.assessment_slots:
        stage.next_label, stage.next_url = "Build the plan", _url("study-progress", study.pk)
    else:
        stage.next_label, stage.next_url = "Watch progress", _url("study-progress", study.pk)
    return stage


def _work_stage(study: Study, c: Counts, stage: WorkStage) -> Stage | None:
    """A registered stage: only when the study chose criteria for its work."""
    work = c.work[stage.key]
    if not work.criteria:
        return None
    figures = _figures(
        ("criteria", work.criteria),
        Figure(f"{stage.noun} done", work.done, f"{stage.key}-done"),
        (f"{stage.noun} planned", work.slots),
    )
    done = work.slots > 0 and work.done == work.slots
    out = Stage(stage.key, stage.title, figures, done)
    if c.annotators == 0:
        out.next_label, out.next_url = "Add annotators", _url("study-members", study.pk)
    elif not work.slots:
        out.next_label, out.next_url = "Build the plan", _url("study-progress", study.pk)
    else:
        out.next_label, out.next_url = "Watch progress", _url("study-progress", study.pk)
    return out


def _gold(study: Study, c: Counts) -> Stage | None:
    """Gold labels of adversarial texts (a search's candidates): only when the plan has some."""
    if not c.gold_slots:
        return None
    figures = _figures(
        Figure("labels done", c.gold_done, "gold-done"), ("labels planned", c.gold_slots)
    )
    stage = Stage("gold", "Gold labels", figures, c.gold_done == c.gold_slots)
    stage.next_label, stage.next_url = "Watch progress", _url("study-progress", study.pk)
    return stage


def _votes(study: Study, c: Counts) -> Stage:
    figures = _figures(("experts", c.experts), ("votes", c.votes))
    stage = Stage("votes", "Expert votes", figures, c.votes > 0)
    if c.experts == 0:
        stage.next_label, stage.next_url = "Add an expert", _url("study-members", study.pk)
    else:
        stage.next_label, stage.next_url = "Expert weights", _url("study-progress", study.pk)
    return stage


def _judging(study: Study, c: Counts) -> Stage:
    figures = _figures(("judge runs", c.runs), ("finished", c.runs_done))
    stage = Stage("judging", "Judge runs", figures, c.runs_done > 0)
    vetted = "true" if study.vetted_only_default else "false"  # the run form's choices
    query = {"study": study.pk, "vetted_only": vetted}
    stage.next_label, stage.next_url = "Run a judge", _url("judging-run-new", **query)
    if c.runs:
        stage.links = [("All runs", _url("judging-runs"))]
    return stage


def _reports(study: Study, c: Counts) -> Stage:
    stage = Stage("reports", "Reports", [], c.runs_done > 0)
    stage.next_label, stage.next_url = "Open the reports", _url("report-index", study.pk)
    stage.links = [(TITLES[name], _url("report-page", study.pk, name)) for name in STUDY_REPORTS]
    stage.links.append(("Whole study as one HTML file", _url("report-file", study.pk)))
    return stage
