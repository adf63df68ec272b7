"""A candidate's scores from its judge calls (docs/methods.md §6).

Each judge's score is the mean of its parsed samples, mapped from its strategy's scale (a
metric's is 0-100) onto 0-100. ``S_gold`` is the mean over the gold judges (an ensemble);
``S_victim`` the victim's. A judge none of whose samples was parsed leaves the candidate
unscored, with the reason: an unreadable reply is never turned into a score.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from apps.judging.adversarial.objective import feedback_score, to_percent_scale
from apps.judging.models import JudgeCall, ParseStatus, SearchJudge

METRIC_SCALE = (0.0, 100.0)


@dataclass(frozen=True)
class Scored:
    s_gold: float | None
    s_victim: float | None
    s_fb: float | None
    gold_by_judge: dict[str, float]
    unscored: str


@dataclass(frozen=True)
class Outcome:
    """One call's outcome: its parse status and score."""

    status: str
    score: float | None


def judge_score(outcomes: Sequence[Outcome], lo: float, hi: float) -> float | None:
    """The mean of the parsed samples on 0-100, or None when none was parsed."""
    parsed = [o.score for o in outcomes if o.status == ParseStatus.PARSED and o.score is not None]
    return to_percent_scale(fmean(parsed), lo, hi) if parsed else None


def _why(name: str, outcomes: Sequence[Outcome]) -> str:
    if not outcomes:
        return f"{name}: no call"
    counts: dict[str, int] = defaultdict(int)
    for outcome in outcomes:
        counts[outcome.status] += 1
    shown = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"{name}: no reply could be read ({shown})"


@dataclass(frozen=True)
class JudgeSide:
    """What scoring needs to know of a search judge (plain data)."""

    key: str  # the judge run's id, as text
    name: str
    gold: bool
    lo: float
    hi: float


def candidate_scores(
    sides: Sequence[JudgeSide],
    outcomes: Mapping[str, Sequence[Outcome]],
    direction: str,
    alpha: float,
) -> Scored:
    """Scores of one candidate from each judge's outcomes (keyed like ``JudgeSide.key``)."""
    gold: dict[str, float] = {}
    victim: float | None = None
    problems = []
    for side in sides:
        mine = outcomes.get(side.key, ())
        value = judge_score(mine, side.lo, side.hi)
        if value is None:
            problems.append(_why(f"{'gold' if side.gold else 'victim'} {side.name}", mine))
        elif side.gold:
            gold[side.key] = value
        else:
            victim = value
    if problems or victim is None or not gold:
        return Scored(None, None, None, gold, "; ".join(problems) or "no judge")
    s_gold = fmean(gold.values())
    return Scored(s_gold, victim, feedback_score(s_gold, victim, direction, alpha), gold, "")


def judge_sides(judges: Iterable[SearchJudge]) -> list[JudgeSide]:
    sides = []
    for judge in judges:
        strategy = judge.strategy
        lo, hi = (
            (float(strategy.scale_min), float(strategy.scale_max)) if strategy else METRIC_SCALE
        )
        sides.append(JudgeSide(str(judge.run_id), judge.judge.name, judge.role == "gold", lo, hi))
    return sides


def outcomes_of(
    candidate_ids: Sequence[int], run_ids: Sequence[int]
) -> dict[int, dict[str, list[Outcome]]]:
    """candidate id → run id (text) → the outcomes of its calls there (one query)."""
    found: dict[int, dict[str, list[Outcome]]] = defaultdict(lambda: defaultdict(list))
    rows = JudgeCall.objects.filter(candidate_id__in=candidate_ids, run_id__in=run_ids)
    for candidate, run, status, score in rows.values_list(
        "candidate_id", "run_id", "parse_status", "score"
    ):
        found[candidate][str(run)].append(Outcome(status, score))
    return found
