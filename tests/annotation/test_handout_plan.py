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

from apps.annotation.services.assessing import ASSESSMENT
from apps.annotation.services.gold_checks import GOLD_CHECK
from apps.annotation.services.leases import _statements
from apps.annotation.services.vetting import VETTING
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


@pytest.mark.parametrize("work", [VETTING, ASSESSMENT, GOLD_CHECK], ids=lambda w: w.slug)
@pytest.mark.parametrize("page", [False, True], ids=["api", "page"])
def test_the_hand_out_probes_each_candidate_instead_of_reading_the_persons_history(work, page):
    setup = study_setup(perturbations=4, annotators=1)
    _, claim = _statements(work, page)
    now = timezone.now()
    params = {
        "study": setup.study.pk,
        "person": setup.annotators[0].pk,
        "now": now,
        "until": now + timedelta(minutes=10),
    }
    for name, number in (("study", 1), ("person", 2), ("now", 3), ("until", 4)):
        claim = claim.replace(f"%({name})s", f"${number}")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # statistics as a fresh plan leaves them
        # The plan every click runs: the generic plan of the prepared statement.
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute(f"PREPARE handout(bigint, bigint, timestamptz, timestamptz) AS {claim}")
        cursor.execute(
            "EXPLAIN (FORMAT JSON) EXECUTE handout(%s, %s, %s, %s)",
            [params["study"], params["person"], params["now"], params["until"]],
        )
        plan = cursor.fetchone()[0][0]["Plan"]
        cursor.execute("DEALLOCATE handout")
    nodes = list(_nodes(plan))
    anti = [n["Node Type"] for n in nodes if n.get("Join Type") == "Anti"]
    assert anti == [], f"anti-joins over the person's history: {anti}"
    probes = [n for n in nodes if n.get("Parent Relationship") == "SubPlan"]
    assert len(probes) >= 3  # slots, answers and controls (and skips, the first time round)


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
