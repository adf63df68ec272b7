"""How PostgreSQL runs the hand-out of pooled work (docs/annotation.md, "Speed").

"Next item" must not cost more as an annotator's history grows, or as the queue does: each
open slot it considers is checked against the person's slots, answers, controls and skips
by one index probe, never by reading all of them (an anti-join over the person's history,
which PostgreSQL picked while the statistics said no slot had an annotator yet: 3.5 ms of
work after 750 answers, against 0.12 ms).
And the statement is planned once a connection, not on every click: the plan checked here
is that one, the generic plan.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.authtoken.models import Token

from apps.annotation.models import AssessmentSlot, AssessmentUnit
from apps.annotation.services.assessing import ASSESSMENT
from apps.annotation.services.gold_checks import GOLD_CHECK
from apps.annotation.services.leases import _statements
from apps.annotation.services.vetting import VETTING
from apps.corpus.models import Origin, Perturbation, SourceItem
from tests.annotation.factories import study_setup

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="PostgreSQL's plans (SQLite keeps the ORM)"
    ),
]


def _nodes(plan: dict[str, Any]):
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def _generic_plan(work, setup, page: bool = False, analyze: bool = False) -> dict[str, Any]:
    """The plan every click runs (the prepared statement's generic plan), as a fresh plan
    leaves the statistics (analysed before anyone held a slot); `analyze` runs it."""
    _, claim = _statements(work, page)
    now = timezone.now()
    params = [setup.study.pk, setup.annotators[0].pk, now, now + timedelta(minutes=10)]
    for name, number in (("study", 1), ("person", 2), ("now", 3), ("until", 4)):
        claim = claim.replace(f"%({name})s", f"${number}")
    options = "ANALYZE, BUFFERS, FORMAT JSON" if analyze else "FORMAT JSON"
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute(f"PREPARE handout(bigint, bigint, timestamptz, timestamptz) AS {claim}")
        cursor.execute(f"EXPLAIN ({options}) EXECUTE handout(%s, %s, %s, %s)", params)
        plan = cursor.fetchone()[0][0]["Plan"]
        cursor.execute("DEALLOCATE handout")
    return plan


@pytest.mark.parametrize("work", [VETTING, ASSESSMENT, GOLD_CHECK], ids=lambda w: w.slug)
@pytest.mark.parametrize("page", [False, True], ids=["api", "page"])
def test_the_hand_out_probes_each_candidate_instead_of_reading_the_persons_history(work, page):
    setup = study_setup(perturbations=4, annotators=1)
    _analyze()
    nodes = list(_nodes(_generic_plan(work, setup, page)))
    anti = [n["Node Type"] for n in nodes if n.get("Join Type") == "Anti"]
    assert anti == [], f"anti-joins over the person's history: {anti}"
    probes = [n for n in nodes if n.get("Parent Relationship") == "SubPlan"]
    assert len(probes) >= 3  # slots, answers and controls (and skips, the first time round)


@pytest.mark.parametrize("statistics", ["fresh plan", "analysed since"])
@pytest.mark.parametrize("work", [VETTING, ASSESSMENT, GOLD_CHECK], ids=lambda w: w.slug)
def test_finding_the_slot_a_person_holds_does_not_read_their_history(work, statistics):
    # From the index of held slots, in its order. Not every slot they ever had (the index of
    # their slots, as the planner reckons a person holds many), nor every slot anyone took in
    # the study (the unique index of one slot per unit and person, taken while it was partial
    # and empty at the last ANALYZE); docs/annotation.md, "Speed".
    setup = study_setup(perturbations=1, annotators=2, aspects=1)
    slots = _slots(work, setup, units=1500)
    _analyze()  # as a fresh plan leaves the statistics: nobody holds a slot yet
    person, other, now = *setup.annotators, timezone.now()
    ids = list(slots.order_by("position").values_list("pk", flat=True))
    slots.filter(pk__in=ids[:300]).update(annotator=person, done_at=now)  # their history
    slots.filter(pk__in=ids[300:600]).update(annotator=other, done_at=now)
    slots.filter(pk=ids[600]).update(annotator=person, leased_until=now + timedelta(minutes=5))
    if statistics == "analysed since":
        _analyze()
    held = _cte(_generic_plan(work, setup, page=True, analyze=True), "held")
    assert held["Actual Rows"] == 1
    read = sum(n.get("Rows Removed by Filter", 0) for n in _nodes(held))
    assert read == 0, f"{read} slots of theirs read to find the one they hold"
    assert held["Shared Hit Blocks"] + held["Shared Read Blocks"] <= 4
    assert {n["Index Name"] for n in _nodes(held) if "Index Name" in n} == {_held_index(work)}
    assert not [n for n in _nodes(held) if n["Node Type"] == "Sort"]  # the index's order


def _slots(work, setup, units: int):
    """`units` more units of the work, one slot each (bulk: a study under way)."""
    kind, item = setup.kinds[0], setup.perturbations[0].item
    items = SourceItem.objects.bulk_create(
        SourceItem(dataset=item.dataset, task=item.task, external_id=f"h{n}", original="A text.")
        for n in range(units)
    )
    made = Perturbation.objects.bulk_create(
        Perturbation(item=i, kind=kind, text="Not a text.", origin=Origin.IMPORT) for i in items
    )
    model = work.slot_model
    if model is AssessmentSlot:
        rated = AssessmentUnit.objects.bulk_create(
            AssessmentUnit(
                study=setup.study,
                item=p.item,
                perturbation=p,
                criterion=setup.criteria[0],
                position=1000 + n,
            )
            for n, p in enumerate(made)
        )
        units_of = [{"unit": u} for u in rated]
    else:
        units_of = [{"perturbation": p} for p in made]
    model.objects.bulk_create(
        model(study=setup.study, slot=0, position=1000 + n, **unit)
        for n, unit in enumerate(units_of)
    )
    return model.objects.filter(study=setup.study, position__gte=1000)


def _analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def _cte(plan: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in _nodes(plan) if n.get("Subplan Name") == f"CTE {name}")


def _held_index(work) -> str:
    return next(i.name for i in work.slot_model._meta.indexes if i.name.endswith("_held"))


def test_the_hand_out_is_planned_once_a_connection(api_client):
    setup = study_setup(perturbations=8, annotators=1, vetting_overlap=1)
    token = Token.objects.create(user=setup.annotators[0]).key
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    base = f"/api/v1/studies/{setup.study.pk}/"
    for _ in range(4):
        item = api_client.post(base + "vetting/next/").json()
        body = {
            "perturbation": item["perturbation"],
            "verdict": "valid",
            "idempotency_key": str(uuid.uuid4()),
        }
        assert api_client.post(base + "vettings/", body, format="json").status_code == 201
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE 'WITH held AS%%'"
        )
        prepared = cursor.fetchall()
    assert prepared, "the hand-out statement was not prepared"
    assert sum(custom for _, custom in prepared) == 0  # no click re-planned it
    assert sum(generic for generic, _ in prepared) >= 4
    # the API's token and its user too: read on every request, planned once
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE 'SELECT t.\"created\"%%'"
        )
        assert cursor.fetchall() == [(8, 0)]  # 4 "next" and 4 "submit"
