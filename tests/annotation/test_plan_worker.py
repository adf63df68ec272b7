"""A large study's plan is built by the real Celery worker."""

import time

import pytest

from apps.annotation.models import Study, VettingSlot
from tests.annotation.factories import study_setup

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_the_worker_builds_a_large_plan(celery_worker, client, monkeypatch):
    monkeypatch.setattr("apps.annotation.services.plan.PLAN_INLINE_LIMIT", 2)
    setup = study_setup(perturbations=5, annotators=1, build=False)
    client.force_login(setup.study.owner)
    response = client.post(f"/studies/{setup.study.pk}/plan/", follow=True)
    assert b"the worker is building it" in response.content
    deadline = time.monotonic() + 30
    while Study.objects.get(pk=setup.study.pk).plan_built_at is None:
        assert time.monotonic() < deadline, "the worker did not build the plan"
        time.sleep(0.2)
    assert VettingSlot.objects.filter(study=setup.study).count() == 5
    assert Study.objects.get(pk=setup.study.pk).plan_queued_at is None
